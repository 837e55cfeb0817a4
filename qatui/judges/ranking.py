"""Turning scores into a strict ranking and a pairwise preference: the judges' names for `qatui.ties`.

The tie rule lives in `qatui.ties`, below every layer, so that the metrics (which may not
import judges) apply exactly the rule the judges and the engine apply: two scores are equal
when they are equal once rounded to the judge's `tie_digits`. Equal scores keep presentation
order in the strict ranking shown to people, and make a "tie" preference for a pair; the
metrics read the judge's tied groups (`Verdict.tiers`), never that order.
"""

from __future__ import annotations

from qatui.ties import pair_preference, pair_tiers, ranking_tiers, strict_ranking, tied_groups

__all__ = ["pair_preference", "pair_tiers", "ranking_tiers", "strict_ranking", "tied_groups"]
