"""A stored session replayed into a `RunState`, so saved and live runs draw the same panels.

Blocking parts (reading shards, reloading the dataset, validating stored events) are for
thread workers; folding events into the state is for the UI thread, a slice at a time.
A big session's dataset is read the same way: the items of the first rows first, the rest
a page at a time (`reading_state`, `next_items`), when the file is the one the session ran on.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from qatui.errors import DatasetError
from qatui.events import Event, LLMCallFinished, event_from_dict
from qatui.report import session_status
from qatui.ties import DEFAULT_DIGITS, judges_digits
from qatui.tui.state import RunState, TaskView

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.store.session import Session

READING = "reading"
"""The status of a task whose stored result has not been read yet (a big session fills in page by page)."""


class SavedState(RunState):
    """A saved session's `RunState`, whose items may still be coming: a big dataset is read after the first rows."""

    def __init__(self, items: Iterable[Item], judges: list[str], seed: int, n_items: int | None = None) -> None:
        super().__init__(items, judges, seed)
        self.n_items = max(len(self.items), n_items or 0)
        """The session's items, read or not (its dataset's `n_items`, while they are still being read)."""

    def add_items(self, items: Iterable[Item]) -> list[TaskView]:
        """Items read after the state was made, in dataset order: their tasks, appended so `tasks` keeps that order."""
        added = []
        for item in items:
            self.items.append(item)
            for judge in self.judges:
                if (task := self.tasks.get((item.id, judge))) is None:
                    task = self.tasks[(item.id, judge)] = TaskView(item.id, judge, item, self.seed)
                    added.append(task)
                else:  # made by an event before its item was read
                    task.item = item
        self.n_items = max(self.n_items, len(self.items))
        return added

    def n_tasks(self) -> int:
        """The session's tasks: those known, or as many as its items will give once they are all read."""
        return max(len(self.tasks), self.n_items * len(self.judges))


def session_items(session: Session) -> list[Item] | None:
    """The session's items from its dataset file, None when the file cannot be reloaded."""
    from qatui.data.loaders import load_dataset

    ds = session.meta["dataset"]
    try:
        return load_dataset(ds["path"], ds["format"]).of_session(ds).items
    except (DatasetError, KeyError):
        return None


def stored_events(docs: list[dict], digits: Mapping[str, int] | None = None, where: str = "the session") -> list[Event]:
    """The events stored result docs stand for, in the order a live run streamed them (validation: the costly part).

    `digits` (judge -> its stored `tie_digits`, `ties.judges_digits`) derives the tied groups of verdicts
    stored before they were kept, as `Session.verdicts` does. A doc that does not validate (an edited or damaged
    file) is a SessionError in one line naming `where` (the session's folder), the judge and the item, as the CLI's
    views say it (`store.session.stored_verdict`): the Session screen showed a raw pydantic dump, and stayed blank.
    """
    from pydantic import ValidationError

    from qatui.errors import SessionError, first_problem
    from qatui.store.session import stored_verdict

    events: list[Event] = []
    for doc in docs:
        stamp = {"item_id": doc["item_id"], "judge": doc["judge"]}
        digits_of = (digits or {}).get(doc["judge"], DEFAULT_DIGITS)
        verdict = stored_verdict(doc["verdict"], where, doc["judge"], doc["item_id"], digits_of) \
            if doc["status"] == "done" else None
        try:
            events.extend(verdict.artifacts if verdict else [])
            events.extend(LLMCallFinished.model_validate({**call, **stamp}) for call in doc.get("calls") or [])
            if verdict is not None:
                events.append(verdict)
            elif doc["status"] == "n/a":
                events.append(event_from_dict({"type": "item_not_applicable", **stamp,
                                               "reason": doc.get("not_applicable", "")}))
            else:
                events.append(event_from_dict({"type": "item_failed", **stamp, **doc["failure"]}))
        except ValidationError as e:
            field, _, message = first_problem(e)
            raise SessionError(f"{where}: damaged result of {doc['judge']} on {doc['item_id']}: "
                               f"{field or 'the result'}: {message}") from None
    return events


def page_events(page: Callable[[], list[dict]], digits: Mapping[str, int] | None = None,
                where: str = "the session") -> list[Event]:
    """The events of one page of `Session.result_pages()` (blocking: reads a shard; SessionError if damaged)."""
    return stored_events(page(), digits, where)


def replay(state: RunState, results: dict[tuple[str, str], dict], digits: Mapping[str, int] | None = None,
           where: str = "the session") -> None:
    """Fold stored result docs (`Session.results()`) into `state`, as if their events had streamed."""
    for event in stored_events(list(results.values()), digits, where):
        state.fold(event)
    state.n_finished = 0
    state.take_changed()


def saved_state(session: Session) -> tuple[SavedState, bool]:
    """An empty `RunState` over the session's items and judges, and whether its dataset could be reloaded."""
    meta = session.meta
    items = session_items(session)
    state = SavedState(items or [], list(meta.get("judges", {})), meta.get("seed", 0))
    state.status = session_status(meta)
    return state, items is not None


def reading_state(session: Session, rows: int) -> tuple[SavedState, bool, Iterator[Item] | None]:
    """`saved_state` over only the items of the first `rows` tasks, and the iterator that reads the other items.

    Only a dataset file that is byte for byte the one the session ran on (same sha256) is read
    this way: it loaded whole then, so its later items load now too. Any other (changed,
    missing, unreadable) is loaded whole, as `saved_state` does, and no iterator comes back.
    """
    meta = session.meta
    ds, judges = meta["dataset"], list(meta.get("judges", {}))
    if (rest := unchanged_items(ds)) is not None:
        try:
            first = next_items(rest, -(-rows // max(len(judges), 1)))
        except DatasetError:
            rest = None
    if rest is None:
        return (*saved_state(session), None)
    state = SavedState(first, judges, meta.get("seed", 0), ds.get("n_items"))
    state.status = session_status(meta)
    return state, True, rest


def unchanged_items(ds: dict) -> Iterator[Item] | None:
    """The items of a session's dataset (`meta["dataset"]`) one at a time, or None unless the file is the one it ran on."""
    from qatui.data.loaders import content_hash, iter_items

    try:
        if content_hash(ds["path"]) != ds["content_hash"]:
            return None
        first = itertools.islice(iter_items(ds["path"], ds["format"]), ds.get("limit"))
        if ds.get("item_ids") is None:
            return first
        chosen = set(ds["item_ids"])  # a session run on chosen items (`Dataset.of_session`)
        return (item for item in first if item.id in chosen)
    except (DatasetError, KeyError, OSError):
        return None


def next_items(items: Iterator[Item], n: int) -> list[Item]:
    """The next `n` items (fewer at the end; blocking: reads and validates them; DatasetError as a load would)."""
    return list(itertools.islice(items, n))


def load_saved(session: Session) -> tuple[RunState, bool]:
    """A finished-or-not session as a `RunState` (every shard read), and whether its dataset could be reloaded."""
    state, found = saved_state(session)
    replay(state, session.results(), judges_digits(session.meta), str(session.path))
    return state, found


def remeasure(state: RunState, items: list[Item]) -> None:
    """Measure every judged task against the gold of `items` (another gold: people's labels, or the dataset's again).

    Each task's item becomes the one with its id in `items`, so the question and ranking panels
    show that gold, and its tau (the list's column, the header's sparkline, `w`) is computed again.
    """
    from qatui.metrics.item import item_tau, item_undecided

    by_id = {item.id: item for item in items}
    state.items = [by_id.get(item.id, item) for item in state.items]
    for task in state.tasks.values():
        if (item := by_id.get(task.item_id)) is None:
            continue
        task.item = item
        verdict = state.verdicts.get(task.judge, {}).get(task.item_id)
        task.tau = item_tau(item, verdict) if verdict is not None else None
        task.undecided = task.tau is not None and verdict is not None and item_undecided(item, verdict)
        task.revision["status"] += 1  # the question panel shows the gold
        task.revision["ranking"] += 1
        state.changed.add(task.key)
