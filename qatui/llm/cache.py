"""A content-addressed on-disk cache of every LLM call (LiteLLM's own crashes on its first hit).

The key is the sha256 of the canonical JSON of everything that can change the answer:
model, api_base, messages, temperature, max_tokens, seed and the response format (as a
JSON schema), `logprobs` / `top_logprobs` when a call asks for them, `reasoning_effort` / `thinking`
when a call sends them, and `repeat` for a call of a repeated judgement past its first (`llm.repeat`);
each is absent otherwise, so every other call keeps its key. An option the model refuses is left out
of the request (`llm.reasoning`), and so keyed as absent (None). Not the API key (a rotated key gives the same answer,
and a key must never be written anywhere), not the stream flag (the final text is what is
cached).

Entries live in one SQLite file, `<dir>/calls.sqlite3` (write-ahead log, one row per call:
`{"key", "request", "response": {"text", "usage", "cost_usd", "model", "finish_reason"
[, "thinking"] [, "logprobs"]}, "created"}` as JSON; "thinking" is what a reasoning model wrote
apart from its answer, never the answer). A file per call cost 0.7 ms of CPU to create on the
benchmark machine, and 1.5 ms more for each new folder, against 0.05 ms for a row (bench/NOTES.md);
several processes and threads share the file safely. Entries written by earlier versions, one
file per call at `<dir>/<key[:2]>/<key>.json`, are still read. The key is also
`LLMCallFinished.prompt_hash`, so a transcript viewer can read a call's prompt back with
`CallCache.load(key)`. A call that failed for good leaves its request only (no "response"),
so its prompt can be shown too; it is never a hit. The answers an item failed on (it failed on what
they said, not on a call: `AnswersUsed`) are forgotten the same way, so that a resume asks them again
instead of replaying the same unusable answer for ever.

`--no-cache` (`use_cache=False`) skips reads only: the fresh answer is still written (it
replaces the old one), so every `prompt_hash` in a session can be looked up here.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from qatui.store.sqlite_file import SqliteFile

CACHE_FORMAT = 1
"""Bumped when the meaning of a cached answer changes; part of every key."""

KEY_FIELDS = ("model", "api_base", "messages", "temperature", "max_tokens", "seed", "response_format")
"""The request fields the key covers; anything else in a request (stream flags, keys) is ignored."""
OPTIONAL_KEY_FIELDS = ("logprobs", "top_logprobs", "repeat", "reasoning_effort", "thinking")
"""Fields the key covers only when a request sets them (so adding them changed no existing key)."""

DB_NAME = "calls.sqlite3"
TABLE = "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, entry TEXT NOT NULL)"
ANSWERED = ("CREATE TABLE IF NOT EXISTS answered (model TEXT NOT NULL, api_base TEXT NOT NULL, "
            "PRIMARY KEY (model, api_base))")
"""The backbones (model, api_base; "" for none) the cache has written an answer of, noted with the first one a
`CallCache` writes: `holds_answers_of` reads it in one lookup. Absent from a file an earlier version wrote, and
empty until its next answer: that reads as "no answers", which only makes a run check its backbone before any work."""


class AnswersUsed:
    """The cache entries whose answers one (item, judge) task read, hits and fresh ones: if the task then fails
    on those answers (a refusal re-asked and refused again, say), `forget` turns them back into misses."""

    def __init__(self) -> None:
        self.entries: list[tuple[CallCache, str]] = []

    def forget(self) -> None:
        """Keep every entry's request, drop its answer (a write that fails leaves it: the item is failed anyway)."""
        for cache, key in self.entries:
            try:
                cache.forget(key)
            except OSError:
                pass


ANSWERS_USED: ContextVar[AnswersUsed | None] = ContextVar("answers_used", default=None)
"""Set by the runner around each task; `LLMClient` adds each answer it hands a judge."""


def canonical_request(request: dict[str, Any]) -> dict[str, Any]:
    """The part of a request that decides the answer, with the format version."""
    optional = {name: request[name] for name in OPTIONAL_KEY_FIELDS if request.get(name) is not None}
    return {"format": CACHE_FORMAT, **{name: request.get(name) for name in KEY_FIELDS}, **optional}


def cache_key(request: dict[str, Any]) -> str:
    """sha256 over `canonical_request(request)`, as sorted-key JSON."""
    text = json.dumps(canonical_request(request), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _backbone_of(request: dict[str, Any]) -> tuple[str, str]:
    """(model, api_base or "") of a request: the backbone `ANSWERED` notes."""
    return str(request.get("model") or ""), str(request.get("api_base") or "")


class CallCache:
    """The cache folder. Reads never raise: a missing or damaged entry, or an unreadable file, is a miss.

    A write that fails raises `OSError` (the caller goes on without caching). The file is a
    `SqliteFile`: a connection per thread, and a file that is no database set aside
    (`calls.sqlite3.damaged-<time>`) for a new one.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self.db_path = self.root / DB_NAME
        self._file = SqliteFile(self.db_path, (TABLE,))
        self._legacy: bool | None = None
        self._noted: set[tuple[int, tuple[str, str]]] = set()
        """(file, backbone) pairs this object has noted in `answered`: a file replaced mid-run is noted afresh."""

    def _has_legacy_entries(self) -> bool:
        """Whether the folder holds the file-per-call layout's folders (two hex characters), looked at once:
        a miss then costs no file lookup."""
        if self._legacy is None:
            try:
                self._legacy = any(p.is_dir() and len(p.name) == 2 and all(c in "0123456789abcdef" for c in p.name)
                                   for p in self.root.iterdir())
            except OSError:
                self._legacy = False
        return self._legacy

    def legacy_path(self, key: str) -> Path:
        """Where an earlier version kept the entry of `key` (a file per call, by its first two characters)."""
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The stored entry (request, and response when the call succeeded), or None."""
        text = self._read(key)
        if text is None:
            if not self._has_legacy_entries():
                return None
            try:
                text = self.legacy_path(key).read_text(encoding="utf-8")
            except OSError:
                return None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # an edited or damaged entry (nested past the parser's depth too)
            return None
        return data if isinstance(data, dict) and isinstance(data.get("request"), dict) else None

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached response of a successful call with this key, or None."""
        entry = self.load(key)
        response = entry.get("response") if entry else None
        if not isinstance(response, dict) or not isinstance(response.get("text"), str):
            return None
        if (noted := (self._file.opening(), _backbone_of(entry["request"]))) not in self._noted:
            try:  # a file from before `ANSWERED`
                self._note(noted[1], self._file.connection(create=True))
            except (sqlite3.Error, OSError):  # a read-only file: its answers still read; the check is made before the run
                self._noted.add(noted)  # tried once, not at every hit
        return response

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any] | None) -> None:
        """Store a call; `response=None` records the request of a failed call (never over an answer)."""
        if response is None and self.get(key) is not None:
            return
        entry: dict[str, Any] = {"key": key, "request": canonical_request(request), "created": time.time()}
        if response is not None:
            entry["response"] = response
        text = json.dumps(entry, ensure_ascii=False, default=str)
        try:
            db = self._file.connection(create=True)
            assert db is not None  # made when missing
            db.execute("INSERT OR REPLACE INTO calls (key, entry) VALUES (?, ?)", (key, text))
            backbone = _backbone_of(request)
            if response is not None and (self._file.opening(), backbone) not in self._noted:
                self._note(backbone, db)
        except sqlite3.Error as e:
            raise OSError(f"{self.db_path}: {e}") from e

    def _note(self, backbone: tuple[str, str], db: sqlite3.Connection | None) -> None:
        """Note in `ANSWERED` that the cache holds an answer of `backbone` (once per object)."""
        assert db is not None  # made when missing
        db.execute(ANSWERED)  # made by a write, never by opening: a read-only file from before it still reads
        db.execute("INSERT OR IGNORE INTO answered (model, api_base) VALUES (?, ?)", backbone)
        self._noted.add((self._file.opening(), backbone))

    def holds_answers_of(self, model: str, api_base: str | None) -> bool:
        """Whether this cache has written an answer of `model` at `api_base` (`ANSWERED`): then a run on that
        backbone may be answered from here without it, and its live check waits for a call the cache cannot answer
        (`llm.preflight`). False when unreadable, and for answers written by a version before the table."""
        try:
            db = self._file.connection(create=False)
            row = db.execute("SELECT 1 FROM answered WHERE model = ? AND api_base = ?",
                             (model, api_base or "")).fetchone() if db else None
        except (sqlite3.Error, OSError):
            return False
        return row is not None

    def forget(self, key: str) -> None:
        """Make `key` a miss again: its request is kept (its prompt can still be read back), its answer dropped."""
        entry = self.load(key)
        if entry is None or "response" not in entry:
            return
        text = json.dumps({"key": key, "request": entry["request"], "created": time.time()},
                          ensure_ascii=False, default=str)
        try:
            db = self._file.connection(create=True)
            assert db is not None  # made when missing
            db.execute("INSERT OR REPLACE INTO calls (key, entry) VALUES (?, ?)", (key, text))
        except sqlite3.Error as e:
            raise OSError(f"{self.db_path}: {e}") from e

    def completion_means(self) -> dict[tuple[str, str], tuple[float, int]]:
        """(model, purpose) -> (mean completion tokens, answers) over the answered calls held; purpose "" is
        every purpose of the model together. What `run --plan` expects an answer to cost. Empty when unreadable."""
        query = ("SELECT json_extract(entry, '$.request.model'), coalesce(json_extract(entry, '$.response.purpose'), '?'),"
                 " sum(json_extract(entry, '$.response.usage.completion_tokens')), count(*) FROM calls"
                 " WHERE json_type(entry, '$.response.usage.completion_tokens') IN ('integer', 'real')"
                 " GROUP BY 1, 2")
        try:
            db = self._file.connection(create=False)
            rows = db.execute(query).fetchall() if db else []
        except (sqlite3.Error, OSError):
            return {}
        means: dict[tuple[str, str], tuple[float, int]] = {}
        totals: dict[str, tuple[float, int]] = {}
        for model, purpose, tokens, n in rows:
            if not isinstance(model, str) or not n:
                continue
            means[(model, str(purpose))] = (float(tokens) / n, int(n))
            total, count = totals.get(model, (0.0, 0))
            totals[model] = (total + float(tokens), count + int(n))
        for model, (total, count) in totals.items():
            means[(model, "")] = (total / count, count)
        return means

    def answer_texts(self, model: str, purpose: str, limit: int = 200) -> list[str]:
        """The texts of up to `limit` answers held for calls of `model` with `purpose`, newest first: what `run --plan`
        measures a judge's embedded texts on. Empty when unreadable."""
        query = ("SELECT json_extract(entry, '$.response.text') FROM calls"
                 " WHERE json_extract(entry, '$.request.model') = ?"
                 " AND json_extract(entry, '$.response.purpose') = ? AND json_type(entry, '$.response.text') = 'text'"
                 " ORDER BY json_extract(entry, '$.created') DESC LIMIT ?")
        try:
            db = self._file.connection(create=False)
            rows = db.execute(query, (model, purpose, limit)).fetchall() if db else []
        except (sqlite3.Error, OSError):
            return []
        return [text for (text,) in rows if isinstance(text, str)]

    # -- the file ------------------------------------------------------------------------------

    def _read(self, key: str) -> str | None:
        """The entry's JSON text from the database, or None (no file, no row, or unreadable)."""
        try:
            db = self._file.connection(create=False)
            row = db.execute("SELECT entry FROM calls WHERE key = ?", (key,)).fetchone() if db else None
        except (sqlite3.Error, OSError):
            return None
        return row[0] if row else None
