"""--reasoning-effort and --thinking-budget: every backbone a run calls is asked so, the session records it,
a resume asks the same way, and `qatui table` never reuses a run asked otherwise. Real HTTP (tests/llm_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import is_preflight
from llm_server import FakeLLMServer
from tui_support import write_sums

from qatui.cli import main
from qatui.cli.common import with_reasoning
from qatui.config import Config
from qatui.llm import client as client_module
from qatui.store.session import SessionStore

ANSWER = json.dumps({"rationale": "A is right", "choice": "A"})


@pytest.fixture(autouse=True)
def _fresh_backbones(monkeypatch):
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    client_module._backbones.clear()
    yield
    client_module._backbones.clear()


def _config(tmp_path: Path, server: FakeLLMServer) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'[backbones.judge]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                    f'api_key_env = "FAKE_KEY"\nmax_attempts = 1\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    return path


def _cli(capsys, *args: str) -> tuple[int, dict | str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() and out.lstrip().startswith("{") else err)


def _efforts(server: FakeLLMServer, since: int = 0) -> set:
    """The reasoning_effort of each completion asked since request `since` (the preflight's too)."""
    return {body.get("reasoning_effort") for body in server.requests[since:]}


def test_the_flag_reaches_every_request_is_recorded_and_a_resume_asks_the_same_way(llm_server, tmp_path, capsys):
    broken = {"q2": True}

    def faults(index: int, body: dict) -> str:
        return "500" if broken["q2"] and "What is 2 plus 2?" in json.dumps(body) else "ok"

    llm_server.script(lambda body: ANSWER, faults=faults)
    config, data, sessions = _config(tmp_path, llm_server), write_sums(tmp_path / "d.jsonl", 4, gold=True), tmp_path / "s"
    common = ["--config", str(config), "--sessions-dir", str(sessions)]
    code, out = _cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--backbone", "judge",
                     "--reasoning-effort", "high", "--json")
    assert code == 0 and out["judges"]["pairwise"]["n_failed"] == 1, out
    assert _efforts(llm_server) == {"high"}
    assert "reasoning_effort high" in out["requests"]["judge"]  # what was sent, in the session's record
    session = SessionStore(sessions).open(out["session"])
    assert session.meta["reasoning"] == {"reasoning_effort": "high"}
    assert session.meta["models"]["reasoning"] == {"reasoning_effort": "high"}
    broken["q2"] = False
    asked = len(llm_server.requests)
    code, resumed = _cli(capsys, *common, "sessions", "resume", out["session"], "--json")
    assert code == 0 and resumed["judges"]["pairwise"]["n_failed"] == 0, resumed
    assert len(llm_server.requests) > asked and _efforts(llm_server, asked) == {"high"}  # not the config's (none)


def test_table_never_reuses_a_run_asked_with_another_effort(llm_server, tmp_path, capsys) -> None:
    llm_server.script(lambda body: ANSWER)
    config, data, sessions = _config(tmp_path, llm_server), write_sums(tmp_path / "d.jsonl", 3, gold=True), tmp_path / "s"
    common = ["--config", str(config), "--sessions-dir", str(sessions)]
    table = [*common, "table", str(data), "--judge", "pairwise", "--backbone", "judge", "--json"]
    code, out = _cli(capsys, *table, "--reasoning-effort", "low")
    assert code == 0 and out["rows"][0]["reused"] is False and _efforts(llm_server) == {"low"}, out
    asked = len(llm_server.requests)
    code, out = _cli(capsys, *table)  # no effort: not the same run
    assert code == 0 and out["rows"][0]["reused"] is False and _efforts(llm_server, asked) == {None}, out
    asked = len(llm_server.requests)
    code, out = _cli(capsys, *table, "--reasoning-effort", "low")  # the same as the first: reused, nothing asked
    assert code == 0 and out["rows"][0]["reused"] is True, out
    assert not [body for body in llm_server.requests[asked:] if not is_preflight(body)]  # no judgement asked


def test_a_model_string_gets_the_thinking_budget_as_its_providers_own() -> None:
    """A --backbone typed as a LiteLLM model string has no table of the config: it is given one, so it is asked too."""
    config = with_reasoning(Config(), {"thinking_budget": 2048}, ["anthropic/claude-sonnet-4-20250514"])
    request = client_module.make_client("anthropic/claude-sonnet-4-20250514", config).build_request(
        [{"role": "user", "content": "hi"}], max_tokens=300)
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048} and request["max_tokens"] == 300 + 2048


@pytest.mark.parametrize("flag, value, says", [
    ("--reasoning-effort", "extreme", "invalid choice: 'extreme'"),
    ("--thinking-budget", "100", "must be from 1024 to 200000"),
    ("--thinking-budget", "300000", "must be from 1024 to 200000"),
])
def test_out_of_range_values_are_refused_in_one_line_before_any_work(tmp_path, capsys, flag, value, says) -> None:
    sessions = tmp_path / "s"
    for command in (["run", "demo", "--judge", "pairwise"], ["table", "demo", "--judge", "pairwise"]):
        assert main(["--sessions-dir", str(sessions), *command, flag, value]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1 and not sessions.exists(), err


def test_a_jury_members_backbone_is_asked_too() -> None:
    """`--jury pairwise@MODEL,...`: the member's model string gets the effort like a --backbone would."""
    from qatui.cli.common import jury_backbones, with_jury

    config = with_jury(Config(), ["jury"], "pairwise@openai/gpt-4o-mini,length")
    asked = with_reasoning(config, {"reasoning_effort": "minimal"}, jury_backbones(config))
    assert asked.backbones["openai/gpt-4o-mini"].reasoning_effort == "minimal"
    assert client_module.make_client("openai/gpt-4o-mini", asked).shape().extra == (("reasoning_effort", "minimal"),)
