"""Per-question agreement of a judge's ranking, with its ties, with a human ranking that may have ties.

Only candidates both in the gold and in the judge's ranking count. The judge's side is what
it said: its tied groups (`Verdict.tiers`), never the strict display ranking, whose order
among tied candidates is the seeded presentation shuffle. Its score is minus the mean place
of its group (higher is better), the gold score `RankingGold.grade()`; Kendall tau-b and
Spearman count ties on both sides as ties, and RBO is the tie-aware RBO^a (`metrics.rbo`).

A question where the judge tied every candidate is a *no decision*: its correlations are 0
(it agrees with no one, and tau-b itself is undefined there), it counts in the mean, and
`no_decision` (1.0) marks it so the share can be shown beside the figure.

A question with fewer than 2 such candidates or with all of them in one gold tier tells
nothing about the judge's order (correlations are undefined, RBO would depend on the
candidate count alone), so under the default `strict` convention it yields no statistic at
all; the `paper` convention counts it as MinosEval's code does (see `question_ranking_stats`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.data.model import RankingGold
from qatui.metrics.correlation import correlations
from qatui.metrics.kendall import no_decision, ranked_against_gold, tier_places
from qatui.metrics.rbo import rbo

if TYPE_CHECKING:
    from qatui.events import Verdict

RBO_PERSISTENCES = (0.5, 0.9)
CONVENTIONS = ("strict", "paper")
"""How degenerate questions count: left out (`strict`), or as correlation 0 with RBO (`paper`)."""
CORRELATION_KEYS = ("kendall", "spearman", "pearson")
NO_DECISION = "no_decision"
"""The key of a question's stats that is 1.0 when the judge tied every candidate, 0.0 otherwise."""


def question_ranking_stats(gold: RankingGold, verdict: Verdict, convention: str = "strict") -> dict[str, float]:
    """Kendall tau-b, Spearman, Pearson, `rbo_<p>` and `no_decision` for one question; empty when skipped.

    A degenerate question (fewer than 2 ranked candidates, or one gold tier) is skipped under
    the `strict` convention; under `paper` (MinosEval's code) it counts with correlations 0
    and RBO computed on what there is.
    """
    grades, judged, tiers = ranked_against_gold(gold, verdict)
    candidates = [cid for tier in judged for cid in tier]
    undecided = no_decision(judged)
    if len(candidates) < 2 or len(tiers) < 2:
        if convention != "paper" or not candidates:
            return {}
        stats = dict.fromkeys(CORRELATION_KEYS, 0.0)
    elif undecided:
        stats = dict.fromkeys(CORRELATION_KEYS, 0.0)
    else:
        places = tier_places(judged)
        stats = correlations([grades[cid] for cid in candidates], [-places[cid] for cid in candidates])
    stats.update({f"rbo_{p}": rbo(judged, tiers, p) for p in RBO_PERSISTENCES})
    stats[NO_DECISION] = float(undecided)
    return stats
