"""What the local models computed, kept on disk so that a rerun in a new process computes nothing again.

The call cache makes a rerun's LLM calls free; this does the same for the models that run on
the machine: sentence vectors and NLI probabilities. One SQLite file, `<cache dir>/models.sqlite3`
(a `SqliteFile`), one row per output: the key is the SHA-256 of the model's identity and the
exact input, the value the output's bytes (float32). A model's identity names its files (their
names, sizes and modification times), so a changed model never reads an old model's outputs.

Reads never raise: a missing or unreadable file, or a damaged row, is a miss. Writes raise
`OSError`; callers go on without storing.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from qatui.store.sqlite_file import SqliteFile

DB_NAME = "models.sqlite3"
TABLE = "CREATE TABLE IF NOT EXISTS outputs (key BLOB PRIMARY KEY, value BLOB NOT NULL)"
CHUNK = 500
"""Keys per `IN (...)` query (SQLite allows 32,766 parameters; smaller chunks keep each query cheap)."""


def files_identity(folder: Path, *extra: str) -> str:
    """A model's identity from its folder: each file's name, size and modification time (Python files and
    subfolders aside: a package's bytecode changes without the model changing), and `extra`.

    Stat, not content: a few microseconds a file where hashing 90 MB of weights takes a third of
    a second; a file rewritten with the same bytes only costs a recomputation.
    """
    digest = hashlib.sha256("\0".join(extra).encode("utf-8"))
    for path in sorted(p for p in folder.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")):
        stat = path.stat()
        digest.update(f"\0{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:32]


class ModelOutputs:
    """The store in the cache folder `root`: bytes by (model identity, input text)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self.db_path = self.root / DB_NAME
        self._file = SqliteFile(self.db_path, (TABLE,))

    @staticmethod
    def key(identity: str, text: str) -> bytes:
        """The row key of one input of one model."""
        return hashlib.sha256(f"{identity}\0{text}".encode("utf-8", "surrogatepass")).digest()

    def get_many(self, identity: str, texts: Sequence[str]) -> list[bytes | None]:
        """The stored bytes of each text, None where there are none (or the file cannot be read)."""
        keys = [self.key(identity, t) for t in texts]
        found: dict[bytes, bytes] = {}
        try:
            db = self._file.connection(create=False)
            if db is None:
                return [None] * len(texts)
            for start in range(0, len(keys), CHUNK):
                chunk = keys[start : start + CHUNK]
                rows = db.execute(f"SELECT key, value FROM outputs WHERE key IN ({','.join('?' * len(chunk))})",
                                  chunk).fetchall()
                found.update((bytes(k), bytes(v)) for k, v in rows)
        except (sqlite3.Error, OSError):
            return [None] * len(texts)
        return [found.get(k) for k in keys]

    def put_many(self, identity: str, items: Iterable[tuple[str, bytes]]) -> None:
        """Store each (text, bytes) of one model, in one transaction; `OSError` when the file cannot be written."""
        rows = [(self.key(identity, text), value) for text, value in items]
        if not rows:
            return
        try:
            db = self._file.connection(create=True)
            assert db is not None  # made when missing
            with db:  # one transaction: one write to the log, not one a row
                db.execute("BEGIN")
                db.executemany("INSERT OR REPLACE INTO outputs (key, value) VALUES (?, ?)", rows)
        except sqlite3.Error as e:
            raise OSError(f"{self.db_path}: {e}") from e
