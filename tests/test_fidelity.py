"""The papers' protocols: items a judge cannot judge are not applicable, the two conventions, item-level CIs.

Issue 12 §1 and §6: a MinosEval release file with one-candidate questions runs; how such
questions count is the user's choice (`strict` or `paper`), reported with its coverage; a
CI never resamples the labels of one item apart.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tui_support import scripted_resources

from qatui.cli import main
from qatui.config import Config
from qatui.data.loaders import load_dataset
from qatui.data.model import Item, PairwiseGold
from qatui.engine.jobs import finish_run, start_run
from qatui.events import Verdict
from qatui.metrics import summarize
from qatui.metrics.bootstrap import mean_ci, ratio_ci
from qatui.store.session import SessionStore

# Four MinosEval-release questions: one with a single response (as in its ANTIQUE and TREC sets)
RECORDS = [
    {"id": 1, "question": "What colour is the sky on a clear day?", "answer": ["The sky is blue on a clear day."],
     "response": {"r1": "The sky is blue on a clear day.", "r2": "It is green.", "r3": "Blue, mostly."},
     "label": 1, "rank": ["r1", "r3", "r2"]},
    {"id": 2, "question": "Why do leaves fall in autumn?",
     "answer": ["Trees shed leaves in autumn to save water and energy over winter."],
     "response": {"r1": "Because trees save water and energy over winter by shedding leaves.",
                  "r2": "Leaves are tired."}, "label": 0, "rank": ["r1", "r2"]},
    {"id": 3, "question": "Who wrote Hamlet?", "answer": ["William Shakespeare wrote Hamlet."],
     "response": {"r1": "Hamlet was written by William Shakespeare."}, "label": 1, "rank": ["r1"]},
    {"id": 4, "question": "How many legs does a spider have?", "answer": ["A spider has eight legs."],
     "response": {"r1": "Six.", "r2": "A spider has eight legs.", "r3": "Eight legs.", "r4": "Ten."},
     "label": 1, "rank": ["r2", "r3", "r1", "r4"]},
]


def minos_file(tmp_path: Path) -> Path:
    path = tmp_path / "minos_release.json"
    path.write_text(json.dumps(RECORDS))
    return path


def test_a_one_candidate_question_does_not_refuse_the_run(tmp_path, capsys) -> None:
    code = main(["run", str(minos_file(tmp_path)), "--format", "minos", "--judge", "minos", "--plan", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["items"] == 4


def test_not_applicable_items_are_recorded_never_scored_and_both_conventions_count_them(tmp_path) -> None:
    dataset = load_dataset(minos_file(tmp_path), "minos")
    config, store = Config(), SessionStore(tmp_path / "sessions")
    runs = {}
    for convention in ("strict", "paper"):
        job = start_run(store, dataset, ["minos"], config, resources=scripted_resources(config), concurrency=1,
                        convention=convention)

        async def drive(job=job) -> list:
            return [event async for event in job.engine.run()]

        import asyncio

        events = asyncio.run(drive())
        runs[convention] = finish_run(job, "completed")["minos"]
        skipped = [e for e in events if e.type == "item_not_applicable"]
        assert [e.item_id for e in skipped] == ["3"] and "needs at least 2 candidates" in skipped[0].reason
        assert ("3", "minos") not in job.session.finished_keys() | job.session.failed_keys()
        assert job.session.not_applicable_keys() == {("3", "minos")}
        assert "3" not in job.session.verdicts("minos")
    strict, paper = runs["strict"], runs["paper"]
    for doc in (strict, paper):
        assert (doc["n_done"], doc["n_not_applicable"], doc["n_failed"]) == (3, 1, 0)
    assert strict["n"]["kendall"] == 3 and paper["n"]["kendall"] == 4
    # paper: the one-candidate question adds tau 0 to the mean; RBO of its only ranking is 1
    assert np.isclose(paper["metrics"]["kendall"], strict["metrics"]["kendall"] * 3 / 4)
    assert np.isclose(paper["metrics"]["rbo_0.9"], (strict["metrics"]["rbo_0.9"] * 3 + 1.0) / 4)


def test_json_and_show_say_the_convention_and_the_coverage(tmp_path, capsys) -> None:
    path = minos_file(tmp_path)
    code = main(["run", str(path), "--judge", "rouge-l", "--convention", "paper", "--json",
                 "--sessions-dir", str(tmp_path / "s")])
    data = json.loads(capsys.readouterr().out)
    judge = data["judges"]["rouge-l"]
    assert code == 0 and judge["convention"] == "paper"
    assert judge["coverage"] == {"items": 4, "scored": 4, "not_applicable": 0, "failed": 0, "pending": 0}
    assert judge["n"]["kendall"] == 4  # rouge-l judges the one-candidate question; paper counts it
    main(["sessions", "show", data["session"], "--sessions-dir", str(tmp_path / "s")])
    shown = " ".join(capsys.readouterr().out.split())
    assert "scored 4 of 4 · paper convention" in shown
    code = main(["run", str(path), "--judge", "rouge-l", "--json", "--sessions-dir", str(tmp_path / "s")])
    strict = json.loads(capsys.readouterr().out)["judges"]["rouge-l"]
    assert strict["convention"] == "strict" and strict["n"]["kendall"] == 3


def _pair_item(i: int, labels: list[str]) -> Item:
    return Item(id=f"p{i}", question="q?", candidates={"a": "x", "b": "y"},
                gold=PairwiseGold(kind="pairwise", a="a", b="b", labels=labels))


def test_accuracy_ci_resamples_items_not_labels() -> None:
    # 12 items with three identical labels each; the judge agrees on half of them
    items = [_pair_item(i, ["A", "A", "A"]) for i in range(12)]
    verdicts = {it.id: Verdict(item_id=it.id, scores={"a": 1.0, "b": 0.0} if i % 2 == 0 else {"a": 0.0, "b": 1.0},
                               ranking=["a", "b"] if i % 2 == 0 else ["b", "a"], order=["a", "b"], pair=("a", "b"),
                               preference="A" if i % 2 == 0 else "B")
                for i, it in enumerate(items)}
    found = summarize(items, verdicts, seed=3)
    assert found.metrics["accuracy"] == 0.5 and found.n["accuracy"] == 36
    per_item = [(3.0 if i % 2 == 0 else 0.0, 3.0) for i in range(12)]
    assert found.ci["accuracy"] == ratio_ci(per_item, seed=3)
    by_label = mean_ci([[1.0 if i % 2 == 0 else 0.0] for i in range(12) for _ in range(3)], seed=3)
    width = found.ci["accuracy"][1] - found.ci["accuracy"][0]
    assert width > (by_label[1] - by_label[0]) * 1.4  # labels of one item move together: a wider interval
