"""Turning scores into a strict ranking and a pairwise preference, one documented rule each.

One tie rule for both: two scores are equal when they are equal once rounded to the judge's
`tie_digits` (as CALF does for its lexical baselines). Equal scores keep presentation order
(Response 1 before Response 2) in a ranking and make a "tie" preference for a pair. The
presentation order is a seeded shuffle, so ties never fall back on the file's order, which
in the MinosEval release is the gold order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from qatui.data.model import Preference


def strict_ranking(scores: Mapping[str, float], presented: Sequence[str], digits: int | None = None) -> list[str]:
    """Labels best first by score (rounded to `digits` when given); ties broken by position in `presented`."""
    position = {label: i for i, label in enumerate(presented)}

    def score(label: str) -> float:
        return round(scores[label], digits) if digits is not None else scores[label]

    return sorted(presented, key=lambda label: (-score(label), position[label]))


def pair_preference(score_a: float, score_b: float, digits: int) -> Preference:
    """A, B, or a tie when both scores are equal once rounded to `digits` (as CALF does)."""
    a, b = round(score_a, digits), round(score_b, digits)
    if a == b:
        return "tie"
    return "A" if a > b else "B"
