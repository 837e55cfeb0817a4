"""Per-question agreement of a judge's strict ranking with a human ranking that may have ties.

Only candidates both in the gold and in the judge's ranking count. The judge's position
score is the negative rank (higher is better), the gold score `RankingGold.grade()`. A
question with fewer than 2 such candidates or with all of them in one gold tier tells
nothing about the judge's order (correlations are undefined, RBO would depend on the
candidate count alone), so under the default `strict` convention it yields no statistic at
all; the `paper` convention counts it as MinosEval's code does (see `question_ranking_stats`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.data.model import RankingGold
from qatui.metrics.correlation import correlations
from qatui.metrics.kendall import ranked_against_gold
from qatui.metrics.rbo import rbo

if TYPE_CHECKING:
    from qatui.events import Verdict

RBO_PERSISTENCES = (0.5, 0.9)
CONVENTIONS = ("strict", "paper")
"""How degenerate questions count: left out (`strict`), or as correlation 0 with RBO (`paper`)."""


def question_ranking_stats(gold: RankingGold, verdict: Verdict, convention: str = "strict") -> dict[str, float]:
    """Kendall tau-b, Spearman, Pearson and `rbo_<p>` for one question; empty when skipped.

    A degenerate question (fewer than 2 ranked candidates, or one gold tier) is skipped under
    the `strict` convention; under `paper` (MinosEval's code) it counts with correlations 0
    and RBO computed on what there is.
    """
    grades, ranking, tiers = ranked_against_gold(gold, verdict)
    if len(ranking) < 2 or len(tiers) < 2:
        if convention != "paper" or not ranking:
            return {}
        stats = dict.fromkeys(("kendall", "spearman", "pearson"), 0.0)
    else:
        stats = correlations([grades[cid] for cid in ranking], [-float(i) for i in range(len(ranking))])
    stats.update({f"rbo_{p}": rbo(ranking, tiers, p) for p in RBO_PERSISTENCES})
    return stats
