"""What a meta-evaluator must know before trusting agreement figures on a dataset: where the gold leaks.

Three leaks, each counted over the items it can occur in:
- candidates stored in gold order (a judge that keeps the file's order looks perfect; qatui's
  judges see a seeded shuffle, other tools may not);
- candidate ids that encode the gold (their natural order is the gold order, or its reverse);
- candidates that are verbatim or near-verbatim copies of a reference (any reference-based
  judge ranks them first for free).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from qatui.data.model import Dataset, Item, RankingGold
from qatui.text import natural_key, plural

NEAR_COPY = Fraction(19, 20)
"""The share of their characters a candidate and a reference have in common, in order, from which the candidate copies
the reference (`near_copy`): 2 LCS / (|a| + |b|) of the whitespace-normalised, lower-cased texts."""
MOSTLY = 0.5
"""A leak is reported when it holds in more than this share of the items it can occur in."""


def _ranked(items: Sequence[Item], at_least: int) -> list[tuple[Item, RankingGold]]:
    """Items with ranking gold over at least `at_least` candidates and two tiers or more."""
    return [(item, item.gold) for item in items if isinstance(item.gold, RankingGold)
            and len(item.candidates) >= at_least and len(item.gold.tiers) >= 2]


def _follows(order: list[str], gold: RankingGold) -> bool:
    """Whether `order` never puts a candidate before a better-graded one (ties in any order)."""
    grades = gold.grade()
    known = [grades[cid] for cid in order if cid in grades]
    return len(known) >= 2 and all(a >= b for a, b in zip(known, known[1:]))


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def near_copy(candidate: str, reference: str) -> bool:
    """Whether `candidate` is the reference, or the reference with a few characters changed (`NEAR_COPY`).

    The two texts, whitespace-normalised and lower-cased, share at least `NEAR_COPY` of their characters in order:
    2 LCS / (|a| + |b|), LCS their longest common subsequence; equivalently, the characters one must insert or delete
    to turn one into the other (their Indel distance, |a| + |b| - 2 LCS) are at most 1 - `NEAR_COPY` of both lengths.
    rapidfuzz computes that distance in C++, stopping once it passes the bound: 0.02 ms for a 6,000-word copy, where
    difflib's ratio, the rule before, took 11.5 s in pure Python (and 0.35 s for two unrelated 1,000-word answers).
    """
    from rapidfuzz.distance import Indel

    a, b = _normalised(candidate), _normalised(reference)
    if a == b:
        return True
    most = math.floor((len(a) + len(b)) * (1 - NEAR_COPY))  # exact: NEAR_COPY is a fraction
    if abs(len(a) - len(b)) > most:
        return False  # the lengths alone take more insertions than that
    return Indel.distance(a, b, score_cutoff=most) <= most


def _copies(items: Sequence[Item]) -> list[tuple[str, str]]:
    """(item id, candidate id) of every candidate that copies one of its item's references."""
    return [(item.id, cid) for item in items for cid, text in item.candidates.items()
            if any(near_copy(text, ref) for ref in item.references)]


def items_copying_a_reference(items: Sequence[Item]) -> list[str]:
    """Ids of the items where at least one candidate copies a reference, in the items' order.

    The rule `leak_warnings` warns with, and what `--without-leaks` leaves out: on such an item any
    reference-based judge ranks the copy first for free, so its agreement with people says little.
    """
    leaking = {item_id for item_id, _ in _copies(items)}
    return [item.id for item in items if item.id in leaking]


def without_leaks(dataset: Dataset) -> tuple[Dataset, list[str]]:
    """`dataset` without the items whose candidates copy a reference, and the ids left out."""
    left_out = items_copying_a_reference(dataset.items)
    if not left_out:
        return dataset, []
    gone = set(left_out)
    return dataset.model_copy(update={"items": [item for item in dataset.items if item.id not in gone]}), left_out


def partial_gold_warning(items: Sequence[Item]) -> str | None:
    """One sentence when some ranking gold leaves candidates out: those are not measured (the rank metrics
    compare only candidates both the gold and the judge rank), with counts and the first items; else None."""
    partial = [(item.id, sorted(set(item.candidates) - set(item.gold.candidate_ids)))
               for item in items if isinstance(item.gold, RankingGold)
               and set(item.candidates) - set(item.gold.candidate_ids)]
    ranked = sum(isinstance(item.gold, RankingGold) for item in items)
    if not partial:
        return None
    shown = "; ".join(f"{item_id}: {', '.join(missing)}" for item_id, missing in partial[:3]) + (
        " …" if len(partial) > 3 else "")
    left = sum(len(missing) for _, missing in partial)
    return (f"the gold ranking leaves out {plural(left, 'candidate')} in {len(partial)} of "
            f"{plural(ranked, 'ranked item')} ({shown}): the judges still rank them, but agreement is measured "
            "only on the candidates the gold ranks")


def leak_warnings(items: Sequence[Item]) -> list[str]:
    """One sentence per leak found, with its counts; empty when none."""
    warnings = []
    ranked = _ranked(items, 2)
    if ranked:
        in_order = sum(_follows(list(item.candidates), gold) for item, gold in ranked)
        if in_order > MOSTLY * len(ranked):
            warnings.append(f"candidates are stored in gold order in {in_order} of {plural(len(ranked), 'ranked item')}: "
                            "a judge that keeps the file's order looks perfect (qatui's judges see a seeded shuffle; "
                            "other tools may not)")
    ranked3 = _ranked(items, 3)
    if ranked3:
        by_id = sum(_follows(sorted(item.candidates, key=natural_key), gold)
                    or _follows(sorted(item.candidates, key=natural_key, reverse=True), gold) for item, gold in ranked3)
        if by_id > MOSTLY * len(ranked3):
            warnings.append(f"candidate ids encode the gold in {by_id} of {plural(len(ranked3), 'ranked item')}: "
                            "sorted by id, the candidates are in gold order (or its reverse); a judge that sees ids "
                            "can read the answer")
    copies = _copies(items)
    if copies:
        shown = ", ".join(f"{item_id}/{cid}" for item_id, cid in copies[:5]) + (" …" if len(copies) > 5 else "")
        items_with = len({item_id for item_id, _ in copies})
        verb = "copies" if len(copies) == 1 else "copy"
        warnings.append(f"{plural(len(copies), 'candidate')} in {plural(items_with, 'item')} {verb} a reference "
                        f"(verbatim or ≥ {float(NEAR_COPY):.0%} alike: {shown}): "
                        "reference-based judges rank them first for free")
    return warnings
