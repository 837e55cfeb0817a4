"""Quitting the TUI in the middle of a live run: a clean stop, nothing finished lost, then a CLI resume finishes it.

A pairwise run over HTTP against a loopback backbone that answers only when the test lets it
(one permit per call), so the run is exactly mid-way when ctrl+q is pressed. After "Cancel run
and quit" the app waits for the call in flight (its answer is cached and its cost recorded), then
exits with status 0; ctrl+q again while it waits stops at once, and that call is asked again. The
session on disk is `cancelled` (resumable) and holds every item the screen showed done; `qatui
sessions resume` then asks only for the rest.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from qatui.cli import main
from fakes import Gate, is_preflight, wait_until
from tui_support import pairwise_job_on_server

N_ITEMS = 10


@pytest.mark.parametrize("stop", ["waiting for the call in flight", "now, at a second ctrl+q"])
async def test_quitting_mid_run_saves_the_finished_items_and_a_resume_completes_the_session(
        llm_server, tmp_path, monkeypatch, capsys, stop: str) -> None:
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.confirm import ConfirmScreen
    from qatui.tui.screens.run import RunScreen

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    gate = Gate()
    answer = json.dumps({"rationale": "A has the right sum.", "choice": "A"})

    async def gated(body: dict) -> str:
        while not is_preflight(body) and not gate.acquire():  # the preflight's request passes
            await asyncio.sleep(0.01)
        return answer

    llm_server.script(gated)
    config_path, config, store, job = await pairwise_job_on_server(tmp_path, llm_server.base_url, N_ITEMS)
    app = QatuiApp(config, store, job=job)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state is not None)
        screen = app.screen
        started = lambda: sum(task.status in ("running", "done") for task in screen.state.tasks.values())  # noqa: E731
        while started() < 4:  # call by call, until the fourth item starts (one at a time: three are finished)
            gate.release()
            await wait_until(pilot, lambda: not gate.free or started() >= 4, "the call let through")
        await wait_until(pilot, lambda: screen.state.count("done") >= 3)  # verdicts may wait for a shared flush
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")  # "Cancel run and quit": the call in flight is waited for, its answer kept
        await wait_until(pilot, lambda: any(n.title == "Stopping" for n in app._notifications), "the stop said")
        assert not screen.handle.ended.is_set() and app.return_code is None  # held at the gate: waited for
        in_flight = [json.dumps(b["messages"]) for b in llm_server.requests if not is_preflight(b)][-1]
        sent = len(llm_server.requests)
        if stop == "waiting for the call in flight":
            while not screen.handle.ended.is_set():  # the answers held at the gate arrive, one by one
                gate.release()
                await wait_until(pilot, lambda: not gate.free or screen.handle.ended.is_set(), "the call let through")
            assert len(llm_server.requests) == sent  # no call started after the stop
        else:
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the stop-now question")
            assert "Stop now, without waiting" in app.screen.question
            await pilot.press("y")
        await wait_until(pilot, lambda: screen.handle.ended.is_set())
        shown_done = {key[0] for key, task in screen.state.tasks.items() if task.status == "done"}
        asked_before = {json.dumps(b["messages"]) for b in llm_server.requests if not is_preflight(b)}
    assert app.return_code == 0
    session = store.open(job.session.id)
    stored = set(session.verdicts("pairwise"))
    assert session.meta["status"] == "cancelled"  # resumable: `sessions resume` and Home's r take it
    assert shown_done <= stored and 3 <= len(stored) < N_ITEMS  # nothing the screen showed finished was lost
    session.close()

    llm_server.script(lambda body: answer)  # no gate any more
    before = len(llm_server.requests)
    code = await asyncio.to_thread(main, ["--config", str(config_path), "--sessions-dir", str(store.root),
                                          "sessions", "resume", job.session.id, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "completed"
    assert out["judges"]["pairwise"]["coverage"]["scored"] == N_ITEMS
    asked = {json.dumps(b["messages"]) for b in llm_server.requests[before:] if not is_preflight(b)}
    assert not any(f"What is {item[1:]} plus" in text for text in asked for item in stored)  # finished: not asked
    if stop == "waiting for the call in flight":
        assert not asked & asked_before  # the answer waited for came from the call cache: nothing paid twice
    else:
        assert in_flight in asked  # stopped without it: asked (and paid) again, as the question said
    session = store.open(job.session.id)
    assert session.meta["status"] == "completed" and len(session.verdicts("pairwise")) == N_ITEMS
