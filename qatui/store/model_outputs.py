"""What the local models computed, kept on disk so that a rerun in a new process computes nothing again.

The call cache makes a rerun's LLM calls free; this does the same for the models that run on
the machine: sentence vectors and NLI probabilities. One SQLite file, `<cache dir>/models.sqlite3`
(a `SqliteFile`), one row per output: the key is the SHA-256 of the model's identity and the
exact input, the value the output's bytes (float32). A model's identity names its files (their
names, sizes and modification times), so a changed model never reads an old model's outputs.

A served model (`[embedders.NAME]`, `[nli_servers.NAME]`) is known by what its probe learned from the
server (an embedder's vector length; an NLI server's model, labels and window), which is part of its
identity. Those facts are kept beside its outputs, in the table `probed` of the same file, written in
the transaction that writes its outputs (never by a read): so a later run finds the identity of the
outputs it would read without asking the server, and can put the probe off until the first input the
store cannot answer (`judges.resources`).

Reads never raise: a missing or unreadable file, or a damaged row, is a miss. Writes raise
`OSError`; callers go on without storing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from qatui.store.sqlite_file import SqliteFile


@dataclass(frozen=True)
class Probed:
    """What a served model's probe learned (`facts`, a JSON object) under `key` (its kind and settings)."""

    key: str
    facts: dict[str, Any]

class PutOffCheck(Protocol):
    """A served model's probe put off until a run's first input the store cannot answer (`llm.deferred.DeferredCheck`,
    wired by `judges.resources`; the embedders and NLI scorers take it through this protocol, never importing the LLM
    package): made once; when it fails, it stops the run (in the awaiting task's context) and raises."""

    @property
    def passed(self) -> bool:
        """Whether it has been made and passed: the server's outputs may be asked for and used."""

    async def before_call(self) -> None:
        """Make it (once), or wait for it; raise with the reason when the server cannot be used."""


DB_NAME = "models.sqlite3"
TABLE = "CREATE TABLE IF NOT EXISTS outputs (key BLOB PRIMARY KEY, value BLOB NOT NULL)"
PROBED = "CREATE TABLE IF NOT EXISTS probed (key TEXT PRIMARY KEY, facts TEXT NOT NULL)"
"""What a served model's probe learned (JSON), by the settings it was asked with (`Probed.key`)."""
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

    def recall(self, key: str) -> dict[str, Any] | None:
        """The facts kept under `key` with a served model's outputs (`Probed`); None when there are none (no
        file, no table yet: no served model's outputs written), or the file or the row cannot be read."""
        try:
            db = self._file.connection(create=False)
            row = None if db is None else db.execute("SELECT facts FROM probed WHERE key = ?", (key,)).fetchone()
            facts = None if row is None else json.loads(row[0])
        except (sqlite3.Error, OSError, ValueError):
            return None
        return facts if isinstance(facts, dict) else None

    def put_many(self, identity: str, items: Iterable[tuple[str, bytes]], probed: Probed | None = None) -> None:
        """Store each (text, bytes) of one model, in one transaction, with what its probe learned when it is a
        served model (`probed`); `OSError` when the file cannot be written."""
        rows = [(self.key(identity, text), value) for text, value in items]
        if not rows:
            return
        try:
            db = self._file.connection(create=True)
            assert db is not None  # made when missing
            with db:  # one transaction: one write to the log, not one a row
                db.execute("BEGIN")
                db.executemany("INSERT OR REPLACE INTO outputs (key, value) VALUES (?, ?)", rows)
                if probed is not None:  # the table made by this write: a read never changes an older file
                    db.execute(PROBED)
                    db.execute("INSERT OR REPLACE INTO probed (key, facts) VALUES (?, ?)",
                               (probed.key, json.dumps(probed.facts, sort_keys=True)))
        except sqlite3.Error as e:
            raise OSError(f"{self.db_path}: {e}") from e
