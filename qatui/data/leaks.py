"""What a meta-evaluator must know before trusting agreement figures on a dataset: where the gold leaks.

Three leaks, each counted over the items it can occur in:
- candidates stored in gold order (a judge that keeps the file's order looks perfect; qatui's
  judges see a seeded shuffle, other tools may not);
- candidate ids that encode the gold (their natural order is the gold order, or its reverse);
- candidates that are verbatim or near-verbatim copies of a reference (any reference-based
  judge ranks them first for free).

The copy check is exact, and its time is bounded whatever the texts (`check_copies`): a pair it would take too long
to compare is not compared, and what was not compared is said wherever the copies are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from qatui.data.model import Dataset, Item, RankingGold
from qatui.text import natural_key, plural

NEAR_COPY = Fraction(19, 20)
"""The share of their characters a candidate and a reference have in common, in order, from which the candidate copies
the reference (`near_copy`): 2 LCS / (|a| + |b|) of the whitespace-normalised, lower-cased texts."""
PAIR_STEPS = 100_000_000
"""The most steps (`comparison_steps`) one candidate and one reference may take: 0.2 to 0.3 s on a 2026 CPU core, for
two texts of about 250,000 characters each. rapidfuzz holds Python's lock while it compares, so no comparison is let
hold a screen still for longer."""
STEPS_A_PAIR = 1_000
"""What each pair counts beyond its comparison, even one its lengths decide: Python's own work on it, about 2 µs, so
an item with thousands of candidates and thousands of references is bounded too."""
BASE_STEPS = 1_000_000_000
STEPS_PER_CHARACTER = 50
"""The steps one check of a dataset may take in all: `BASE_STEPS` (about 2 s) and `STEPS_PER_CHARACTER` for each
character of its candidates and references. A dataset's answers of a few thousand words take a small share of it (a
pair of 5,000-character texts takes 45,000 steps); an adversary's texts, long and alike in length, cannot make the
check take longer than about 2 s and 0.1 s per MB of text."""
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


_SLACK = 1 - NEAR_COPY


def _bound(total: int) -> int:
    """The most characters two normalised texts of `total` characters together may differ by (inserted or deleted)
    for one to copy the other: floor(total x (1 - `NEAR_COPY`)), in integers (a Fraction costs microseconds)."""
    return total * _SLACK.numerator // _SLACK.denominator


def comparison_steps(a: str, b: str) -> int:
    """The work of comparing normalised `a` and `b` under the bound: rapidfuzz's banded comparison takes one 64-bit
    step for each character of the longer text and each 64 characters of the band, 380 to 480 million steps a second
    on a 2026 CPU core (`bench/bench_leak_check.py`). 0 when the lengths alone decide."""
    n, m = len(a), len(b)
    most = _bound(n + m)
    if abs(n - m) > most or a == b:
        return 0
    return max(n, m) * (most // 64 + 2)


def _is_copy(a: str, b: str) -> bool:
    """`near_copy` of texts already normalised."""
    from rapidfuzz.distance import Indel

    if a == b:
        return True
    most = _bound(len(a) + len(b))
    if abs(len(a) - len(b)) > most:
        return False  # the lengths alone take more insertions than that
    return Indel.distance(a, b, score_cutoff=most) <= most


def near_copy(candidate: str, reference: str) -> bool:
    """Whether `candidate` is the reference, or the reference with a few characters changed (`NEAR_COPY`).

    The two texts, whitespace-normalised and lower-cased, share at least `NEAR_COPY` of their characters in order:
    2 LCS / (|a| + |b|), LCS their longest common subsequence; equivalently, the characters one must insert or delete
    to turn one into the other (their Indel distance, |a| + |b| - 2 LCS) are at most 1 - `NEAR_COPY` of both lengths.
    rapidfuzz computes that distance in C++, stopping once it passes the bound: 0.02 ms for a 6,000-word copy, where
    difflib's ratio, the rule before, took 11.5 s in pure Python (and 0.35 s for two unrelated 1,000-word answers).
    The rule itself, in time unbounded: a dataset's candidates are checked by `check_copies`.
    """
    return _is_copy(_normalised(candidate), _normalised(reference))


@dataclass(frozen=True)
class CopyCheck:
    """What `check_copies` found: (item id, candidate id) pairs, in the items' order.

    `copies`: candidates that copy one of their item's references. `not_compared`: candidates that copy none of the
    references they were compared with, but were not compared with every one of them (`PAIR_STEPS`, `BASE_STEPS`),
    so a copy among them would not be found.
    """

    copies: list[tuple[str, str]]
    not_compared: list[tuple[str, str]]

    def items_copying(self) -> list[str]:
        """Ids of the items with a copying candidate, each once, in order."""
        return list(dict.fromkeys(item_id for item_id, _ in self.copies))

    def items_not_compared(self) -> list[str]:
        """Ids of the items with a candidate not compared with every reference and copying none, each once, in order."""
        return list(dict.fromkeys(item_id for item_id, _ in self.not_compared))


def check_copies(items: Sequence[Item]) -> CopyCheck:
    """Which candidates copy one of their item's references (`near_copy`), in time bounded whatever the texts.

    Each pair is compared exactly, unless it alone would take more than `PAIR_STEPS`, or the check would then pass
    its budget (`BASE_STEPS` and `STEPS_PER_CHARACTER`; each pair counts `STEPS_A_PAIR` more). Such a pair is not
    compared, later ones still are, and its candidate is in `not_compared` unless another reference showed it a copy.
    The same items give the same answer on any machine: the bound counts steps, not seconds.
    """
    budget = BASE_STEPS + STEPS_PER_CHARACTER * sum(
        sum(map(len, item.candidates.values())) + sum(map(len, item.references)) for item in items)
    copies: list[tuple[str, str]] = []
    not_compared: list[tuple[str, str]] = []
    for item in items:
        references = [_normalised(ref) for ref in item.references]
        for cid, candidate in item.candidates.items():
            if budget < STEPS_A_PAIR and item.references:  # spent: no pair can be compared now, so none is looked at
                not_compared.append((item.id, cid))
                continue
            text, skipped = _normalised(candidate), False
            for reference in references:
                steps = STEPS_A_PAIR + comparison_steps(text, reference)
                if steps > PAIR_STEPS or steps > budget:
                    skipped = True
                    continue
                budget -= steps
                if _is_copy(text, reference):
                    copies.append((item.id, cid))
                    break
            else:
                if skipped:
                    not_compared.append((item.id, cid))
    return CopyCheck(copies=copies, not_compared=not_compared)


def without_leaks(dataset: Dataset) -> tuple[Dataset, CopyCheck]:
    """`dataset` without the items whose candidates copy a reference, and the check that found them.

    The rule `leak_warnings` warns with, and what `--without-leaks` leaves out: on such an item any reference-based
    judge ranks the copy first for free, so its agreement with people says little."""
    check = check_copies(dataset.items)
    gone = set(check.items_copying())
    if not gone:
        return dataset, check
    return dataset.subset([item for item in dataset.items if item.id not in gone]), check


def not_compared_warning(check: CopyCheck) -> str | None:
    """One sentence when some candidate was not compared with every reference (`check_copies`), else None."""
    if not check.not_compared:
        return None
    pairs = check.not_compared
    shown = ", ".join(f"{item_id}/{cid}" for item_id, cid in pairs[:5]) + (" …" if len(pairs) > 5 else "")
    were = "was" if len(pairs) == 1 else "were"
    return (f"{plural(len(pairs), 'candidate')} in {plural(len(check.items_not_compared()), 'item')} {were} not "
            f"compared with every reference ({shown}): that would pass the copy check's bound on its work (long "
            "texts alike in length, or a great many pairs), so a copy among them would not be found")


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


def leak_warnings(items: Sequence[Item], check: CopyCheck | None = None) -> list[str]:
    """One sentence per leak found, with its counts; empty when none. `check`: the copy check of `items`, when the
    caller has made it (`check_copies`)."""
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
    check = check_copies(items) if check is None else check
    copies = check.copies
    if copies:
        shown = ", ".join(f"{item_id}/{cid}" for item_id, cid in copies[:5]) + (" …" if len(copies) > 5 else "")
        items_with = len({item_id for item_id, _ in copies})
        verb = "copies" if len(copies) == 1 else "copy"
        warnings.append(f"{plural(len(copies), 'candidate')} in {plural(items_with, 'item')} {verb} a reference "
                        f"(verbatim or ≥ {float(NEAR_COPY):.0%} alike: {shown}): "
                        "reference-based judges rank them first for free")
    if sentence := not_compared_warning(check):
        warnings.append(sentence)
    return warnings
