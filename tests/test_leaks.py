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

from fakes import texts_alike_in_length
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


# The check of a dataset (`check_copies`): exact where it compares, bounded in steps, and saying what it left.

def _item(item_id: str, candidates: dict[str, str], references: list[str]):
    from qatui.data.model import Item

    return Item(id=item_id, question="q?", references=references, candidates=candidates)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(st.sampled_from("xyz"), TEXT | edited().map(lambda p: p[0]), min_size=1),
                          st.lists(TEXT | edited().map(lambda p: p[1]), min_size=1, max_size=3)),
                min_size=1, max_size=4))
def test_within_its_bound_the_check_finds_exactly_the_rule_s_copies(shapes) -> None:
    from qatui.data.leaks import check_copies

    items = [_item(f"q{k}", candidates, references) for k, (candidates, references) in enumerate(shapes)]
    check = check_copies(items)
    assert check.not_compared == []
    assert check.copies == [(item.id, cid) for item in items for cid, text in item.candidates.items()
                            if any(the_rule(text, reference) for reference in item.references)]


def test_a_pair_too_long_to_compare_is_said_not_compared_and_costs_no_time() -> None:
    """Two 400,000-character texts of one length: about 0.9 s of rapidfuzz, holding Python's lock all along."""
    from qatui.data.leaks import PAIR_STEPS, check_copies, comparison_steps, leak_warnings, near_copy as rule

    long_reference, long_candidate = texts_alike_in_length(66_000, 1), texts_alike_in_length(66_000, 2)
    assert comparison_steps(normalised(long_candidate), normalised(long_reference)) > PAIR_STEPS
    items = [_item("long", {"a": long_candidate, "b": "the reference, nearly"}, [long_reference, "The reference nearly."]),
             _item("short", {"a": "Paris is the capital.", "b": "Lyon."}, ["Paris is the capital!"])]
    started = time.process_time()
    check = check_copies(items)
    assert time.process_time() - started < 0.5
    assert check.copies == [("long", "b"), ("short", "a")]  # the short pairs, after the skipped one, still compared
    assert check.not_compared == [("long", "a")]
    assert check.items_not_compared() == ["long"]
    warnings = leak_warnings(items)
    assert any("1 candidate in 1 item was not compared with every reference (long/a)" in w for w in warnings)
    assert not rule(long_candidate, long_reference)  # what the check did not compare is indeed no copy here


def test_the_check_of_a_dataset_stops_at_its_budget_and_names_the_rest(monkeypatch) -> None:
    """With a budget that allows some pairs of a 200-pair item, the pairs past it are named, the rest compared."""
    from qatui.data import leaks

    references = [texts_alike_in_length(8, seed) for seed in range(20)]
    candidates = {f"c{k}": references[k] + "!" for k in range(10)}  # c{k} copies reference k, and no other
    item = _item("many", candidates, references)
    full = leaks.check_copies([item])
    assert full.not_compared == [] and [cid for _, cid in full.copies] == list(candidates)
    monkeypatch.setattr(leaks, "STEPS_PER_CHARACTER", 0)
    monkeypatch.setattr(leaks, "BASE_STEPS", 20 * leaks.STEPS_A_PAIR)  # at most 20 of the 55 pairs the copies take
    bounded = leaks.check_copies([item])
    assert bounded.copies and bounded.not_compared
    assert set(bounded.copies) | set(bounded.not_compared) == set(full.copies)
    assert bounded.copies == full.copies[:len(bounded.copies)]  # in order: the budget ran out part of the way


def test_a_hostile_file_is_inspected_in_bounded_time(tmp_path: Path, capsys) -> None:
    """`datasets inspect` of long texts of one length, many of them: before the bound it took 17 s a pair."""
    import json

    from qatui.cli import main

    reference = texts_alike_in_length(66_000, 3)
    rows = [{"id": f"q{k}", "question": "Q?", "references": [reference],
             "candidates": {"a": texts_alike_in_length(66_000, 10 + k), "b": f"short answer {k}"}} for k in range(4)]
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    started = time.process_time()
    assert main(["datasets", "inspect", str(path)]) == 0
    assert time.process_time() - started < 10
    out = capsys.readouterr().out
    assert "4 candidates in 4 items were not compared with every reference" in " ".join(out.split())


def test_an_item_of_thousands_of_candidates_and_references_is_checked_in_bounded_time() -> None:
    """2,000 candidates against 2,000 references (4 million pairs): before the bound, 10 s; the pairs past the
    budget are named, and every copy reported is one by the rule."""
    import random

    from qatui.data.leaks import check_copies

    draw = random.Random(1)
    text = lambda: " ".join(draw.choice(["alpha", "beta", "gamma", "delta", "eps"]) for _ in range(4))  # noqa: E731
    item = _item("many", {f"c{k}": text() for k in range(2000)}, [text() for _ in range(2000)])
    started = time.process_time()
    check = check_copies([item])
    assert time.process_time() - started < 5
    assert check.not_compared  # the budget ran out before every pair was compared
    assert all(any(the_rule(item.candidates[cid], reference) for reference in item.references)
               for _, cid in check.copies[:50])
