"""One item's agreement with people, as a single number: what the TUI's tau column and the report's histogram show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.pairwise import judge_preference
from qatui.metrics.kendall import no_decision, question_tau, ranked_against_gold

if TYPE_CHECKING:
    from qatui.events import Preference, Verdict


def _pair_score(gold: Preference, judged: Preference) -> float:
    """One label against the judge: +1 the same side (or both tie), -1 the opposite side, 0 when one of them ties
    (tau-b of two items reads the same way)."""
    return 1.0 if gold == judged else 0.0 if "tie" in (gold, judged) else -1.0


def item_tau(item: Item | None, verdict: Verdict) -> float | None:
    """The verdict's agreement with the item's gold; None without one.

    Ranking gold: Kendall tau-b. Pairwise gold: the mean over its human labels of +1 when the judge prefers the
    side that person preferred (or both say tie), -1 for the opposite side, 0 when exactly one of them says tie
    (tau-b of two items reads the same way), as `accuracy` reads every label; only for a judge that gave a
    preference. Read against the labels' plurality instead, a pair people split A / B read as a tie people made,
    and a judge's tie there counted +1: agreement with a tie nobody gave.
    """
    if item is not None and isinstance(item.gold, PairwiseGold) and verdict.preference is not None:
        judged = judge_preference(verdict, item.gold.a, item.gold.b) or verdict.preference
        return sum(_pair_score(label, judged) for label in item.gold.labels) / len(item.gold.labels)
    if item is None or not isinstance(item.gold, RankingGold):
        return None
    return question_tau(item.gold, verdict)


def item_undecided(item: Item | None, verdict: Verdict) -> bool:
    """Whether the judge told none of the item's candidates apart where people did: a ranking of one tied group,
    or a pairwise tie where every person chose a side (split or not). Its `item_tau` of 0 then says that no
    decision was made, not that one was measured at 0 (the summaries count these apart: `no_decision`)."""
    if item is not None and isinstance(item.gold, PairwiseGold) and verdict.preference is not None:
        judged = judge_preference(verdict, item.gold.a, item.gold.b) or verdict.preference
        return judged == "tie" and "tie" not in item.gold.labels
    if item is None or not isinstance(item.gold, RankingGold):
        return False
    _, judged, tiers = ranked_against_gold(item.gold, verdict)
    return len(tiers) >= 2 and no_decision(judged)
