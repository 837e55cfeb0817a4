"""Kendall tau-b of one question's short ranking, in plain Python: the TUI shows it on every list row.

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


def ranked_against_gold(gold: RankingGold, verdict: Verdict) -> tuple[dict[str, float], list[str], list[list[str]]]:
    """Gold grades, the judge's ranking over the gold's candidates, and the gold tiers over the ranked ones."""
    grades = gold.grade()
    ranking = [cid for cid in verdict.ranking if cid in grades]
    common = set(ranking)
    tiers = [kept for tier in gold.tiers if (kept := [cid for cid in tier if cid in common])]
    return grades, ranking, tiers


def question_tau(gold: RankingGold, verdict: Verdict) -> float | None:
    """Kendall tau-b of one verdict against its question's gold, as the `strict` convention has it; None if degenerate."""
    grades, ranking, tiers = ranked_against_gold(gold, verdict)
    if len(ranking) < 2 or len(tiers) < 2:
        return None
    return kendall_tau_b([grades[cid] for cid in ranking], [-float(i) for i in range(len(ranking))])
