"""Length bias, measured on the run itself: does the judge prefer the longer answer more often than people do?

Over every pair of responses of an item whose lengths differ and which people told apart
(different gold tiers, or a human A / B label), it counts how often people prefer the longer
one and how often the judge does (its ranking, or its A / B / tie preference; a tie counts
half). Length is words for English, characters for Chinese.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from qatui.data.language import item_language
from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.pairwise import judge_preference

if TYPE_CHECKING:
    from qatui.events import Verdict


def text_length(text: str, language: str) -> int:
    """Words for English (and other space-separated text), characters for Chinese."""
    return len(text) if language == "zh" else len(text.split())


def _ranking_pairs(item: Item, gold: RankingGold, verdict: Verdict, lengths: dict[str, int]) -> list[tuple[float, float]]:
    """(people prefer the longer, judge prefers the longer) per pair people told apart."""
    grades, position = gold.grade(), {cid: i for i, cid in enumerate(verdict.ranking)}
    found = []
    for x, y in combinations([c for c in item.candidates if c in grades and c in position], 2):
        if lengths[x] == lengths[y] or grades[x] == grades[y]:
            continue
        longer, shorter = (x, y) if lengths[x] > lengths[y] else (y, x)
        found.append((float(grades[longer] > grades[shorter]), float(position[longer] < position[shorter])))
    return found


def _label_pairs(gold: PairwiseGold, verdict: Verdict, lengths: dict[str, int]) -> list[tuple[float, float]]:
    """(people prefer the longer, judge prefers the longer) per human A / B label of the pair."""
    if gold.a not in lengths or gold.b not in lengths or lengths[gold.a] == lengths[gold.b]:
        return []
    longer = "A" if lengths[gold.a] > lengths[gold.b] else "B"
    judged = judge_preference(verdict, gold.a, gold.b)
    if judged is None:
        return []
    judge_side = 0.5 if judged == "tie" else float(judged == longer)
    return [(float(label == longer), judge_side) for label in gold.labels if label != "tie"]


def length_preference(items: Sequence[Item], verdicts: Mapping[str, Verdict]) -> dict[str, float | int]:
    """`judge_longer` and `people_longer` (shares in [0, 1]) over `pairs` judged pairs; empty when there is none."""
    pairs: list[tuple[float, float]] = []
    for item in items:
        verdict = verdicts.get(item.id)
        if verdict is None or item.gold is None:
            continue
        language = item_language(item)
        lengths = {cid: text_length(text, language) for cid, text in item.candidates.items()}
        if isinstance(item.gold, RankingGold):
            pairs += _ranking_pairs(item, item.gold, verdict, lengths)
        elif isinstance(item.gold, PairwiseGold):
            pairs += _label_pairs(item.gold, verdict, lengths)
    if not pairs:
        return {}
    return {"judge_longer": sum(j for _, j in pairs) / len(pairs),
            "people_longer": sum(p for p, _ in pairs) / len(pairs), "pairs": len(pairs)}
