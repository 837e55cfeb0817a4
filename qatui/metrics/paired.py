"""Is one judge really better than another? The difference of a metric with a paired bootstrap CI.

Both judges are scored on the same items, and each bootstrap resample draws the same items
for both, so what varies between questions cancels out and the interval says whether the gap
is more than noise. Per-question metrics (Kendall, Spearman, RBO) differ by their means over
questions; accuracy and other pooled ratios by their pooled ratios.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.bootstrap import percentile_ci
from qatui.metrics.pairwise import judgement_hits
from qatui.metrics.ranking import question_ranking_stats

if TYPE_CHECKING:
    from qatui.events import Verdict


def item_values(items: Sequence[Item], verdicts: Mapping[str, Verdict], key: str,
                convention: str = "strict") -> dict[str, tuple[float, float]]:
    """Item id -> (numerator, denominator) of `key` on that item: (value, 1) per question, (hits, labels) for accuracy."""
    found: dict[str, tuple[float, float]] = {}
    for item in items:
        verdict = verdicts.get(item.id)
        if verdict is None:
            continue
        if isinstance(item.gold, RankingGold) and (value := question_ranking_stats(item.gold, verdict, convention).get(key)) is not None:
            found[item.id] = (value, 1.0)
        elif isinstance(item.gold, PairwiseGold) and (hits := judgement_hits(item.gold, verdict).get(key)):
            found[item.id] = (sum(hits), float(len(hits)))
    return found


def paired_difference(items: Sequence[Item], verdicts_a: Mapping[str, Verdict], verdicts_b: Mapping[str, Verdict],
                      key: str, *, convention: str = "strict", seed: int = 0,
                      confidence: float = 0.95) -> dict[str, float | int | list[float] | None] | None:
    """`key` of judge B minus judge A over the items both scored, with a paired percentile bootstrap CI.

    None when no item has the metric for both. `ci` is None below two common items, and when every item differs
    by the same amount (`metrics.bootstrap`: a percentile bootstrap of units all alike would print a point).
    """
    a, b = item_values(items, verdicts_a, key, convention), item_values(items, verdicts_b, key, convention)
    common = [item.id for item in items if item.id in a and item.id in b]
    if not common:
        return None
    table = np.array([[*a[i], *b[i]] for i in common], dtype=float)

    def delta(rows: np.ndarray) -> np.ndarray:
        return rows[..., 2].sum(axis=-1) / rows[..., 3].sum(axis=-1) - rows[..., 0].sum(axis=-1) / rows[..., 1].sum(axis=-1)

    point = float(delta(table))
    ci = None  # every item differing alike (two judges agreeing throughout) leaves nothing to resample: no interval
    if len(common) >= 2 and not np.allclose(table[:, 2] / table[:, 3] - table[:, 0] / table[:, 1], point):
        ci = list(percentile_ci(table, delta, seed=seed, confidence=confidence))
    return {"delta": point, "ci": ci, "n": len(common)}
