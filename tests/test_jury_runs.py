"""Juries through the real CLI: the embedded model beside lexical members on LFQA-Eval, and a member whose
backbone fails (real HTTP to the loopback server) decided by the quorum, then resumed."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes import is_preflight

from qatui.cli import main
from qatui.store.session import SessionStore

JURY = "pairwise@local/smollm2,rouge-l,length"


def cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_a_jury_of_the_embedded_model_rouge_and_length_on_lfqa_eval(shared_data, tmp_path, capsys,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = shared_data / "LFQA-Eval_Xu2023" / "Biology_12_Common20.json"
    sessions = str(tmp_path / "s")
    code, out = cli(capsys, "--sessions-dir", sessions, "run", str(data), "--judge", "jury", "--jury", JURY,
                    "--limit", "3", "--json")
    result = json.loads(out)["judges"]["jury"]
    assert code == 0 and result["coverage"]["scored"] == 3
    session = SessionStore(tmp_path / "s").open(json.loads(out)["session"])
    verdicts = session.verdicts("jury")
    assert len(verdicts) == 3
    for verdict in verdicts.values():
        members = {a.member: a for a in verdict.artifacts if a.type == "member_verdict"}
        assert set(members) == {"pairwise@local/smollm2", "rouge-l", "length"}
        assert members["rouge-l"].status == "n/a"  # LFQA-Eval has no reference answer
        assert members["pairwise@local/smollm2"].status == members["length"].status == "done"
        assert any(a["type"] == "pair_judged" for a in members["pairwise@local/smollm2"].artifacts)  # its steps kept
        assert verdict.preference in ("A", "B", "tie") and verdict.details["answered"] == [
            "pairwise@local/smollm2", "length"]
    assert session.meta["backbones"] == ["local/smollm2"]
    agreement = result["members_agreement"]["preference"]
    assert agreement["members"] == ["pairwise@local/smollm2", "length"] and "alpha" in agreement["metrics"]
    assert result["members"]["length"]["coverage"] == {"items": 3, "scored": 3, "not_applicable": 0, "failed": 0}
    assert "accuracy" in result["members"]["length"]["metrics"] and "accuracy" in result["metrics"]

    code, shown = cli(capsys, "--sessions-dir", sessions, "sessions", "show", json.loads(out)["session"])
    shown = " ".join(shown.split())  # words a narrow terminal wrapped
    assert code == 0
    for words in ("members", "pairwise@local/smollm2", "rouge-l", "length", "Krippendorff's alpha",
                  "members' agreement"):
        assert words in shown
    item_id = next(iter(verdicts))
    code, item = cli(capsys, "--sessions-dir", sessions, "sessions", "show", json.loads(out)["session"],
                     "--item", item_id)
    assert code == 0 and "not applicable" in item and "votes" in item and "its steps" in item


def _pairwise_answer(body: dict) -> str:
    """The pairwise judge's answer: the longer answer, in whichever position it was shown."""
    text = "\n".join(str(message.get("content")) for message in body["messages"])
    first = "A" if text.find("A longer answer") < text.find("Short.") else "B"
    return json.dumps({"rationale": "It gives reasons.", "choice": first})


def _bad_backbone_fails(index: int, body: dict) -> str:
    """Every call of the `bad` backbone's model is a 500 (its preflight probe, 8 tokens, passes)."""
    return "500" if body.get("model") == "fake-bad" and not is_preflight(body) else "ok"


def test_a_failing_member_is_recorded_and_the_quorum_decides(llm_server, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    backbone = f'api_base = "{llm_server.base_url}"\napi_key_env = "FAKE_KEY"\nmax_attempts = 1\n'
    config.write_text(f'[backbones.good]\nmodel = "openai/fake-good"\n{backbone}'
                      f'[backbones.bad]\nmodel = "openai/fake-bad"\n{backbone}'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n'
                      '[juries.strict]\nmembers = ["pairwise@good", "pairwise@bad", "length"]\nquorum = "all"\n')
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"Why {i}?", "candidates": {"a": "Short.", "b": "A longer answer, with reasons."},
        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["B"]}}) + "\n" for i in range(3)))
    llm_server.script(_pairwise_answer, faults=_bad_backbone_fails)
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]

    code, out = cli(capsys, *base, "run", str(data), "--judge", "jury", "--jury", "pairwise@good,pairwise@bad,length",
                    "--json")
    result = json.loads(out)["judges"]["jury"]
    assert code == 0 and result["coverage"]["scored"] == 3  # majority quorum: 2 of 3 answered
    assert result["members"]["pairwise@bad"]["coverage"]["failed"] == 3
    assert result["metrics"]["accuracy"] == 1.0  # good and length both say B
    verdict = next(iter(SessionStore(tmp_path / "s").open(json.loads(out)["session"]).verdicts("jury").values()))
    bad = next(a for a in verdict.artifacts if a.type == "member_verdict" and a.member == "pairwise@bad")
    assert bad.status == "failed" and "500" in bad.reason or "Internal" in bad.reason

    code, out = cli(capsys, *base, "run", str(data), "--judge", "jury", "--jury", "strict", "--json")
    strict = json.loads(out)
    assert code == 1 and strict["status"] == "failed"  # quorum all: every item fails, none is scored
    session = SessionStore(tmp_path / "s").open(strict["session"])
    failures = [doc["failure"]["reason"] for doc in session.results().values()]
    assert len(failures) == 3 and not session.verdicts("jury")
    assert all(r.startswith("quorum not met: 2 of 3 members answered, 3 needed (pairwise@bad failed:") for r in failures)

    llm_server.script(_pairwise_answer)  # the bad backbone heals; a resume finishes the items
    code, out = cli(capsys, *base, "sessions", "resume", strict["session"], "--json")
    assert code == 0 and json.loads(out)["judges"]["jury"]["coverage"]["scored"] == 3


def test_every_members_backbone_is_checked_before_a_session_exists(llm_server, tmp_path, capsys,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.good]\nmodel = "openai/fake-good"\napi_base = "{llm_server.base_url}"\n'
                      'api_key_env = "FAKE_KEY"\n'
                      '[backbones.down]\nmodel = "openai/fake-down"\napi_base = "http://127.0.0.1:9/v1"\n'
                      'api_key_env = "FAKE_KEY"\n')
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q", "question": "Why?", "candidates": {"a": "x", "b": "y"}}) + "\n")
    for extra in ([], ["--plan"]):
        code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(data),
                     "--judge", "jury", "--jury", "pairwise@good,pairwise@down,length", *extra])
        err = capsys.readouterr().err
        assert code == 2 and "error: backbone 'down'" in err  # the good member's backbone passed first
        assert not (tmp_path / "s").exists()


def _short_twice_then_long(body: dict) -> str:
    """The pairwise member's answer by repeat (its seed: 1000 per repeat): the short answer in repeats 0 and 1, the
    longer in repeat 2, in whichever position each was shown; the preflight probe gets its word."""
    text = "\n".join(str(message.get("content")) for message in body["messages"])
    repeat = int(body.get("seed", 0)) // 1000
    short_first = text.find("Short.") < text.find("A longer answer")
    wants_short = repeat < 2
    return json.dumps({"rationale": "scripted", "choice": "A" if short_first == wants_short else "B"})


def test_a_jury_asked_three_times_measures_each_member_on_its_combined_answer(llm_server, tmp_path, capsys,
                                                                              monkeypatch) -> None:
    """`--repeats 3` of a jury: each member answers once per repeat. Read one answer at a time, the pairwise member
    covered 9 of 3 items and was measured on its last repeat (the longer answer: accuracy 1.000), though it chose
    the short one twice in three on every item: its majority, accuracy 0. Now it covers 3 items, its figure is its
    majority's, and the members' agreement stands on the same answers."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.good]\nmodel = "openai/fake-good"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_attempts = 1\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"Why {i}?", "candidates": {"a": "Short.", "b": "A longer answer, with reasons."},
        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["B"]}}) + "\n" for i in range(3)))
    llm_server.script(_short_twice_then_long)
    code, out = cli(capsys, "--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(data),
                    "--judge", "jury", "--jury", "pairwise@good,length", "--repeats", "3", "--json")
    assert code == 0, out
    jury = json.loads(out)["judges"]["jury"]
    pairwise, length = jury["members"]["pairwise@good"], jury["members"]["length"]
    assert pairwise["coverage"] == length["coverage"] == {"items": 3, "scored": 3, "not_applicable": 0, "failed": 0}
    assert pairwise["metrics"]["accuracy"] == 0.0  # short, short, long: short by majority, people said the longer
    assert length["metrics"]["accuracy"] == 1.0
    agreement = jury["members_agreement"]["preference"]
    # by hand: 3 items, A against B on each; Do = 1, De = 6/5 * (1 - 2 * (1/2)^2) = 3/5, alpha = 1 - 1 / (3/5)
    assert agreement["metrics"]["alpha"] == pytest.approx(-2 / 3)


def test_the_jury_panel_shows_every_repeat_of_a_jury_asked_three_times(llm_server, tmp_path, capsys,
                                                                    monkeypatch) -> None:
    """The Session screen's jury panel kept one row per member, the last repeat's: the pairwise member read "R2"
    (the longer answer) though it chose the shorter in two repeats of three. Each repeat's members and where they
    stand are shown apart now, marked #1 to #3."""
    from fakes import wait_until

    from qatui.config import Config
    from qatui.tui.app import QatuiApp
    from qatui.tui.clipboard import panel_text
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.jury_panel import JuryPanel

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.good]\nmodel = "openai/fake-good"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_attempts = 1\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Why?", "candidates": {
        "a": "Short.", "b": "A longer answer, with reasons."}}) + "\n")
    llm_server.script(_short_twice_then_long)
    code, out = cli(capsys, "--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(data),
                    "--judge", "jury", "--jury", "pairwise@good,length", "--repeats", "3", "--json")
    assert code == 0, out
    app = QatuiApp(Config(), SessionStore(tmp_path / "s"), open_id=json.loads(out)["session"])

    async def panel_lines() -> list[str]:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None
                             and "#3" in panel_text(app.screen.query_one(JuryPanel)), "every repeat's rows")
            return panel_text(app.screen.query_one(JuryPanel)).splitlines()

    lines = asyncio.run(panel_lines())
    rows: dict[str, list[str]] = {}
    for line in lines:
        if line[:1] == "#" and line[1:2].isdigit():
            rows.setdefault(line.split()[0], []).append(line)
    assert any(line.startswith("#k: repeat k") for line in lines)
    assert set(rows) == {"#1", "#2", "#3"}
    verdicts = {k: next(line.split()[2] for line in v if "pairwise@good" in line) for k, v in rows.items()}
    assert verdicts["#1"] == verdicts["#2"] != verdicts["#3"]  # short twice, then the longer answer
    assert all(any("length" in line for line in v) for v in rows.values())
