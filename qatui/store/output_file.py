"""Where a command writes its `-o FILE`: checked before any work, so a run's paid-for result is never lost to a
folder given as the file (a traceback after `qatui table` or `checklist generate` had done all their calls), and
written by one rule (`write_output`), so that a named pipe, a device or a link is written to, never replaced."""

from __future__ import annotations

import os
import stat
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
            found = os.stat(out)  # through any link: `/dev/stdout` is a link to a pipe or a terminal
        except FileNotFoundError:  # a new file, or a link to one not made yet: made where the link points
            found = None
        if found is not None and not stat.S_ISREG(found.st_mode):  # a FIFO, a device: written into, never replaced
            with open(out, "w", encoding="utf-8") as stream:
                stream.write(text)
            return out
        target = Path(os.path.realpath(out))  # the regular file a link names, or the new one
        atomic_write_text(target, text)
        target.chmod(stat.S_IMODE(found.st_mode) if found is not None else 0o666 & ~_umask())
    except OSError as e:  # a link loop (ELOOP), a full disk, a read-only file system
        raise OutputPathError(f"cannot write {out}: {e.strerror or e}") from None
    return target


def _umask() -> int:
    """The process's umask (read by setting it, then set back)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask
