"""Crash-safe file writes and the TinyDB storage built on them (docs/LIBRARIES.md#tinydb-writes).

TinyDB's default `JSONStorage` rewrites its file in place, so a kill mid-write can leave
half a file; here every write goes to a temp file that replaces the old one atomically.
"""

from __future__ import annotations

import json
import os
import itertools
from pathlib import Path

from tinydb.storages import Storage

from qatui.errors import SessionError
from qatui.safe_read import read_text

_serial = itertools.count()
"""Numbers this process's temp files: with the pid, a name no other writer uses."""


def atomic_write_text(path: Path, text: str) -> None:
    """Temp file in the same folder, fsync, os.replace: the old file or the new, never half of one."""
    tmp, fd = _new_temp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # the rename itself survives a power cut
    finally:
        os.close(dir_fd)


def _new_temp(path: Path) -> tuple[Path, int]:
    """A new temp file beside `path`, open for writing, as mkstemp makes it (mode 600) at a fifth of its cost.

    Named `.<name>.<pid>-<n>.tmp` (`files.remove_orphans` clears killed writers' `.*.tmp`); a name left by
    an earlier process with the same pid is skipped, not reused.
    """
    while True:
        tmp = path.parent / f".{path.name}.{os.getpid()}-{next(_serial)}.tmp"
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue


class AtomicJSONStorage(Storage):
    """A TinyDB storage that writes atomically and names the file in every read error."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def read(self) -> dict | None:
        """The whole database, None for a missing file; SessionError if it is no TinyDB file, or empty (qatui writes
        whole files only, so an empty one was cut or emptied: read as no results, a shard's items were lost without
        a word and a resume judged them all again)."""
        if not self.path.exists() and not self.path.is_symlink():  # a link to nowhere, or a loop, is no missing file
            return None
        try:  # through `safe_read`: a FIFO or a device in the folder is refused, never waited on or read forever
            text = read_text(self.path)
            if not text.strip():
                raise SessionError(f"{self.path}: damaged: the file is empty (qatui writes whole files only, so it "
                                   "was cut or emptied)")
            data = json.loads(text)
        except (OSError, ValueError) as e:  # ValueError: JSONDecodeError, UnicodeDecodeError, Refused
            raise SessionError(f"{self.path}: not a session file ({e})") from e
        except RecursionError:  # qatui never nests so deep: the file was edited or damaged
            raise SessionError(f"{self.path}: not a session file (nested too deep to read)") from None
        if data is not None and not (
            isinstance(data, dict) and all(isinstance(t, dict) for t in data.values())
        ):
            raise SessionError(f"{self.path}: JSON, but not a TinyDB database")
        return data

    def write(self, data: dict) -> None:
        """Replace the file with `data`, atomically."""
        atomic_write_text(self.path, json.dumps(data, ensure_ascii=False))
