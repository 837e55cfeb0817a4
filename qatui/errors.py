"""Errors a user can cause and fix: the CLI prints their message, never a traceback."""


class QatuiError(Exception):
    """Base of every foreseeable, user-facing error; the message says what and where."""


class DatasetError(QatuiError):
    """A dataset file is missing, malformed, or of an unknown format (names file, record, field)."""


class ConfigError(QatuiError):
    """The config file is unreadable or holds an unknown key or a bad value."""


class JudgeError(QatuiError):
    """A judge was asked for that does not exist or that the dataset cannot feed."""


class SessionError(QatuiError):
    """A session is missing, ambiguous, or damaged."""


def first_problem(error: Exception) -> tuple[str, str, str]:
    """(key path, error type, message) of a pydantic ValidationError's first error, for one-line messages.

    The path reads like the file: `judges.rouge-l.tie_digits`, `dimensions[2].name`.
    """
    first = error.errors()[0]  # type: ignore[attr-defined]
    parts: list[str] = []
    for p in first["loc"]:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1]}[{p}]" if parts else f"[{p}]"]
        else:
            parts.append(str(p))
    return ".".join(parts), first["type"], first["msg"]


class LabelError(QatuiError):
    """People's labels: a bad annotator name, a label file or import row that is wrong, a pass already open."""


class ResultsFileError(QatuiError):
    """A file of results from another tool (`sessions import`) is unreadable or holds a bad row (names row and field)."""


class CostError(QatuiError):
    """A cost cap (`--max-cost`) that cannot be kept: a backbone without a price, or a cap already spent."""
