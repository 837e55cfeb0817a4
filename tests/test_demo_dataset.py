"""The bundled demo dataset (qatui/data/demo/demo.jsonl): schema and the promises it keeps.

The demo is what a first run of qatui shows, so it must validate against the item model and
stay a fair little benchmark: both languages, both question types, ranking and pairwise gold,
RAG context, and candidate ids, positions and lengths that do not give the gold away.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections import Counter

import pytest

from qatui.data.language import detect_language
from qatui.data.model import Item, PairwiseGold, RankingGold

DEMO = importlib.resources.files("qatui.data") / "demo" / "demo.jsonl"
ITEM_FIELDS = set(Item.model_fields)


def _lines() -> list[str]:
    return [line for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return [Item.model_validate(json.loads(line)) for line in _lines()]


@pytest.fixture(scope="module")
def ranking_items(items: list[Item]) -> list[Item]:
    return [it for it in items if isinstance(it.gold, RankingGold)]


@pytest.fixture(scope="module")
def pairwise_items(items: list[Item]) -> list[Item]:
    return [it for it in items if isinstance(it.gold, PairwiseGold)]


def test_demo_is_a_package_resource() -> None:
    assert DEMO.is_file(), f"demo dataset not found as a resource at {DEMO}"


def test_file_is_small_utf8_jsonl_with_only_item_fields() -> None:
    raw = DEMO.read_bytes()
    assert len(raw) < 40_000
    raw.decode("utf-8")
    for n, line in enumerate(_lines(), 1):
        obj = json.loads(line)
        assert isinstance(obj, dict), f"line {n} is not a JSON object"
        assert set(obj) <= ITEM_FIELDS, f"line {n} has unknown fields {set(obj) - ITEM_FIELDS}"
        assert {"id", "question", "references", "candidates", "question_type", "language", "gold"} <= set(obj)


def test_ids_unique_and_named_by_language(items: list[Item]) -> None:
    ids = [it.id for it in items]
    assert len(ids) == len(set(ids))
    for it in items:
        assert re.fullmatch(r"(en|zh)-\d{2}", it.id), it.id
        assert it.id.startswith(f"{it.language}-"), it.id


def test_counts_by_language_and_question_type(items: list[Item]) -> None:
    assert len(items) >= 20
    langs = Counter(it.language for it in items)
    assert set(langs) == {"en", "zh"}
    assert langs["en"] >= 10 and langs["zh"] >= 6
    types = Counter(it.question_type for it in items)
    assert set(types) == {"factoid", "non-factoid"}
    # about half and half
    assert min(types.values()) >= 0.4 * len(items)
    # and both types in both languages
    for lang in ("en", "zh"):
        assert {it.question_type for it in items if it.language == lang} == {"factoid", "non-factoid"}


def test_declared_language_matches_the_text(items: list[Item]) -> None:
    for it in items:
        assert detect_language(it.question) == it.language, it.id
        for text in [*it.references, *it.candidates.values()]:
            assert detect_language(text) == it.language, (it.id, text)


def test_every_item_has_gold_and_references(items: list[Item]) -> None:
    for it in items:
        assert it.gold is not None, it.id
        assert 1 <= len(it.references) <= 2, it.id
    two_refs = [it.id for it in items if len(it.references) == 2]
    assert 2 <= len(two_refs) <= 3, two_refs


def test_gold_kinds(items: list[Item], ranking_items: list[Item], pairwise_items: list[Item]) -> None:
    assert len(ranking_items) + len(pairwise_items) == len(items)
    assert len(pairwise_items) >= 4
    assert len(ranking_items) > len(pairwise_items)  # most items are rankings


def test_ranking_items_rank_all_their_candidates(ranking_items: list[Item]) -> None:
    for it in ranking_items:
        assert 3 <= len(it.candidates) <= 6, it.id
        gold = it.gold
        assert sorted(gold.candidate_ids) == sorted(it.candidates), it.id
        assert len(gold.tiers) >= 3, it.id  # clearly different quality levels
        assert all(len(tier) <= 2 for tier in gold.tiers), it.id
    with_ties = [it.id for it in ranking_items if any(len(t) > 1 for t in it.gold.tiers)]
    assert len(with_ties) <= 2, with_ties


def test_ranking_candidate_ids_do_not_reveal_quality(ranking_items: list[Item]) -> None:
    for it in ranking_items:
        keys = list(it.candidates)
        assert keys == [f"r{i}" for i in range(1, len(keys) + 1)], it.id
    best_first = [it.id for it in ranking_items if list(it.candidates)[0] in it.gold.tiers[0]]
    assert len(best_first) <= len(ranking_items) // 3, best_first
    in_key_order = [it.id for it in ranking_items if it.gold.candidate_ids == list(it.candidates)]
    assert not in_key_order, in_key_order


def test_best_candidate_is_not_simply_the_longest(ranking_items: list[Item]) -> None:
    best_longest = []
    for it in ranking_items:
        longest = max(it.candidates, key=lambda cid: len(it.candidates[cid]))
        if longest in it.gold.tiers[0]:
            best_longest.append(it.id)
    assert len(best_longest) <= 0.6 * len(ranking_items), best_longest


def test_pairwise_items(pairwise_items: list[Item]) -> None:
    for it in pairwise_items:
        gold = it.gold
        assert list(it.candidates) == ["a", "b"], it.id
        assert (gold.a, gold.b) == ("a", "b"), it.id
        assert gold.pair_type in {"human_vs_model", "model_vs_model", "human_vs_human"}, it.id
    assert any(it.gold.label == "tie" for it in pairwise_items), "no pairwise item with a tie majority"
    assert any(len(it.gold.labels) > 1 for it in pairwise_items), "no pairwise item with several annotators"
    assert {it.gold.label for it in pairwise_items} == {"A", "B", "tie"}


def test_rag_context(items: list[Item]) -> None:
    with_context = [it for it in items if it.context]
    assert len(with_context) >= 5
    for it in with_context:
        assert 2 <= len(it.context) <= 4, it.id
    assert {it.language for it in with_context} == {"en", "zh"}


def test_texts_are_short(items: list[Item]) -> None:
    for it in items:
        assert len(it.question) <= 200, it.id
        for text in [*it.references, *it.context, *it.candidates.values()]:
            assert text.strip() and len(text) <= 320, (it.id, text)


def test_meta_topic(items: list[Item]) -> None:
    for it in items:
        assert isinstance(it.meta.get("topic"), str) and it.meta["topic"], it.id
