"""The evaluation core (`qatui.engine.alignment`): a judge on chosen labelled items as a real session, its headline
figure as `sessions show` reports it, the paired comparison, the choice of items, and a resume that keeps the items."""

from __future__ import annotations

import json

import pytest

from qatui.config import Config
from qatui.data.loaders import demo_dataset, load_dataset
from qatui.engine.alignment import AlignmentError, choose_items, compare, evaluate, labelled_ids
from qatui.engine.jobs import resume_run, start_run
from qatui.judges.registry import make_judge
from qatui.store.session import SessionStore


def test_an_evaluation_is_a_session_of_the_chosen_items_with_the_figure_sessions_show_reports(tmp_path) -> None:
    dataset, store = demo_dataset(), SessionStore(tmp_path / "s")
    ids = labelled_ids(dataset)[3:9]
    found = evaluate(make_judge("rouge-l"), dataset, ids, Config(), store=store, seed=1)
    session = store.open(found.session_id)
    assert session.meta["dataset"]["item_ids"] == ids and session.meta["dataset"]["n_items"] == 6
    assert sorted(found.verdicts) == sorted(ids) and found.item_ids == tuple(ids)
    shown = session.summary()["rouge-l"]
    assert found.metric == "kendall" and found.value == shown["metrics"]["kendall"]
    assert list(found.ci) == shown["ci"]["kendall"] and found.n == shown["n"]["kendall"]
    assert set(found.per_item) <= set(ids) and not found.failed and found.status == "completed"


def test_choose_items_all_a_seeded_sample_or_the_worst_first(tmp_path) -> None:
    dataset = demo_dataset()
    every = labelled_ids(dataset)
    assert choose_items(dataset, "all", 0, 0) == every
    sample = choose_items(dataset, "sample", 5, seed=4)
    assert len(sample) == 5 and sample == choose_items(dataset, "sample", 5, seed=4)
    assert sample != choose_items(dataset, "sample", 5, seed=5) and set(sample) <= set(every)
    found = evaluate(make_judge("bleu"), dataset, every[:10], Config(), store=SessionStore(tmp_path / "s"))
    worst = choose_items(dataset, "disagreeing", 3, 0, found)
    values = [found.per_item[i] for i in worst]
    assert values == sorted(values) and all(v < 1.0 for v in values)
    assert max(values) <= min(v for i, v in found.per_item.items() if i not in worst and v < 1.0)
    with pytest.raises(AlignmentError, match="evaluation of it first"):
        choose_items(dataset, "disagreeing", 3, 0)


def test_compare_pairs_two_evaluations_and_names_the_items_that_moved(tmp_path) -> None:
    dataset, store = demo_dataset(), SessionStore(tmp_path / "s")
    ids = labelled_ids(dataset)[:12]
    before = evaluate(make_judge("bleu"), dataset, ids, Config(), store=store)
    after = evaluate(make_judge("length"), dataset, ids, Config(), store=store)
    items = [item for item in dataset.items if item.id in ids]
    found = compare(items, before, after)
    assert found.delta == pytest.approx(after.value - before.value)  # every item scored by both
    assert found.ci[0] <= found.delta <= found.ci[1] and found.n == before.n
    assert found.now_right == [i for i in ids if i in before.per_item and after.per_item[i] > before.per_item[i]]
    assert found.now_wrong == [i for i in ids if i in before.per_item and after.per_item[i] < before.per_item[i]]
    assert found.now_right and found.now_wrong


def test_a_resumed_evaluation_judges_only_its_chosen_items(tmp_path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(item.model_dump_json(exclude_none=True) + "\n" for item in demo_dataset().items[:10]))
    dataset, store = load_dataset(str(path)), SessionStore(tmp_path / "s")
    ids = [dataset.items[2].id, dataset.items[7].id]
    job = start_run(store, dataset, ["bleu"], Config(), judges=[make_judge("bleu")], item_ids=ids)
    job.session.update_meta(status="interrupted", pid=None)
    job.session.release_writer()
    resumed = resume_run(store, job.session.id, Config())
    assert [item.id for item in resumed.dataset.items] == ids
    assert {item.id for item, _ in resumed.engine.tasks} == set(ids)
    resumed.session.release_writer()


def test_unknown_unlabelled_or_ratings_items_are_refused(tmp_path) -> None:
    dataset = demo_dataset()
    with pytest.raises(AlignmentError, match="no item 'nope'"):
        evaluate(make_judge("bleu"), dataset, ["nope"], Config(), store=SessionStore(tmp_path / "s"))
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"id": "r", "question": "?", "candidates": {"a": "x", "b": "y"},
                                "gold": {"kind": "ratings", "ratings": {"a": {"q": 1}, "b": {"q": 2}}}}) + "\n")
    with pytest.raises(AlignmentError, match="ratings have no per-item paired difference"):
        labelled_ids(load_dataset(str(path)))
    assert not (tmp_path / "s").exists()


def _pairwise_rows(labels: list[str]) -> str:
    return "".join(json.dumps({"id": f"p{i:02d}", "question": "?", "candidates": {"a": "x", "b": "y"},
                               "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": [label]}}) + "\n"
                   for i, label in enumerate(labels))


def test_the_split_is_seeded_and_keeps_people_s_preferences_in_proportion(tmp_path) -> None:
    from collections import Counter

    from qatui.engine.aligning import split_items

    labels = ["A"] * 16 + ["B"] * 8 + ["tie"] * 6
    path = tmp_path / "p.jsonl"
    path.write_text(_pairwise_rows(labels))
    dataset = load_dataset(str(path))
    train, test, how = split_items(dataset, 0.5, 11)
    label_of = {f"p{i:02d}": label for i, label in enumerate(labels)}
    assert Counter(label_of[i] for i in train) == Counter({"A": 8, "B": 4, "tie": 3}) and "A / B / tie" in how
    assert sorted(train + test) == sorted(label_of) and not set(train) & set(test)
    assert split_items(dataset, 0.5, 11)[0] == train and split_items(dataset, 0.5, 12)[0] != train


def test_ranking_gold_is_split_by_its_number_of_tiers(tmp_path) -> None:
    from qatui.engine.aligning import split_items

    rows = []
    for i in range(12):
        tiers = [[f"c{k}"] for k in range(2 if i < 6 else 4)]
        rows.append({"id": f"r{i:02d}", "question": "?", "candidates": {c[0]: f"text {c[0]}" for c in tiers},
                     "gold": {"kind": "ranking", "tiers": tiers}})
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    train, _, how = split_items(load_dataset(str(path)), 0.5, 0)
    assert sum(1 for i in train if int(i[1:]) < 6) == 3 and "number of gold tiers" in how


def test_the_writer_sees_a_ranking_item_with_every_answer_fenced_and_both_orders_in_words(tmp_path) -> None:
    from qatui.engine.align_writer import writer_messages
    from qatui.llm.fence import block_texts

    dataset = demo_dataset()
    found = evaluate(make_judge("length"), dataset, labelled_ids(dataset)[:6], Config(),
                     store=SessionStore(tmp_path / "s"))
    worst = [item for item in dataset.items if item.id == found.disagreeing()[0]]
    (item,) = worst
    messages = writer_messages("name = 'x'", worst, found)
    user = messages[-1]["content"]
    blocks = block_texts(user)
    assert blocks["Judge definition"] == "name = 'x'" and blocks["Item 1 question"] == item.question
    assert all(blocks[f"Item 1 answer {cid}"] == text for cid, text in item.candidates.items())
    people = " > ".join(" = ".join(f"answer {cid}" for cid in tier) for tier in item.gold.tiers)
    judged = " > ".join(" = ".join(f"answer {cid}" for cid in tier) for tier in found.verdicts[item.id].tiers)
    assert f"People: best first: {people}" in user and f"The judge: best first: {judged}" in user
