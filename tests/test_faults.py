"""Faults over real HTTP: a flaky backbone never yields a scored failure, a lost item, or a repeated call.

A loopback OpenAI-compatible server (tests/llm_server.py) answers a quarter of the calls with
a fault: 429 with and without Retry-After, 500, 503, a hang past the timeout, a dropped
connection, empty text, malformed or non-JSON bodies, a refusal, an absurdly long answer.
Two hundred items go through the real client and engine. Afterwards every item is done or
failed with its reason, no failure is scored, retries stayed in bounds, the counts add up;
once the server is healthy a resume finishes the failed items without repeating a call that
had succeeded.
"""

from __future__ import annotations

import json
import sqlite3
import random
import re
from pathlib import Path

import pytest
from fakes import is_preflight
from llm_server import FakeLLMServer, Fault
from tui_support import write_sums

from qatui.cli import main
from qatui.store.session import SessionStore

N_ITEMS = 200
FAULT_RATE = 0.25
MAX_ATTEMPTS = 3
FAULTS = ["429", "429-retry-after", "500", "503", Fault("hang", seconds=3.0), "drop", "empty", "malformed",
          "garbage", "refusal", Fault("long", chars=20_000)]




def _answer(body: dict) -> str:
    """The pairwise judge's answer: always A (shape is what matters here)."""
    return json.dumps({"rationale": "A states the right sum.", "choice": "A"})


def _question(body: dict) -> str:
    """The item a request is about, read from its prompt (a repair re-ask carries it in an earlier message)."""
    text = "\n".join(str(message.get("content")) for message in body["messages"])
    found = re.search(r"What is (\d+) plus", text)
    return found[1] if found else ""


def _flaky():
    """Every fault kind at FAULT_RATE, seeded; the preflight probe (8 tokens) always answered.

    Item q7's calls always get a 503, so at least one item runs out of attempts however the
    concurrent requests happen to meet the random faults.
    """
    rng = random.Random(7)

    def choose(index: int, body: dict):
        if is_preflight(body):
            return "ok"
        if _question(body) == "7":
            return "503"
        if rng.random() >= FAULT_RATE:
            return "ok"
        fault = rng.choice(FAULTS)
        return "ok" if fault == "refusal" else fault  # a refusal is an ok answer in words: the responder writes it

    return choose


@pytest.fixture
def llm_server(monkeypatch):
    """The scripted server, with room for a long faulty run (bounded all the same)."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with FakeLLMServer(max_lifetime_s=300.0, max_requests=5_000) as server:
        yield server


@pytest.mark.slow
def test_two_hundred_items_through_a_flaky_backbone_then_a_clean_resume(llm_server, tmp_path, capsys,
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_concurrency = 32\ntimeout_s = 1.5\nmax_attempts = {MAX_ATTEMPTS}\n'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n[general]\nconcurrency = 32\n')
    refusals = random.Random(3)
    llm_server.script(lambda body: "I can't help with that." if refusals.random() < 0.03 else _answer(body),
                      faults=_flaky())
    sessions = tmp_path / "s"
    data = write_sums(tmp_path / "sums.jsonl", N_ITEMS, gold=True)
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--judge", "pairwise",
                 "--backbone", "fake", "--json"])
    out = json.loads(capsys.readouterr().out)
    first_requests = llm_server.n_requests
    assert "judges" in out, out  # else the run was refused: say why
    judge = out["judges"]["pairwise"]
    assert code == 0 and out["status"] == "completed"
    coverage = judge["coverage"]
    assert coverage["scored"] + coverage["failed"] == N_ITEMS and coverage["pending"] == 0  # the counts add up
    assert coverage["failed"] > 0  # the faults were felt: some items ran out of attempts (q7 at least)

    session = SessionStore(sessions).open(out["session"])
    results = session.results()
    failed = {item for (item, _), doc in results.items() if doc["status"] == "failed"}
    assert not failed & set(session.verdicts("pairwise"))  # no failure was scored
    assert all(doc["failure"]["reason"] for doc in results.values() if doc["status"] == "failed")
    # retries stayed in bounds: at most MAX_ATTEMPTS requests per call, and one repair re-ask per answer
    calls_planned = 2 * N_ITEMS
    assert first_requests <= 1 + calls_planned * MAX_ATTEMPTS * 2

    llm_server.script(_answer)  # healthy now
    before = len(llm_server.requests)
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "sessions", "resume", out["session"],
                 "--json"])
    resumed = json.loads(capsys.readouterr().out)
    assert code == 0 and resumed["status"] == "completed"
    still_failed = {item: doc["failure"] for (item, _), doc in SessionStore(sessions).open(out["session"]).results().items()
                    if doc["status"] == "failed"}
    assert resumed["judges"]["pairwise"]["coverage"]["scored"] == N_ITEMS, still_failed  # say why, if not
    asked = {_question(body) for body in llm_server.requests[before:] if not is_preflight(body)}
    assert asked <= {item.removeprefix("q") for item in failed}  # no call that had succeeded was made again


def test_a_corrupted_cache_entry_is_a_miss_asked_again_never_a_crash(llm_server, tmp_path, capsys,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    llm_server.script(_answer)
    data = tmp_path / "few.jsonl"
    data.write_text("".join(line for i, line in enumerate(write_sums(tmp_path / "all.jsonl", N_ITEMS, gold=True).read_text().splitlines(True))
                            if i < 4))

    def run(sessions: str) -> dict:
        code = main(["--config", str(config), "--sessions-dir", str(tmp_path / sessions), "run", str(data),
                     "--judge", "pairwise", "--backbone", "fake", "--json"])
        assert code == 0
        return json.loads(capsys.readouterr().out)

    run("first")
    db = sqlite3.connect(tmp_path / "cache" / "calls.sqlite3")
    keys = sorted(key for (key,) in db.execute("SELECT key FROM calls"))
    assert len(keys) == 8  # four items, both orders
    with db:
        db.execute("UPDATE calls SET entry = ? WHERE key = ?", ('{"key": "trunc', keys[0]))  # an edited entry
        deep = '{"key": ' + "[" * 100_000 + "]" * 100_000 + "}"  # past the JSON parser's depth: a RecursionError
        db.execute("UPDATE calls SET entry = ? WHERE key = ?", (deep, keys[1]))
    before = llm_server.n_requests
    again = run("second")
    assert again["judges"]["pairwise"]["coverage"]["scored"] == 4
    assert llm_server.n_requests - before == 3  # the live check put off to it, and the two calls whose entries were damaged
    for key in keys[:2]:
        [(entry,)] = db.execute("SELECT entry FROM calls WHERE key = ?", (key,))
        assert json.loads(entry)["response"]["text"]  # rewritten whole
    db.close()
    for part in ("", "-wal", "-shm"):  # the whole file damaged: replaced by one that is no database (a new inode,
        (tmp_path / "cache" / f"calls.sqlite3{part}").unlink(missing_ok=True)  # as a copy or an editor leaves it)
    (tmp_path / "cache" / "calls.sqlite3").write_bytes(b"not a database at all " * 64)
    before = llm_server.n_requests
    assert run("third")["judges"]["pairwise"]["coverage"]["scored"] == 4  # every call asked again, none failed
    assert llm_server.n_requests - before == 1 + 8
    assert len(list((tmp_path / "cache").glob("calls.sqlite3.damaged-*"))) == 1  # kept aside, not deleted
    assert run("fourth") and llm_server.n_requests - before == 1 + 8  # the new file answers them all: no request


def test_an_answer_that_never_matched_its_schema_is_asked_again_on_resume(llm_server, tmp_path, capsys,
                                                                           monkeypatch) -> None:
    """Item q2's answers are refusals, its repair re-ask's too: the item fails, and neither unusable answer is
    kept as a cache hit, so once the backbone answers properly a resume asks those two calls again and scores
    it (were they kept, every resume would replay the same refusal and the item could never be finished)."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    llm_server.script(lambda body: "I can't help with that." if _question(body) == "2" else _answer(body))
    sessions = tmp_path / "s"
    data = write_sums(tmp_path / "sums.jsonl", 4, gold=True)
    main(["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--judge", "pairwise",
          "--backbone", "fake", "--json"])
    out = json.loads(capsys.readouterr().out)
    results = SessionStore(sessions).open(out["session"]).results()
    assert {item for (item, _), doc in results.items() if doc["status"] == "failed"} == {"q2"}
    assert "could be parsed" in results["q2", "pairwise"]["failure"]["reason"]  # after each repair re-ask

    llm_server.script(_answer)
    before = len(llm_server.requests)
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "sessions", "resume", out["session"],
                 "--json"])
    resumed = json.loads(capsys.readouterr().out)
    assert code == 0 and resumed["judges"]["pairwise"]["coverage"]["scored"] == 4, resumed
    asked = [_question(body) for body in llm_server.requests[before:] if not is_preflight(body)]
    assert asked and set(asked) == {"2"}  # only the failed item's calls, asked again


def test_a_pair_one_order_alone_decided_is_counted_in_the_summary(llm_server, tmp_path, capsys, monkeypatch) -> None:
    """Both orders are asked so that the order of the answers cancels out. On q0, q1 and q2 the answers to the order
    showing the wrong sum first never parse (nor their repair re-asks), so the other order alone decides those pairs:
    their verdict keeps the position bias. Position consistency counted only the 5 pairs judged both ways (1.000) and
    nothing said that 3 of 8 verdicts came from one order; `one_order` does: 3/8."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n')

    def answer(body: dict) -> str:
        if is_preflight(body):
            return "OK"
        number = int(_question(body))
        shown_first = re.search(r"<<<BEGIN Answer A \w+>>>\nIt is (\d+)\.", body["messages"][1]["content"])
        right_first = int(shown_first[1]) == 2 * number
        if not right_first and number < 3:
            return "I would rather not say."
        return json.dumps({"rationale": "the right sum", "choice": "A" if right_first else "B"})

    llm_server.script(answer)
    sessions = tmp_path / "s"
    data = write_sums(tmp_path / "sums.jsonl", 8, gold=True)
    assert main(["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--judge", "pairwise",
                 "--backbone", "fake", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    mine = out["judges"]["pairwise"]
    assert mine["metrics"]["accuracy"] == 1.0 and mine["coverage"]["scored"] == 8
    assert (mine["metrics"]["position_consistency"], mine["n"]["position_consistency"]) == (1.0, 5)
    assert (mine["metrics"]["one_order"], mine["n"]["one_order"]) == (3 / 8, 8)
    assert main(["--sessions-dir", str(sessions), "sessions", "show", out["session"]]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert any(row[:2] == ["one_order", "0.375"] and row[-1] == "8" for row in rows), rows
    assert main(["--config", str(config), "--sessions-dir", str(sessions), "table", str(data), "--judge", "pairwise",
                 "--backbone", "fake"]) == 0
    table = " ".join(capsys.readouterr().out.split())
    assert "100.0 (3/8 one order)" in table and "one order = of the pairs asked in both orders" in table, table
