"""One item's agreement with people, as a single number: what the TUI's tau column and the report's histogram show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.pairwise import judge_preference
from qatui.metrics.kendall import no_decision, question_tau, ranked_against_gold

if TYPE_CHECKING:
    from qatui.events import Verdict


def item_tau(item: Item | None, verdict: Verdict) -> float | None:
    """The verdict's agreement with the item's gold; None without one.

    Ranking gold: Kendall tau-b. Pairwise gold: +1 when the judge prefers the side people
    prefer (or both say tie), -1 for the opposite side, 0 when exactly one of them says tie
    (tau-b of two items reads the same way); only for a judge that gave a preference.
    """
    if item is not None and isinstance(item.gold, PairwiseGold) and verdict.preference is not None:
        gold, judged = item.gold.label, judge_preference(verdict, item.gold.a, item.gold.b) or verdict.preference
        return 1.0 if gold == judged else 0.0 if "tie" in (gold, judged) else -1.0
    if item is None or not isinstance(item.gold, RankingGold):
        return None
    return question_tau(item.gold, verdict)


def item_undecided(item: Item | None, verdict: Verdict) -> bool:
    """Whether the judge told none of the item's candidates apart where people did: a ranking of one tied group,
    or a pairwise tie where people chose a side. Its `item_tau` of 0 then says that no decision was made, not
    that one was measured at 0 (the summaries count these apart: `no_decision`)."""
    if item is not None and isinstance(item.gold, PairwiseGold) and verdict.preference is not None:
        judged = judge_preference(verdict, item.gold.a, item.gold.b) or verdict.preference
        return judged == "tie" and item.gold.label != "tie"
    if item is None or not isinstance(item.gold, RankingGold):
        return False
    _, judged, tiers = ranked_against_gold(item.gold, verdict)
    return len(tiers) >= 2 and no_decision(judged)
