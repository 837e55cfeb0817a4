"""Is one judge really better than another? The difference of a metric with a paired bootstrap CI.

Both judges are scored on the same items, and each bootstrap resample draws the same items
for both, so what varies between questions cancels out and the interval says whether the gap
is more than noise. Per-question metrics (Kendall, Spearman, RBO) differ by their means over
questions; accuracy and other pooled ratios by their pooled ratios.

Where each item is one trial on both sides (an accuracy with one label per item: a hit or a miss), the difference
is one of two paired proportions, and its interval is Bonett and Price's adjusted Wald interval for paired binary
data (2012; the one Fagerland, Lydersen and Laake recommend, 2014) at every count, as a single proportion of one
trial per item gets Clopper and Pearson's (`bootstrap.ratio_ci`): a percentile bootstrap one step in from the end
(11 of 12 items gained) read [+0.75, +1.00], tighter than all 12 gaining could give, and two judges alike on every
item had no interval at all.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.bootstrap import percentile_ci, unanimous_interval
from qatui.metrics.pairwise import judgement_hits, label_hits
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


def failed_values(items: Sequence[Item], failed: Collection[str], key: str,
                  convention: str = "strict") -> dict[str, tuple[float, float]]:
    """Item id -> (numerator, denominator) of `key` on the items of `failed` (those the judge gave no verdict on),
    each counted as agreeing with no one: a miss on every human label `key` counts (accuracy), and a question
    scored as a ranking that told no candidate apart is (correlations 0, `metrics.ranking`). An item `key` skips
    whatever was judged (one gold tier) is left out. So two judges are measured on the same items when one of
    them failed some (`engine.aligning.choose_best`)."""
    from qatui.events import Verdict

    found: dict[str, tuple[float, float]] = {}
    for item in items:
        if item.id not in failed:
            continue
        if isinstance(item.gold, PairwiseGold) and (hits := label_hits(item.gold, None).get(key)):
            found[item.id] = (sum(hits), float(len(hits)))
        elif isinstance(item.gold, RankingGold):
            ids = list(item.candidates)
            undecided = Verdict(item_id=item.id, scores=dict.fromkeys(ids, 0.0), ranking=ids, order=ids, tiers=[ids])
            if (value := question_ranking_stats(item.gold, undecided, convention).get(key)) is not None:
                found[item.id] = (value, 1.0)
    return found


def unanimous_difference(delta: float, n: int, *, confidence: float = 0.95) -> list[float] | None:
    """The CI of a difference every one of `n` items gave alike. At +1 (each item went from a miss to a hit) the share
    of items that moved so has the exact interval [L, 1] (`bootstrap.unanimous_interval`), and were the others to
    move back the difference would be 2L - 1: the interval is [2L - 1, 1] (12 items: [+0.47, 1]); at -1 its mirror.
    Any other common difference (0: two judges alike throughout) has no interval."""
    if abs(delta) != 1.0 or (interval := unanimous_interval(1.0, n, confidence=confidence)) is None:
        return None
    low = 2 * interval[0] - 1
    return [low, 1.0] if delta > 0 else [-1.0, -low]


def paired_binary_interval(gained: int, lost: int, n: int, *, confidence: float = 0.95) -> list[float]:
    """Bonett and Price's interval of p(gained) - p(lost) over `n` paired one-trial items (the module docstring):
    each count plus one over n + 2, a Wald interval about their difference, within [-1, 1]. The normal quantile is
    the standard library's, so a figure needing no bootstrap imports no SciPy."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    up, down = (gained + 1) / (n + 2), (lost + 1) / (n + 2)
    centre = up - down
    half = z * math.sqrt(max(0.0, up + down - centre * centre) / (n + 2))
    return [max(-1.0, centre - half), min(1.0, centre + half)]


def paired_difference(items: Sequence[Item], verdicts_a: Mapping[str, Verdict], verdicts_b: Mapping[str, Verdict],
                      key: str, *, convention: str = "strict", seed: int = 0,
                      confidence: float = 0.95) -> dict[str, float | int | list[float] | None] | None:
    """`key` of judge B minus judge A over the items both scored, with a paired percentile bootstrap CI.

    None when no item has the metric for both. `ci` is None below two common items; items of one trial each get
    `paired_binary_interval`; otherwise, when every item differs by the same amount, a percentile bootstrap would
    print that point, so `unanimous_difference` decides it.
    """
    a, b = item_values(items, verdicts_a, key, convention), item_values(items, verdicts_b, key, convention)
    common = [item.id for item in items if item.id in a and item.id in b]
    if not common:
        return None
    table = np.array([[*a[i], *b[i]] for i in common], dtype=float)

    def delta(rows: np.ndarray) -> np.ndarray:
        return rows[..., 2].sum(axis=-1) / rows[..., 3].sum(axis=-1) - rows[..., 0].sum(axis=-1) / rows[..., 1].sum(axis=-1)

    point = float(delta(table))
    ci = None
    by_id = {item.id: item for item in items}  # counts of hits, one label each (never a tau that reads 0 or 1)
    single = all(isinstance(by_id[i].gold, PairwiseGold) for i in common) and bool(
        np.all(table[:, [1, 3]] == 1) and np.isin(table[:, [0, 2]], (0.0, 1.0)).all())
    if len(common) >= 2 and single:  # a hit or a miss on each side of each item
        moved = table[:, 2] - table[:, 0]
        ci = paired_binary_interval(int((moved > 0).sum()), int((moved < 0).sum()), len(common), confidence=confidence)
    elif len(common) >= 2:
        if np.allclose(table[:, 2] / table[:, 3] - table[:, 0] / table[:, 1], point):  # nothing to resample
            ci = unanimous_difference(point, len(common), confidence=confidence)
        else:
            ci = list(percentile_ci(table, delta, seed=seed, confidence=confidence))
    return {"delta": point, "ci": ci, "n": len(common)}
