"""One judge's meta-evaluation on a dataset: the flat metric contract the CLI and store rely on.

Keys (each omitted when it cannot be computed; every value finite, in [-1, 1] or [0, 1]):

- ranking gold: `kendall`, `spearman`, `pearson`, `rbo_0.5`, `rbo_0.9`, means over questions;
- pairwise gold: `accuracy`, `accuracy_no_tie`, over human judgements (labels);
- `no_decision` (beside `metrics`): per key, how many of its units the judge made no decision
  on, which count in the figure as agreeing with no one (docs/METRICS.md, Ties);
  `kappa` and `kappa_linear` (Cohen's, A < tie < B), with the confusion matrix and per-class precision and
  recall beside the metrics in `classes` (`metrics.classes`);
- routing judges (MinosEval): `route_accuracy` of the factoid / non-factoid call against the
  dataset's question type, wherever the dataset gives one (no gold ranking needed);
- pairwise judges asked in both orders (CALF): `position_consistency`, the share of pairs
  whose two orders gave the same result, over every judged pair (no gold needed); and where one
  order alone decided some pair (the other answer unparsed), `one_order`, their share of the
  pairs asked in both orders;
- ratings gold: `pearson`, `spearman`, `kendall` at summary level (mean over documents) and
  `pearson_sample`, `spearman_sample`, `kendall_sample` over pooled (item, candidate) pairs.
  With several dimensions, `<key>/<dimension>` sits beside each plain key, which is then the
  mean over dimensions (and `n` of a plain sample key the largest over its dimensions).

The question-level correlation keys are shared by ranking questions and rating documents:
each is a mean over "columns" (the ranking items, each rating dimension) of a mean over the
questions or documents that have a value there, so a dataset with one gold kind gets the
plain mean. CIs (95% percentile bootstrap) resample questions or documents, never single
labels or pairs: accuracy and position consistency are pooled ratios whose CI resamples
items. They exist for every key except the sample-level ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from qatui.data.model import Item, PairwiseGold, RankingGold, RatingsGold
from qatui.metrics.classes import preference_classes
from qatui.metrics.bootstrap import grouped_mean, mean_ci, ratio_ci, unit_table
from qatui.metrics.pairwise import judge_preference, judgement_hits
from qatui.metrics.pointwise import document_correlations, pooled_correlations
from qatui.metrics.ranking import NO_DECISION, RBO_PERSISTENCES, question_ranking_stats

if TYPE_CHECKING:
    from qatui.events import Verdict

CORRELATIONS = ("kendall", "spearman", "pearson")
QUESTION_KEYS = (*CORRELATIONS, *(f"rbo_{p}" for p in RBO_PERSISTENCES))
PAIRWISE_KEYS = ("accuracy", "accuracy_no_tie")
TABLE_KEYS = {
    "ranking": ("kendall", "spearman", "rbo_0.5", "rbo_0.9"),
    "pairwise": ("accuracy", "accuracy_no_tie", "kappa"),
    "ratings": ("pearson", "spearman", "kendall", "pearson_sample", "spearman_sample", "kendall_sample"),
}
"""The metric columns per gold kind, as `qatui table` prints them; the first is each kind's headline figure,
the one compared between judges (the table's baseline delta, `engine.alignment`)."""

Scored = list[tuple[Item, "Verdict"]]
_RANKING = None  # the column of ranking questions, beside one column per rating dimension


class JudgeMetrics(BaseModel):
    """A judge's metrics, their bootstrap CIs, how many units each averaged, and per-group metrics."""

    model_config = ConfigDict(frozen=True)

    metrics: dict[str, float] = Field(default_factory=dict)
    ci: dict[str, tuple[float, float]] = Field(default_factory=dict)
    n: dict[str, int] = Field(default_factory=dict)
    breakdown: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)
    breakdown_n: dict[str, dict[str, dict[str, int]]] = Field(default_factory=dict)
    """How many units each of `breakdown`'s figures averaged (questions, or human labels): a group's 0.500 may
    be 2 labels."""
    no_decision: dict[str, int] = Field(default_factory=dict)
    """Of a metric's `n` units, how many the judge made no decision on: questions or documents where it
    scored every candidate alike (counted as 0), or human labels of items where it said tie (never a hit
    against A or B). Present for every question-level and accuracy key, 0 included."""
    classes: dict[str, Any] = Field(default_factory=dict)
    """The pairwise preferences' confusion matrix and per-class precision and recall (`metrics.classes`)."""
    left_out: dict[str, int] = Field(default_factory=dict)
    """Per question-level key, the scored items it left out because their gold puts no response above another
    (one tier, every rating alike, fewer than two responses; under `paper` a ranking one counts 0 instead): a
    figure over 3 of 6 scored items says so. Only keys with some; a key can be here without a figure, when every
    scored item was left out."""


@dataclass(frozen=True)
class _Estimate:
    """One metric's value and unit count, with the table to bootstrap (None: no CI).

    `ratio`: the units are (numerator, denominator) rows of one item each, the value is the
    pooled ratio, and its CI resamples items (`ratio_ci`). `undecided`: how many of the `n`
    units the judge made no decision on (None where the notion does not apply).
    """

    value: float
    n: int
    units: np.ndarray | None
    ratio: bool = False
    undecided: int | None = None


def _from_ratios(rows: list[tuple[float, float]], undecided: int | None = None) -> _Estimate | None:
    """The pooled ratio of per-item (hits, total) rows; n = the total (labels, pairs); None when empty."""
    rows = [row for row in rows if row[1] > 0]
    if not rows:
        return None
    table = np.asarray(rows, dtype=float)
    total = float(table[:, 1].sum())
    return _Estimate(float(table[:, 0].sum()) / total, int(total), table, ratio=True, undecided=undecided)


def _from_table(table: Sequence[Sequence[float]], undecided: int | None = None) -> _Estimate | None:
    """The grouped mean of a units x columns table (NaN = no value), None when it is empty."""
    units = unit_table(table)
    return _Estimate(grouped_mean(units), len(units), units, undecided=undecided) if len(units) else None


def _question_level(scored: Scored, dims: list[str], convention: str = "strict",
                    gaps: dict[str, int] | None = None) -> dict[str, _Estimate]:
    """Per-question ranking statistics and per-document rating correlations, averaged. Into `gaps`, per key, the
    scored items of its gold kind it left out, their gold putting no response above another (one tier, every
    rating alike, under two responses): counted even when no item is left to give the key a value."""
    rows: list[dict[tuple[str, str | None], float]] = []
    kinds: list[set[str | None]] = []  # the columns each row's gold can fill: ranking, or its rating dimensions
    for item, verdict in scored:
        if isinstance(item.gold, RankingGold):
            stats = question_ranking_stats(item.gold, verdict, convention)
            rows.append({(key, _RANKING): value for key, value in stats.items()})
            kinds.append({_RANKING})
        elif isinstance(item.gold, RatingsGold):
            gold = item.gold
            rows.append({
                (key, dim): value
                for dim in gold.dimensions
                for key, value in document_correlations(gold, verdict, dim).items()
            })
            kinds.append(set(gold.dimensions))
    wanted = {key: [_RANKING, *dims] for key in QUESTION_KEYS}
    if len(dims) > 1:
        wanted |= {f"{key}/{dim}": [dim] for key in CORRELATIONS for dim in dims}
    estimates = {}
    for name, columns in wanted.items():
        key = name.split("/")[0]
        table = [[row.get((key, column), np.nan) for column in columns] for row in rows]
        undecided = sum(any((key, c) in row and row.get((NO_DECISION, c)) == 1.0 for c in columns) for row in rows)
        fillable = [c for c in columns if c is _RANKING or key in CORRELATIONS]  # RBO is of rankings only
        left_out = sum(1 for row, kind in zip(rows, kinds)
                       if kind.intersection(fillable) and not any((key, c) in row for c in fillable))
        if left_out and gaps is not None:
            gaps[name] = left_out
        if (estimate := _from_table(table, undecided)) is not None:
            estimates[name] = estimate
    return estimates


def _sample_level(scored: Scored, dims: list[str]) -> dict[str, _Estimate]:
    """Pooled (item, candidate) correlations per dimension, and their mean over dimensions."""
    ratings = [(item.gold, verdict) for item, verdict in scored if isinstance(item.gold, RatingsGold)]
    per_dim = {dim: pooled_correlations(ratings, dim) for dim in dims}
    estimates = {}
    for key in CORRELATIONS:
        found = [(stats[key], n) for stats, n in per_dim.values() if key in stats]
        if found:
            mean, most = float(np.mean([value for value, _ in found])), max(n for _, n in found)
            estimates[f"{key}_sample"] = _Estimate(mean, most, None)
        if len(dims) > 1:
            estimates |= {
                f"{key}_sample/{dim}": _Estimate(stats[key], n, None)
                for dim, (stats, n) in per_dim.items()
                if key in stats
            }
    return estimates


def _pairwise(scored: Scored) -> dict[str, _Estimate]:
    """Accuracy over every human label of the pairwise items; its CI resamples items, not labels.

    A judge's tie is a tie: it matches a human tie label and no A or B label. Its no-decision units are the A and B
    labels of the items it tied: where a person chose a side and the judge did not. A human tie it matched is a hit,
    counted in the figure, so never also a unit it decided nothing on (as `metrics.item.item_undecided` reads an
    item: a judge's tie where every person chose a side).
    """
    rows: dict[str, list[tuple[float, float]]] = {key: [] for key in PAIRWISE_KEYS}
    undecided = dict.fromkeys(PAIRWISE_KEYS, 0)
    for item, verdict in scored:
        if isinstance(item.gold, PairwiseGold):
            tied = judge_preference(verdict, item.gold.a, item.gold.b) == "tie"
            sided = sum(label != "tie" for label in item.gold.labels)
            for key, values in judgement_hits(item.gold, verdict).items():
                rows[key].append((sum(values), len(values)))
                undecided[key] += sided if tied else 0
    return {key: estimate for key, found in rows.items() if (estimate := _from_ratios(found, undecided[key]))}


def _estimates(scored: Scored, convention: str = "strict", gaps: dict[str, int] | None = None) -> dict[str, _Estimate]:
    """Every computable metric of the scored items, whatever mix of gold kinds they hold (into `gaps`, what the
    question-level keys left out: `_question_level`)."""
    dims: dict[str, None] = {}
    for item, _ in scored:
        if isinstance(item.gold, RatingsGold):
            dims.update(dict.fromkeys(item.gold.dimensions))
    return (_question_level(scored, list(dims), convention, gaps) | _sample_level(scored, list(dims))
            | _pairwise(scored))


def _routing(items: Sequence[Item], verdicts: Mapping[str, Verdict]) -> dict[str, _Estimate]:
    """`route_accuracy`: how often a judge's own factoid / non-factoid call matches the dataset's label.

    Counts items whose verdict says the backbone routed them (`details.routed_by == "llm"`)
    and whose dataset gives a question type; gold rankings are not needed.
    """
    hits = [
        [float(verdict.details.get("question_type") == item.question_type)]
        for item in items
        if item.question_type is not None
        and (verdict := verdicts.get(item.id)) is not None
        and verdict.details.get("routed_by") == "llm"
    ]
    estimate = _from_table(hits) if hits else None
    return {"route_accuracy": estimate} if estimate else {}


def position_counts(details: Mapping[str, Any]) -> dict[str, int] | None:
    """A verdict's position-bias counts (`agreed`, `judged_both`, `one_order`), None when it has none.

    Both pairwise judges write `position_consistency` (`judges.pairwise.judge.position_details`); a judge file's
    `[pair] both_orders` wrote the same counts under `swap_and_confirm` before, so a session stored then still shows
    its figure (its every pair had both orders parsed: none was decided by one order).
    """
    counts = details.get("position_consistency")
    if not isinstance(counts, dict):
        counts = details.get("swap_and_confirm")
    if not isinstance(counts, dict):
        return None
    return {key: int(counts.get(key) or 0) for key in ("agreed", "judged_both", "one_order")}


def _position_consistency(items: Sequence[Item], verdicts: Mapping[str, Verdict]) -> dict[str, _Estimate]:
    """`position_consistency`: pairs whose two orders agreed, over the pairs judged in both orders; and `one_order`,
    only where some pair was so decided: of the pairs asked in both orders, those one order alone decided because
    the other answer did not parse (their verdict keeps the position bias both orders are asked to cancel).

    Read from each verdict's `details.position_consistency` (`agreed`, `judged_both`, `one_order`: `position_counts`);
    the CI resamples items (each item's pairs together).
    """
    rows: list[tuple[float, float]] = []
    one_order: list[tuple[float, float]] = []
    for item in items:
        if (verdict := verdicts.get(item.id)) is None:
            continue
        if (counts := position_counts(verdict.details)) is not None:
            both, alone = float(counts["judged_both"]), float(counts["one_order"])
            rows.append((float(counts["agreed"]), both))
            one_order.append((alone, both + alone))
    found = {"position_consistency": _from_ratios(rows)}
    if any(alone for alone, _ in one_order):
        found["one_order"] = _from_ratios(one_order)
    return {key: estimate for key, estimate in found.items() if estimate}


def _values(estimates: dict[str, _Estimate]) -> dict[str, float]:
    """The metric values alone."""
    return {key: estimate.value for key, estimate in estimates.items()}


def _groups(scored: Scored) -> dict[str, dict[str, Scored]]:
    """The scored items by question type, and the pairwise ones by pair type."""
    groups: dict[str, dict[str, Scored]] = {"question_type": {}, "pair_type": {}}
    for item, verdict in scored:
        if item.question_type is not None:
            groups["question_type"].setdefault(item.question_type, []).append((item, verdict))
        if isinstance(item.gold, PairwiseGold) and item.gold.pair_type is not None:
            groups["pair_type"].setdefault(item.gold.pair_type, []).append((item, verdict))
    return groups


def summarize(
    items: Sequence[Item], verdicts: Mapping[str, Verdict], *, seed: int = 0, ci: bool = True,
    convention: str = "strict", not_applicable: Mapping[str, str] | None = None,
) -> JudgeMetrics:
    """Score one judge's verdicts (item id -> Verdict) against gold; items without either are skipped.

    `convention` says how degenerate ranking questions count (`metrics.ranking.CONVENTIONS`):
    under `paper`, a question the judge could not rank because it has fewer than 2
    candidates (`not_applicable`) counts with its one-candidate ranking, as in MinosEval's code.
    """
    scored = [(item, verdicts[item.id]) for item in items if item.gold is not None and item.id in verdicts]
    if convention == "paper":
        scored += [(item, _trivial_verdict(item)) for item in items
                   if item.id in (not_applicable or {}) and item.id not in verdicts
                   and isinstance(item.gold, RankingGold) and len(item.candidates) < 2]
    left_out: dict[str, int] = {}
    estimates = (_estimates(scored, convention, left_out) | _routing(items, verdicts)
                 | _position_consistency(items, verdicts))
    intervals = {}
    if ci:
        for key, estimate in estimates.items():
            if estimate.units is None:
                continue
            interval = (ratio_ci(estimate.units, seed=seed) if estimate.ratio
                        else mean_ci(estimate.units, seed=seed))
            if interval is not None:
                intervals[key] = interval
    classes = preference_classes(scored, seed=seed, ci=ci) or {}
    kappas, intervals = classes.pop("metrics", {}), intervals | {k: tuple(v) for k, v in classes.pop("ci", {}).items()}
    breakdown: dict[str, dict[str, dict[str, float]]] = {}
    breakdown_n: dict[str, dict[str, dict[str, int]]] = {}
    for by, members in _groups(scored).items():
        for name, group in members.items():
            if metrics := _values(found := _estimates(group, convention)):
                breakdown.setdefault(by, {})[name] = metrics
                breakdown_n.setdefault(by, {})[name] = {key: e.n for key, e in found.items()}
    return JudgeMetrics(
        metrics=_values(estimates) | kappas,
        ci=intervals,
        n={key: estimate.n for key, estimate in estimates.items()} | dict.fromkeys(kappas, classes.get("n", 0)),
        breakdown=breakdown,
        breakdown_n=breakdown_n,
        no_decision={key: estimate.undecided for key, estimate in estimates.items() if estimate.undecided is not None},
        classes=classes,
        left_out=left_out,
    )


def _trivial_verdict(item: Item) -> Verdict:
    """The only ranking of an item with fewer than two candidates (for the `paper` convention)."""
    from qatui.events import Verdict

    order = list(item.candidates)
    return Verdict(item_id=item.id, scores={cid: 0.0 for cid in order}, ranking=order, order=order)
