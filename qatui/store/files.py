"""A session folder's TinyDB files: opened to write only when flushed, and temp files a killed writer left."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tinydb import TinyDB
from tinydb.middlewares import CachingMiddleware

from qatui.store.atomic import AtomicJSONStorage

SCHEMA = 1
"""The version of the session format (session.json's meta `schema`, each shard's `format` table) this qatui
writes and reads. A file stating a higher one was written by a newer qatui: it is refused with its name and
left untouched, never read half-understood nor rewritten in the older format. A file stating none is schema 1."""

ORPHAN_AGE_S = 60.0
"""A temp file older than this is a killed writer's orphan; a younger one may be a live writer's."""


def remove_orphans(folder: Path) -> None:
    """Delete temp files a killed writer left behind (docs/LIBRARIES.md#tinydb-writes), sparing young ones a live writer may own."""
    cutoff = time.time() - ORPHAN_AGE_S
    for tmp in folder.glob(".*.tmp"):
        try:
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink()
        except FileNotFoundError:  # its writer renamed or removed it meanwhile
            pass


PROBE_BYTES = 16 * 1024
"""What `check_writable` writes: a folder that cannot take this much cannot take a session's first shards."""


def unwritable_reason(error: OSError) -> str:
    """Why a write failed, as people say it: the disk is full, a read-only file system, permission denied."""
    import errno

    return {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
            errno.EROFS: "it is on a read-only file system", errno.EACCES: "permission denied",
            errno.EPERM: "permission denied", errno.ENOTDIR: "a file is in its path"}.get(
        error.errno, error.strerror or str(error))


def check_writable(folder: Path, what: str) -> None:
    """SessionError in one line unless `folder` (made if missing) takes a file of `PROBE_BYTES`, synced.

    Called before any work, so a read-only or full disk is refused before a preflight call is paid for.
    """
    import os

    from qatui.errors import SessionError

    if folder.exists() and not folder.is_dir():
        raise SessionError(f"{what} {folder} is a file, not a folder")
    probe = folder / f".write-check.{os.getpid()}.tmp"  # `.*.tmp`: `remove_orphans` clears one a kill left
    made = [p for p in (folder, *folder.parents) if not p.exists()]  # removed again: a refusal leaves no folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as f:
            f.write(b"\0" * PROBE_BYTES)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise SessionError(f"{what} {folder} cannot be written: {unwritable_reason(e)}") from None
    finally:
        for path in (probe, *made):
            try:
                path.unlink() if path is probe else path.rmdir()
            except OSError:
                pass


def open_db(path: Path) -> TinyDB:
    """A TinyDB whose writes stay in memory until `db.storage.flush()`; reads now, so damage fails at open."""
    db = TinyDB(path, storage=CachingMiddleware(AtomicJSONStorage))
    db.storage.WRITE_CACHE_SIZE = sys.maxsize  # per instance: never flush on its own
    db.storage.read()
    return db


def check_schema(path: Path, stated: object) -> None:
    """SessionError naming `path` when the schema it states is not one this qatui reads (None: schema 1)."""
    from qatui import __version__
    from qatui.errors import SessionError

    version = 1 if stated is None else stated
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionError(f"{path}: damaged: schema must be a whole number, not {stated!r}")
    if version > SCHEMA:
        raise SessionError(f"{path}: written by a newer qatui (session schema {version}; qatui {__version__} reads "
                           f"schema {SCHEMA} and older): upgrade qatui to open this session; the file was left as it is")
