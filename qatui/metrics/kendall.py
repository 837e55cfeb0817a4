"""Kendall tau-b of one question's short ranking, in plain Python: the TUI shows it on every list row.

The judge's side is its tied groups (`Verdict.tiers`): tau-b counts its ties as ties, and a
judge that tied every candidate made no decision and scores 0 (see docs/METRICS.md, Ties).

The metrics (`correlation.correlations`) use SciPy's `kendalltau`, which is O(n log n) for long
samples; this one is quadratic but needs no `scipy.stats`, whose import costs about a second that
a saved session's first rows must not wait for. A property test holds the two equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from qatui.data.model import RankingGold
    from qatui.events import Verdict


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall tau-b of two paired samples, clipped to [-1, 1]; None for < 2 points or a constant side.

    Over all pairs i < j: (concordant - discordant) / sqrt((pairs - ties in x) * (pairs - ties in y)).
    Quadratic in the length, in plain Python (faster than numpy for a handful of candidates).
    """
    if len(x) != len(y):
        raise ValueError(f"paired samples differ in length: {len(x)} and {len(y)}")
    n = len(x)
    balance = tied_x = tied_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = (x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])
            balance += dx * dy
            tied_x += dx == 0
            tied_y += dy == 0
    pairs = n * (n - 1) // 2
    if pairs == 0 or tied_x == pairs or tied_y == pairs:
        return None
    return max(-1.0, min(1.0, balance / math.sqrt((pairs - tied_x) * (pairs - tied_y))))


def tier_places(tiers: Sequence[Sequence[str]]) -> dict[str, float]:
    """Each candidate's 1-based place in tiers (best first); a tied group shares the mean of its places."""
    places: dict[str, float] = {}
    start = 0
    for tier in tiers:
        places.update(dict.fromkeys(tier, start + (len(tier) + 1) / 2))
        start += len(tier)
    return places


def ranked_against_gold(gold: RankingGold, verdict: Verdict) -> tuple[dict[str, float], list[list[str]], list[list[str]]]:
    """Gold grades, the judge's tied groups over the gold's candidates, and the gold tiers over the ones it ranked.

    The judge's side is `Verdict.tiers` (what it said, ties kept), never the strict display ranking.
    """
    grades = gold.grade()
    judged = [kept for tier in verdict.tiers if (kept := [cid for cid in tier if cid in grades])]
    common = {cid for tier in judged for cid in tier}
    tiers = [kept for tier in gold.tiers if (kept := [cid for cid in tier if cid in common])]
    return grades, judged, tiers


def no_decision(judged: Sequence[Sequence[str]]) -> bool:
    """True when the judge put every candidate it was measured on in one group: it told none apart."""
    return len(judged) == 1 and len(judged[0]) >= 2


def question_tau(gold: RankingGold, verdict: Verdict) -> float | None:
    """Kendall tau-b of one verdict against its question's gold, as the `strict` convention has it.

    None if degenerate (fewer than 2 candidates, or one gold tier); 0 when the judge made no
    decision (every candidate tied): it agrees with no one.
    """
    grades, judged, tiers = ranked_against_gold(gold, verdict)
    candidates = [cid for tier in judged for cid in tier]
    if len(candidates) < 2 or len(tiers) < 2:
        return None
    if no_decision(judged):
        return 0.0
    places = tier_places(judged)
    return kendall_tau_b([grades[cid] for cid in candidates], [-places[cid] for cid in candidates])
