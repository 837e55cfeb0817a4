"""A spot check: one typed (or loaded) item, one judge, run as a real session.

The item is written as a one-line JSONL file and loaded back, so the dataset's content hash
is the sha256 of that line; the file then moves into the session's folder and the session
points at it. The session is therefore like any other: Home lists it, it reopens with its
panels, and it resumes (`resume_run` reloads the dataset from that file). Blocking (it writes
files and builds judges): screens call these from a thread worker.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from qatui.data.model import Item
from qatui.errors import DatasetError

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.engine.jobs import RunJob
    from qatui.judges.resources import Resources
    from qatui.store.session import SessionStore
    from qatui.tui.roots import Roots

SPOT_FILE = "spot-check.jsonl"
"""The item's file inside the session folder (its stem names the dataset)."""
MAX_RESPONSES = 6


def spot_item(question: str, reference: str, responses: list[str]) -> Item:
    """The item from the form: blank responses dropped, candidates r1, r2, … in order."""
    texts = [r.strip() for r in responses if r.strip()]
    if not question.strip():
        raise DatasetError("type a question first")
    if not 2 <= len(texts) <= MAX_RESPONSES:
        raise DatasetError(f"give 2 to {MAX_RESPONSES} responses (there are {len(texts)})")
    return Item(id="spot-check", question=question.strip(), references=[reference.strip()] if reference.strip()
                else [], candidates={f"r{i}": text for i, text in enumerate(texts, 1)})


def pick_item(spec: str, roots: Roots) -> Item:
    """The item at `path` (its first) or `path#item-id`, from any dataset file qatui reads inside `roots`."""
    from qatui.data.loaders import load_dataset

    path, _, item_id = spec.strip().partition("#")
    dataset = load_dataset(roots.checked(path))
    if not item_id:
        return dataset.items[0]
    found = next((it for it in dataset.items if it.id == item_id), None)
    if found is None:
        raise DatasetError(f"{Path(path).name} has no item {item_id!r}")
    return found


def judges_for(item: Item, judges: dict[str, object]) -> list[str]:
    """The names among `judges` (name -> Judge) whose needs the item meets."""
    from qatui.data.model import Dataset

    dataset = Dataset(name="spot-check", path="<spot check>", format="jsonl", content_hash="", items=[item])
    return [name for name, judge in judges.items() if not judge.unmet_needs(dataset)]  # type: ignore[attr-defined]


def start_spot_check(store: SessionStore, item: Item, judge: str, config: Config, resources: Resources) -> RunJob:
    """A new session judging `item` with `judge`, its dataset file inside the session folder."""
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import start_run
    from qatui.store.atomic import atomic_write_text

    line = json.dumps(item.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n"
    with tempfile.TemporaryDirectory() as staging:
        staged = Path(staging) / SPOT_FILE
        staged.write_text(line, encoding="utf-8")
        dataset = load_dataset(staged, "jsonl")
        job = start_run(store, dataset, [judge], config, resources=resources)
    final = (job.session.path / SPOT_FILE).resolve()
    atomic_write_text(final, line)
    job.session.update_meta(dataset={**job.session.meta["dataset"], "path": str(final)})
    job.dataset = job.dataset.model_copy(update={"path": str(final)})
    return job
