"""A session folder's TinyDB files: opened to write only when flushed, and temp files a killed writer left."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tinydb import TinyDB
from tinydb.middlewares import CachingMiddleware

from qatui.store.atomic import AtomicJSONStorage

ORPHAN_AGE_S = 60.0
"""A temp file older than this is a killed writer's orphan; a younger one may be a live writer's."""


def remove_orphans(folder: Path) -> None:
    """Delete temp files a killed writer left behind (STYLE.md §7), sparing young ones a live writer may own."""
    cutoff = time.time() - ORPHAN_AGE_S
    for tmp in folder.glob(".*.tmp"):
        try:
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink()
        except FileNotFoundError:  # its writer renamed or removed it meanwhile
            pass


def open_db(path: Path) -> TinyDB:
    """A TinyDB whose writes stay in memory until `db.storage.flush()`; reads now, so damage fails at open."""
    db = TinyDB(path, storage=CachingMiddleware(AtomicJSONStorage))
    db.storage.WRITE_CACHE_SIZE = sys.maxsize  # per instance: never flush on its own
    db.storage.read()
    return db
