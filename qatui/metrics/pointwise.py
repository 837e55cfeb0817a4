"""Correlation of a judge's per-candidate scores with human ratings, per rating dimension.

Sample level pools every (item, candidate) pair; summary level correlates within each item
(source document) and is averaged over documents elsewhere. A document with fewer than 2
scored candidates, or constant ratings, has no summary-level correlation; one where the judge
scored every candidate alike is a no decision and counts 0 (docs/METRICS.md, Ties). Ratings
correlate the raw scores, as the papers do: only exactly equal scores are ties here.
The judge's score of a candidate is `Verdict.scores[cid]`, the same for every dimension,
unless the verdict carries its own score for the dimension (CheckEval):
`details["dimension_scores"][label][dimension]`, label "Response k" = `order[k-1]`; a
None there means the judge could not score that dimension, and the candidate is left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from qatui.data.model import RatingsGold
from qatui.metrics.correlation import correlations

if TYPE_CHECKING:
    from qatui.events import Verdict


def judge_score(verdict: Verdict, cid: str, dimension: str) -> float | None:
    """The judge's score of `cid` on `dimension`: its own per-dimension score when it gave one."""
    per_label = verdict.details.get("dimension_scores") if verdict.details else None
    if isinstance(per_label, dict) and (label := verdict.label_of(cid)) is not None:
        own = per_label.get(label)
        if isinstance(own, dict) and dimension in own:
            return own[dimension]
    return verdict.scores.get(cid)


def rating_pairs(gold: RatingsGold, verdict: Verdict, dimension: str) -> tuple[list[float], list[float]]:
    """Human ratings and judge scores of the candidates rated on `dimension` and given a finite score."""
    human, judge = [], []
    for cid, per_dim in gold.ratings.items():
        score = judge_score(verdict, cid, dimension)
        if dimension in per_dim and score is not None and math.isfinite(score):
            human.append(per_dim[dimension])
            judge.append(score)
    return human, judge


def document_correlations(gold: RatingsGold, verdict: Verdict, dimension: str) -> dict[str, float]:
    """Summary-level correlations within one document, with `no_decision`; empty when undefined.

    A document where people told the candidates apart but the judge gave them all the same
    score is a no decision: correlations 0 (it agrees with no one), `no_decision` 1.0.
    """
    human, judge = rating_pairs(gold, verdict, dimension)
    if len(human) >= 2 and len(set(human)) > 1 and len(set(judge)) == 1:
        return {"kendall": 0.0, "spearman": 0.0, "pearson": 0.0, "no_decision": 1.0}
    stats = correlations(human, judge)
    return {**stats, "no_decision": 0.0} if stats else {}


def pooled_correlations(scored: Iterable[tuple[RatingsGold, Verdict]], dimension: str) -> tuple[dict[str, float], int]:
    """Sample-level correlations over all pooled (item, candidate) pairs, and how many pairs."""
    human, judge = [], []
    for gold, verdict in scored:
        h, j = rating_pairs(gold, verdict, dimension)
        human += h
        judge += j
    return correlations(human, judge), len(human)
