"""Agreement between people, and between people and judges, over the same decisions.

Every kind of label comes down to the same decisions: for each item and each pair of its
responses (x, y), which one is better, or neither. A ranking orders its tiers (same tier:
a tie), a pairwise label is its A / B / tie, ratings compare each response's mean rating
over the dimensions, and a judge's verdict its tied groups or its preference (`judge_preference`:
a pair the judge scored equal under its `tie_digits` is a tie, as everywhere in qatui).
Those decisions are the units of Krippendorff's alpha (nominal) and Fleiss' kappa, so
rankings, pairs and ratings, people and judges, are measured on one scale.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from qatui.data.model import Gold, Item, PairwiseGold, RankingGold
from qatui.metrics.agreement import nominal_agreement
from qatui.metrics.pairwise import judge_preference

if TYPE_CHECKING:
    from qatui.events import Verdict

Unit = tuple[str, str, str]
"""(item id, x, y) with x < y: is x better than y (0), tied (1), or worse (2)?"""
CODES = {"A": 0.0, "tie": 1.0, "B": 2.0}
CATEGORIES = (0.0, 1.0, 2.0)


def _better(x: float, y: float) -> float:
    """The code of a decision between two values where higher is better."""
    return CODES["A"] if x > y else CODES["B"] if y > x else CODES["tie"]


def gold_decisions(item_id: str, gold: Gold) -> dict[Unit, float]:
    """The decisions a gold (the dataset's or a person's label) makes on every pair of its responses."""
    if isinstance(gold, PairwiseGold):
        x, y = sorted((gold.a, gold.b))
        code = CODES[gold.label]
        return {(item_id, x, y): code if (x, y) == (gold.a, gold.b) else 2.0 - code}
    if isinstance(gold, RankingGold):
        values = {cid: float(grade) for cid, grade in gold.grade().items()}
    else:
        values = {cid: float(np.mean(list(dims.values()))) for cid, dims in gold.ratings.items() if dims}
    return {(item_id, x, y): _better(values[x], values[y]) for x, y in combinations(sorted(values), 2)}


def verdict_decisions(item: Item, verdict: Verdict) -> dict[Unit, float]:
    """The decisions a judge's verdict makes on every pair of the item's responses it scored or compared."""
    found = {}
    for x, y in combinations(sorted(item.candidates), 2):
        if (preference := judge_preference(verdict, x, y)) is not None:
            found[(item.id, x, y)] = CODES[preference]
    return found


def rater_agreement(raters: Mapping[str, Mapping[Unit, float]]) -> dict[str, float | int | str | None]:
    """Alpha and kappa of two or more raters' decisions (see `nominal_agreement`), over the units any of them made:
    Cohen's kappa for two raters (a judge and a person, or two people: the kappa of the human ceiling beside it),
    Fleiss' for more."""
    if len(raters) < 2:
        raise ValueError("agreement needs at least two raters")
    units = sorted({unit for decisions in raters.values() for unit in decisions})
    table = np.array([[decisions.get(unit, np.nan) for unit in units] for decisions in raters.values()], dtype=float)
    return nominal_agreement(table.reshape(len(raters), len(units)), CATEGORIES, cohen_for_two=True)


def people_kappa_undefined(raters: Mapping[str, Mapping[Unit, float]], agreement: dict, people: list[str],
                           shown: Mapping[str, str] | None = None, where: str = "both people decided") -> dict:
    """`agreement` (of `rater_agreement(raters)`) with Cohen's kappa None where one of `people` gave one class on
    every unit both raters decided, and `kappa_undefined` saying who (on every unit `where`): chance agreement then equals the observed one
    whatever the other rater said, so kappa would be 0 and measure nothing (`classes.agreement`'s rule). A judge's
    one class is not undefined: its 0 measures the judge. `shown` maps a rater's key to the name the reason gives."""
    if agreement.get("kappa_of") != "Cohen":
        return agreement
    both = set.intersection(*(set(decisions) for decisions in raters.values()))
    for person in people:
        if len({raters[person][unit] for unit in both}) == 1:
            name = (shown or {}).get(person, person)
            return {**agreement, "kappa": None, "kappa_undefined": f"{name} gave one class on every unit {where}"}
    return agreement
