"""Sessions on TinyDB: a folder per run, written atomically, results in bounded shards."""

from qatui.store.atomic import AtomicJSONStorage, atomic_write_text
from qatui.store.session import STATUSES, Session, SessionStore, scrub

__all__ = ["STATUSES", "AtomicJSONStorage", "Session", "SessionStore", "atomic_write_text", "scrub"]
