"""Where a command writes its `-o FILE`: checked before any work, so a run's paid-for result is never lost to a
folder given as the file (a traceback after `qatui table` or `checklist generate` had done all their calls)."""

from __future__ import annotations

import os
from pathlib import Path

from qatui.errors import QatuiError


class OutputPathError(QatuiError):
    """The output cannot be written where asked: a folder, a missing folder, no permission."""


def check_output(path: str | os.PathLike[str], example: str) -> Path:
    """The output file, refused when it is a folder (`example` names a file to write in it instead) or its folder
    is missing or read-only. A FIFO or a device passes: `-o /dev/stdout` and a named pipe are written as asked."""
    out = Path(path).expanduser()
    if out.is_dir():
        raise OutputPathError(f"{out} is a folder: -o takes a file name, e.g. {out / example}")
    folder = out.parent
    if not folder.is_dir():
        raise OutputPathError(f"cannot write {out}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise OutputPathError(f"cannot write {out}: no permission to write in {folder}")
    return out
