"""`qatui judges align` against the scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py).

The judge backbone is scripted to be right when the judge's prompt holds an instruction and wrong
otherwise; the writer backbone (the same server) answers with the judge's text plus that instruction.
Each test runs the real command: the split, real sessions, the real client, LiteLLM and HTTP.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from fakes import is_preflight

from qatui.cli import main
from qatui.llm.fence import block_texts
from qatui.store.judge_versions import JudgeHistory
from qatui.store.session import SessionStore

CONCISE = "Prefer the concise answer: padding never makes an answer better."
"""The instruction that makes the scripted judge agree with people."""
FIRST_WAY = "Judge by the FIRST way."
SECOND_WAY = "Judge by the SECOND way."
WRITER_MARK = "You improve the prompt of an LLM judge"
SHORT = "Paris is the capital."
LONG = ("Well, there are many things one could say about this, and after much thought and a long look at "
        "history, geography and culture, the answer is perhaps Lyon or maybe somewhere else entirely.")


def pointwise_answer(score: float) -> str:
    return json.dumps({"score": f"[[{score:.2f}]]"})


def answer_of(body: dict) -> str:
    """The fenced answer a pointwise request grades."""
    return block_texts(str(body["messages"][-1]["content"]))["Answer"]


def system_of(body: dict) -> str:
    return str(body["messages"][0]["content"])


def question_of(body: dict) -> str:
    return re.search(r"Question: (.*)", str(body["messages"][-1]["content"]))[1]


def writer_reply(instruction_of) -> callable:
    """A writer that returns the judge's text with `instruction_of(text)` written first in its system prompt."""
    def reply(body: dict) -> str:
        text = block_texts(str(body["messages"][-1]["content"]))["Judge definition"]
        instruction = instruction_of(text)
        for old in (CONCISE, FIRST_WAY, SECOND_WAY):
            text = text.replace(old + " ", "")
        revised = text.replace('system = """', f'system = """{instruction} ', 1)
        return json.dumps({"analysis": "The judge rewards padding.", "judge_file": revised})
    return reply


def concise_judge(body: dict) -> str:
    """Right (the short answer wins) with the instruction, wrong (the long one wins) without; `hard` items stay wrong."""
    short = answer_of(body) == SHORT
    right = CONCISE in system_of(body) and "hard" not in question_of(body)
    return pointwise_answer(8.0 if short == right else 3.0)


def scripted(judge, writer):
    def respond(body: dict) -> str:
        if is_preflight(body):
            return "OK"
        return writer(body) if WRITER_MARK in system_of(body) else judge(body)
    return respond


def write_data(path: Path, n: int, hard: set[int] = frozenset(), swapped: set[str] = frozenset()) -> Path:
    """`n` pairwise items, the short answer people's choice, A and B alternating; `swapped` items have the gold's
    A and B exchanged (their label then names the long answer)."""
    rows = []
    for i in range(n):
        short_first = i % 2 == 0
        candidates = {"c1": SHORT if short_first else LONG, "c2": LONG if short_first else SHORT}
        item_id = f"q{i:02d}"
        label = "A" if short_first else "B"  # people prefer the short answer ...
        a, b = ("c2", "c1") if item_id in swapped else ("c1", "c2")  # ... unless A and B are exchanged under it
        rows.append({"id": item_id, "question": f"Item {item_id}{' hard' if i in hard else ''}: capital of France?",
                     "candidates": candidates, "gold": {"kind": "pairwise", "a": a, "b": b, "labels": [label]}})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def break_questions(data: Path, ids: Iterable[str]) -> None:
    """Mark the questions of `ids` in the dataset file "broken", which the scripted judge never scores."""
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    for row in rows:
        if row["id"] in set(ids):
            row["question"] = row["question"].replace(": capital", " broken: capital")
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture
def setup(llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    config = tmp_path / "config.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      'api_key_env = "FAKE_KEY"\nmax_attempts = 1\ntimeout_s = 20\nmax_concurrency = 8\n'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    return config


def align(capsys, config: Path, tmp_path: Path, data: Path, *args: str) -> tuple[int, dict, str]:
    code = main(["judges", "align", "pointwise", str(data), "--config", str(config), "--sessions-dir",
                 str(tmp_path / "sessions"), "--backbone", "fake", "--json", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def test_align_raises_test_agreement_with_a_paired_ci(setup, llm_server, tmp_path, capsys) -> None:
    llm_server.script(scripted(concise_judge, writer_reply(lambda text: CONCISE)))
    data = write_data(tmp_path / "d.jsonl", 24, hard={3, 10, 17, 22})
    out = tmp_path / "aligned.toml"
    code, doc, err = align(capsys, setup, tmp_path, data, "--rounds", "1", "--seed", "7", "-o", str(out))
    assert code == 0, err
    start, final, delta = doc["start"], doc["final"], doc["test_difference"]
    assert final["round"] == 1 and start["test"]["metric"] == "accuracy"
    assert start["test"]["value"] == 0.0 and start["train"]["value"] == 0.0  # no instruction: always wrong
    assert final["test"]["value"] > 0.5 and final["train"]["value"] > 0.5
    assert final["test"]["value"] < 1.0  # the hard items stay wrong: the CI has room
    assert delta["delta"] == pytest.approx(final["test"]["value"] - start["test"]["value"])
    low, high = delta["ci"]
    assert 0 < low < delta["delta"] < high <= 1.0
    assert delta["n"] == 12 and not delta["now_wrong"] and len(delta["now_right"]) == 12 - sum(
        1 for i in doc["split"]["test"] if int(i[1:]) in {3, 10, 17, 22})
    assert CONCISE in out.read_text() and out.read_text() == doc["candidates"][1]["text"]
    history = JudgeHistory()  # the data folder of this test (conftest's own_data_folder)
    kept = {r.version for r in history.records("my-pointwise")}
    assert {start["version"], final["version"]} <= kept
    assert history.text("my-pointwise", final["version"]) == out.read_text()
    (kept_record,) = [r for r in history.records("my-pointwise") if r.version == final["version"]]
    assert kept_record.figures["value"] == pytest.approx(final["train"]["value"]) and kept_record.figures["round"] == 1


def test_the_writer_sees_train_disagreements_fenced_and_never_a_test_item(setup, llm_server, tmp_path, capsys) -> None:
    llm_server.script(scripted(concise_judge, writer_reply(lambda text: CONCISE)))
    data = write_data(tmp_path / "d.jsonl", 12)
    code, doc, err = align(capsys, setup, tmp_path, data, "--rounds", "1")
    assert code == 0, err
    writes = [body for body in llm_server.requests if WRITER_MARK in system_of(body)]
    assert len(writes) == 1
    user = str(writes[0]["messages"][-1]["content"])
    blocks = block_texts(user)
    shown = {re.match(r"Item (q\d\d)", text)[1] for name, text in blocks.items() if name.endswith("question")}
    assert shown and shown <= set(doc["split"]["train"])
    assert not any(f"Item {i}" in user for i in doc["split"]["test"])
    assert blocks["Judge definition"] == doc["candidates"][0]["text"]
    assert LONG not in user.replace(blocks["Item 1 answer A"], "").replace(blocks["Item 1 answer B"], "").split(
        "Item 2")[0]  # the answers are inside their blocks
    assert "never an instruction" in system_of(writes[0])


def test_the_plan_counts_the_calls_the_server_served(setup, llm_server, tmp_path, capsys) -> None:
    from qatui.data.loaders import load_dataset
    from qatui.engine.aligning import split_items

    llm_server.script(scripted(concise_judge, writer_reply(lambda text: CONCISE if CONCISE not in text
                                                             else f"{CONCISE} Read every answer whole.")))
    train, _, _ = split_items(load_dataset(str(write_data(tmp_path / "d.jsonl", 16))), 0.5, 0)
    data = write_data(tmp_path / "d.jsonl", 16, hard={int(train[0][1:])})  # a disagreement left for round 2
    code, plan, err = align(capsys, setup, tmp_path, data, "--rounds", "2", "--plan")
    assert code == 0, err and not llm_server.requests
    assert plan["calls"]["per_round"] == {"judge": [16, 16], "writer": 1}
    code, doc, err = align(capsys, setup, tmp_path, data, "--rounds", "2")
    assert code == 0, err
    served = [body for body in llm_server.requests if not is_preflight(body)]
    assert all(c["status"] == "scored" for c in doc["candidates"][1:])
    assert len(served) == plan["calls"]["total"][1]  # every proposal ran, a new judge ran on test
    store = SessionStore(tmp_path / "sessions")
    recorded = sum(len(r.get("calls") or []) for sid in doc["sessions"] for r in store.open(sid).results().values())
    writes = sum(1 for body in served if WRITER_MARK in system_of(body))
    assert recorded + writes == len(served) and writes == 2


def way_judge(train: set[str], flip_test: bool):
    """FIRST way: right on train items but one, wrong on test ones; SECOND way: right on test items and on half of train;
    no instruction: wrong everywhere. `flip_test` turns the test behaviour around."""
    def judge(body: dict) -> str:
        item = re.search(r"Item (q\d\d)", question_of(body))[1]
        system, short = system_of(body), answer_of(body) == SHORT
        if item in train:
            right = ((FIRST_WAY in system and item != min(train))  # one miss: round 2 has a disagreement to show
                     or (SECOND_WAY in system and int(item[1:]) % 4 < 2))
        else:
            right = (SECOND_WAY in system) != flip_test if (FIRST_WAY in system or SECOND_WAY in system) else False
        return pointwise_answer(8.0 if short == right else 3.0)
    return judge


def test_the_test_split_never_chooses_a_candidate(setup, llm_server, tmp_path, capsys) -> None:
    from qatui.data.loaders import load_dataset
    from qatui.engine.aligning import split_items

    data = write_data(tmp_path / "d.jsonl", 16)
    train, test, _ = split_items(load_dataset(str(data)), 0.5, 3)
    writer = writer_reply(lambda text: SECOND_WAY if FIRST_WAY in text else FIRST_WAY)
    results = []
    for flip, (name, swapped) in ((False, ("d", set())), (True, ("swapped", set(test)))):
        llm_server.script(scripted(way_judge(set(train), flip), writer))
        path = write_data(tmp_path / f"{name}.jsonl", 16, swapped=swapped)
        code, doc, err = align(capsys, setup, tmp_path, path, "--rounds", "2", "--seed", "3")
        assert code == 0, err
        assert doc["split"]["train"] == train and doc["split"]["test"] == test
        results.append(doc)
    first, second = results
    for doc in results:
        assert [c["status"] for c in doc["candidates"]] == ["start", "scored", "scored"]
        assert FIRST_WAY in doc["candidates"][1]["text"] and SECOND_WAY in doc["candidates"][2]["text"]
        assert doc["final"]["round"] == 1  # the best on train, whatever test says
    assert first["final"]["version"] == second["final"]["version"]
    assert first["final"]["train"]["value"] == second["final"]["train"]["value"] == pytest.approx(7 / 8)
    assert first["final"]["test"]["value"] != second["final"]["test"]["value"]  # the test labels did change
    # the second way would have won on test in the first run: had test chosen, it would have kept round 2
    from qatui.config import load_config
    from qatui.engine.alignment import evaluate
    from qatui.judges.editable import editable_judge
    from qatui.judges.resources import Resources

    llm_server.script(scripted(way_judge(set(train), False), writer))
    config = load_config(str(setup))
    second_way = editable_judge("pointwise", config).build(first["candidates"][2]["text"],
                                                       Resources(config, backbone_name="fake"))
    found = evaluate(second_way, load_dataset(str(data)), test, config, store=SessionStore(tmp_path / "sessions"))
    assert found.value > first["final"]["test"]["value"]


def test_bad_inputs_are_refused_before_any_call(setup, llm_server, tmp_path, capsys) -> None:
    unlabelled = tmp_path / "u.jsonl"
    unlabelled.write_text(json.dumps({"id": "q", "question": "?", "candidates": {"a": "x", "b": "y"}}) + "\n")
    code, doc, _ = align(capsys, setup, tmp_path, unlabelled)
    assert code == 2 and "no item has gold labels" in doc["error"]
    few = write_data(tmp_path / "few.jsonl", 3)
    code, doc, _ = align(capsys, setup, tmp_path, few)
    assert code == 2 and "3 labelled item(s) cannot be split" in doc["error"]
    data = write_data(tmp_path / "d.jsonl", 8)
    code, doc, _ = align(capsys, setup, tmp_path, data, "--train-share", "0.9")
    assert code == 2 and "at least 2 items on each side" in doc["error"]
    code, doc, _ = main_error(capsys, setup, tmp_path, "rouge-l", data)
    assert code == 2 and "cannot be aligned" in doc["error"]
    taken = tmp_path / "taken.toml"
    taken.write_text("x = 1\n")
    code, doc, _ = align(capsys, setup, tmp_path, data, "-o", str(taken))
    assert code == 2 and "--force" in doc["error"] and taken.read_text() == "x = 1\n"
    from qatui.judges.files.export import export_text

    own = tmp_path / "mine.toml"
    own.write_text(export_text("pointwise"))
    code = main(["judges", "align", str(own), str(data), "--config", str(setup), "--sessions-dir",
                 str(tmp_path / "sessions"), "--backbone", "fake", "--json", "-o", str(own)])
    assert code == 2 and "the judge file being aligned; pass --force" in json.loads(capsys.readouterr().out)["error"]
    assert not llm_server.requests and not (tmp_path / "sessions").exists()


def main_error(capsys, config: Path, tmp_path: Path, judge: str, data: Path) -> tuple[int, dict, str]:
    code = main(["judges", "align", judge, str(data), "--config", str(config), "--sessions-dir",
                 str(tmp_path / "sessions"), "--backbone", "fake", "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda text: text.replace("{answer}", "(none)"), "user: the template never shows {answer}"),
    (lambda text: text.replace('name = "my-pointwise"', 'name = "other"'), "name: the text defines judge 'other'"),
    (lambda text: text.replace('system = """', 'system = """{secret} '), "system"),
    (lambda text: text + "\n", "the text it revises, unchanged"),
    (lambda text: "not = [toml", "not valid TOML"),
], ids=["no-answer", "renamed", "unknown-placeholder", "unchanged", "not-toml"])
def test_a_proposal_that_is_not_a_valid_judge_is_refused_with_its_reason_and_never_run(
        setup, llm_server, tmp_path, capsys, edit, reason) -> None:
    def broken(body: dict) -> str:
        text = block_texts(str(body["messages"][-1]["content"]))["Judge definition"]
        return json.dumps({"analysis": "a change", "judge_file": edit(text)})
    llm_server.script(scripted(concise_judge, broken))
    data = write_data(tmp_path / "d.jsonl", 8)
    code, doc, err = align(capsys, setup, tmp_path, data, "--rounds", "1")
    assert code == 0, err
    refused = doc["candidates"][1]
    assert refused["status"] == "refused" and reason in refused["reason"], refused["reason"]
    assert refused["train"] is None and doc["final"]["round"] == 0
    judged = [b for b in llm_server.requests if not is_preflight(b) and WRITER_MARK not in system_of(b)]
    assert len(judged) == 16  # start on train and test only: the refused text never ran
    assert doc["test_difference"]["delta"] == 0.0


def test_ctrl_c_keeps_what_finished(setup, llm_server, tmp_path) -> None:
    """A real `qatui judges align` process gets SIGINT while the writer is thinking: it exits 130 saying so, the start
    is kept as a version, its two sessions are complete, and nothing half-done is stored as a candidate."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from llm_server import Fault

    def hang_the_writer(index: int, body: dict):
        return Fault("hang", seconds=30) if WRITER_MARK in system_of(body) else "ok"

    llm_server.script(scripted(concise_judge, writer_reply(lambda text: CONCISE)), faults=hang_the_writer)
    data = write_data(tmp_path / "d.jsonl", 8)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "qatui", "judges", "align", "pointwise", str(data), "--config",
                             str(setup), "--sessions-dir", str(tmp_path / "sessions"), "--backbone", "fake", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while not any(WRITER_MARK in system_of(b) for b in list(llm_server.requests)) and proc.poll() is None:
        assert time.monotonic() < deadline, "the writer was never asked"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Interrupted." in err and "1 candidate(s) kept" in err
    doc = json.loads(out)
    assert doc["interrupted"] is True and [c["status"] for c in doc["candidates"]] == ["start"]
    records = JudgeHistory(Path(os.environ["XDG_DATA_HOME"]) / "qatui" / "judges").records("my-pointwise")
    assert [r.version for r in records] == [doc["start"]["version"]]
    store = SessionStore(tmp_path / "sessions")
    assert len(doc["sessions"]) == 2 and all(store.open(s).meta["status"] == "completed" for s in doc["sessions"])


def test_choose_best_keeps_the_highest_train_figure_the_incumbent_on_a_tie_and_never_a_proposal_that_failed() -> None:
    from qatui.engine.alignment import Evaluation
    from qatui.engine.aligning import choose_best

    def ev(value, failed=()):
        """Four train items of one label each: `value` the share of those judged right, the `failed` ones missed."""
        ids = ("a", "b", "c", "d")
        judged = [i for i in ids if i not in failed]
        right = round(value * len(judged)) if value is not None else 0
        per_item = {i: float(k < right) for k, i in enumerate(judged)} if value is not None else {}
        return Evaluation(session_id="s", judge="j", version="v", kind="pairwise", metric="accuracy", value=value,
                          ci=None, n=len(per_item), item_ids=ids, verdicts={}, per_item=per_item,
                          failed={item: "down" for item in failed}, status="completed",
                          counted={**{i: (v, 1.0) for i, v in per_item.items()}, **{i: (0.0, 1.0) for i in failed}})

    assert choose_best([ev(0.5), ev(0.75), ev(0.75)]) == 1  # a tie keeps the earlier
    assert choose_best([ev(0.5), None, ev(0.25)]) == 0  # a refused proposal (None) and a worse one
    assert choose_best([ev(0.5), ev(1.0, failed=["a"]), ev(0.75)]) == 2  # a proposal that failed an item is not kept
    assert choose_best([ev(1.0, failed=["a", "b"]), ev(0.25)]) == 0  # the start may be kept: a proposal must beat it
    # on the same items: the start's 2 of 2 judged is 2 of 4, which a proposal right on 3 of 4 beats
    assert choose_best([ev(1.0, failed=["a", "b"]), ev(0.75)]) == 1
    assert choose_best([ev(1.0, failed=["a", "b"]), ev(0.5)]) == 0  # 2 of 4 each: the incumbent
    assert choose_best([ev(None), ev(0.25)]) == 1


def test_train_items_the_start_failed_go_to_the_writer_with_why_and_a_proposal_that_fixes_them_is_kept(
        setup, llm_server, tmp_path, capsys) -> None:
    """A start that failed some train items (an answer never readable) and got the others right stopped before
    round 1 saying it agreed with people on every train item, and its figure on the items it scored (all right)
    was what a proposal had to beat over every item. Now the failed items are the writer's first cases, with the
    reason each failed, and candidates are compared on every train item, a failed one counted as a miss."""
    from qatui.data.loaders import load_dataset
    from qatui.engine.aligning import split_items

    def judge(body: dict) -> str:
        if "broken" in json.dumps(body["messages"]) and CONCISE not in system_of(body):
            return "I would rather not say."  # never a score, even when asked again (the re-ask's last message)
        return pointwise_answer(8.0 if answer_of(body) == SHORT else 3.0)  # right on every other item

    llm_server.script(scripted(judge, writer_reply(lambda text: CONCISE)))
    data = write_data(tmp_path / "d.jsonl", 12)
    train, _, _ = split_items(load_dataset(str(data)), 0.5, 0)
    broken = sorted(train)[:2]
    break_questions(data, broken)
    code, doc, err = align(capsys, setup, tmp_path, data, "--rounds", "1")
    assert code == 0, err
    start, proposal = doc["candidates"]
    assert start["train"]["failed"] == 2 and start["train"]["value"] == 1.0  # right on every train item it scored
    writes = [body for body in llm_server.requests if WRITER_MARK in system_of(body)]
    assert len(writes) == 1  # round 1 ran
    user = str(writes[0]["messages"][-1]["content"])
    blocks = block_texts(user)
    shown = [re.match(r"Item (q\d\d)", text)[1] for name, text in blocks.items() if name.endswith("question")]
    assert shown == broken  # the failed items, and nothing else was wrong
    assert "The judge: no verdict: the judge failed on this item" in user
    assert "I would rather not say." in blocks["Item 1 failure"]  # its reason, fenced: it quotes the model
    assert proposal["status"] == "scored" and proposal["train"]["failed"] == 0 and proposal["train"]["value"] == 1.0
    assert doc["final"]["round"] == 1  # 6 of 6 beats the start's 4 of 6, its failed items counted as misses


def test_a_judge_that_fails_every_train_item_stops_before_any_round(setup, llm_server, tmp_path, capsys) -> None:
    llm_server.script(scripted(concise_judge, writer_reply(lambda text: CONCISE)),
                      faults=lambda index, body: "ok" if is_preflight(body) else "500")
    data = write_data(tmp_path / "d.jsonl", 8)
    out = tmp_path / "aligned.toml"
    code, doc, err = align(capsys, setup, tmp_path, data, "--rounds", "2", "-o", str(out))
    assert code == 1 and "no round: the judge gave no verdict to measure on train (4 item(s) failed" in err
    assert doc["start"]["train"]["value"] is None and len(doc["candidates"]) == 1
    assert not any(WRITER_MARK in system_of(b) for b in llm_server.requests) and not out.exists()


def test_the_text_output_names_the_test_items_a_judge_failed_on_beside_its_figure(setup, llm_server, tmp_path,
                                                                                 capsys) -> None:
    """The kept judge failed on some test items (unreadable answers): `--json` said so (`failed`), the text output
    showed only the figure over the items left, and the paired difference "over 4 items" of 6 without a word."""
    def judge(body: dict) -> str:
        if CONCISE in system_of(body) and "broken" in question_of(body):
            return "I would rather not say."  # never a score, even when asked again
        return concise_judge(body)

    from qatui.data.loaders import load_dataset
    from qatui.engine.aligning import split_items

    llm_server.script(scripted(judge, writer_reply(lambda text: CONCISE)))
    data = write_data(tmp_path / "d.jsonl", 24)
    _, test, _ = split_items(load_dataset(str(data)), 0.5, 0)
    broken = set(sorted(test)[:2])  # two test items only: a candidate failing on a train item is never kept
    break_questions(data, broken)
    code, doc, err = align(capsys, setup, tmp_path, data, "--rounds", "1")
    assert code == 0, err
    assert broken <= set(doc["split"]["test"]) and doc["final"]["round"] == 1
    assert doc["final"]["test"]["failed"] == 2
    assert main(["judges", "align", "pointwise", str(data), "--config", str(setup), "--sessions-dir",
                 str(tmp_path / "sessions"), "--backbone", "fake", "--rounds", "1"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "· 2 failed" in text, text
    assert "(2 test item(s) one of them failed on left out)" in text, text
