"""A candidate copies a reference when the two share 95% of their characters in order: the rule, checked by hand.

`data.leaks.near_copy` reads the rule through rapidfuzz's Indel distance (insertions and deletions), stopping once
it passes the bound. Here the rule is worked out the textbook way (the longest common subsequence by dynamic
programming, the share as an exact fraction) on any short text and on texts a few edits from each other, where
the answer turns; the rule's old form (difflib's ratio, a greedy match never longer than the longest common
subsequence) finds no copy the rule misses, on those texts and on SummEval as qatui loads it (../shared/data);
and a 6,000-word copy, which difflib took 11.5 s to compare, is found at once.
"""

from __future__ import annotations

import time
from difflib import SequenceMatcher
from fractions import Fraction
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from qatui.data.leaks import NEAR_COPY, near_copy


def normalised(text: str) -> str:
    return " ".join(text.lower().split())


def lcs(a: str, b: str) -> int:
    """The length of the longest common subsequence of `a` and `b`, by the textbook table."""
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def the_rule(candidate: str, reference: str) -> bool:
    """Normalised texts equal, or 2 LCS / (|a| + |b|) at least 19/20."""
    a, b = normalised(candidate), normalised(reference)
    return a == b or Fraction(2 * lcs(a, b), len(a) + len(b)) >= Fraction(19, 20)


def difflib_found(candidate: str, reference: str) -> bool:
    """The rule's old form: difflib's ratio at least 0.95."""
    a, b = normalised(candidate), normalised(reference)
    if a == b:
        return True
    if 2 * min(len(a), len(b)) < 0.95 * (len(a) + len(b)):
        return False  # difflib's blocks fit in the shorter text, so its ratio is at most this (spares the test's time)
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.95


TEXT = st.text(alphabet="ab cdé\n", max_size=80)


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, str]:
    """A reference of 20 to 200 characters and a candidate a few insertions, deletions or swaps away from it."""
    reference = draw(st.text(alphabet="abcd efgh", min_size=20, max_size=200))
    candidate = list(reference)
    for _ in range(draw(st.integers(0, 12))):
        at = draw(st.integers(0, max(len(candidate) - 1, 0)))
        kind = draw(st.sampled_from(["insert", "delete", "swap"]))
        if kind == "insert":
            candidate.insert(at, draw(st.sampled_from("abcd efgh")))
        elif candidate and kind == "delete":
            del candidate[at]
        elif len(candidate) > 1:
            candidate[at], candidate[at - 1] = candidate[at - 1], candidate[at]
    return "".join(candidate), reference


def test_the_bound_is_nineteen_in_twenty() -> None:
    assert NEAR_COPY == Fraction(19, 20)
    reference = "abcdefghij" * 2  # 20 characters
    assert near_copy(reference[:-1], reference)  # one deleted: 2 x 19 / 39 = 0.974
    assert near_copy(reference[:-1] + "z", reference)  # one replaced (2 edits): 2 x 19 / 40 = 0.95 exactly
    assert not near_copy(reference[:-2] + "zz", reference)  # two replaced: 2 x 18 / 40 = 0.9


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT)
def test_any_two_texts_are_judged_by_the_rule(candidate: str, reference: str) -> None:
    assert near_copy(candidate, reference) == the_rule(candidate, reference)
    assert near_copy(candidate, reference) or not difflib_found(candidate, reference)


@settings(max_examples=300, deadline=None)
@given(edited())
def test_texts_a_few_edits_apart_are_judged_by_the_rule(pair: tuple[str, str]) -> None:
    candidate, reference = pair
    assert near_copy(candidate, reference) == the_rule(candidate, reference)
    assert near_copy(candidate, reference) or not difflib_found(candidate, reference)


def test_a_long_copy_is_found_at_once_and_a_long_stranger_is_not_a_copy() -> None:
    words = [f"w{(k * 104729) % 997}" for k in range(6000)]
    reference = " ".join(words)
    started = time.process_time()
    assert near_copy(" ".join(words[:10] + ["changed"] + words[11:]), reference)
    assert not near_copy(" ".join(reversed(words)), reference)
    assert time.process_time() - started < 1.0  # difflib: 11.5 s of CPU for the first alone


def test_summeval_s_summaries_hold_no_copy_either_form_of_the_rule_finds(shared_data: Path) -> None:
    """SummEval as qatui loads it (1,600 summaries, each against its document's 11 references)."""
    from qatui.data.loaders import load_dataset

    dataset = load_dataset(str(shared_data / "SummEval" / "summeval.jsonl"))
    pairs = [(text, reference) for item in dataset.items for text in item.candidates.values()
             for reference in item.references]
    assert len(pairs) > 10_000
    found = [near_copy(c, r) for c, r in pairs]
    assert not any(found)
    assert not any(difflib_found(c, r) for c, r in pairs)
