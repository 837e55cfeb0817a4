"""Where a command writes its `-o FILE`: checked before any work, so a run's paid-for result is never lost to a
folder given as the file (a traceback after `qatui table` or `checklist generate` had done all their calls), and
written by one rule (`write_output`), so that a named pipe, a device or a link is written to, never replaced."""

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


def write_output(path: str | os.PathLike[str], text: str) -> Path:
    """Write a command's `-o FILE` as the user named it; the file written (a link's target).

    A regular file (or a new one) is written atomically, the old file or the new, never half of one, and keeps
    its mode (a new one is readable as any new file is, not the temp file's 0600). A symlink is written through
    to the file it names; a FIFO or a device (`-o /dev/stdout`, a named pipe another program reads) is written
    into. Renamed over, each was replaced by a plain file: a pipe's reader got nothing, a link's target was
    never written, and as root `-o /dev/full` replaced the device. A failure to write (a full disk, a read-only
    file system, a link loop) is one line naming the file (`OutputPathError`), never a traceback.
    """
    from qatui.store.atomic import atomic_write_text

    out = Path(path).expanduser()
    try:
        try:
            target = Path(os.path.realpath(out, strict=True))
        except FileNotFoundError:  # a new file, or a link to one not made yet: made where the link points
            target = Path(os.path.realpath(out))
        if target.exists() and not target.is_file():  # a FIFO, a device: written as asked, never renamed over
            with open(target, "w", encoding="utf-8") as stream:
                stream.write(text)
            return target
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
        atomic_write_text(target, text)
        target.chmod(mode)
    except OSError as e:
        raise OutputPathError(f"cannot write {out}: {e.strerror or e}") from None
    return target


def _umask() -> int:
    """The process's umask (read by setting it, then set back)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask
