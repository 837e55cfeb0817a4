"""Extrapolated rank-biased overlap (RBO_ext) of two rankings that may both have ties: RBO^a.

Webber, Moffat & Zobel (2010), "A similarity measure for indefinite rankings", eq. 32:
with S the shorter list (length s), L the longer (length l) and X_d the overlap at depth d,

    RBO_ext = (1-p)/p * [ sum_{d=1..l} X_d/d * p^d + sum_{d=s+1..l} X_s*(d-s)/(s*d) * p^d ]
              + [ (X_l - X_s)/l + X_s/s ] * p^l

where, past depth s, the shorter list counts whole (it has no more items). For equal lengths
this is eq. 30, X_k/k * p^k + (1-p)/p * sum_{d=1..k} X_d/d * p^d; identical strict lists give 1.

Ties, on either side, follow the RBO^a variant of Corsi & Urbano (2024), "The treatment of
ties in rank-biased overlap" (SIGIR): at depth d, a tied group that straddles d (its first
place is within d, its last is not) counts each member with weight (places of the group
within d) / (group size), and whole groups within d count 1; the overlap X_d is the sum over
candidates of the product of their weights on the two sides. That is the probability that a
candidate is in both prefixes when each side's ties are broken uniformly at random, so for
two lists of the same candidates (how qatui uses it) RBO^a is exactly the mean RBO over every
way of breaking the ties. A strict list reduces to the paper's set overlap; a tied list
scores below 1 even against itself: no order it could be broken into is certain.
"""

from __future__ import annotations

from collections.abc import Sequence


def _prefix_weights(tiers: Sequence[Sequence[str]], depth: int) -> dict[str, float]:
    """Each candidate's membership in the prefix of length `depth` (fractional for a group that straddles it)."""
    weights: dict[str, float] = {}
    start = 0
    for tier in tiers:
        share = min(max(depth - start, 0), len(tier)) / len(tier)
        weights.update(dict.fromkeys(tier, share))
        start += len(tier)
    return weights


def rbo(ranking: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], p: float) -> float:
    """RBO^a_ext in [0, 1] of a judge's tied groups (best first) against gold tiers (best first).

    A strict ranking is one candidate per group: `[[c] for c in ranking]`.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p must lie in (0, 1), not {p}")
    n_pred, n_gold = sum(len(tier) for tier in ranking), sum(len(tier) for tier in gold)
    if n_pred == 0 or n_gold == 0:
        raise ValueError("RBO needs two non-empty rankings")
    s, l = min(n_pred, n_gold), max(n_pred, n_gold)
    overlap = [0.0]  # overlap[d] = X_d; past its end a list counts whole
    for d in range(1, l + 1):
        mine, theirs = _prefix_weights(ranking, d), _prefix_weights(gold, d)
        overlap.append(sum(weight * theirs.get(cid, 0.0) for cid, weight in mine.items()))
    seen = sum(overlap[d] / d * p**d for d in range(1, l + 1))
    unseen = sum(overlap[s] * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    tail = ((overlap[l] - overlap[s]) / l + overlap[s] / s) * p**l
    return min(1.0, max(0.0, (1 - p) / p * (seen + unseen) + tail))
