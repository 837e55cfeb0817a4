"""A session's results in bounded shards (results-0000.json, ...), so a flush rewrites only the shards that grew.

TinyDB rewrites a whole file on every write, so one ever-growing file costs time quadratic in
the run (docs/LIBRARIES.md#tinydb-writes); shards of at most `size` docs, append-only, keep it linear.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable
from pathlib import Path

from tinydb import TinyDB

from qatui.errors import SessionError
from qatui.store.atomic import AtomicJSONStorage
from qatui.store.files import SCHEMA, check_schema, open_db

DEFAULT_SHARD_SIZE = 200
RESULTS = "results"
"""The table of result docs in each shard."""
FORMAT = "format"
"""The table holding a shard's one `{"schema": SCHEMA}` doc, written with its first result."""

_SHARD_NAME = re.compile(r"results-(\d+)\.json")


def shard_path(folder: Path, number: int) -> Path:
    """The path of shard `number`: results-0000.json, results-0001.json, ..."""
    return folder / f"results-{number:04d}.json"


def shard_numbers(folder: Path) -> list[int]:
    """The numbers of the shard files in `folder`, ascending: 0, 1, ... without a gap, or SessionError naming the
    first shard missing. A flush writes shards oldest first, so a gap is a shard removed, never one not written
    yet: read past, its results (200 finished items) were "not judged yet" and a resume judged them again."""
    numbers = sorted(int(m[1]) for p in folder.glob("results-*.json") if (m := _SHARD_NAME.fullmatch(p.name)))
    for expected, number in enumerate(numbers):
        if number != expected:
            raise SessionError(f"{shard_path(folder, expected)}: damaged: this results file is missing, though "
                               f"{shard_path(folder, number).name} is there: the results it held are gone; put it "
                               "back from a copy of the session")
    return numbers


def shard_docs(path: Path, data: dict | None) -> list[dict]:
    """The result docs of a shard's content; SessionError naming the file if one is malformed or its schema newer."""
    formats = list((data or {}).get(FORMAT, {}).values())
    check_schema(path, formats[0].get("schema") if formats and isinstance(formats[0], dict) else None)
    docs = list((data or {}).get(RESULTS, {}).values())
    for doc in docs:
        ok = (
            isinstance(doc, dict)
            and isinstance(doc.get("seq"), int)
            and isinstance(doc.get("item_id"), str)
            and isinstance(doc.get("judge"), str)
            and (doc.get("status"), type(doc.get("verdict")), type(doc.get("failure")))
            in (("done", dict, type(None)), ("failed", type(None), dict), ("n/a", type(None), type(None)))
            and (doc.get("status") != "n/a" or isinstance(doc.get("not_applicable"), str))
            and (doc.get("status") != "failed" or isinstance(doc["failure"].get("reason"), str))
            and isinstance(doc.get("calls", []), list) and all(isinstance(c, dict) for c in doc.get("calls", []))
        )
        if not ok:
            raise SessionError(f"{path}: damaged: malformed result document {str(doc)[:120]}")
    return docs


def read_shard(path: Path) -> list[dict]:
    """The result docs of the shard file at `path`, read from disk."""
    return shard_docs(path, AtomicJSONStorage(path).read())


class Shards:
    """One session's shards: the open one and those filled since the last flush in memory, older ones on disk.

    Not thread-safe by itself: the session holds its lock around every call.
    """

    def __init__(self, folder: Path, size: int) -> None:
        """Open the last shard of `folder` (shard 0 when none); older shards stay on disk until read.

        SessionError names the last shard if it is damaged (older ones are named when read).
        """
        self.folder = folder
        self.size = size
        numbers = shard_numbers(folder)
        self.number = numbers[-1] if numbers else 0
        self._open = open_db(shard_path(folder, self.number))  # the open shard, full or not
        self._len = len(shard_docs(shard_path(folder, self.number), self._open.storage.read()))
        self._full: dict[int, TinyDB] = {}  # shards filled since the last flush, not on disk yet
        self._pending: list[dict] = []  # docs of the open shard not yet inserted into it (`_settle`)
        self._unwritten = False  # the open shard holds docs its file does not (appended since the last flush)

    def append(self, doc: dict) -> None:
        """Add a result doc to the open shard, in memory, opening the next shard when this one is full.

        Docs wait in a list until the next flush (or the shard filling) inserts them at once:
        TinyDB copies its whole table on each insert, so one at a time costs the square of the shard.
        """
        if self._len >= self.size:
            self._settle()
            self._full[self.number] = self._open
            self.number += 1
            self._open = open_db(shard_path(self.folder, self.number))
            self._len = 0
        if self._len == 0 and not self._open.table(FORMAT).all():
            self._open.table(FORMAT).insert({"schema": SCHEMA})
        self._pending.append(doc)
        self._len += 1
        self._unwritten = True

    def _settle(self) -> None:
        """Insert the docs waiting for the open shard into it (in memory)."""
        if self._pending:
            self._open.table(RESULTS).insert_multiple(self._pending)
            self._pending = []

    def flush(self) -> None:
        """Write, atomically, the shards filled since the last flush (oldest first), then the open one."""
        while self._full:  # oldest first, so the files on disk never skip a shard
            number = next(iter(self._full))
            self._full[number].close()  # closing flushes
            del self._full[number]
        self._settle()
        self._open.storage.flush()
        self._unwritten = False

    def close(self) -> None:
        """Release the open shard (closing it writes what is still in memory)."""
        self._settle()
        self._open.close()

    def pages(self) -> list[Callable[[], list[dict]]]:
        """Every result doc, a shard at a time, oldest shard first (so in sequence order): one reader per shard.

        A shard on disk is read when its reader is called, without the caller's lock (a full shard
        on disk is never rewritten; the open one only grows, atomically), and a damaged one raises
        SessionError naming it while the others still read; the shards holding docs not on disk
        yet are copied now, and come last. The open shard as it is on disk is read from there:
        a viewer that only reads a session never copies it.
        """
        written = not self._unwritten and not self._full
        on_disk = [n for n in shard_numbers(self.folder) if (written or n != self.number) and n not in self._full]
        self._settle()
        in_memory = [[copy.deepcopy(dict(d)) for d in db.table(RESULTS).all()]
                     for db in [*self._full.values(), *([] if written else [self._open])]]
        return [*(functools.partial(read_shard, shard_path(self.folder, n)) for n in on_disk),
                *(functools.partial(list, docs) for docs in in_memory)]
