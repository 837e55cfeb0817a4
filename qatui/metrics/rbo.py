"""Extrapolated rank-biased overlap (RBO_ext) of a strict ranking against a gold ranking with ties.

Webber, Moffat & Zobel (2010), "A similarity measure for indefinite rankings", eq. 32:
with S the shorter list (length s), L the longer (length l) and X_d the overlap at depth d,

    RBO_ext = (1-p)/p * [ sum_{d=1..l} X_d/d * p^d + sum_{d=s+1..l} X_s*(d-s)/(s*d) * p^d ]
              + [ (X_l - X_s)/l + X_s/s ] * p^l

where, past depth s, the shorter list counts whole (it has no more items). For equal lengths
this is eq. 30, X_k/k * p^k + (1-p)/p * sum_{d=1..k} X_d/d * p^d; identical lists give 1.

Ties in the gold ranking use fractional overlap: at depth d a gold tier that straddles d
(its first slot is within d, its last is not) counts each of its members with weight
(slots of the tier within d) / (tier size), and whole tiers within d count 1. The gold
prefix thus always weighs exactly d, so a strict gold reduces to the paper's set overlap.
Against a tied gold even a consistent ranking scores below 1: no strict order matches a tie.
"""

from __future__ import annotations

from collections.abc import Sequence


def _gold_weights(tiers: Sequence[Sequence[str]], depth: int) -> dict[str, float]:
    """Each gold candidate's membership in the gold prefix of length `depth` (fractional for ties)."""
    weights: dict[str, float] = {}
    start = 0
    for tier in tiers:
        share = min(max(depth - start, 0), len(tier)) / len(tier)
        weights.update(dict.fromkeys(tier, share))
        start += len(tier)
    return weights


def rbo(ranking: Sequence[str], gold: Sequence[Sequence[str]], p: float) -> float:
    """RBO_ext in [0, 1] of a strict `ranking` (best first) against gold tiers (best first)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p must lie in (0, 1), not {p}")
    n_pred, n_gold = len(ranking), sum(len(tier) for tier in gold)
    if n_pred == 0 or n_gold == 0:
        raise ValueError("RBO needs two non-empty rankings")
    s, l = min(n_pred, n_gold), max(n_pred, n_gold)
    overlap = [0.0]  # overlap[d] = X_d; past its end a list counts whole
    for d in range(1, l + 1):
        weights = _gold_weights(gold, d)
        overlap.append(sum(weights.get(cid, 0.0) for cid in ranking[:d]))
    seen = sum(overlap[d] / d * p**d for d in range(1, l + 1))
    unseen = sum(overlap[s] * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    tail = ((overlap[l] - overlap[s]) / l + overlap[s] / s) * p**l
    return min(1.0, max(0.0, (1 - p) / p * (seen + unseen) + tail))
