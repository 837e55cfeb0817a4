"""A labelling pass as `qatui annotate` and the TUI's Label screen open it: the items, the labels so far, the judges.

`open_annotation` resolves DATASET_OR_SESSION (a dataset path, `demo`, or a session whose
dataset is reloaded and checked unchanged), opens the annotator's label file for writing
(taking its lock) and reads the verdicts of every session of the same dataset, which the
screen shows once an item is labelled (or at once, not blind).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qatui.data.labels import DEFAULT_SCALE, LabelRules, check_annotator
from qatui.errors import QatuiError

if TYPE_CHECKING:
    from qatui.data.model import Dataset
    from qatui.report.label_agreement import JudgeRun
    from qatui.store.labels import LabelPass
    from qatui.store.session import SessionStore


@dataclass
class Annotation:
    """What the Label screen works on: the items, the annotator's open label file, and the judges' verdicts."""

    dataset: Dataset
    labels: LabelPass
    judges: list[JudgeRun] = field(default_factory=list)
    """(session id, judge, item id -> verdict) of every session of this dataset."""
    rules: LabelRules = field(default_factory=lambda: LabelRules(None, DEFAULT_SCALE))
    """What a label here must be (`LabelRules.of` the whole dataset file): its main gold kind, its ratings scale."""


def resolve_source(source: str, store: SessionStore, fmt: str | None = None) -> Dataset:
    """A dataset file (or `demo`), else a session's dataset (its items, reloaded and checked unchanged)."""
    from qatui.data.loaders import DEMO_NAME, load_dataset

    if source == DEMO_NAME or Path(source).exists():
        return load_dataset(source, fmt)
    try:
        session = store.open(source)
    except QatuiError as e:
        raise QatuiError(f"{source!r} is neither a dataset file nor a session ({e})") from None
    from qatui.report.gold import session_gold_items

    return session_gold_items(session, "dataset", store.root)[0]


def open_annotation(source: str, annotator: str, store: SessionStore, *, fmt: str | None = None,
                    limit: int | None = None) -> Annotation:
    """The pass of `annotator` over `source`'s first `limit` items, its label file open for writing."""
    from qatui.report.label_agreement import judge_runs
    from qatui.store.labels import LabelStore

    check_annotator(annotator)
    dataset = resolve_source(source, store, fmt).limited(limit)
    meta = {"name": dataset.name, "path": dataset.path, "format": dataset.format,
            "content_hash": dataset.content_hash}
    judges = judge_runs(store, dataset.content_hash)
    labels = LabelStore(store.root).open_pass(annotator, meta)
    return Annotation(dataset, labels, judges, LabelRules.of(dataset.whole))
