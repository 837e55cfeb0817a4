"""One item's agreement with people, as a single number: what the TUI's tau column and the report's histogram show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.pairwise import judge_preference
from qatui.metrics.kendall import question_tau

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
