"""Where qatui finds judge files: a path ending `.toml`, a `[judges.NAME] file = "..."` entry, the user folder.

The user folder is `judges/` in qatui's config folder (`qatui.paths.config_dir`); a file there is
the judge of its stem (`concise.toml` is `concise`). A config entry's path is relative to the
config file. Either way the file's own `name` must be the name it is found by, so a session that
stores the judge's name and text rebuilds the same judge on resume.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from qatui import paths
from qatui.judges.files.spec import JudgeFile, JudgeFileError, load_judge_file, parse_judge_text

if TYPE_CHECKING:
    from qatui.config import Config

FILE_KEY = "file"
"""The key of a `[judges.NAME]` table naming a judge file."""


def user_judges_dir() -> Path:
    """The user's own judge files: `judges/` in qatui's config folder."""
    return paths.config_dir() / "judges"


def is_judge_path(name: str) -> bool:
    """Whether `--judge NAME` names a file rather than a judge."""
    return name.lower().endswith(".toml")


def config_file_path(config: Config | None, name: str) -> Path | None:
    """The file `[judges.NAME] file = "..."` names, relative to the config file; None when there is none."""
    if config is None or not isinstance(given := config.judges.get(name, {}).get(FILE_KEY), str):
        return None
    base = Path(config.source).parent if config.source else Path.cwd()
    return (base / Path(given).expanduser()).absolute()


def found_files(config: Config | None) -> dict[str, Path]:
    """Judge name -> its file: the config's entries, then the user folder's `*.toml` (an entry wins a name)."""
    found: dict[str, Path] = {}
    for name in (config.judges if config is not None else {}):
        if (path := config_file_path(config, name)) is not None:
            found[name] = path
    folder = user_judges_dir()
    try:
        inside = sorted(folder.glob("*.toml")) if folder.is_dir() else []
    except OSError:
        inside = []
    for path in inside:
        found.setdefault(path.stem, path)
    return found


def read_named(path: Path, name: str) -> JudgeFile:
    """The judge file at `path`, which must define judge `name`."""
    file = load_judge_file(path)
    if file.name != name:
        from qatui.judges.files.lines import key_line

        raise JudgeFileError(f"{path}:{key_line(file.text, ('name',))}: name: the file defines {file.name!r} but is "
                             f"found as judge {name!r}; make them the same")
    return file


def judge_file_for(name: str, config: Config | None = None) -> JudgeFile | None:
    """The judge file of `name` (a `.toml` path, or a name found by `found_files`); None when no file defines it."""
    if is_judge_path(name):
        return load_judge_file(paths.user_path(name))
    path = found_files(config).get(name)
    return read_named(path, name) if path is not None else None


def stored_file(meta: dict[str, Any], name: str) -> JudgeFile | None:
    """The judge file a session stored for judge `name` (its path and text), rebuilt from the text; None if none."""
    entry = (meta.get("judge_files") or {}).get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
        return None
    file = parse_judge_text(entry["text"], str(entry.get("path") or name))
    return file


def file_meta(judges: list[Any]) -> dict[str, dict[str, str]]:
    """What a session stores of its file judges: name -> {"path", "text"}."""
    return {j.name: {"path": j.file.source, "text": j.file.text} for j in judges if getattr(j, "file", None) is not None}
