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
