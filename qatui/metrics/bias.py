"""Length bias, measured on the run itself: does the judge prefer the longer answer more often than people do?

Over every pair of responses of an item whose lengths differ and which people told apart
(different gold tiers, or a human A / B label), it counts how often people prefer the longer
one and how often the judge does (its tied groups, or its A / B / tie preference). A judge's
tie is a tie: it prefers neither, so it is not a preference for the longer one, and
`judge_ties` counts those pairs so that the share can be shown beside the figure. Length is
the length baseline's (`qatui.data.language.text_length`): words for languages written with
spaces, characters (whitespace left out) for the others (`UNSPACED_LANGUAGES`), so the length judge
prefers the longer response in every pair it is counted on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from qatui.data.language import item_language, length_unit, text_length
from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.pairwise import judge_preference
from qatui.ties import tier_preference

if TYPE_CHECKING:
    from qatui.events import Verdict


Pair = tuple[float, str]
"""(the share of people preferring the longer, in [0, 1]: 1.0 or 0.0 from a ranking, the share of labels from a
pair's A / B labels; the judge's choice between longer (A) and shorter (B): A, B or tie). One per pair."""


def _ranking_pairs(item: Item, gold: RankingGold, verdict: Verdict, lengths: dict[str, int]) -> list[Pair]:
    """(people prefer the longer, the judge's choice) per pair people told apart."""
    grades = gold.grade()
    ranked = {cid for tier in verdict.tiers for cid in tier}
    found = []
    for x, y in combinations([c for c in item.candidates if c in grades and c in ranked], 2):
        if lengths[x] == lengths[y] or grades[x] == grades[y]:
            continue
        longer, shorter = (x, y) if lengths[x] > lengths[y] else (y, x)
        found.append((float(grades[longer] > grades[shorter]), tier_preference(verdict.tiers, longer, shorter) or "tie"))
    return found


def _label_pairs(gold: PairwiseGold, verdict: Verdict, lengths: dict[str, int]) -> list[Pair]:
    """(the share of people's A / B labels preferring the longer, the judge's choice): the pair once, however many
    people labelled it (counted once per label, the judge's one choice weighed as seven pairs where seven people
    labelled one, and `pairs` counted labels)."""
    if gold.a not in lengths or gold.b not in lengths or lengths[gold.a] == lengths[gold.b]:
        return []
    longer = "A" if lengths[gold.a] > lengths[gold.b] else "B"
    judged = judge_preference(verdict, gold.a, gold.b)
    if judged is None:
        return []
    choice = "tie" if judged == "tie" else "A" if judged == longer else "B"
    said = [label for label in gold.labels if label != "tie"]
    return [(sum(label == longer for label in said) / len(said), choice)] if said else []


def length_preference(items: Sequence[Item], verdicts: Mapping[str, Verdict]) -> dict[str, float | int]:
    """`judge_longer` and `people_longer` (shares in [0, 1]) over `pairs` judged pairs, of which the judge
    tied `judge_ties`; empty when there is none."""
    pairs: list[Pair] = []
    for item in items:
        verdict = verdicts.get(item.id)
        if verdict is None or item.gold is None:
            continue
        unit = length_unit(item_language(item))
        lengths = {cid: text_length(text, unit) for cid, text in item.candidates.items()}
        if isinstance(item.gold, RankingGold):
            pairs += _ranking_pairs(item, item.gold, verdict, lengths)
        elif isinstance(item.gold, PairwiseGold):
            pairs += _label_pairs(item.gold, verdict, lengths)
    if not pairs:
        return {}
    return {"judge_longer": sum(j == "A" for _, j in pairs) / len(pairs),
            "people_longer": sum(p for p, _ in pairs) / len(pairs), "pairs": len(pairs),
            "judge_ties": sum(j == "tie" for _, j in pairs)}
