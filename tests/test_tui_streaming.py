"""The live run streams tokens only for the task whose transcript is on screen (a streamed token costs a redraw).

A streamed call costs LiteLLM about three times the CPU of a plain one (it builds objects for
every chunk), and a screen shows one transcript at a time. So the TUI streams the calls of the
selected task while its transcript is shown, and asks every other call as one plain request; its
answer still reaches the transcript, whole, when the call ends. Over real HTTP against the
loopback server, whose own log says which requests were streamed and for which item.
"""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from fakes import is_preflight, laid_out, wait_until
from tui_support import pairwise_job_on_server

N_ITEMS = 6
ANSWER = json.dumps({"rationale": "A has the right sum.", "choice": "A"})


def _asked(llm_server) -> list[tuple[str, bool]]:
    """(item id, streamed) of every judging request the server saw (the preflight probe left out)."""
    out = []
    for body in llm_server.requests:
        if is_preflight(body):
            continue
        text = json.dumps(body["messages"])
        [item] = [f"q{i}" for i in range(N_ITEMS) if f"What is {i} plus {i}?" in text]
        out.append((item, bool(body.get("stream"))))
    return out


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_only_the_task_whose_transcript_is_on_screen_streams(llm_server, tmp_path, monkeypatch, size) -> None:
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.run import RunScreen
    from qatui.tui.widgets.item_browser import ItemBrowser
    from qatui.tui.widgets.transcript_panel import TranscriptPanel

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    gate = threading.Event()

    async def held(body: dict) -> str:
        if not is_preflight(body):
            while not gate.is_set():  # judging calls wait until the screen is up and the test lets them go
                await asyncio.sleep(0.01)
        return ANSWER

    llm_server.script(held)
    _, config, store, job = await pairwise_job_on_server(tmp_path, llm_server.base_url, N_ITEMS)
    app = QatuiApp(config, store, job=job)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state is not None)
        screen = app.screen
        await laid_out(pilot, screen.query_one(ItemBrowser))
        shown = screen.query_one(TranscriptPanel).display
        assert shown == (size == (120, 40))  # 80x24 is too short for the transcript: hidden until t
        await wait_until(pilot, lambda: any(not is_preflight(body) for body in llm_server.requests),
                         "the run's first call held at the server")
        gate.set()
        await wait_until(pilot, lambda: screen.handle.ended.is_set() and screen.ended is not None, timeout=60)
        first = screen.state.tasks[("q0", "pairwise")]
        transcript = "".join(first.transcript)
    asked = _asked(llm_server)
    assert len(asked) == 2 * N_ITEMS and screen.ended is not None
    streamed = {item for item, was in asked if was}
    assert streamed == ({"q0"} if shown else set())  # q0 is selected first; nobody watches the others
    assert transcript.count('"choice": "A"') == 2  # both of q0's answers reached its transcript, streamed or not
    session = store.open(job.session.id)
    assert len(session.verdicts("pairwise")) == N_ITEMS
