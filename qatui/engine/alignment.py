"""A judge measured on labelled items: the core shared by the Judge Lab and `qatui judges align`.

`evaluate` runs one judge through the real engine on chosen items of a dataset: a real session in
the sessions folder (its transcripts kept, the call cache answering what was asked before, a
Ctrl-C leaving a resumable session), then reads back its agreement with people. The figure is the
one qatui reports first for the gold's kind (`metrics.summary.TABLE_KEYS`: Kendall tau-b for ranking
gold, accuracy against every human label for pairwise gold), with the same bootstrap CI as
`sessions show`, so a number here is the number a user finds there.

`compare` is the paired difference of two evaluations on the items both scored
(`metrics.paired.paired_difference`: both resampled on the same items), with the items that
flipped. `choose_items` picks the items to evaluate: all labelled ones, a seeded sample, or those
an evaluation got most wrong. Ratings gold is refused: its headline figure (summary-level Pearson,
a mean over documents and dimensions) has no per-item paired difference yet.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from qatui.errors import QatuiError
from qatui.metrics.summary import TABLE_KEYS

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.data.model import Dataset, Item
    from qatui.events import Event, Verdict
    from qatui.engine.runner import Engine
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources
    from qatui.store.session import Session, SessionStore

ALIGNABLE = ("ranking", "pairwise")
"""Gold kinds an evaluation measures: those whose headline figure has a per-item paired difference."""

Choice = Literal["all", "sample", "disagreeing"]


class AlignmentError(QatuiError):
    """Items that cannot be evaluated against people: no gold, a gold kind without a paired figure, unknown ids."""


def headline_key(kind: str) -> str:
    """The figure qatui reports first for gold of `kind` (`qatui table`'s first column)."""
    return TABLE_KEYS[kind][0]


def labelled_kind(dataset: Dataset) -> str:
    """The gold kind of `dataset`'s labelled items; refused when none has gold or the kind has no paired figure."""
    kinds = dataset.gold_kinds
    if not kinds:
        raise AlignmentError(f"{dataset.path}: no item has gold labels, so there is nothing to measure a judge "
                             "against (label items with `qatui annotate`, or pass --gold annotator:NAME)")
    kind, _ = kinds.most_common(1)[0]
    if kind not in ALIGNABLE:
        raise AlignmentError(f"{dataset.path}: its gold is {kind}; a judge is measured and compared on ranking or "
                             "pairwise gold (ratings have no per-item paired difference yet)")
    return kind


def labelled_ids(dataset: Dataset) -> list[str]:
    """Ids of the items whose gold is of the dataset's labelled kind, in the dataset's order."""
    kind = labelled_kind(dataset)
    return [item.id for item in dataset.items if item.gold is not None and item.gold.kind == kind]


@dataclass(frozen=True)
class Evaluation:
    """One judge on chosen labelled items: its session, figure with CI, and what each item got.

    `per_item`: item id -> the item's agreement (pairwise: the share of its human labels the judge
    matched, 1.0 = right; ranking: Kendall tau-b with the gold, 1.0 = same order). `failed`: item id ->
    why the judge gave no verdict (never counted in `value`, the figure `sessions show` gives). `value`
    and `ci` are None when no item could be measured (`ci` also below two items). `counted`: item id ->
    (numerator, denominator) of the figure on every item run, a failed item counted as agreeing with no
    one (`metrics.paired.failed_values`): `over_every_item` reads it.
    """

    session_id: str
    judge: str
    version: str
    kind: str
    metric: str
    value: float | None
    ci: tuple[float, float] | None
    n: int
    item_ids: tuple[str, ...]
    verdicts: dict[str, Verdict] = field(repr=False)
    per_item: dict[str, float]
    failed: dict[str, str]
    status: str
    calls: int = 0
    """Backbone calls the session recorded, cache hits included (what `--plan` counts)."""
    counted: dict[str, tuple[float, float]] = field(default_factory=dict)

    def disagreeing(self) -> list[str]:
        """Items the judge did not fully agree with people on, worst first: those it gave no verdict on (`failed`:
        it agreed with no one) first, then those it judged, by agreement; ties in the items' order."""
        order = {item_id: k for k, item_id in enumerate(self.item_ids)}
        wrong = [item_id for item_id, value in self.per_item.items() if value < 1.0]
        judged = sorted(wrong, key=lambda item_id: (self.per_item[item_id], order.get(item_id, 0)))
        return sorted(self.failed, key=lambda item_id: order.get(item_id, 0)) + judged

    def over_every_item(self) -> float | None:
        """The figure over every item the judge was run on, an item it failed on counted as agreeing with no one
        (`counted`); equal to `value` when it failed none (the pooled ratio, or the mean over questions). What
        `engine.aligning.choose_best` compares, so that candidates are measured on the same items whichever of
        them failed some. None when no item counts."""
        total = sum(den for _, den in self.counted.values())
        return sum(num for num, _ in self.counted.values()) / total if total else None

    def figures(self) -> dict[str, Any]:
        """The figure as stored beside a version and printed in `--json`."""
        return {"metric": self.metric, "value": self.value, "ci": list(self.ci) if self.ci else None, "n": self.n,
                "items": len(self.item_ids), "failed": len(self.failed), "session": self.session_id}


@dataclass(frozen=True)
class Comparison:
    """`after` minus `before` on the items both scored, with a paired bootstrap CI, and the items that moved.

    `now_right`: items whose agreement rose (with one human label: wrong before, right now);
    `now_wrong`: items whose agreement fell. `delta` and `ci` are None when no item has both.
    """

    metric: str
    delta: float | None
    ci: tuple[float, float] | None
    n: int
    now_right: list[str]
    now_wrong: list[str]

    def figures(self) -> dict[str, Any]:
        """The comparison as `--json` prints it."""
        return {"metric": self.metric, "delta": self.delta, "ci": list(self.ci) if self.ci else None, "n": self.n,
                "now_right": self.now_right, "now_wrong": self.now_wrong}


def _items(dataset: Dataset, item_ids: Sequence[str]) -> list[Item]:
    """The items named, in `item_ids`' order; unknown or unlabelled ids refused."""
    by_id = {item.id: item for item in dataset.items}
    unknown = [item_id for item_id in item_ids if item_id not in by_id]
    if unknown:
        raise AlignmentError(f"{dataset.path}: no item {unknown[0]!r} ({len(unknown)} unknown id(s))")
    unlabelled = [item_id for item_id in item_ids if by_id[item_id].gold is None]
    if unlabelled:
        raise AlignmentError(f"{dataset.path}: item {unlabelled[0]!r} has no gold label to measure against")
    if len(set(item_ids)) != len(item_ids):
        raise AlignmentError("an item is named twice among the items to evaluate")
    return [by_id[item_id] for item_id in item_ids]


def read_evaluation(session: Session, dataset: Dataset, judge: str, *, seed: int, convention: str = "strict",
                    version: str = "", status: str | None = None) -> Evaluation:
    """The evaluation a session holds of `judge` on its items (those of `dataset` the session ran on)."""
    from qatui.metrics import summarize
    from qatui.metrics.paired import failed_values, item_values

    items = dataset.of_session(session.meta["dataset"]).items
    kind = labelled_kind(dataset)
    key = headline_key(kind)
    verdicts = session.verdicts(judge)
    results = {item_id: doc for (item_id, name), doc in session.results().items() if name == judge}
    not_applicable = {item_id: doc.get("not_applicable", "") for item_id, doc in results.items()
                      if doc["status"] == "n/a"}
    metrics = summarize(items, verdicts, seed=seed, convention=convention, not_applicable=not_applicable)
    values = item_values(items, verdicts, key, convention)
    failed = {item_id: str((doc.get("failure") or {}).get("reason") or "failed") for item_id, doc in results.items()
              if doc["status"] == "failed"}  # the store keeps a failure's reason under "failure" (`record_failure`)
    ci = metrics.ci.get(key)
    return Evaluation(
        session_id=session.id, judge=judge, version=version, kind=kind, metric=key, value=metrics.metrics.get(key),
        ci=(float(ci[0]), float(ci[1])) if ci is not None else None, n=metrics.n.get(key, 0),
        item_ids=tuple(item.id for item in items), verdicts=verdicts,
        per_item={item_id: num / den for item_id, (num, den) in values.items()},
        failed=failed, status=status or str(session.meta.get("status")),
        calls=sum(len(doc.get("calls") or []) for doc in results.values()),
        counted={**values, **failed_values(items, failed, key, convention)})


async def evaluate_async(judge: Judge, dataset: Dataset, item_ids: Sequence[str], config: Config, *,
                         store: SessionStore | None = None, resources: Resources | None = None,
                         seed: int | None = None, convention: str = "strict", name: str | None = None,
                         on_event: Callable[[Event], None] | None = None,
                         on_session: Callable[[str], None] | None = None,
                         on_engine: Callable[[Engine], None] | None = None) -> Evaluation:
    """Run `judge` on the items `item_ids` of `dataset` as a new session, then read its evaluation.

    Every event of the run goes to `on_event` (a progress bar, a live view), the new session's id to
    `on_session` as soon as it exists, and its engine to `on_engine` before it runs (whoever may stop it:
    `Engine.stop_calls`). A cancellation (Ctrl-C)
    still summarises and releases the session, stored as cancelled and resumable, then propagates.
    """
    from qatui.engine.jobs import finish_run, start_run
    from qatui.events import RunFinished
    from qatui.store.session import SessionStore

    items = _items(dataset, item_ids)
    labelled_kind(dataset)  # refused before any work
    if store is None:
        store = SessionStore(config.sessions_folder(None).path)
    job = await asyncio.to_thread(  # the preflight asks its backbone on a loop of its own
        start_run, store, dataset, [judge.name], config, seed=seed, name=name, convention=convention,
        resources=resources or judge.resources, judges=[judge], item_ids=[item.id for item in items])
    if on_session is not None:
        on_session(job.session.id)
    if on_engine is not None:
        on_engine(job.engine)
    status = "cancelled"
    try:
        async for event in job.engine.run():
            if on_event is not None:
                on_event(event)
            if isinstance(event, RunFinished):
                status = event.status
    finally:
        finish_run(job, status)
    return read_evaluation(job.session, dataset, judge.name, seed=job.engine.seed, convention=convention,
                           version=judge.version, status=status)


def evaluate(judge: Judge, dataset: Dataset, item_ids: Sequence[str], config: Config, **options: Any) -> Evaluation:
    """`evaluate_async` from synchronous code with no running loop (a CLI command, a TUI worker thread)."""
    return asyncio.run(evaluate_async(judge, dataset, item_ids, config, **options))


def compare(items: Sequence[Item], before: Evaluation, after: Evaluation, *, seed: int = 0,
            convention: str = "strict") -> Comparison:
    """`after` minus `before` on `items` both scored, paired (`metrics.paired`), and the items that flipped."""
    from qatui.metrics.paired import paired_difference

    if before.metric != after.metric:
        raise AlignmentError(f"cannot compare {before.metric} with {after.metric}")
    found = paired_difference(items, before.verdicts, after.verdicts, before.metric, convention=convention, seed=seed)
    both = [item.id for item in items if item.id in before.per_item and item.id in after.per_item]
    rose = [item_id for item_id in both if after.per_item[item_id] > before.per_item[item_id]]
    fell = [item_id for item_id in both if after.per_item[item_id] < before.per_item[item_id]]
    if found is None:
        return Comparison(before.metric, None, None, 0, rose, fell)
    ci = found["ci"]
    return Comparison(before.metric, float(found["delta"]), (float(ci[0]), float(ci[1])) if ci else None,
                      int(found["n"]), rose, fell)


def choose_items(dataset: Dataset, how: Choice, n: int, seed: int, evaluation: Evaluation | None = None) -> list[str]:
    """Labelled items to evaluate, in the dataset's order: `all` of them, a seeded `sample` of `n`, or the `n`
    an `evaluation` got most wrong (`disagreeing`, worst first: fewer when fewer disagree)."""
    ids = labelled_ids(dataset)
    if how == "all":
        return ids
    if n < 1:
        raise AlignmentError(f"choose at least one item, not {n}")
    if how == "sample":
        if n >= len(ids):
            return ids
        picked = set(random.Random(seed).sample(ids, n))
        return [item_id for item_id in ids if item_id in picked]
    if how == "disagreeing":
        if evaluation is None:
            raise AlignmentError("the items a judge disagrees on need an evaluation of it first")
        known = set(ids)
        return [item_id for item_id in evaluation.disagreeing() if item_id in known][:n]
    raise AlignmentError(f"unknown way to choose items: {how!r} (all, sample or disagreeing)")

