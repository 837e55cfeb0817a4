"""A stored session replayed into a `RunState`, so saved and live runs draw the same panels.

Blocking (it reads every shard and reloads the dataset): screens call it from a thread worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.events import LLMCallFinished, Verdict, event_from_dict
from qatui.errors import DatasetError
from qatui.report import session_status
from qatui.tui.state import RunState

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.store.session import Session


def session_items(session: Session) -> list[Item] | None:
    """The session's items from its dataset file, None when the file cannot be reloaded."""
    from qatui.data.loaders import load_dataset

    ds = session.meta["dataset"]
    try:
        return load_dataset(ds["path"], ds["format"]).limited(ds.get("limit")).items
    except (DatasetError, KeyError):
        return None


def replay(state: RunState, results: dict[tuple[str, str], dict]) -> None:
    """Fold stored result docs (`Session.results()`) into `state`, as if their events had streamed."""
    for doc in results.values():
        stamp = {"item_id": doc["item_id"], "judge": doc["judge"]}
        verdict = Verdict.model_validate(doc["verdict"]) if doc["status"] == "done" else None
        for artifact in verdict.artifacts if verdict else []:
            state.fold(artifact)
        for call in doc.get("calls") or []:
            state.fold(LLMCallFinished.model_validate({**call, **stamp}))
        if verdict is not None:
            state.fold(verdict)
        elif doc["status"] == "n/a":
            state.fold(event_from_dict({"type": "item_not_applicable", **stamp, "reason": doc.get("not_applicable", "")}))
        else:
            state.fold(event_from_dict({"type": "item_failed", **stamp, **doc["failure"]}))
    state.n_finished = 0
    state.take_changed()


def load_saved(session: Session) -> tuple[RunState, bool]:
    """A finished-or-not session as a `RunState`, and whether its dataset could be reloaded."""
    meta = session.meta
    items = session_items(session)
    state = RunState(items or [], list(meta.get("judges", {})), meta.get("seed", 0))
    replay(state, session.results())
    state.status = session_status(meta)
    return state, items is not None

