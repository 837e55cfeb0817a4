"""One writer per session, with real `qatui` processes against the loopback backbone (tests/llm_server.py).

Two resumes of one session started at the same moment: exactly one runs, the other is refused
in one line naming the first, and the session ends with every result. `sessions delete` of a
session a live run is writing is refused naming that run, which then finishes. After a SIGKILL,
`sessions show` and `list`, text and JSON, say "interrupted" and count what the shards hold.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from llm_server import Fault, FakeLLMServer

from qatui.llm.fence import block_texts
from qatui.store.session import SessionStore

N_ITEMS = 40
CONCURRENCY = 4


def _answer(body: dict) -> str:
    """Prefer the answer that starts with "Right", so every item gets a verdict."""
    text = body["messages"][-1]["content"]
    return json.dumps({"rationale": "scripted",
                       "choice": "A" if block_texts(text).get("Answer A", "").startswith("Right") else "B"})


def _setup(tmp_path: Path, server: FakeLLMServer) -> tuple[Path, Path, Path]:
    """(dataset, config, sessions dir) for `pairwise` on N_ITEMS pairs against `server`."""
    data = tmp_path / "sums.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Sum {i}?", "references": [f"Right {i}"],
                                        "candidates": {"a": f"Right {i}", "b": f"Wrong {i}"},
                                        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}}) + "\n"
                            for i in range(N_ITEMS)))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_concurrency = {CONCURRENCY}\n'
                      f'[cache]\nenabled = false\n[general]\nconcurrency = {CONCURRENCY}\n')
    return data, config, tmp_path / "s"


def _qatui(config: Path, sessions: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(sessions), *args]


def _env() -> dict[str, str]:
    return {**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "300"}


def _until(what: Callable[[], object], timeout_s: float = 60.0) -> object:
    """Poll `what` until it is truthy (bounded); its value."""
    deadline = time.monotonic() + timeout_s
    while not (value := what()):
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)
    return value


def _session_ids(sessions: Path) -> list[str]:
    """The sessions whose session.json is written."""
    return sorted(p.parent.name for p in sessions.glob("*/session.json"))


def _done_on_disk(sessions: Path, session_id: str) -> int:
    """Items with a verdict, read from the shards as a new process would."""
    session = SessionStore(sessions).open(session_id)
    return sum(1 for doc in session.results().values() if doc["status"] == "done")


def _killed_mid_run(tmp_path: Path, server: FakeLLMServer) -> tuple[Path, Path, str, int]:
    """A `run` SIGKILLed with 10 items judged and flushed (the rest hang): (config, sessions, id, done)."""
    data, config, sessions = _setup(tmp_path, server)
    def fault(_: int, body: dict) -> Fault | str:  # items q0..q9 (and the preflight) answer; the others hang
        asked = json.dumps(body)
        return "ok" if "Sum " not in asked or re.search(r"Sum [0-9]\?", asked) else Fault("hang", seconds=60)

    server.script(_answer, faults=fault)
    run = subprocess.Popen(_qatui(config, sessions, "run", str(data), "--judge", "pairwise", "--backbone", "fake"),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    try:
        session_id = _until(lambda: _session_ids(sessions))[0]
        _until(lambda: _done_on_disk(sessions, session_id) == 10)
        # and the listing's count reaches session.json (written right after the shards) before the kill
        _until(lambda: sum(d["n_done"] for d in SessionStore(sessions).list()[0]["summary"].values()) == 10)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    return config, sessions, session_id, 10


def test_two_resumes_at_once_one_runs_the_other_is_refused_naming_it(tmp_path: Path) -> None:
    with FakeLLMServer(max_lifetime_s=240.0) as server:
        config, sessions, session_id, _ = _killed_mid_run(tmp_path, server)
        server.script(_answer, latency_s=0.05)  # every call answers now, slowly enough for the runs to overlap
        command = _qatui(config, sessions, "sessions", "resume", session_id)
        resumes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
                   for _ in range(2)]
        outcomes = [(p.pid, p.wait(timeout=180), p.communicate()[1]) for p in resumes]
    codes = sorted(code for _, code, _ in outcomes)
    assert codes == [0, 2], outcomes  # exactly one ran
    (winner,) = [pid for pid, code, _ in outcomes if code == 0]
    (refusal,) = [err.strip() for _, code, err in outcomes if code == 2]
    assert len(refusal.splitlines()) == 1 and f"being written by process {winner}" in refusal, refusal
    store = SessionStore(sessions)
    assert _done_on_disk(sessions, session_id) == N_ITEMS  # every result kept, none overwritten
    shown = subprocess.run(_qatui(config, sessions, "sessions", "show", session_id, "--json"),
                           capture_output=True, text=True, env=_env(), timeout=120)
    doc = json.loads(shown.stdout)
    assert doc["status"] == "completed" and doc["judges"]["pairwise"]["coverage"]["scored"] == N_ITEMS
    assert store.open(session_id).meta["status"] == "completed"


def test_delete_is_refused_while_a_run_writes_the_session_which_then_finishes(tmp_path: Path) -> None:
    with FakeLLMServer(_answer, latency_s=0.1, max_lifetime_s=240.0) as server:
        data, config, sessions = _setup(tmp_path, server)
        run = subprocess.Popen(_qatui(config, sessions, "run", str(data), "--judge", "pairwise", "--backbone",
                                      "fake", "--json"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=_env())
        session_id = _until(lambda: _session_ids(sessions))[0]
        _until(lambda: server.n_requests > 4)  # judging
        deleted = subprocess.run(_qatui(config, sessions, "sessions", "delete", session_id, "--yes"),
                                 capture_output=True, text=True, env=_env(), timeout=120)
        out, _ = run.communicate(timeout=180)
    assert deleted.returncode == 2, deleted
    refusal = deleted.stderr.strip()
    assert len(refusal.splitlines()) == 1 and f"being written by process {run.pid}" in refusal, refusal
    assert run.returncode == 0 and json.loads(out)["judges"]["pairwise"]["coverage"]["scored"] == N_ITEMS
    again = subprocess.run(_qatui(config, sessions, "sessions", "delete", session_id, "--yes"),
                           capture_output=True, text=True, env=_env(), timeout=120)
    assert again.returncode == 0 and not (sessions / session_id).exists()  # the run ended: deleting is allowed


def test_delete_never_goes_through_a_link_to_a_session_kept_elsewhere(tmp_path: Path) -> None:
    """A session folder that is a link (a session kept on another disk) is refused in one line, and both the link
    and the folder it points to are left whole; before, `shutil.rmtree` raised through to a traceback."""
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Sum {i}?", "references": [f"Right {i}"],
                                        "candidates": {"a": f"Right {i}", "b": f"Wrong {i} and more"}}) + "\n"
                            for i in range(3)))
    sessions, kept = tmp_path / "s", tmp_path / "other-disk"
    command = [sys.executable, "-m", "qatui", "--sessions-dir", str(sessions)]
    made = subprocess.run([*command, "run", str(data), "--judge", "length", "--json"], capture_output=True,
                          text=True, env=_env(), timeout=120)
    assert made.returncode == 0, made.stderr
    (session_id,) = _session_ids(sessions)
    kept.mkdir()
    (sessions / session_id).rename(kept / session_id)
    (sessions / "linked").symlink_to(kept / session_id, target_is_directory=True)
    files = sorted(p.name for p in (kept / session_id).iterdir())
    deleted = subprocess.run([*command, "sessions", "delete", "linked", "--yes"], capture_output=True, text=True,
                             env=_env(), timeout=120)
    assert deleted.returncode == 2 and "Traceback" not in deleted.stderr, deleted.stderr
    assert len(deleted.stderr.strip().splitlines()) == 1 and "is a link to" in deleted.stderr
    assert (sessions / "linked").is_symlink() and sorted(p.name for p in (kept / session_id).iterdir()) == files


def test_after_sigkill_show_and_list_say_interrupted_and_count_the_shards(tmp_path: Path) -> None:
    with FakeLLMServer(max_lifetime_s=240.0) as server:
        config, sessions, session_id, done = _killed_mid_run(tmp_path, server)
    assert _done_on_disk(sessions, session_id) == done

    def cli(*args: str) -> str:
        result = subprocess.run(_qatui(config, sessions, "sessions", *args), capture_output=True, text=True,
                                env=_env(), timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout

    shown = json.loads(cli("show", session_id, "--json"))
    assert shown["status"] == "interrupted"
    assert shown["judges"]["pairwise"]["coverage"] == {"items": N_ITEMS, "scored": done, "not_applicable": 0,
                                                      "failed": 0, "pending": N_ITEMS - done}
    text = cli("show", session_id)
    assert "interrupted" in text and f"scored {done} of {N_ITEMS}" in text and "running" not in text
    assert "metrics are computed when the run ends" in text  # never the figures of an earlier end
    (listed,) = json.loads(cli("list", "--json"))
    assert listed["status"] == "interrupted" and listed["summary"]["pairwise"]["n_done"] == done
    row = [line for line in cli("list").splitlines() if session_id in line]
    assert row and f"{done}/{N_ITEMS}" in row[0] and "interrupted" in row[0], row


async def test_the_tui_refuses_to_delete_a_session_another_process_writes(tmp_path: Path, monkeypatch) -> None:
    """Home's d names the live writer and asks nothing; once it dies, d deletes as before."""
    from fakes import wait_until
    from tui_support import freeze_time, lexical_sessions

    from qatui.config import Config
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.confirm import ConfirmScreen
    from qatui.tui.widgets.sessions_table import SessionsTable

    freeze_time(monkeypatch)
    store = SessionStore(tmp_path / "sessions")
    await asyncio.to_thread(lexical_sessions, store, Config())  # it runs its own event loop
    app = QatuiApp(Config(), store)
    writer = None
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            rows = lambda: app.screen.query_one(SessionsTable).row_count  # noqa: E731
            await wait_until(pilot, lambda: rows() == 2)
            chosen = app.screen._highlighted()["id"]
            holds = (f"import time; from qatui.store.session import SessionStore; "
                     f"s = SessionStore({str(store.root)!r}).open({chosen!r}); s.take_writer(); "
                     "print('held', flush=True); time.sleep(60)")
            writer = subprocess.Popen([sys.executable, "-c", holds], stdout=subprocess.PIPE, text=True)
            assert writer.stdout.readline().strip() == "held"
            await pilot.press("d")
            await wait_until(pilot, lambda: any(f"being written by process {writer.pid}" in str(n.message)
                                                for n in app._notifications))
            assert not isinstance(app.screen, ConfirmScreen) and len(store.list()) == 2
            writer.kill()  # SIGKILL: the lock goes with it
            writer.wait()
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await wait_until(pilot, lambda: rows() == 1)
    finally:
        if writer is not None:
            writer.kill()
            writer.wait()
    assert chosen not in [m["id"] for m in store.list()]


def test_a_resume_reads_the_session_only_once_it_holds_the_lock(tmp_path, monkeypatch) -> None:
    """A resume read the session, then took its lock: a run that flushed its last items and ended in between had
    them read away, since the resume held the shard as it was and its first flush rewrote it (17 of 40 finished
    items lost, the session then shown completed). `open_writer` takes the lock first: the items stay."""
    from test_store import verdict

    from qatui.store.writer_lock import WriterLock

    store = SessionStore(tmp_path)
    first = store.create({})
    for i in range(3):
        first.record_verdict(verdict(f"q{i}"), [])
    first.flush()
    take = WriterLock.acquire

    def as_the_run_ends(lock: WriterLock, *args: str) -> None:
        if first._writer.held:  # the run it follows: three more items on disk, then it lets go
            for i in range(3, 6):
                first.record_verdict(verdict(f"q{i}"), [])
            first.close()
        take(lock, *args)

    monkeypatch.setattr(WriterLock, "acquire", as_the_run_ends)
    resumed = store.open_writer(first.id)
    resumed.record_verdict(verdict("q6"), [])
    resumed.close()
    assert set(store.open(first.id).verdicts("minoseval")) == {f"q{i}" for i in range(7)}


def test_a_lock_file_that_is_a_fifo_or_a_link_hangs_nothing_and_truncates_nothing(tmp_path, capsys) -> None:
    """A FIFO in place of `.writer.lock` hung `sessions list`, `show` and `resume` for ever (the probe opened it and
    waited for a writer); a link in its place had the file it names truncated by the writer clearing its pid. Now
    the listing goes on, and a resume is refused in one line naming the file."""
    from qatui.cli import main

    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y z"}}\n')
    store = SessionStore(tmp_path / "s")
    for name in ("fifo", "linked"):
        assert main(["run", str(data), "--judge", "length", "--session", name, "--sessions-dir", str(store.root)]) == 0
    fifo, linked = store.open("fifo"), store.open("linked")
    (fifo.path / ".writer.lock").unlink(missing_ok=True)
    os.mkfifo(fifo.path / ".writer.lock")
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (linked.path / ".writer.lock").unlink(missing_ok=True)
    (linked.path / ".writer.lock").symlink_to(precious)
    base = [sys.executable, "-m", "qatui", "--sessions-dir", str(tmp_path / "s")]
    listed = subprocess.run([*base, "sessions", "list"], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "fifo" in listed.stdout and "linked" in listed.stdout, listed
    for name, why in (("fifo", "is a named pipe (FIFO), not a lock file"), ("linked", "is a link, not a lock file")):
        resumed = subprocess.run([*base, "sessions", "resume", name], capture_output=True, text=True, timeout=120)
        err = " ".join(resumed.stderr.split())
        assert resumed.returncode == 2 and why in err and len(resumed.stderr.strip().splitlines()) == 1, resumed
    assert precious.read_text() == "keep me\n"
