"""Turning scores into a strict ranking and a pairwise preference, one documented rule each.

Tie rule: equal scores keep presentation order (Response 1 before Response 2). The
presentation order is a seeded shuffle, so ties never fall back on the file's order,
which in the MinosEval release is the gold order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from qatui.data.model import Preference


def strict_ranking(scores: Mapping[str, float], presented: Sequence[str]) -> list[str]:
    """Labels best first by score; ties broken by position in `presented`."""
    position = {label: i for i, label in enumerate(presented)}
    return sorted(presented, key=lambda label: (-scores[label], position[label]))


def pair_preference(score_a: float, score_b: float, digits: int) -> Preference:
    """A, B, or a tie when both scores are equal once rounded to `digits` (as CALF does)."""
    a, b = round(score_a, digits), round(score_b, digits)
    if a == b:
        return "tie"
    return "A" if a > b else "B"
