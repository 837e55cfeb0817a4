"""One verdict from a judgement asked K times (`repeats`): the rule that combines the K answers.

The rule follows what the judge says (label space, "Response 1", ...):

- **majority**, for a judge that names a winner of two responses: each repeat's choice (A, B or
  tie, as its own verdict reads it) is a vote; the choice with the most votes wins, and when two
  or more choices share the most votes the verdict is a tie (3 repeats A, B, tie: a tie;
  A, A, B: A; 4 repeats A, A, B, B: a tie). The scores are the repeats' mean, for display.
- **borda**, for a judge that gives its own ranking: in each repeat place k of n (1 = best) is
  worth n - k points, responses it scored equal (rounded to its `tie_digits`) sharing the mean
  of their places' points; a response's score is its mean points over the repeats, divided by
  n - 1 (best possible 1).
- **mean**, for a judge that only scores: each response's mean score over the repeats.

Whichever rule, the verdict's ranking, tied groups and preference then come from the aggregate
through qatui's one tie rule (`qatui.ties`), exactly as for a judgement asked once. The judge's
own details are those of the first repeat, save what a pairwise judge says of one asking
(`PER_ASKING`: its pairs' votes and results, its position-bias counts) and the figures a judge gives each
response beside its score (`MEAN_OF_REPEATS`: CheckEval's score per dimension, RAGAS's metrics), which are their
mean over the repeats that gave one (they were the first repeat's: the per-dimension correlations of a
CheckEval run asked three times stood on its first asking, beside a headline on all three), CheckEval's
unanswered questions, summed, and RAGAS's failures, each repeat's named: `details["repeats"]`
holds each repeat's scores, ranking, tied groups and preference (candidate ids), which
`metrics.self_agreement` reads, and that repeat's own pairs and counts; the verdict's
`position_consistency` and `positions` are the counts summed over the repeats (what the run
summary pools), and it has no `pairs` of its own (no one repeat's pairs made it). Each
artifact says which repeat it came from (`Event.repeat`), so the item view and the TUI show
every repeat's comparisons apart, each with its own combined results.
The engine combines a judge's repeats with `aggregate`; a jury's members asked K times (one answer each per
repeat of the jury) are combined by the same rule (`metrics.jury.combined_members`), so a member's figures stand
on its aggregate as a judge's do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import mean
from typing import TYPE_CHECKING, Any

from qatui.events import Judgement
from qatui.metrics.kendall import tier_places
from qatui.ties import plurality, ranking_tiers, strict_ranking

if TYPE_CHECKING:
    from qatui.events import Verdict

RULES = ("majority", "borda", "mean")


def rule_for(judgements: Sequence[Judgement], labels: Sequence[str]) -> str:
    """majority for a judge that names a winner of two responses, borda for one that ranks, else mean."""
    if len(labels) == 2 and any(j.winner is not None for j in judgements):
        return "majority"
    if any(j.ranking is not None for j in judgements):
        return "borda"
    return "mean"


def mean_scores(judgements: Sequence[Judgement], labels: Sequence[str]) -> dict[str, float]:
    """Each label's mean score over the repeats."""
    return {label: float(mean(j.scores[label] for j in judgements)) for label in labels}


def borda_scores(judgements: Sequence[Judgement], labels: Sequence[str], digits: int) -> dict[str, float]:
    """Each label's mean Borda points over the repeats over n - 1: place k of n is worth n - k, ties share."""
    n = len(labels)
    points: dict[str, list[float]] = {label: [] for label in labels}
    for judgement in judgements:
        ranking = judgement.ranking or strict_ranking(judgement.scores, labels, digits)
        places = tier_places(ranking_tiers(judgement.scores, ranking, digits))
        for label in labels:
            points[label].append(n - places[label])
    return {label: float(mean(found)) / max(n - 1, 1) for label, found in points.items()}


def choice_label(verdict: Verdict, labels: Sequence[str]) -> str:
    """A repeat's A / B / tie (its verdict's preference) as the label it chose, or "tie"."""
    if verdict.preference in (None, "tie") or verdict.pair is None:
        return "tie"
    chosen = verdict.pair[0] if verdict.preference == "A" else verdict.pair[1]
    return dict(zip(verdict.order, labels)).get(chosen, "tie")


def aggregate(judgements: Sequence[Judgement], verdicts: Sequence[Verdict], labels: Sequence[str],
              digits: int) -> Judgement:
    """The label-space judgement of K repeats (`verdicts`: each repeat's own verdict), with every repeat in details."""
    rule = rule_for(judgements, labels)
    winner, ranking = None, None
    if rule == "majority":
        scores = mean_scores(judgements, labels)
        winner = plurality([choice_label(v, labels) for v in verdicts])
        if winner != "tie":
            ranking = [winner, *(label for label in labels if label != winner)]
    elif rule == "borda":
        scores = borda_scores(judgements, labels, digits)
    else:
        scores = mean_scores(judgements, labels)
    each = [j.details for j in judgements]
    details: dict[str, Any] = {**{k: v for k, v in judgements[0].details.items() if k not in PER_ASKING},
                               **summed_counts(each), **means_of_repeats(each), "aggregation": rule,
                               "repeats": [repeat_record(v, j.details) for v, j in zip(verdicts, judgements)]}
    return Judgement(scores=scores, ranking=ranking, winner=winner, details=details)


PER_ASKING = ("pairs", "position_consistency", "positions", "unparsed")
"""A pairwise judge's details that are true of one asking only (`judges.pairwise.judge.position_details`): each
repeat's record keeps its own, and the aggregate holds the counts summed over the repeats."""


def summed_counts(each: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The position-bias counts (`position_consistency`, `positions`, `unparsed`) summed over the repeats' details,
    each key only where every repeat has it: the aggregate's figures are then those of all its askings."""
    found: dict[str, Any] = {}
    for key in ("position_consistency", "positions"):
        if each and all(isinstance(d.get(key), dict) for d in each):
            names = dict.fromkeys(name for d in each for name in d[key])
            found[key] = {name: sum(int(d[key].get(name) or 0) for d in each) for name in names}
    if each and all(isinstance(d.get("unparsed"), int) for d in each):
        found["unparsed"] = sum(d["unparsed"] for d in each)
    return found


MEAN_OF_REPEATS = ("dimension_scores", "faithfulness", "answer_relevance", "context_relevance",
                   "context_relevance_of_context")
"""Figures a judge's details give each response (or dimension of it) beside its score: the aggregate holds their
mean over the repeats that gave one (`means_of_repeats`), each repeat's record its own."""


def first_repeat_only(details: dict[str, Any]) -> str:
    """" (repeat 1 of K only: …)" for a repeated verdict stored before each repeat kept its own figures beside its
    scores (its records hold no `MEAN_OF_REPEATS` key, so the details' are the first repeat's, not the mean); ""
    for every other verdict. Said beside those figures wherever they are shown."""
    records = details.get("repeats")
    if not isinstance(records, list) or len(records) < 2 or not any(key in details for key in MEAN_OF_REPEATS):
        return ""
    if any(isinstance(r, dict) and any(key in r for key in MEAN_OF_REPEATS) for r in records):
        return ""
    return f" (repeat 1 of {len(records)} only: stored before each repeat kept its own)"


def means_of_repeats(each: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`MEAN_OF_REPEATS` averaged over the repeats' details, number by number (a response's dimension, a metric),
    over the repeats that gave a number (None where none did); CheckEval's `unanswered` counts summed; RAGAS's
    `failures` gathered from every repeat, each reason naming its repeat."""
    found: dict[str, Any] = {key: _mean_defined([d.get(key) for d in each])
                             for key in MEAN_OF_REPEATS if any(key in d for d in each)}
    if each and all(isinstance(d.get("unanswered"), dict) for d in each):
        names = dict.fromkeys(name for d in each for name in d["unanswered"])
        found["unanswered"] = {name: sum(int(d["unanswered"].get(name) or 0) for d in each) for name in names}
    failures: dict[str, dict[str, list[str]]] = {}
    for k, d in enumerate(each, 1):
        for label, reasons in (d.get("failures") or {}).items():
            for metric, reason in (reasons or {}).items():
                failures.setdefault(label, {}).setdefault(metric, []).append(f"repeat {k}: {reason}")
    if failures:
        found["failures"] = {label: {metric: "; ".join(reasons) for metric, reasons in metrics.items()}
                             for label, metrics in failures.items()}
    return found


def _mean_defined(values: Sequence[Any]) -> Any:
    """The mean of the finite numbers among `values`, or, where they are mappings, the mean key by key (None for a
    key no repeat gave a number for)."""
    if any(isinstance(value, dict) for value in values):
        keys = dict.fromkeys(key for value in values if isinstance(value, dict) for key in value)
        return {key: _mean_defined([value.get(key) for value in values if isinstance(value, dict)]) for key in keys}
    numbers = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]
    return float(mean(numbers)) if numbers else None


def repeat_record(verdict: Verdict, details: dict[str, Any]) -> dict[str, Any]:
    """What one repeat said, in candidate ids: its scores, strict ranking, tied groups and A / B / tie; and what its
    judge's `details` said of that asking alone, by response label as the details say it (`PER_ASKING`: a pairwise
    judge's pairs and position counts; `MEAN_OF_REPEATS`: its own figures beside its scores)."""
    return {"scores": dict(verdict.scores), "ranking": list(verdict.ranking),
            "tiers": [list(tier) for tier in verdict.tiers], "preference": verdict.preference,
            **{k: v for k, v in details.items() if k in PER_ASKING or k in MEAN_OF_REPEATS}}
