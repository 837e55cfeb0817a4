"""Sessions on TinyDB: one folder per run, its metadata in one small file, its results in bounded shards.

    <root>/<id>/session.json        table "meta" (one doc), table "summary" (one doc per judge)
    <root>/<id>/results-0000.json   table "results": at most `shard_size` result docs, append-only
    <root>/<id>/results-0001.json   ...

TinyDB rewrites a whole file on every write, so one ever-growing file costs time quadratic in
the run (docs/LIBRARIES.md#tinydb-writes); here a flush rewrites only the shards that gained results and the small
session.json, so cost stays linear. Every result doc carries a sequence
number and the latest per (item_id, judge) wins, so a success recorded after a failure
supersedes it without rewriting an old shard.

This module is the API (`Session`, `SessionStore`); its parts live beside it: `session_file`
(session.json and the statuses), `shards` (the result shards), `index` (which result is
current), `files` (TinyDB files written on flush, orphan temp files) and `credentials` (`scrub`).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import secrets
import shutil
import threading
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError
from tinydb import where

from qatui import __version__
from qatui.errors import SessionError, first_problem
from qatui.events import LLMCallFinished, Verdict
from qatui.paths import LABELS_DIR, SESSION_FILE
from qatui.safe_read import loads_json, read_text
from qatui.store.atomic import atomic_write_text
from qatui.store.credentials import scrub
from qatui.store.files import ORPHAN_AGE_S, SCHEMA, check_writable, open_db, remove_orphans, unwritable_reason
from qatui.store.index import ResultIndex, latest
from qatui.store.session_file import (
    STATUSES,
    UNENDED,
    check_results_held,
    check_shards_present,
    check_status,
    parse_session_data,
    read_session_file,
    reconcile,
    shown_status,
)
from qatui.store.shards import DEFAULT_SHARD_SIZE, Shards, shard_numbers
from qatui.store.writer_lock import SessionBusy, WriterLock, busy_message, holder
from qatui.text import clip, plain, shown_alike
from qatui.ties import stored_digits

__all__ = ["DEFAULT_SHARD_SIZE", "ORPHAN_AGE_S", "SESSION_FILE", "STATUSES", "Session", "SessionStore", "scrub"]


BATCH_KEYS_FILE = "batch-keys.json"
MAX_SESSION_NAME_CHARS = 500
"""The longest session name (`SessionStore.check_new_name`): room for a description, never a page."""
"""In a session's folder: which requests (cache keys) each provider batch of a `--batch` run holds."""


def _now() -> str:
    """Local time with its UTC offset, to the millisecond (so listing order is exact): `created`, `updated`."""
    return datetime.now().astimezone().isoformat(timespec="milliseconds")


def _dump_calls(calls: list[LLMCallFinished]) -> list[dict]:
    """Backbone calls in their JSON form."""
    return [c.model_dump(mode="json") for c in calls]


class Session:
    """One run on disk. Writes wait in memory until `flush()`; thread-safe, so a worker thread may flush."""

    def __init__(self, path: Path, shard_size: int = DEFAULT_SHARD_SIZE, writer: WriterLock | None = None) -> None:
        """Open the session folder `path`, removing orphan temp files; SessionError naming any damaged file.

        `writer` is the folder's writer lock when the caller took it already (a new session's).
        """
        self.path = path
        self.id = path.name
        self._lock = threading.RLock()
        self._writer = writer or WriterLock(path)
        remove_orphans(path)
        session_file = path / SESSION_FILE
        if not session_file.is_file():
            there = session_file.exists() or session_file.is_symlink()
            raise SessionError(f"{session_file}: {'not a regular file' if there else 'missing'}; {path} is not a session")
        self._db = open_db(session_file)
        parse_session_data(session_file, self._db.storage.read())
        self._shards = Shards(path, shard_size)
        self._index_built: ResultIndex | None = None  # built on first need: a viewer never reads every shard
        self._dirty = False  # results recorded since the last flush

    @property
    def _index(self) -> ResultIndex:
        """Which result is current per (item_id, judge); reads every shard the first time (hold the lock)."""
        if self._index_built is None:
            meta = self._db.table("meta").all()[0]  # read before the shards, which a flush writes first
            check_shards_present(self.path, meta)
            index = ResultIndex()
            for page in self._shards.pages():
                for doc in page():
                    index.note(doc)
            check_results_held(self.path, meta, {judge: sum(c.values()) for judge, c in index.progress().items()})
            self._index_built = index
        return self._index_built

    @property
    def meta(self) -> dict:
        """A copy of the session's metadata (see `SessionStore.create`); "running" without a live writer reads
        "interrupted" (`shown_status`). Its "id" is the folder's name, as `SessionStore.list` gives it: a folder
        copied whole kept the stored id of the one it was copied from, and `show`, the Markdown export and the report
        named that other session, which a `delete ID` or `resume ID` then acted on. A name equal to the stored id
        (an unnamed session) is the folder's name too."""
        with self._lock:
            meta = copy.deepcopy(dict(self._db.table("meta").all()[0]))
        if meta.get("id") != self.id:
            if meta.get("name") == meta.get("id"):
                meta["name"] = self.id
            meta["id"] = self.id
        if not self._writer.held:
            meta["status"] = shown_status(self.path, meta.get("status"))
        return meta

    def take_writer(self, consequence: str = "two writers would corrupt it", then: str = "resume") -> None:
        """Become the session's one writer: `SessionBusy` (a SessionError) names a live one.

        Held until `release_writer`, `close`, or this process's death (a crash leaves no lock). This session's files
        were read before the lock was taken, so a writer that goes on to write opens with `SessionStore.open_writer`
        instead; this holds a session others must not write meanwhile.
        """
        self._writer.acquire(self.id, consequence, then)

    def check_writable(self) -> None:
        """SessionError in one line unless the session's folder can be written (read-only, full)."""
        check_writable(self.path, "the session folder")

    def release_writer(self) -> None:
        """Stop being the session's writer (a run ended); another process may resume it now."""
        self._writer.release()

    def record_verdict(self, verdict: Verdict, calls: list[LLMCallFinished]) -> None:
        """Record a judge's verdict on an item with the backbone calls it made; supersedes earlier records."""
        self._append(
            verdict.item_id,
            verdict.judge,
            {
                "status": "done",
                "verdict": verdict.model_dump(mode="json"),
                "failure": None,
                "calls": _dump_calls(calls),
            },
        )

    def record_failure(
        self, item_id: str, judge: str, reason: str, error_type: str, calls: list[LLMCallFinished]
    ) -> None:
        """Record that a judge failed on an item; a later verdict supersedes it (resume retries failures)."""
        self._append(
            item_id,
            judge,
            {
                "status": "failed",
                "verdict": None,
                "failure": {"reason": reason, "error_type": error_type},
                "calls": _dump_calls(calls),
            },
        )

    def record_not_applicable(self, item_id: str, judge: str, reason: str) -> None:
        """Record that a judge cannot judge an item (too few candidates, no reference...): never scored, never failed."""
        self._append(item_id, judge, {"status": "n/a", "verdict": None, "failure": None,
                                      "not_applicable": reason, "calls": []})

    def _append(self, item_id: str, judge: str, fields: dict) -> None:
        """Add one result doc to the open shard, in memory, with the next sequence number."""
        if not item_id or not judge:
            raise ValueError(f"a result needs an item_id and a judge, got {item_id!r} and {judge!r}")
        with self._lock:
            doc = {"seq": self._index.next_seq, "item_id": item_id, "judge": judge, **fields}
            self._shards.append(doc)
            self._index.note(doc)
            self._dirty = True

    def flush(self) -> None:
        """Write, atomically, every shard that gained results, then session.json if it changed.

        session.json then holds each judge's counts (`progress`), so a listing tells what the
        shards hold without reading them, even when the run is killed before its summary.
        """
        with self._lock:
            try:
                if self._dirty:
                    self._shards.flush()
                    self._db.table("meta").update({"updated": _now(), "progress": self._index.progress(),
                                                   "shards": len(shard_numbers(self.path))})
                    self._dirty = False
                self._db.storage.flush()
            except OSError as e:  # each file is replaced whole or not at all: what was saved before stays
                raise SessionError(
                    f"session {self.id} cannot be saved in {self.path}: {unwritable_reason(e)}. Every item reported "
                    f"finished before is saved; once the folder can be written, `qatui sessions resume {self.id}` "
                    "judges the rest") from None

    def close(self) -> None:
        """Flush, release the files and the writer lock."""
        with self._lock:
            try:
                self.flush()
                self._shards.close()
                self._db.close()
            finally:
                self._writer.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def results(self, keep: Callable[[dict], dict] | None = None) -> dict[tuple[str, str], dict]:
        """The latest result doc per (item_id, judge), unflushed ones included; reads every shard.

        `keep`: what of each doc to hold (it must keep `seq`, `item_id` and `judge`), applied as each shard is read,
        so that a reader needing a few fields of each doc (the summary) holds one shard's whole docs at a time,
        never every one."""
        with self._lock:
            meta = self._db.table("meta").all()[0]  # read before the shards, which a flush writes first
            check_shards_present(self.path, meta)
            pages = self._shards.pages()
        docs = (doc for page in pages for doc in page())
        found = latest(docs if keep is None else map(keep, docs))
        check_results_held(self.path, meta, Counter(judge for _, judge in found))
        return found

    def every_result(self, keep: Callable[[dict], dict] | None = None) -> list[dict]:
        """Every result doc ever recorded, in sequence order: the superseded ones too (a failed attempt, with the
        calls it paid for, that a resume judged again), read as `result_pages` reads them. `keep` as in `results`."""
        return [kept for read in self.result_pages() for kept in (read() if keep is None else map(keep, read()))]

    def result_pages(self) -> list[Callable[[], list[dict]]]:
        """Readers of every result doc ever recorded, a shard each, in sequence order; each reads when called.

        For a view that draws its first rows before the rest is read: a later doc for the same
        (item_id, judge) supersedes an earlier one, as in `results()`. A reader of a damaged
        shard raises SessionError naming it; the other readers still work. One more reader comes last, reading no
        shard: once every shard's reader was called, it checks that they held the items session.json counts
        (`check_results_held`), and raises SessionError when they held fewer (a results file lost, or put back from
        an older copy); it returns no doc.
        """
        with self._lock:
            meta = self._db.table("meta").all()[0]  # read before the shards, which a flush writes first
            check_shards_present(self.path, meta)
            pages = self._shards.pages()
        seen: set[tuple[str, str]] = set()
        unread = set(range(len(pages)))

        def read(number: int) -> list[dict]:
            docs = pages[number]()
            seen.update((doc["item_id"], doc["judge"]) for doc in docs)
            unread.discard(number)
            return docs

        def check() -> list[dict]:
            if not unread:
                check_results_held(self.path, meta, Counter(judge for _, judge in seen))
            return []

        return [*(functools.partial(read, number) for number in range(len(pages))), check]

    def verdicts(self, judge: str, results: dict[tuple[str, str], dict] | None = None) -> dict[str, Verdict]:
        """The current verdicts of `judge`, by item id; failed items are absent.

        `results`: what `results()` returned, when the caller has just read it (every shard is read again
        otherwise). A verdict stored before its tied groups were kept gets them from its scores under the
        judge's stored `tie_digits` (`Verdict`).
        """
        verdicts: dict[str, Verdict] = {}
        digits = stored_digits((self.meta.get("judges") or {}).get(judge))
        for (item_id, j), doc in (self.results() if results is None else results).items():
            if j == judge and doc["status"] == "done":
                verdicts[item_id] = stored_verdict(doc["verdict"], str(self.path), judge, item_id, digits)
        return verdicts

    def every_verdict(self) -> dict[str, dict[str, Verdict]]:
        """`verdicts(judge)` of every judge of the session, by judge, reading the shards once for all of them."""
        results = self.results()
        return {judge: self.verdicts(judge, results) for judge in self.meta.get("judges") or {}}

    def finished_keys(self) -> set[tuple[str, str]]:
        """The (item_id, judge) pairs whose latest record is a verdict: what a resume skips."""
        with self._lock:
            return self._index.keys_with("done")

    def not_applicable_keys(self) -> set[tuple[str, str]]:
        """The (item_id, judge) pairs recorded as not applicable."""
        with self._lock:
            return self._index.keys_with("n/a")

    def failed_keys(self) -> set[tuple[str, str]]:
        """The (item_id, judge) pairs whose latest record is a failure: what a resume retries."""
        with self._lock:
            return self._index.keys_with("failed")

    def update_meta(self, **fields: Any) -> None:
        """Change metadata fields (scrubbed of credentials) and stamp `updated`; on disk at the next flush."""
        if "id" in fields:
            raise ValueError("a session's id cannot change")
        if "status" in fields:
            check_status(fields["status"])
        with self._lock:
            self._db.table("meta").update({**scrub(fields), "updated": _now()})

    def record_batch(self, doc: dict, keys: list[str] | None = None) -> None:
        """Store a provider batch's record (meta `batches`, one per id, in order) on disk at once; the first time,
        `keys` too: the cache keys of its requests, its custom ids (`batch-keys.json`, written before the record, so
        a record on disk always has its keys). What a resume reads to collect the batch instead of submitting again.
        """
        with self._lock:
            if keys is not None:
                held = self.batch_keys()
                held[str(doc["id"])] = list(keys)
                atomic_write_text(self.path / BATCH_KEYS_FILE, json.dumps(held))
            batches = list(self._db.table("meta").all()[0].get("batches") or [])
            at = next((i for i, b in enumerate(batches) if b.get("id") == doc["id"]), len(batches))
            batches[at:at + 1] = [copy.deepcopy(doc)]
            self._db.table("meta").update({"batches": batches})
            self._db.storage.flush()

    def batch_keys(self) -> dict[str, list[str]]:
        """Batch id -> the cache keys of its requests (see `record_batch`); empty when the session has none."""
        try:
            data = loads_json(read_text(self.path / BATCH_KEYS_FILE))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:  # ValueError: not JSON, undecodable, or refused (`safe_read`)
            raise SessionError(f"{self.path / BATCH_KEYS_FILE}: damaged: {e}") from e
        if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
            raise SessionError(f"{self.path / BATCH_KEYS_FILE}: damaged: not a table of batch ids")
        return {str(k): [str(key) for key in v] for k, v in data.items()}

    def set_summary(self, judge: str, doc: dict) -> None:
        """Replace the summary of `judge` (counts done/failed and a metrics dict); on disk at the next flush."""
        with self._lock:
            table = self._db.table("summary")
            table.remove(where("judge") == judge)
            table.insert({**copy.deepcopy(doc), "judge": judge})

    def summary(self) -> dict[str, dict]:
        """The summary of each judge, by judge name; for a run not ended (running, interrupted), its counts are
        what the shards hold (`reconcile`), never those of an earlier end."""
        with self._lock:
            stored = parse_session_data(self.path / SESSION_FILE, copy.deepcopy(self._db.storage.read()))[1]
        meta = self.meta
        check_shards_present(self.path, meta)
        if meta.get("status") not in UNENDED:
            return stored
        with self._lock:
            progress = self._index.progress()
        return reconcile(meta, stored, progress, self.path)


def stored_verdict(raw: object, where: str, judge: str, item_id: str, digits: int) -> Verdict:
    """A verdict as stored in a result doc, checked (`Verdict`: finite scores, the fields of its kinds);
    SessionError in one line naming `where`, the judge and the item when a file was edited or damaged (a view
    reading it raw failed with a traceback, or showed a NaN score as done). `digits`: the judge's `tie_digits`."""
    try:
        return Verdict.model_validate(raw, context={"tie_digits": digits})
    except ValidationError as e:  # one line: the first problem, and how many there are
        field, _, message = first_problem(e)
        more = f" (+{e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise SessionError(f"{where}: damaged verdict of {judge} on {item_id}: {field or 'the verdict'}: "
                           f"{message}{more}") from None


class SessionStore:
    """The sessions folder: creates, finds, lists and deletes sessions."""

    def __init__(self, root: Path, shard_size: int = DEFAULT_SHARD_SIZE) -> None:
        """A store over the folder `root` (created on first use) whose sessions hold `shard_size` results a shard."""
        if shard_size < 1:
            raise ValueError(f"shard_size must be at least 1, not {shard_size}")
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise SessionError(f"the sessions folder {self.root} is a file, not a folder")
        self.shard_size = shard_size

    def check_writable(self) -> None:
        """SessionError in one line unless a session can be written here: the folder (made if missing) is a
        folder, not read-only and not full. Called before any work."""
        check_writable(self.root, "the sessions folder")

    def check_new_name(self, name: str | None) -> None:
        """SessionError in one line unless `name` can name a new session here: not blank, at most
        `MAX_SESSION_NAME_CHARS` characters (a name is shown on every list, header and error line: a 100,000-character
        one filled a terminal), and not the id or name of a session, nor one shown alike. None (the id names it)
        passes. Called before any work, and again when the session is made."""
        if name is None:
            return
        if not name.strip():
            raise SessionError("a session name must not be blank: leave --session out to name it by its id")
        if len(name) > MAX_SESSION_NAME_CHARS:
            raise SessionError(f"a session name is at most {MAX_SESSION_NAME_CHARS} characters; this one has "
                               f"{len(name):,}: {clip(name, 40)!r}")
        if any("\ud800" <= char <= "\udfff" for char in name):  # bytes that were no UTF-8 (a shell's $'\x9b')
            raise SessionError(f"a session name must be text: {plain(name)!r} holds bytes that are not UTF-8")
        taken = [taken for e in self.list() for taken in (e["id"], e["name"])]
        if name in taken:
            raise SessionError(f"a session named {name!r} already exists in {self.root}")
        if alike := shown_alike(name, taken):
            raise SessionError(f"a session named {name!r} already exists in {self.root} ({ascii(name)} and "
                               f"{ascii(alike)} differ only in how their Unicode is composed or in invisible "
                               "characters, so they show as the same name)")

    def create(self, meta: dict, name: str | None = None) -> Session:
        """Start a session with id YYYYMMDD-HHMMSS-xxxx and `meta` (scrubbed); session.json is on disk at return.

        The store adds id, name (the id by default), created, updated and qatui_version, and
        status "running" unless `meta` gives one. A name must not already name or be a session.
        """
        status = meta.get("status", "running")
        check_status(status)
        self.check_new_name(name)
        stamp = datetime.now().astimezone()
        while True:
            session_id = f"{stamp:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
            try:  # parents made here: another process's write check removes an empty root it made itself
                (self.root / session_id).mkdir(parents=True)
                break
            except FileExistsError:
                continue
        now = stamp.isoformat(timespec="milliseconds")
        doc = {
            **scrub(meta),
            "id": session_id,
            "name": name or session_id,
            "status": status,
            "created": now,
            "updated": now,
            "qatui_version": __version__,
            "schema": SCHEMA,
        }
        path = self.root / session_id
        writer = WriterLock(path)
        try:
            writer.acquire(session_id, "two writers would corrupt it", "retry")  # before the session exists
            atomic_write_text(path / SESSION_FILE, json.dumps({"meta": {"1": doc}}, ensure_ascii=False))
            return Session(path, self.shard_size, writer)
        except BaseException:
            writer.release()
            shutil.rmtree(path, ignore_errors=True)
            raise

    def open(self, key: str) -> Session:
        """The session with this exact id, else this unique name, else this unique id prefix."""
        return Session(self.folder_of(key), self.shard_size)

    def open_writer(self, key: str, consequence: str = "two writers would corrupt it", then: str = "resume") -> Session:
        """`open`, as the session's one writer: the lock is taken before any of its files is read (`SessionBusy`
        naming a live writer), so what an earlier writer flushed up to its end is what this one reads. Read first,
        a resume kept the shard as it was before the run it followed had flushed its last items, and its first
        flush wrote them away."""
        folder = self.folder_of(key)
        writer = WriterLock(folder)
        writer.acquire(folder.name, consequence, then)
        try:
            return Session(folder, self.shard_size, writer=writer)
        except BaseException:
            writer.release()
            raise

    def folder_of(self, key: str) -> Path:
        """The folder of the session with this exact id, else this unique name, else this unique id prefix."""
        if key in self._ids():
            return self.root / key
        entries = self.list()
        matches = [e for e in entries if e["name"] == key] or [e for e in entries if e["id"].startswith(key)]
        if len(matches) == 1:
            return self.root / matches[0]["id"]
        if matches:
            raise SessionError(f"{key!r} is ambiguous; it matches {_describe(matches)}")
        known = f"sessions: {_describe(entries)}" if entries else "there are none"
        raise SessionError(f"no session {key!r} in {self.root}; {known}")

    def list(self) -> list[dict]:
        """Meta plus "summary" of every session, newest first, from session.json files only (never shards).

        A session whose session.json is missing or damaged is listed with status "damaged" and
        an "error" string, so one bad folder never hides the others. "id" is the folder's name and "name" the one given
        at its start, else the folder's (a session folder copied under another name shows as that name, not as the
        id it was made with); "name_shared" says another session has the same name (a named folder copied whole).
        """
        dated: list[tuple[float, dict]] = []
        for session_id in self._ids():
            folder = self.root / session_id
            try:
                meta, summary = read_session_file(folder / SESSION_FILE)
                meta["status"] = shown_status(folder, meta.get("status"))
                check_shards_present(folder, meta)
                if meta["status"] in UNENDED and isinstance(meta.get("progress"), dict):
                    summary = reconcile(meta, summary, meta["progress"], folder)
                named = meta.get("name") and meta.get("name") != meta.get("id")  # else unnamed: its folder's name
                entry = {**meta, "id": session_id, "name": str(meta["name"]) if named else session_id,
                         "summary": summary}
            except SessionError as e:
                entry = {"id": session_id, "name": session_id, "status": "damaged", "error": str(e), "summary": {}}
            try:
                when = datetime.fromisoformat(entry["created"]).timestamp()
            except (KeyError, TypeError, ValueError):
                when = folder.stat().st_mtime
            dated.append((when, entry))
        dated.sort(key=lambda pair: pair[0], reverse=True)
        names = Counter(entry["name"] for _, entry in dated)
        for _, entry in dated:  # a folder copied whole keeps its name: a view tells the two apart by their ids
            entry["name_shared"] = names[entry["name"]] > 1
        return [entry for _, entry in dated]

    def check_deletable(self, session_id: str) -> None:
        """`SessionBusy` naming the live process writing this session, `SessionError` for a folder that is a link (see
        `delete`): ask before a confirmation, not after it."""
        self._check_no_link(session_id)
        if (pid := holder(self.root / session_id)) is not None:
            raise SessionBusy(busy_message(session_id, pid or None, "deleting it would lose that run's work",
                                           "delete it"), pid or None)

    def delete(self, session_id: str) -> None:
        """Remove a session and all its files; takes only an exact id, since this cannot be undone.

        Refused (`SessionBusy`, naming the process) while a live run writes it: that run's work would be lost.
        The writer lock is held while the files go, so no run can start on it meanwhile.
        """
        if session_id not in self._ids():
            raise SessionError(f"no session {session_id!r} in {self.root}")
        self._check_no_link(session_id)
        folder = self.root / session_id
        writer = WriterLock(folder)
        writer.acquire(session_id, "deleting it would lose that run's work", "delete it")
        try:
            shutil.rmtree(folder)
        except OSError as e:
            raise SessionError(f"session {session_id!r}: could not delete all of {folder}: {e.strerror or e}") from None
        finally:
            writer.release()

    def _check_no_link(self, session_id: str) -> None:
        """SessionError when the session's folder is a link: its files live elsewhere, never deleted through it."""
        folder = self.root / session_id
        if folder.is_symlink():
            raise SessionError(f"session {session_id!r} in {self.root} is a link to {os.path.realpath(folder)}: qatui "
                               "deletes no folder through a link; remove the link itself, or delete the folder it "
                               "points to")

    def _ids(self) -> list[str]:
        """Names of the (non-hidden) folders in the root but the labels folder: the session ids."""
        try:  # gone between a look and the listing (another process removed an empty root): no sessions
            entries = list(self.root.iterdir()) if self.root.is_dir() else []
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(p.name for p in entries if p.is_dir() and not p.name.startswith(".") and p.name != LABELS_DIR)


def _describe(entries: list[dict], limit: int = 10) -> str:
    """'id (name), ...' for an error message, the first `limit` of them."""
    shown = ", ".join(e["id"] if e["name"] == e["id"] else f"{e['id']} ({e['name']})" for e in entries[:limit])
    more = len(entries) - limit
    return shown + (f" and {more} more" if more > 0 else "")
