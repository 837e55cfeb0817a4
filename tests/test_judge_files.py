"""Judge files (qatui/judges/files): written as TOML, refused when bad before any work, run over a loopback
backbone and on the embedded model, swap and confirm, exported built-ins equal to the built-ins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import is_preflight
from llm_server import FakeLLMServer

from qatui.cli import main
from qatui.llm.fence import block_texts

ITEMS = [
    {"id": "q1", "question": "What is table salt made of?", "references": ["Sodium chloride, NaCl."],
     "candidates": {"r1": "Sodium chloride, NaCl: sodium and chlorine.", "r2": "Sugar.", "r3": "It is NaCl."},
     "gold": {"kind": "ranking", "tiers": [["r1"], ["r3"], ["r2"]]}},
    {"id": "q2", "question": "What is 2 plus 2?", "references": ["4"],
     "candidates": {"r1": "It is 5.", "r2": "It is 4, since two and two make four.", "r3": "4."},
     "gold": {"kind": "ranking", "tiers": [["r2"], ["r3"], ["r1"]]}},
]

SCORE = '''name = "concise"
description = "How directly an answer answers the question, 1 to 5."
kind = "score"
criteria = "A direct, correct answer is best."

[scale]
min = 1
max = 5

[prompts]
system = """Grade one answer for concision. {criteria} Score from {min} to {max}, written as [[3]]."""
user = """Question: {question}
{reference}
Answer to grade:
{answer}

Your score, as [[score]]:"""
reference = """Reference answer: {reference}
"""
'''

PAIR = '''name = "swapper"
description = "A / B / tie, each pair in both orders."
kind = "pair"

[pair]
both_orders = true

[answer]
explanation = 200

[prompts]
system = "Compare two answers; reply with a short explanation and the verdict A, B or tie."
user = """Question: {question}
{reference}
Answer A:
{answer_a}

Answer B:
{answer_b}

Which is better?"""
reference = """Reference answer: {reference}
"""
'''

CHECKLIST = '''name = "checks"
description = "Two yes-or-no questions per answer."
kind = "checklist"

[checklist]
questions = ["Does the answer mention the right result?", "Is the answer one sentence?"]

[prompts]
system = "Answer each question yes or no about the answer, as JSON with keys Q1, Q2."
user = """Question: {question}
{reference}
Answer:
{answer}

Questions:
{questions}"""
reference = """Reference answer: {reference}
"""
'''


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    return path


def _reference(content: str) -> str:
    return block_texts(content).get("Reference", "")


def _good(answer: str, reference: str) -> bool:
    """The scripted backbone's taste: an answer sharing a word with the reference is good."""
    words = {w.strip(".,:").lower() for w in reference.split()}
    return bool(words & {w.strip(".,:").lower() for w in answer.split()})


def responder(flip_with_order: bool = False):
    """Answers every kind of judge file from its prompt; `flip_with_order`: a pair judge always gets "A"."""
    def reply(body: dict) -> str:
        if is_preflight(body):
            return "OK"
        content = body["messages"][-1]["content"]
        blocks, reference = block_texts(content), _reference(content)
        if "Answer A" in blocks:
            if flip_with_order:
                return json.dumps({"explanation": "the first one", "verdict": "A"})
            a, b = (_good(blocks[k], reference) for k in ("Answer A", "Answer B"))
            return json.dumps({"explanation": "by the reference", "verdict": "tie" if a == b else "A" if a else "B"})
        answer = blocks.get("Answer", "")
        if "Questions:" in content:
            return json.dumps({"Q1": "yes" if _good(answer, reference) else "no",
                               "Q2": "yes" if answer.count(".") <= 1 else "no"})
        return json.dumps({"score": "[[5]]" if _good(answer, reference) else "[[2]]"})
    return reply


def _config(tmp_path: Path, server: FakeLLMServer, extra: str = "") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                    f'api_key_env = "FAKE_KEY"\n[models]\ndefault_backbone = "fake"\n'
                    f'[cache]\ndir = "{tmp_path / "cache"}"\n{extra}')
    return path


def _run(capsys, config: Path, tmp_path: Path, *argv: str) -> dict:
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), *argv, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def _session(tmp_path: Path, session_id: str):
    from qatui.store.session import SessionStore

    return SessionStore(tmp_path / "s").open(session_id)


@pytest.mark.parametrize(("text", "name"), [(SCORE, "concise"), (PAIR, "swapper"), (CHECKLIST, "checks")],
                         ids=["score", "pair", "checklist"])
def test_a_judge_file_runs_over_a_loopback_backbone_and_its_verdicts_and_text_are_stored(
        tmp_path, capsys, monkeypatch, llm_server, text, name) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    judge = tmp_path / f"{name}.toml"
    judge.write_text(text)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    coverage = done["judges"][name]["coverage"]
    assert coverage == {"items": 2, "scored": 2, "not_applicable": 0, "failed": 0, "pending": 0}
    session = _session(tmp_path, done["session"])
    assert session.meta["judge_files"][name] == {"path": str(judge), "text": text}
    verdicts = session.verdicts(name)
    assert set(verdicts) == {"q1", "q2"}
    # the scripted backbone prefers the answers sharing a word with the reference: so does every verdict
    for item in ITEMS:
        scores = verdicts[item["id"]].scores
        good = {c for c, t in item["candidates"].items() if _good(t, item["references"][0])}
        assert min(scores[c] for c in good) > max(scores[c] for c in item["candidates"] if c not in good), scores


def test_swap_and_confirm_turns_orders_that_disagree_into_a_tie_and_reports_consistency(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder(flip_with_order=True))  # "A" whatever is shown first: pure position bias
    judge = tmp_path / "swapper.toml"
    judge.write_text(PAIR)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    verdicts = _session(tmp_path, done["session"]).verdicts("swapper")
    for verdict in verdicts.values():
        details = verdict.details
        assert [p["result"] for p in details["pairs"]] == ["tie", "tie", "tie"]
        assert details["swap_and_confirm"] == {"agreed": 0, "judged_both": 3, "consistency": 0.0}
        assert set(verdict.scores.values()) == {0.5}
    pair_calls = [b for b in llm_server.requests if not is_preflight(b)]
    assert len(pair_calls) == 2 * 3 * 2  # every pair of every item asked in both orders


def test_swap_and_confirm_reports_full_consistency_when_the_orders_agree(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    judge = tmp_path / "swapper.toml"
    judge.write_text(PAIR)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    for verdict in _session(tmp_path, done["session"]).verdicts("swapper").values():
        assert verdict.details["swap_and_confirm"]["consistency"] == 1.0


def test_sessions_resume_rebuilds_the_file_judge_from_the_stored_text_when_the_file_is_gone(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    answer = responder()

    def out_of_scale_on_q2(body: dict) -> str:
        return json.dumps({"score": "[[9]]"}) if "2 plus 2" in json.dumps(body["messages"]) else answer(body)

    llm_server.script(out_of_scale_on_q2)
    judge = tmp_path / "concise.toml"
    judge.write_text(SCORE)
    config = _config(tmp_path, llm_server)
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(_data(tmp_path)),
                 "--judge", str(judge), "--json"])
    first = json.loads(capsys.readouterr().out)
    assert code == 0 and first["judges"]["concise"]["coverage"]["failed"] == 1  # [[9]] is off the 1-5 scale
    judge.unlink()  # the session holds the text: the judge is rebuilt from it
    llm_server.script(answer)
    done = _run(capsys, config, tmp_path, "sessions", "resume", first["session"])
    assert done["judges"]["concise"]["coverage"]["scored"] == 2
    assert _session(tmp_path, first["session"]).verdicts("concise")["q2"].scores["r2"] == 5.0
