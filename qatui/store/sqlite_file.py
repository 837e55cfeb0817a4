"""One SQLite file shared by threads and processes: the call cache and the model-output store sit on it.

Each thread gets its own connection (autocommit, write-ahead log, `synchronous = NORMAL`: a
power cut may lose the last rows, never corrupt the file), made on first use with the file's
tables. Two processes making the file at once are retried while SQLite says "locked"; a file
that is not a SQLite database at all is moved aside (`<name>.damaged-<time>`, its -wal and -shm
with it) and a new one begun, so one bad file never turns a cache off for good. A file deleted or
replaced while open (a user clearing the cache mid-run) is noticed at the next use, by its inode,
and opened again: writes never go on into a file no one can read any more.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's write to the same file before it gives up."""
SETUP_ATTEMPTS = 20
"""Tries at opening the file while another process is making it (about 4 s in all)."""


class SqliteFile:
    """`path`, with `tables` (CREATE TABLE IF NOT EXISTS statements) made when it is opened."""

    def __init__(self, path: Path, tables: tuple[str, ...]) -> None:
        self.path = path
        self.tables = tables
        self._local = threading.local()
        self._openings = 0
        self._count_lock = threading.Lock()

    def connection(self, *, create: bool) -> sqlite3.Connection | None:
        """This thread's connection; None when the file does not exist and `create` is False.

        Raises `sqlite3.OperationalError` (locked, read-only, disk full) and `OSError` (no folder).
        """
        db = getattr(self._local, "db", None)
        if db is not None:
            if self._identity() == self._local.identity:
                return db
            self._local.db = None  # deleted or replaced under us: its rows would go where no one reads them
            db.close()
        if not create and not self.path.exists():
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = self._open()
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError):  # locked, read-only, full: not damage
                raise
            stamp = int(time.time())
            for part in ("", "-wal", "-shm"):  # its log goes with it: never replayed into the new file
                damaged = self.path.with_name(f"{self.path.name}{part}")
                if damaged.exists():
                    damaged.replace(self.path.with_name(f"{self.path.name}.damaged-{stamp}{part}"))
            db = self._open()
        with self._count_lock:
            self._openings += 1
            self._local.opening = self._openings
        self._local.db, self._local.identity = db, self._identity()
        return db

    def opening(self) -> int:
        """Which opening of the file this thread's connection is (0 before one is made; each new connection,
        in any thread, gets the next number): what was written through one belongs to the file it had open,
        and is gone from the path once that file is replaced. Not the inode: a new file may reuse the old one's."""
        return getattr(self._local, "opening", 0) if getattr(self._local, "db", None) is not None else 0

    def _identity(self) -> tuple[int, int] | None:
        """The file's (device, inode), None when it is gone."""
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _open(self) -> sqlite3.Connection:
        """A connection in autocommit, write-ahead-log mode, the tables made if missing."""
        attempt = 1
        while True:
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                for table in self.tables:
                    db.execute(table)
                return db
            except sqlite3.Error as e:
                db.close()
                # two processes making the file at once: switching it to WAL answers "locked" without waiting
                if not isinstance(e, sqlite3.OperationalError) or "locked" not in str(e) or attempt == SETUP_ATTEMPTS:
                    raise
            time.sleep(0.02 * attempt)
            attempt += 1
