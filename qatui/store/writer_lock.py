"""A session's one writer: an OS file lock taken before any work and held for the run's life.

A session folder holds `.writer.lock`. A process that writes the session (a run, a resume, a
table row, an import) takes an exclusive `flock` on it at once and keeps it until its run
ends; a second process is refused in one line naming the first. The OS releases the lock
when its holder dies, however it dies, so a crash leaves no lock behind. The holder writes its
pid into the file so that a refusal can name it, and clears it when it lets go.

Asking whether a session is being written (`holder`) takes a shared lock for an instant and
never waits; a writer meeting such a probe retries for up to `ACQUIRE_S`, so a `sessions list`
never makes a run fail to start.

The lock file is opened without following a link and without waiting (`_open_lock`), and must be a regular file:
a FIFO in its place hung every `sessions list`, and a link to another file had that file truncated by the writer
that cleared its pid.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO

from qatui.errors import SessionError
from qatui.safe_read import file_kind
from qatui.store.files import unwritable_reason

LOCK_FILE = ".writer.lock"
"""The lock file in each session folder (hidden: never listed, never exported)."""
ACQUIRE_S = 2.0
"""How long a writer retries while the lock is held by no live writer (a probe, or one not yet named)."""


class SessionBusy(SessionError):
    """A session is being written by another live process (or another run of this one): `pid` names it."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


def _alive(pid: int) -> bool:
    """Whether a process with this pid exists (one owned by another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_in(fd: int) -> int | None:
    """The pid a holder wrote into the lock file, None when there is none (yet)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and int(text) > 0 else None


def busy_message(session_id: str, pid: int | None, consequence: str, then: str) -> str:
    """'session X is being written by process N, which is still running: CONSEQUENCE; wait ..., then THEN'."""
    who = "another process" if pid is None else f"process {pid}" + (" (this one)" if pid == os.getpid() else "")
    return (f"session {session_id} is being written by {who}, which is still running: {consequence}; "
            f"wait for that run to end, or stop it (Ctrl-C), then {then}")


class WriterLock:
    """The writer lock of the session folder `folder` (or the lock file `name` there: a label file's, in the labels
    folder's `.locks`): `acquire`, then `release` (or die)."""

    def __init__(self, folder: Path, name: str = LOCK_FILE) -> None:
        self.path = Path(folder) / name
        self._file: BinaryIO | None = None  # a file object: dropped unreleased, its collection frees the lock

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._file is not None

    def acquire(self, session_id: str, consequence: str, then: str) -> None:
        """Take the lock or raise `SessionBusy` naming its holder; SessionError when the file cannot be made."""
        if self._file is not None:
            return
        try:
            fd = _open_lock(self.path, os.O_RDWR | os.O_CREAT)
        except NotALock as e:
            raise SessionError(f"{self.path}: {e}: remove it (it is not qatui's lock file), then run again") from None
        except OSError as e:  # a read-only or full disk, a folder gone
            raise SessionError(f"the session folder {self.path.parent} cannot be written: {unwritable_reason(e)}") from None
        file = os.fdopen(fd, "r+b", buffering=0)  # held open for the run's life
        deadline = time.monotonic() + ACQUIRE_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                pid = _pid_in(fd)
                named = pid is not None and _alive(pid)
                if named or time.monotonic() > deadline:
                    file.close()
                    raise SessionBusy(busy_message(session_id, pid if named else None, consequence, then),
                                      pid if named else None) from None
                time.sleep(0.01)  # a probe, or a writer that has not written its pid yet
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            pass  # a full disk: the lock holds all the same, a refusal just cannot name its pid
        self._file = file

    def release(self) -> None:
        """Clear the pid and let go (closing the file releases the lock)."""
        if self._file is None:
            return
        file, self._file = self._file, None
        try:
            os.ftruncate(file.fileno(), 0)
        except OSError:
            pass
        file.close()


def holder(folder: Path) -> int | None:
    """Whether a live process writes the session in `folder`: its pid (0 when it named none), else None.

    Never waits: a shared lock taken and dropped at once. A folder without a lock file has no writer.
    """
    try:
        fd = _open_lock(Path(folder) / LOCK_FILE, os.O_RDONLY)
    except OSError:  # none, or not a lock (a FIFO, a link): no writer holds it; a writer is refused at `acquire`
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _pid_in(fd) or 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class NotALock(OSError):
    """The lock file's path holds something else: a link, a FIFO, a device, a folder."""


def _open_lock(path: Path, flags: int) -> int:
    """A descriptor of the lock file at `path`, opened with `flags`, never through a link nor waiting on a FIFO;
    `NotALock` when it is not a regular file (closed again), OSError as the open raised it."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotALock("is a link, not a lock file") from None
        if e.errno == errno.EISDIR:
            raise NotALock("is a folder, not a lock file") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotALock(f"is {file_kind(mode)}, not a lock file")
    return fd
