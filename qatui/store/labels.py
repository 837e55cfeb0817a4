"""People's labels beside the sessions: one small TinyDB file per (annotator, dataset), written atomically.

    <sessions-dir>/labels/<annotator>/<content-hash[:16]>.json
        table "meta"   (one doc): annotator, dataset {name, path, format, content_hash}, status, pid, created, updated
        table "labels" (one doc per item): a `qatui.data.labels.Label`, the latest one given

Every label is on disk when `put` returns (temp file, fsync, rename: docs/LIBRARIES.md#tinydb-writes), so a kill
at any moment leaves the file as it was before the label or after it, never half of one.
Labels are made by hand, so a file stays small (1,000 labels ≈ 200 KB) and one file per
pass suffices. A pass open for writing holds an OS file lock (`flock`, `writer_lock.WriterLock`, as a session's
writer does) on `<labels>/.locks/<annotator>/<content-hash[:16]>.lock`, taken before the file is read; a second
writer (another labelling screen, an import) is refused in one line naming the first while that process lives,
however close together the two start, and a crashed one leaves no lock (the OS drops it). The lock files stay:
one removed could be locked by two writers at once. The meta records the writer's pid with status "running".
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from pydantic import ValidationError
from tinydb import where

from qatui.data.labels import Label, LabelRules, check_annotator, check_label
from qatui.errors import LabelError, SessionError
from qatui.paths import LABELS_DIR
from qatui.store.files import open_db, remove_orphans
from qatui.store.writer_lock import SessionBusy, WriterLock
from qatui.text import shown_alike

if TYPE_CHECKING:
    from qatui.data.model import Dataset


def _now() -> str:
    """Local time with its UTC offset, to the second: when a label was given."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def dataset_key(content_hash: str) -> str:
    """The file name part that names a dataset: the first 16 characters of its content hash."""
    return content_hash[:16]


class LabelPass:
    """One annotator's labels on one dataset, open for writing (`put` saves at once) or reading only."""

    def __init__(self, path: Path, annotator: str, dataset: dict | None = None, *, write: bool = False) -> None:
        """Open (creating when `dataset` is given) the file `path`; a writer takes the lock or LabelError says who holds it."""
        self.path = path
        self.annotator = annotator
        self.write = write
        self._lock: WriterLock | None = None
        self.before: tuple[str | None, bool] = (None, False)
        """A writer's file as it was when the lock was taken (its text, None when there was none; whether its folder
        was there): what `LabelStore.writing` puts back after an error."""
        if write:
            self._lock = _take_lock(path, annotator, (dataset or {}).get("name") or path.name)
        elif not path.is_file():
            raise LabelError(f"{path}: no such label file")
        try:
            self._open(dataset)
        except BaseException:  # a damaged file: the lock goes with the refusal
            self._release()
            raise

    def _open(self, dataset: dict | None) -> None:
        """Read the file (a writer: made, with its meta, when missing), every label checked; LabelError if damaged."""
        path = self.path
        if self.write:
            self.before = (path.read_text(encoding="utf-8") if path.is_file() else None, path.parent.is_dir())
            path.parent.mkdir(parents=True, exist_ok=True)
            remove_orphans(path.parent)
        try:
            self._db = open_db(path)
            meta = self._db.table("meta").all()
            docs = list(self._db.table("labels").all())
        except SessionError as e:
            raise LabelError(f"damaged label file: {e}") from None
        if not meta:
            if dataset is None or not self.write:
                raise LabelError(f"{path}: damaged label file: table 'meta' is empty")
            self._db.table("meta").insert({"annotator": self.annotator, "dataset": dataset, "created": _now(),
                                           "updated": _now(), "status": "closed", "pid": None})
            meta = self._db.table("meta").all()
        self.meta = dict(meta[0])
        self._labels: dict[str, Label] = {}
        for doc in docs:
            try:
                label = Label.model_validate(dict(doc))
            except ValidationError as e:
                raise LabelError(f"{path}: damaged label of item {doc.get('item_id')!r}: "
                                 f"{e.errors()[0]['msg']}") from None
            self._labels[label.item_id] = label
        if self.write:
            self._set_meta(status="running", pid=os.getpid())

    @property
    def dataset(self) -> dict:
        """The labelled dataset: name, path, format, content_hash."""
        return dict(self.meta["dataset"])

    def labels(self) -> dict[str, Label]:
        """The current label of every labelled item, by item id."""
        return dict(self._labels)

    def put(self, label: Label) -> Label:
        """Save `label` (stamped now), replacing the item's earlier one; on disk when this returns."""
        return self.put_many([label])[0]

    def put_many(self, labels: list[Label]) -> list[Label]:
        """Save several labels (those without a time stamped now) in one atomic write; on disk when this returns."""
        if not self.write:
            raise LabelError(f"{self.path}: opened for reading only")
        table = self._db.table("labels")
        saved = []
        for label in labels:
            label = label.model_copy(update={"updated": label.updated or _now()})
            table.remove(where("item_id") == label.item_id)
            table.insert(label.model_dump(mode="json", exclude_none=True))
            self._labels[label.item_id] = label
            saved.append(label)
        self._set_meta(updated=_now())
        return saved

    def _set_meta(self, **fields: object) -> None:
        """Change the meta doc and write the file, atomically."""
        self.meta.update(fields)
        self._db.table("meta").update(fields)
        self._db.storage.flush()

    def abandon(self) -> None:
        """Let go of the file without writing to it again (`LabelStore.writing` puts it back as it was)."""
        self.write = False

    def close(self) -> None:
        """Release the lock (status "closed") and the file."""
        if self.write:
            self._set_meta(status="closed", pid=None)
        self._db.close()
        self._release()

    def _release(self) -> None:
        """Let the OS lock go (a pass opened for reading holds none)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> LabelPass:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class LabelStore:
    """The labels folder of a sessions dir: every annotator's labelling passes."""

    def __init__(self, sessions_root: Path) -> None:
        """The label store beside the sessions in `sessions_root` (created on the first label)."""
        self.root = Path(sessions_root) / LABELS_DIR

    def path(self, annotator: str, content_hash: str) -> Path:
        """Where `annotator`'s labels of the dataset with this content hash live."""
        return self.root / check_annotator(annotator) / f"{dataset_key(content_hash)}.json"

    def open_pass(self, annotator: str, dataset: dict) -> LabelPass:
        """`annotator`'s pass over `dataset` (name, path, format, content_hash), open for writing.

        LabelError for a name that differs from another annotator's only in case (`Alice`, `alice`): on a
        case-insensitive disk (macOS's, Windows') both are one folder, and one person's labels would be read as
        the other's; anywhere, people read them as one name."""
        self._check_apart(annotator, self.annotators())
        return LabelPass(self.path(annotator, dataset["content_hash"]), annotator, dataset, write=True)

    @staticmethod
    def _check_apart(annotator: str, others: list[str]) -> None:
        if clash := shown_alike(annotator, others, key=str.casefold):
            raise LabelError(f"annotator {annotator!r} differs from {clash!r} only in case: on a case-insensitive "
                             f"disk they would share one folder of labels; write {clash!r}, or another name")

    @contextmanager
    def writing(self, wanted: list[tuple[str, dict]]) -> Iterator[list[LabelPass]]:
        """A pass for each (annotator, dataset), all or nothing: an error inside (or while taking the
        locks) puts every file opened back as it was, removing the files and folders it created.

        Every lock is taken before the caller writes anything; a file another writer holds is refused
        and never touched. On success each pass is closed (its lock released).
        """
        passes: list[LabelPass] = []
        before: dict[Path, tuple[str | None, bool]] = {}
        names = list(dict.fromkeys(annotator for annotator, _ in wanted))
        for annotator in names:
            self._check_apart(annotator, names)
        try:
            for annotator, dataset in wanted:
                passes.append(labelled := self.open_pass(annotator, dataset))
                before[labelled.path] = labelled.before
            yield passes
        except BaseException:
            for labelled in passes:
                labelled.abandon()
            for path, (text, had_folder) in before.items():
                _put_back(path, text, had_folder)
            for labelled in passes:  # put back under the lock, then let go
                labelled.close()
            raise
        for labelled in passes:
            labelled.close()

    def annotators(self) -> list[str]:
        """Everyone who has labelled anything here, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def passes(self, annotator: str) -> list[LabelPass]:
        """`annotator`'s passes over every dataset, read only."""
        folder = self.root / check_annotator(annotator)
        return [LabelPass(path, annotator) for path in sorted(folder.glob("*.json"))] if folder.is_dir() else []

    def labels_of(self, content_hash: str) -> dict[str, dict[str, Label]]:
        """Every annotator's labels of the dataset with this content hash: annotator -> item id -> label."""
        found = {}
        for annotator in self.annotators():
            path = self.path(annotator, content_hash)
            if path.is_file():
                reader = LabelPass(path, annotator)
                if reader.dataset.get("content_hash") == content_hash and (labels := reader.labels()):
                    found[annotator] = labels
                reader.close()
        return found

    def labels_for(self, dataset: Dataset) -> dict[str, dict[str, Label]]:
        """Every annotator's labels of `dataset`'s file (`labels_of`; `Dataset.whole`, so a session's first items
        read the labels of the rest too), each checked against its item (`check_label`): what every measure against
        people reads. A label file edited by hand or written elsewhere can name an item the
        dataset lacks, label a pair as a ranking or leave a response out of one (its mean grade would count it last),
        or rate a dimension the item has not: LabelError naming the file and the item, before anything is measured.
        The scale is not checked here: an import with `--scale` keeps ratings off the dataset's own."""
        from pydantic import ValidationError

        dataset = dataset.whole
        rules = LabelRules(dataset.gold_kind, (float("-inf"), float("inf")))
        by_id = {item.id: item for item in dataset.items}
        found = self.labels_of(dataset.content_hash)
        for annotator, labels in found.items():
            where = self.path(annotator, dataset.content_hash)
            for item_id, label in labels.items():
                if (item := by_id.get(item_id)) is None:
                    raise LabelError(f"{where}: {annotator}'s label of item {item_id!r}, which {dataset.name} has not: "
                                     "the file was edited or written for another dataset")
                try:
                    check_label(item, label, rules)
                except (ValueError, ValidationError) as e:
                    message = e.errors()[0]["msg"] if isinstance(e, ValidationError) else str(e)
                    raise LabelError(f"{where}: {annotator}'s label of item {item_id!r}: {message}; label it again "
                                     f"(`qatui annotate {dataset.path} --annotator {annotator}`)") from None
        return found


LOCKS_DIR = ".locks"
"""The labels folder's hidden folder of lock files, one per label file (never listed as an annotator)."""


def _take_lock(path: Path, annotator: str, dataset_name: str) -> WriterLock:
    """The writer lock of the label file `path` (`<labels>/<annotator>/<key>.json`), taken, or LabelError naming the
    process that holds it."""
    lock = WriterLock(path.parent.parent / LOCKS_DIR / path.parent.name, f"{path.stem}.lock")
    try:
        lock.path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire(dataset_name, "", "")
    except SessionBusy as e:
        who = f"process {e.pid}" if e.pid is not None else "another process"
        raise LabelError(f"{annotator}'s labels of {dataset_name} are open in {who}, which is still running: two "
                         "writers would lose labels; close it first") from None
    except (SessionError, OSError) as e:
        raise LabelError(f"{annotator}'s labels of {dataset_name} cannot be written: {e}") from None
    return lock


def _put_back(path: Path, text: str | None, had_folder: bool) -> None:
    """A label file as it was before a failed import: its old text, or gone (with its folder, if that was new)."""
    from qatui.store.atomic import atomic_write_text

    if text is not None:
        atomic_write_text(path, text)
        return
    path.unlink(missing_ok=True)
    if not had_folder:
        remove_orphans(path.parent)
        with suppress(OSError):  # not empty: another writer put something there meanwhile
            path.parent.rmdir()
