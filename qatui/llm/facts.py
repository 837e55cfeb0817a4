"""Model facts kept beside the call cache, so that a fully cached rerun builds its requests without LiteLLM.

A request's shape, and so its cache key, depends on what LiteLLM knows of the model: whether it
takes a JSON schema (`supports_response_schema`), whether it reasons and which options it drops
(`llm.reasoning`), whether it returns log-probabilities, its context window (`llm.trim`),
whether its provider is known at all and which of its key variables are missing (the preflight,
`llm.keys`). Asking costs LiteLLM's import (seconds), so each answer is kept as a *fact*: a row of
the `facts` table in the cache folder's `calls.sqlite3` (the call cache's file, `llm.cache`; same
write-ahead log, same handling of a damaged file), keyed by the sha256 of the fact's name, the model
string, the api_base, every backbone setting that changes the answer, and the installed LiteLLM's
version (read from the package's metadata, never imported): upgrading LiteLLM recomputes every fact.
A fact is computed once (importing LiteLLM then), read from the file afterwards, and memoised in the
process. Values are plain JSON; a row that does not read back as a valid value (damaged, or written
by another version of qatui) is computed again and replaced, never an error. Reads and writes never
fail a call: an unreadable or read-only cache folder only means the fact is computed in this process.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sqlite3
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from qatui.llm.cache import DB_NAME
from qatui.store.sqlite_file import SqliteFile

T = TypeVar("T")

TABLE = "CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, fact TEXT NOT NULL, value TEXT NOT NULL)"
"""One row per fact: the key (sha256 of `fact`), what the fact is (its name and inputs, as JSON), its value (JSON)."""


@lru_cache(maxsize=1)
def litellm_version() -> str:
    """The installed LiteLLM's version, from its package metadata (no import); "none" when it is not installed."""
    try:
        return importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        return "none"


class Facts:
    """The facts kept in `root` (a cache folder); `root=None` keeps them in this process only."""

    def __init__(self, root: Path | str | None) -> None:
        self.db_path = None if root is None else Path(root).expanduser() / DB_NAME
        self._file = None if self.db_path is None else SqliteFile(self.db_path, (TABLE,))
        self._memo: dict[tuple[str, str], Any] = {}
        """Values by (name, repr of the inputs): asked on every call, found without encoding the fact as JSON."""
        self._lock = threading.Lock()

    def get(self, name: str, inputs: dict[str, Any], compute: Callable[[], T], valid: Callable[[Any], bool]) -> T:
        """The fact `name` of `inputs` (model, api_base, settings): memoised, else read, else `compute()` and kept.

        `valid` says whether a value read back is one `compute` could have returned; one that is not is
        computed again. `compute` must return plain JSON (bool, int, str, None, lists and dicts of them).
        """
        memo = (name, repr(inputs))  # the same caller passes the same plain inputs, in the same order
        if memo in self._memo:
            return self._memo[memo]
        fact = json.dumps({"fact": name, "litellm": litellm_version(), **inputs}, sort_keys=True, default=str)
        key = hashlib.sha256(fact.encode("utf-8")).hexdigest()
        found = self._read(key)
        if found is not None:
            try:
                value = json.loads(found)
            except ValueError:
                value = None
            else:
                if valid(value):
                    with self._lock:
                        self._memo[memo] = value
                    return value
        value = compute()
        text = json.dumps(value)  # plain JSON only: a value that is not fails here, in the code that made it
        if json.loads(text) != value:
            raise TypeError(f"fact {name!r}: {value!r} is not plain JSON")
        self._write(key, fact, text)
        with self._lock:
            self._memo[memo] = value
        return value

    def _read(self, key: str) -> str | None:
        """The value's JSON text, or None (no file, no row, unreadable)."""
        if self._file is None:
            return None
        try:
            db = self._file.connection(create=False)
            row = db.execute("SELECT value FROM facts WHERE key = ?", (key,)).fetchone() if db else None
        except (sqlite3.Error, OSError):
            return None
        return row[0] if row and isinstance(row[0], str) else None

    def _write(self, key: str, fact: str, text: str) -> None:
        """Keep a fact; a folder that cannot be written only means it is computed again next time."""
        if self._file is None:
            return
        try:
            db = self._file.connection(create=True)
            if db is not None:
                db.execute("INSERT OR REPLACE INTO facts (key, fact, value) VALUES (?, ?, ?)", (key, fact, text))
        except (sqlite3.Error, OSError):
            pass


_stores: dict[str, Facts] = {}
_stores_lock = threading.Lock()


def facts_at(root: Path | str | None) -> Facts:
    """The one `Facts` of a cache folder in this process (its memo shared by every client using the folder)."""
    name = "" if root is None else str(Path(root).expanduser())
    with _stores_lock:
        if name not in _stores:
            _stores[name] = Facts(root)
        return _stores[name]


def is_bool(value: Any) -> bool:
    """A fact that is True or False."""
    return isinstance(value, bool)


def is_window(value: Any) -> bool:
    """A context window: a positive int, or None (unknown)."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0)
