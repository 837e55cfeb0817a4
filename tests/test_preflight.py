"""The backbone check before a run, against a real OpenAI-compatible server on 127.0.0.1.

A run whose backbone cannot answer must be refused before its session exists; one that can
must start after exactly one tiny probe; and a run where every item failed is `failed`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import is_preflight
from llm_server import Fault

from qatui.cli import main
from qatui.store.session import SessionStore

PAIRS = [{"id": f"p{i}", "question": f"What colour is thing {i}?", "references": [f"Thing {i} is blue."],
          "candidates": {"a": f"Thing {i} is blue.", "b": f"Thing {i} is red."}} for i in range(1, 4)]


@pytest.fixture
def fake_backbone(llm_server, tmp_path, monkeypatch):
    """A config whose backbone `fake` is the loopback server, its key in $FAKE_KEY; returns (server, config path)."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    config = tmp_path / "config.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      'api_key_env = "FAKE_KEY"\nmax_attempts = 2\ntimeout_s = 5\n'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    return llm_server, config


def run(capsys, config: Path, sessions: Path, *args: str) -> tuple[int, str, str]:
    data = config.parent / "pairs.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in PAIRS))
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--backbone", "fake",
                 *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_rejected_key_is_refused_before_a_session(fake_backbone, tmp_path, capsys) -> None:
    server, config = fake_backbone
    server.script(faults=["401"] * 5)
    sessions = tmp_path / "sessions"
    code, out, err = run(capsys, config, sessions, "--judge", "pairwise", "--limit", "2")
    assert code == 2 and "authentication failed (401)" in " ".join(err.split()) and "$FAKE_KEY" in err
    assert server.n_requests == 1  # one probe, not the run's retries
    assert not sessions.exists()
    assert "sk-test-not-a-real-key" not in err


def test_plan_checks_the_backbone_too(fake_backbone, tmp_path, capsys) -> None:
    server, config = fake_backbone
    server.script(faults=["401"])
    code, out, err = run(capsys, config, tmp_path / "s", "--judge", "pairwise", "--plan")
    assert code == 2 and "authentication failed" in err
    server.script(lambda body: "OK")
    before = server.n_requests
    code, out, err = run(capsys, config, tmp_path / "s", "--judge", "pairwise", "--limit", "2", "--plan", "--json")
    assert code == 0, err
    assert json.loads(out)["calls"]["pairwise"] == [4, 4]  # two pairs, both orders
    probe = server.requests[-1]
    assert server.n_requests == before + 1 and is_preflight(probe) and probe["max_tokens"] == 8  # the probe alone
    assert not (tmp_path / "s").exists()


def test_a_rate_limited_probe_passes_and_the_run_goes_on(fake_backbone, tmp_path, capsys) -> None:
    server, config = fake_backbone
    answer = json.dumps({"rationale": "A is closer to the reference", "choice": "A"})
    server.script(lambda body: answer, faults=["429"])
    code, out, err = run(capsys, config, tmp_path / "s", "--judge", "pairwise", "--limit", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["status"] == "completed" and data["judges"]["pairwise"]["n_failed"] == 0
    assert server.n_requests == 1 + 2  # the probe, then both orders of the one pair


def test_a_run_where_every_item_fails_is_failed_and_says_why(fake_backbone, tmp_path, capsys) -> None:
    server, config = fake_backbone
    server.script(lambda body: "OK" if is_preflight(body) else "I would rather not say.")
    sessions = tmp_path / "s"
    code, out, err = run(capsys, config, sessions, "--judge", "pairwise", "--limit", "3")
    flat = " ".join(out.split())
    assert code == 1, (out, err)
    assert "every item failed" in flat and "failed 3 items of pairwise" in flat
    [row] = SessionStore(sessions).list()
    assert row["status"] == "failed"
    code, out, err = run(capsys, config, tmp_path / "s2", "--judge", "pairwise", "--limit", "3", "--json")
    assert code == 1 and json.loads(out)["status"] == "failed"


def test_resume_checks_the_backbone_before_touching_the_session(fake_backbone, tmp_path, capsys, monkeypatch) -> None:
    server, config = fake_backbone
    server.script(lambda body: "OK" if is_preflight(body) else "no JSON here")
    sessions = tmp_path / "s"
    code, out, err = run(capsys, config, sessions, "--judge", "pairwise", "--limit", "2", "--json")
    session = json.loads(out)["session"]
    monkeypatch.delenv("FAKE_KEY")
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "sessions", "resume", session])
    err = capsys.readouterr().err
    assert code == 2 and "FAKE_KEY is not set" in err
    assert SessionStore(sessions).open(session).meta["status"] == "failed"  # untouched


def test_a_missing_key_and_a_refused_connection_are_refused_at_once(tmp_path, monkeypatch) -> None:
    """No key: LiteLLM's `validate_environment` says so without a request; a closed 127.0.0.1 port: one attempt.

    LiteLLM is imported first, so the figure is the check's own (the import is about 3 s, paid once per process)."""
    import socket
    import time

    from qatui.config import parse_config
    from qatui.llm._lazy import get_litellm
    from qatui.llm.client import make_client
    from qatui.llm.preflight import BackboneUnusable, preflight_backbone

    get_litellm()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("QATUI_TEST_KEY", "sk-test")
    with socket.socket() as probe:  # a port nothing listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = parse_config(f'[backbones.down]\nmodel = "openai/m"\napi_base = "http://127.0.0.1:{port}/v1"\n'
                          f'api_key_env = "QATUI_TEST_KEY"\n[backbones.ol]\nmodel = "ollama/qwen2.5"\n'
                          f'api_base = "http://127.0.0.1:{port}"\n', str(tmp_path / "c.toml"))
    for backbone, says in [("openai/gpt-4o-mini", "OPENAI_API_KEY"), ("down", "111"), ("ol", str(port))]:
        start = time.monotonic()
        with pytest.raises(BackboneUnusable) as refused:
            preflight_backbone(make_client(backbone, config))
        took = time.monotonic() - start
        assert says in str(refused.value) and took < 3.0, (backbone, took, str(refused.value))


def test_models_check_refuses_a_closed_port_at_once(tmp_path, monkeypatch, capsys) -> None:
    """`qatui models --check` asks each backbone as the preflight does (one attempt), never with the run's
    retries: a closed 127.0.0.1 port is reported in seconds, not after the backoff (about 26 s before)."""
    import socket
    import time

    from qatui.cli import main
    from qatui.llm._lazy import get_litellm

    get_litellm()
    monkeypatch.setenv("QATUI_TEST_KEY", "sk-test")
    with socket.socket() as probe:  # a port nothing listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.down]\nmodel = "openai/m"\napi_base = "http://127.0.0.1:{port}/v1"\n'
                      'api_key_env = "QATUI_TEST_KEY"\nmax_attempts = 6\n')
    start = time.monotonic()
    main(["--config", str(config), "models", "--check"])
    took = time.monotonic() - start
    out = " ".join(capsys.readouterr().out.split())
    assert "down FAIL backbone 'down'" in out and took < 20.0, (took, out)


def test_the_probe_waits_out_a_cold_start_longer_than_the_backbones_timeout(llm_server, tmp_path, capsys,
                                                                            monkeypatch) -> None:
    """The probe is a process's first request (LiteLLM loads the provider's code, a connection opens): a backbone
    whose `timeout_s` is 1 s is not refused because that first answer took 2.5 s; its run's own calls keep 1 s."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "config.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      'api_key_env = "FAKE_KEY"\nmax_attempts = 1\ntimeout_s = 1\n'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    answer = json.dumps({"rationale": "A is closer to the reference", "choice": "A"})
    llm_server.script(lambda body: answer, faults=[Fault("hang", seconds=2.5)])  # the probe, then every call at once
    code, out, err = run(capsys, config, tmp_path / "s", "--judge", "pairwise", "--limit", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["judges"]["pairwise"]["n_failed"] == 0
    llm_server.script(lambda body: answer, faults=["ok", Fault("hang", seconds=2.5)])  # a run's call past 1 s
    code, out, err = run(capsys, config, tmp_path / "s2", "--judge", "pairwise", "--limit", "1", "--json",
                         "--no-cache")
    assert json.loads(out)["judges"]["pairwise"]["n_failed"] == 1, out  # timed out at the backbone's 1 s


def test_a_backbone_whose_answers_are_cached_is_checked_at_the_first_miss_and_a_failing_one_stops_the_run(
        fake_backbone, tmp_path, capsys) -> None:
    """With the cache holding answers of the backbone, the live request waits for the run's first call the cache
    cannot answer: a fully cached rerun makes no request; a backbone that then fails it stops the run (exit 4):
    the items answered from the cache are saved, the others left pending (none failed), and a resume finishes."""
    server, config = fake_backbone
    answer = json.dumps({"rationale": "A is closer to the reference", "choice": "A"})
    server.script(lambda body: answer)
    sessions = tmp_path / "s"
    code, out, err = run(capsys, config, sessions, "--judge", "pairwise", "--limit", "2", "--json")
    assert code == 0, err
    assert server.n_requests == 1 + 2 * 2  # the check before the session (no answers cached yet), both orders twice
    code, out, err = run(capsys, config, sessions, "--judge", "pairwise", "--limit", "2", "--json")
    assert code == 0 and json.loads(out)["judges"]["pairwise"]["coverage"]["scored"] == 2, err
    assert server.n_requests == 5  # every call answered from the cache: no request at all

    server.script(faults=["401"] * 20)  # the key is now rejected
    before = server.n_requests
    code, out, err = run(capsys, config, sessions, "--judge", "pairwise", "--json")  # 3 items: the third not cached
    flat = " ".join(err.split())
    assert code == 4, (out, err)
    assert server.n_requests == before + 1  # the check alone: the calls behind it never sent
    assert "Stopped: backbone 'fake'" in flat and "authentication failed (401)" in flat
    stopped = json.loads(out)
    assert stopped["status"] == "stopped" and "401" in stopped["stopped"]
    assert stopped["judges"]["pairwise"]["coverage"] == {"items": 3, "scored": 2, "not_applicable": 0, "failed": 0,
                                                         "pending": 1}  # left pending, never failed
    assert f"qatui sessions resume {stopped['session']}" in flat and "sk-test-not-a-real-key" not in err
    session = SessionStore(sessions).open(stopped["session"])
    assert session.meta["status"] == "stopped" and "401" in session.meta["stopped"]
    assert set(session.verdicts("pairwise")) == {"p1", "p2"}

    main(["--config", str(config), "--sessions-dir", str(sessions), "sessions", "show", stopped["session"]])
    shown = " ".join(capsys.readouterr().out.split())
    assert "stopped: backbone 'fake'" in shown and f"resume once it answers: qatui sessions resume {stopped['session']}" in shown

    server.script(lambda body: answer)
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "sessions", "resume", stopped["session"],
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["status"] == "completed", err
    assert set(SessionStore(sessions).open(stopped["session"]).verdicts("pairwise")) == {"p1", "p2", "p3"}


def test_a_backbone_at_another_address_is_checked_before_any_session_though_the_cache_holds_answers(
        fake_backbone, tmp_path, capsys) -> None:
    """The answers the cache holds are a backbone's by model and api_base: a first run on the same model at another
    address (a typo in api_base, say) is still refused before its session exists."""
    server, config = fake_backbone
    answer = json.dumps({"rationale": "A is closer to the reference", "choice": "A"})
    server.script(lambda body: answer)
    code, out, err = run(capsys, config, tmp_path / "s", "--judge", "pairwise", "--limit", "1")
    assert code == 0, err
    config.write_text(config.read_text().replace(server.base_url, server.base_url.replace("/v1", "/v2")))
    sessions = tmp_path / "elsewhere"
    code, out, err = run(capsys, config, sessions, "--judge", "pairwise", "--limit", "1")
    assert code == 2 and "did not answer a one-line test request" in " ".join(err.split()), err
    assert not sessions.exists()


def test_a_table_whose_cached_backbone_fails_its_put_off_check_stops_with_exit_4(fake_backbone, tmp_path,
                                                                                   capsys) -> None:
    """`qatui table` runs its rows' sessions as `run` does: a backbone the cache holds answers of is checked at the
    first miss, and one that then fails stops the table (exit 4), saying how to finish the stopped session."""
    server, config = fake_backbone
    server.script(lambda body: json.dumps({"rationale": "A is closer to the reference", "choice": "A"}))
    data = config.parent / "pairs.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in PAIRS))
    sessions = tmp_path / "s"

    def table(limit: str) -> tuple[int, str]:
        code = main(["--config", str(config), "--sessions-dir", str(sessions), "table", str(data), "--judge", "pairwise",
                     "--backbone", "fake", "--limit", limit])
        return code, " ".join(capsys.readouterr().err.split())

    assert table("2")[0] == 0
    server.script(faults=["401"] * 20)
    before = server.n_requests
    code, err = table("3")
    assert code == 4 and "Stopped: backbone 'fake'" in err and "run the same `qatui table` again" in err, err
    assert server.n_requests == before + 1
    stopped = [row for row in SessionStore(sessions).list() if row["status"] == "stopped"]
    assert len(stopped) == 1 and stopped[0]["summary"]["pairwise"]["n_done"] == 2
