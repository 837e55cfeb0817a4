"""The file the Judge Lab edits: opened with what it held, saved only over that same content.

The lab keeps the digest of the bytes it opened (or last saved). Saving first reads the file
again: when its digest differs, someone changed (or created, or deleted) the file meanwhile,
and the save is refused with `ChangedOutside` so the screen can ask before overwriting; an
edit made elsewhere is never lost silently. The write itself is atomic (`atomic_write_text`):
a crash leaves the old file or the new one, never half of one. Blocking: screens call these
from a thread worker.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from qatui.safe_read import Refused, decode_text, read_bytes
from qatui.errors import QatuiError
from qatui.paths import tilde
from qatui.store.atomic import atomic_write_text
from qatui.text import plain, unshowable_at

MAX_JUDGE_FILE_BYTES = 1_000_000
"""A judge file is a page of prompts: anything larger is refused before it is read."""


class ChangedOutside(QatuiError):
    """The file on disk is no longer what the lab opened: saving would overwrite someone else's edit."""


@dataclass(frozen=True)
class LabFile:
    """Where the lab saves, and what that file held when the lab last read or wrote it."""

    path: Path
    text: str
    """The text as opened or last saved: what the editor's text is compared with (modified or not)."""
    digest: str
    """sha256 of the file's bytes then; "" when there was no file (a built-in's copy not saved yet)."""

    @property
    def source(self) -> str:
        """How errors and sessions name the file: its path, with ~ for the home folder."""
        return tilde(self.path)


def digest_of(data: bytes) -> str:
    """The sha256 of `data` in hex."""
    return hashlib.sha256(data).hexdigest()


def read_judge_bytes(path: Path) -> bytes:
    """The file's bytes; a one-line `QatuiError` naming it for a missing, special, huge or unreadable file."""
    try:
        return read_bytes(path, MAX_JUDGE_FILE_BYTES)
    except FileNotFoundError:
        raise QatuiError(f"{tilde(path)}: no such file") from None
    except (Refused, OSError) as e:
        raise QatuiError(f"{tilde(path)}: {getattr(e, 'strerror', None) or e}") from None


def current_digest(path: Path) -> str:
    """The digest of the file's bytes now; "" when there is no file."""
    if not path.exists():
        return ""
    return digest_of(read_judge_bytes(path))


def open_lab_file(path: Path) -> LabFile:
    """The judge file at `path` as the lab edits it (UTF-8; a one-line QatuiError for a file it cannot read)."""
    data = read_judge_bytes(path)
    try:
        text = decode_text(data)
    except Refused as e:
        raise QatuiError(e.message(tilde(path))) from None
    if where := unshowable_at(text):  # the editor shows its text as it is: a terminal would obey these
        raise QatuiError(f"{plain(tilde(path))}: holds a character the editor would send to the terminal raw "
                         f"({where}): write it as an escape in a quoted string (\\u009b) to edit the file here")
    return LabFile(path, text, digest_of(data))


def new_lab_file(path: Path, text: str) -> LabFile:
    """A text not on disk yet (a built-in's copy), to be saved at `path`: saving refuses if a file appears there."""
    return LabFile(path, text, "")


def save_lab_file(opened: LabFile, text: str, *, overwrite: bool = False) -> LabFile:
    """Write `text` to the lab's file atomically, unless the file changed since it was opened (`ChangedOutside`).

    With `overwrite`, the user has been asked and said yes: the file is replaced whatever it holds.
    Returns the file as now saved.
    """
    if not overwrite and current_digest(opened.path) != opened.digest:
        what = "was deleted" if not opened.path.exists() else "appeared" if not opened.digest else "changed"
        raise ChangedOutside(f"{tilde(opened.path)} {what} outside the lab since it was opened")
    opened.path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(opened.path, text)
    return LabFile(opened.path, text, digest_of(text.encode("utf-8")))
