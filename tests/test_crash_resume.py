"""SIGKILL at random moments, twenty times, then resume: nothing finished is lost, nothing cached is asked again.

A real `qatui` process judges pairs with the `pairwise` judge against a loopback backbone
(tests/llm_server.py) and is killed at a random moment (shard writes included, they happen
after every batch); after each kill the session loads, keeps every item it had finished,
and a resume carries on. At the end the metrics equal those of an uninterrupted run, and a
prompt is sent again only if it was in flight when the process died.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fakes import is_preflight, poll
from llm_server import FakeLLMServer

from qatui.llm.fence import block_texts
from qatui.store.session import SessionStore

N_ITEMS = 300
KILLS = 20
CONCURRENCY = 4


def _answer(body: dict) -> str:
    """Prefer the answer that names the right sum (so the metrics mean something and are deterministic)."""
    text = body["messages"][-1]["content"]
    return json.dumps({"rationale": "scripted",
                       "choice": "A" if block_texts(text).get("Answer A", "").startswith("Right") else "B"})


def _items(path: Path) -> Path:
    with path.open("w") as f:
        for i in range(N_ITEMS):
            f.write(json.dumps({"id": f"q{i}", "question": f"Sum {i}?", "references": [f"Right {2 * i}"],
                                "candidates": {"a": f"Right {2 * i}", "b": f"Wrong {2 * i + 1}"},
                                "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}}) + "\n")
    return path


def _qatui(config: Path, sessions: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(sessions), *args]


def _finished(sessions: Path, session_id: str) -> dict[str, int]:
    """Item id -> the sequence number of its stored verdict, read from disk as a new process would."""
    session = SessionStore(sessions).open(session_id)
    return {item: doc["seq"] for (item, _), doc in session.results().items() if doc["status"] == "done"}


@pytest.mark.slow
def test_twenty_random_kills_lose_nothing_and_end_where_an_uninterrupted_run_ends(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    rng = random.Random(11)
    data = _items(tmp_path / "sums.jsonl")
    with FakeLLMServer(_answer, latency_s=0.1, max_lifetime_s=500.0, max_requests=5_000) as server:
        config = tmp_path / "c.toml"
        config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                          f'api_key_env = "FAKE_KEY"\nmax_concurrency = {CONCURRENCY}\n'
                          f'[cache]\ndir = "{tmp_path / "cache"}"\n[general]\nconcurrency = {CONCURRENCY}\n')
        sessions = tmp_path / "s"
        command = _qatui(config, sessions, "run", str(data), "--judge", "pairwise", "--backbone", "fake")
        session_id = None
        finished: dict[str, int] = {}
        kills = 0
        for kill in range(KILLS):
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            started = len(server.requests)

            def asked() -> int:
                """The run's own requests since this process started (its preflight comes before its session)."""
                return sum(not is_preflight(body) for body in server.requests[started:])

            # judging, then killed when a random number of its requests has arrived: a random moment of the run
            # (between flushes or in one) however fast this machine is, where a random time could pass on a busy
            # machine before any item was finished, twenty times over
            kill_at = rng.randint(1, 24)
            poll(lambda: asked() >= kill_at or proc.poll() is not None, timeout_s=120, interval_s=0.005)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
            if session_id is None:
                (session_id,) = [p.name for p in sessions.iterdir()]
                command = _qatui(config, sessions, "sessions", "resume", session_id)
            now = _finished(sessions, session_id)  # the session loads after every kill
            assert all(now.get(item) == seq for item, seq in finished.items()), f"kill {kill}: a finished item changed"
            finished = now
            if len(finished) == N_ITEMS:
                break
        assert kills == KILLS and 0 < len(finished) < N_ITEMS  # killed every time, mid-run
        done = subprocess.run(_qatui(config, sessions, "sessions", "resume", session_id, "--json"),
                              capture_output=True, text=True, timeout=300)
        interrupted = json.loads(done.stdout) if done.stdout.strip().startswith("{") else None
        if interrupted is None:  # nothing left to resume: read the finished session
            shown = subprocess.run(_qatui(config, sessions, "sessions", "show", session_id, "--json"),
                                   capture_output=True, text=True, timeout=120)
            interrupted = json.loads(shown.stdout)
        assert interrupted["status"] == "completed"
        assert interrupted["judges"]["pairwise"]["coverage"]["scored"] == N_ITEMS
        repeated = sum(n - 1 for n in Counter(json.dumps(b["messages"]) for b in server.requests
                                              if not is_preflight(b)).values() if n > 1)
        assert repeated <= KILLS * CONCURRENCY  # only calls in flight at a kill can be asked twice

        clean = subprocess.run(_qatui(config, tmp_path / "clean", "run", str(data), "--judge", "pairwise",
                                      "--backbone", "fake", "--json", "--no-cache"),
                               capture_output=True, text=True, timeout=300)
        uninterrupted = json.loads(clean.stdout)
    assert uninterrupted["judges"]["pairwise"]["metrics"] == interrupted["judges"]["pairwise"]["metrics"]


def test_a_second_process_cannot_resume_a_session_being_written(tmp_path, capsys) -> None:
    """Two writers would corrupt a session: refused while its writer lives; a writer killed with SIGKILL leaves no lock."""
    from qatui.cli import main

    data = tmp_path / "d.jsonl"
    data.write_text("".join(line for i, line in enumerate(_items(tmp_path / "all.jsonl").read_text().splitlines(True))
                            if i < 3))
    sessions = tmp_path / "s"
    assert main(["run", str(data), "--judge", "bleu", "--sessions-dir", str(sessions), "--json"]) == 0
    session_id = json.loads(capsys.readouterr().out)["session"]
    holds = (f"import sys, time; from qatui.store.session import SessionStore; "
             f"s = SessionStore({str(sessions)!r}).open({session_id!r}); s.take_writer(); print('held', flush=True); "
             "time.sleep(60)")
    writer = subprocess.Popen([sys.executable, "-c", holds], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "held"  # as a live run holds it
        code = main(["sessions", "resume", session_id, "--sessions-dir", str(sessions)])
        err = " ".join(capsys.readouterr().err.split())
        assert code == 2 and f"is being written by process {writer.pid}" in err
    finally:
        writer.kill()  # SIGKILL: no chance to let go of anything
        writer.wait()
    code = main(["sessions", "resume", session_id, "--sessions-dir", str(sessions)])  # the writer died: no lock left
    assert code == 0 and "nothing to resume" in capsys.readouterr().err
