"""Choosing how a batch session's calls go: `--batch-retry {batch,direct}` and `sessions resume --no-batch`.

Through qatui's real CLI (`qatui.cli.main`, and a `qatui` process where a run is interrupted) against the scripted
OpenAI-compatible server with its files and batches endpoints (tests/llm_batches.py), which counts every request:
a request answered by a batch is never asked again, and one a batch did not answer is asked once, directly.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fakes import is_preflight, poll
from test_batch import completions, config, dataset, run, server, verdicts  # noqa: F401 - `server` is a fixture

from qatui.cli import main
from qatui.store.session import SessionStore

pytestmark = pytest.mark.timeout(300)


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("configured", "flag"), [("batch", "direct"), ("direct", "batch")])
def test_batch_retry_flag_overrides_the_config_is_stored_and_decides_how_expired_requests_are_asked(
        server, tmp_path, capsys, configured, flag) -> None:  # noqa: F811 - the fixture
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    server.script_batches(expire={0})  # the first batch answers half its requests, then expires
    batched = run(capsys, config(tmp_path, server, "cache", retry=configured), sessions, data, "--judge", "pairwise",
                  "--batch", "--batch-retry", flag)
    assert batched["status"] == "completed" and batched["judges"]["pairwise"]["n_failed"] == 0
    meta = SessionStore(sessions).open(batched["session"]).meta
    first = meta["batches"][0]
    assert first["status"] == "expired" and first["retried"] == first["requests"] - first["requests"] // 2 > 0
    if flag == "direct":  # each expired request asked directly, once; no second batch
        assert completions(server) == first["retried"] and server.n_batches == 1
    else:  # the expired ones went into a later batch, none directly
        assert completions(server) == 0 and server.n_batches >= 2
        assert max(server.batch_submitted.values()) == 2
    assert meta["batch_retry"] == flag and batched["batch_retry"] == flag
    code, out, _ = cli(capsys, "--sessions-dir", str(sessions), "sessions", "show", batched["session"])
    assert code == 0 and f"--batch-retry {flag}" in out


NO_BATCH = "--batch-retry says how a batch run asks its failed requests again: add --batch"


@pytest.mark.parametrize(("command", "args", "said"), [
    ("run", ("--batch", "--batch-retry", "sometimes"), "argument --batch-retry: invalid choice: 'sometimes'"),
    ("run", ("--batch-retry", "direct"), NO_BATCH),
    ("run", ("--batch-retry", "direct", "--plan"), NO_BATCH),
    ("table", ("--batch-retry", "batch"), NO_BATCH),
    ("table", ("--batch", "--batch-retry", ""), "argument --batch-retry: invalid choice: ''"),
])
def test_a_bad_batch_retry_is_refused_in_one_line_before_any_work(server, tmp_path, capsys, command, args,  # noqa: F811
                                                                  said) -> None:
    sessions = tmp_path / "sessions"
    code, _, err = cli(capsys, "--config", str(config(tmp_path, server, "cache")), "--sessions-dir", str(sessions),
                       command, str(dataset(tmp_path)), "--backbone", "fake", "--judge", "pairwise", *args)
    assert code == 2 and said in err and "Traceback" not in err, err
    assert server.n_files == 0 and completions(server) == 0
    assert not sessions.exists() or not any(sessions.iterdir())


def _messages(body: dict) -> str:
    return json.dumps(body["messages"], sort_keys=True, ensure_ascii=False)


def test_resume_no_batch_cancels_the_pending_batch_keeps_what_it_answered_and_asks_only_the_rest_directly(
        server, tmp_path, capsys) -> None:  # noqa: F811 - the fixture
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    direct = run(capsys, config(tmp_path, server, "direct-cache"), sessions, data, "--judge", "pairwise")
    conf = config(tmp_path, server, "cache", poll_s=0.1)
    server.script_batches(hold=True)  # submitted, then pending until cancelled
    root = str(Path(__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "qatui", "--config", str(conf), "--sessions-dir", str(sessions),
                             "run", str(data), "--judge", "pairwise", "--backbone", "fake", "--batch"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        poll(lambda: server.n_batch_polls >= 2 or proc.poll() is not None, timeout_s=60)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    session_id = next(s["id"] for s in SessionStore(sessions).list() if s["id"] != direct["session"])
    assert server.n_batches == 1 and server.n_cancels == 0
    asked_before = len(server.requests)
    code, _, err = cli(capsys, "--config", str(conf), "--sessions-dir", str(sessions), "sessions", "resume",
                       session_id, "--no-batch", "--batch-retry", "direct")
    assert code == 2 and f"session {session_id} resumes directly: add --batch" in err, err
    assert server.n_cancels == 0 and len(server.requests) == asked_before  # refused before any work

    code, out, err = cli(capsys, "--config", str(conf), "--sessions-dir", str(sessions), "sessions", "resume",
                         session_id, "--no-batch", "--json")
    assert code == 0, err
    resumed = json.loads(out)
    assert resumed["status"] == "completed" and resumed["judges"]["pairwise"]["n_failed"] == 0
    assert server.n_batches == 1 and server.n_cancels == 1  # nothing submitted again; the pending batch cancelled
    answered = set(server.batch_answered)
    unanswered = [body for key, body in server.batch_requests.items() if key not in answered]
    assert answered and unanswered  # the batch answered half before its cancel took effect
    asked_directly = [body for body in server.requests[asked_before:] if not is_preflight(body)]
    # Exactly the requests the batch did not answer, each once; none it answered (those are paid for and used).
    assert Counter(map(_messages, asked_directly)) == Counter(map(_messages, unanswered))
    assert verdicts(sessions, session_id, "pairwise") == verdicts(sessions, direct["session"], "pairwise")
    meta = SessionStore(sessions).open(session_id).meta
    (batch,) = meta["batches"]
    assert batch["status"] == "cancelled" and batch["collected"] and batch["cancel_asked"]
    assert meta["batch"] is False and resumed["batch"] is False
    code, out, _ = cli(capsys, "--sessions-dir", str(sessions), "sessions", "show", session_id)
    assert "off (resumed with --no-batch)" in out and "cancelled by a resume with --no-batch" in out


async def test_new_run_s_retry_choice_shows_with_the_batch_switch_and_starts_the_run_as_batch_retry_does(
        server, tmp_path) -> None:  # noqa: F811 - the fixture
    """New run: the choice of how failed batch requests are asked again is shown only while the batch switch is
    on, defaults to `[batch] retry`, and "directly" starts the run as `--batch --batch-retry direct` does: stored
    with the session, and the requests of an expired batch asked directly (counted by the server)."""
    from fakes import settle, wait_until
    from textual.widgets import Checkbox, Select, SelectionList

    from qatui.config import parse_config
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.home import HomeScreen
    from qatui.tui.screens.new_run import NewRunScreen
    from qatui.tui.screens.run import RunScreen

    server.script_batches(expire={0})  # the first batch answers half its requests, then expires
    settings = parse_config(config(tmp_path, server, "cache", retry="batch").read_text(), "test.toml")
    store = SessionStore(tmp_path / "sessions")
    app = QatuiApp(settings, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("n")
        screen = app.screen
        assert isinstance(screen, NewRunScreen)
        await wait_until(pilot, lambda: "pairwise" in screen.judges and screen.dataset is not None)
        listing = screen.query_one("#judges", SelectionList)
        listing.deselect("minos")
        listing.select("pairwise")
        await pilot.press("f4")
        screen.query_one("#backbone").value = "fake"
        screen.query_one("#limit").value = "2"
        retry = screen.query_one("#batch-retry", Select)
        await settle(pilot, lambda: "pairwise" in str(screen.query_one("#plan").content), "the plan line")
        assert not retry.display and retry.value == "batch"  # hidden with the switch off; the config's default
        screen.query_one("#batch", Checkbox).value = True
        await settle(pilot, lambda: retry.display, "the retry choice shown")
        retry.value = "direct"
        await settle(pilot, lambda: "batch · retry direct" in str(screen.query_one("#plan").content), "the plan line")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen), timeout=60)
        await wait_until(pilot, lambda: app.screen.ended is not None, "the run's end", timeout=90)
        (entry,) = store.list()
    assert entry["batch"] is True and entry["batch_retry"] == "direct" and entry["status"] == "completed"
    first = entry["batches"][0]
    assert first["status"] == "expired" and first["retried"] > 0
    assert completions(server) == first["retried"] and server.n_batches == 1  # asked directly, no second batch
