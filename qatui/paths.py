"""Where qatui keeps its files on this machine: the one place that computes a user folder.

Built on platformdirs, so each platform's convention holds; on Linux that is the XDG base
directories: `$XDG_CONFIG_HOME/qatui` (default `~/.config/qatui`) for the config file and the
user's themes, `$XDG_DATA_HOME/qatui` (default `~/.local/share/qatui`) for the sessions, and
`$XDG_CACHE_HOME/qatui` (default `~/.cache/qatui`) for what can be computed again: the LLM call
cache and model outputs, the ONNX exports. A variable that is empty or a relative path is
ignored, as the XDG specification says.

The sessions folder is chosen here too (`sessions_folder`): an explicit choice wins, then a
`./sessions` of the working directory that already holds qatui's files (so the runs saved
there before sessions moved to the data folder are not lost), then the data folder.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP = "qatui"
SESSIONS_ENV = "QATUI_SESSIONS_DIR"
"""The environment variable naming the sessions folder (below `--sessions-dir`, above the config)."""
SESSION_FILE = "session.json"
"""The file every session folder holds: what marks a folder as a qatui session."""
LABELS_DIR = "labels"
"""The folder of people's labels inside a sessions folder."""
LEGACY_SESSIONS = "sessions"
"""The working directory's sessions folder, the default before sessions moved to the data folder."""


def config_dir() -> Path:
    """The user's qatui config folder (`$XDG_CONFIG_HOME/qatui` on Linux)."""
    return platformdirs.user_config_path(APP)


def data_dir() -> Path:
    """The user's qatui data folder (`$XDG_DATA_HOME/qatui` on Linux): what must not be lost."""
    return platformdirs.user_data_path(APP)


def cache_dir() -> Path:
    """The user's qatui cache folder (`$XDG_CACHE_HOME/qatui` on Linux): what can be computed again."""
    return platformdirs.user_cache_path(APP)


def config_file() -> Path:
    """The config file read when `--config` is not given."""
    return config_dir() / "config.toml"


def themes_dir() -> Path:
    """The user's own themes, beside the config."""
    return config_dir() / "themes"


def llm_cache_dir() -> Path:
    """The default cache of LLM calls and of what local models computed (the config's `[cache] dir` wins)."""
    return cache_dir() / "llm"


def onnx_cache_dir() -> Path:
    """The ONNX exports of transformers models, one folder per model digest."""
    return cache_dir() / "onnx"


def models_cache_dir() -> Path:
    """Where the embedded model's converted weights are kept (`$XDG_CACHE_HOME/qatui/models` on Linux)."""
    return cache_dir() / "models"


def screenshots_dir() -> Path:
    """Where the palette's Screenshot is saved in a terminal: the user's downloads folder where there is one, else
    the working directory (an SSH host's fresh home has no Downloads, and Textual's save there failed)."""
    downloads = platformdirs.user_downloads_path()
    return downloads if downloads.is_dir() else Path.cwd()


def default_sessions_dir() -> Path:
    """The sessions folder when nothing chooses one."""
    return data_dir() / "sessions"


def user_path(text: str | Path) -> Path:
    """A path the user typed (option, variable, config value), `~` expanded, made absolute against the
    working directory, so every message names the same folder whichever directory it is read from."""
    return Path(text).expanduser().absolute()


def tilde(path: str | Path) -> str:
    """An absolute path, with `~` for the home folder when inside it: short, and the same from any directory."""
    full = Path(path).expanduser().absolute()
    try:
        return str(Path("~") / full.relative_to(Path.home()))
    except ValueError:
        return str(full)


@dataclass(frozen=True)
class SessionsFolder:
    """The sessions folder a command uses, and the note to print once when it is not the one the user
    would expect: an existing `./sessions` used in place of the data folder."""

    path: Path
    note: str | None = None


def holds_qatui_files(folder: Path) -> bool:
    """Whether `folder` holds a qatui session (a subfolder with a session.json) or people's labels."""
    try:
        children = [child for child in folder.iterdir() if child.is_dir()]
    except OSError:  # missing, a file, unreadable: nothing of ours to find
        return False
    for child in children:
        if child.name == LABELS_DIR:
            if any(child.iterdir()):
                return True
        elif (child / SESSION_FILE).is_file():
            return True
    return False


def sessions_folder(chosen: str | Path | None) -> SessionsFolder:
    """The sessions folder: `chosen` (from `--sessions-dir`, `$QATUI_SESSIONS_DIR` or the config) when given,
    else `./sessions` when it already holds qatui's files (with a note saying how to move them), else the
    data folder's `sessions`. Always absolute."""
    if chosen:
        return SessionsFolder(user_path(chosen))
    default = default_sessions_dir()
    legacy = user_path(LEGACY_SESSIONS)
    if legacy.resolve() != default.resolve() and holds_qatui_files(legacy):
        note = (f"using the sessions folder found in the working directory, {legacy}; qatui now keeps sessions "
                f"in {default}, which every directory sees: to move them there, mkdir -p "
                f"{shlex.quote(str(default))} && mv {shlex.quote(str(legacy))}/* {shlex.quote(str(default))}/")
        return SessionsFolder(legacy, note)
    return SessionsFolder(default)
