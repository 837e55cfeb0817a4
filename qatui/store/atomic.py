"""Crash-safe file writes and the TinyDB storage built on them (STYLE.md §7).

TinyDB's default `JSONStorage` rewrites its file in place, so a kill mid-write can leave
half a file; here every write goes to a temp file that replaces the old one atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from tinydb.storages import Storage

from qatui.errors import SessionError


def atomic_write_text(path: Path, text: str) -> None:
    """Temp file in the same folder, fsync, os.replace: the old file or the new, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # the rename itself survives a power cut
    finally:
        os.close(dir_fd)


class AtomicJSONStorage(Storage):
    """A TinyDB storage that writes atomically and names the file in every read error."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def read(self) -> dict | None:
        """The whole database, None for a missing or empty file; SessionError if it is no TinyDB file."""
        if not self.path.exists():
            return None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "null")
        except (OSError, ValueError) as e:  # ValueError: JSONDecodeError, UnicodeDecodeError
            raise SessionError(f"{self.path}: not a session file ({e})") from e
        if data is not None and not (
            isinstance(data, dict) and all(isinstance(t, dict) for t in data.values())
        ):
            raise SessionError(f"{self.path}: JSON, but not a TinyDB database")
        return data

    def write(self, data: dict) -> None:
        """Replace the file with `data`, atomically."""
        atomic_write_text(self.path, json.dumps(data, ensure_ascii=False))
