"""A jury in the workbench: each member's verdict arrives live in the jury panel with where the members split,
and the members' agreement sits beside the jury's agreement with people; snapshots at 80x24 and 120x40."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from test_tui_snapshots import settle
from tui_support import freeze_time, run_headless, scripted_resources

from qatui.config import Config
from qatui.data.loaders import load_dataset
from qatui.engine.jobs import start_run
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.clipboard import panel_text
from qatui.tui.screens.run import RunScreen
from qatui.tui.widgets.jury_panel import JuryPanel
from qatui.tui.widgets.run_header import RunHeader

SIZES = [(80, 24), (120, 40)]
JURY = {"jury": {"members": ["pairwise@local/smollm2", "rouge-l", "length"]}}


def dataset(folder: Path) -> Path:
    """Two pairs without a reference (rouge-l not applicable), as LFQA-Eval's, and one ranking item with one."""
    items = [
        {"id": "bugs", "question": "Why do bugs live under rocks?",
         "candidates": {"a": "Bugs live under rocks to hide.", "b": "Humidity: the air stays damp there, and in the "
                                                                     "open they dry out fast."},
         "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["B", "B"]}},
        {"id": "tides", "question": "What causes the tides?",
         "candidates": {"a": "Mostly the Moon's gravity pulling on the oceans, and a little the Sun's.",
                        "b": "The wind."},
         "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}},
        {"id": "salt", "question": "What is table salt made of?", "references": ["Sodium chloride: sodium and chlorine."],
         "candidates": {"r1": "Sodium and chlorine, as sodium chloride.", "r2": "Sugar.",
                        "r3": "It is sodium chloride, made of the elements sodium and chlorine bonded together."},
         "gold": {"kind": "ranking", "tiers": [["r1"], ["r3"], ["r2"]]}},
    ]
    path = folder / "jury.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def jury_job(store: SessionStore, config: Config, data: Path, gate: threading.Semaphore | None = None):
    return start_run(store, load_dataset(data), ["jury"], config, concurrency=1, judge_options=JURY,
                     resources=scripted_resources(config, gate))


async def test_members_arrive_live_and_the_split_shows(tmp_path) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    gate = threading.Semaphore(0)  # the pairwise member waits; rouge-l and length answer at once
    job = jury_job(store, config, dataset(tmp_path), gate)
    app = QatuiApp(config, store, job=job, make_resources=lambda: scripted_resources(config))
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 20
        while not (isinstance(app.screen, RunScreen) and app.screen.state is not None
                   and len(app.screen.state.tasks[("bugs", "jury")].members) == 2):
            await pilot.pause(0.05)
            assert time.monotonic() < deadline
        screen = app.screen
        panel = screen.query_one(JuryPanel)
        await pilot.pause(0.2)
        text = panel_text(panel)
        assert panel.display and "rouge-l" in text and "n/a" in text and "length" in text
        assert "members still judging" in text and "pairwise@local/smollm2" not in text
        gate.release(100)
        while screen.ended is None:
            await pilot.pause(0.05)
            assert time.monotonic() < deadline
        await pilot.pause(0.2)
        text = panel_text(panel)
        assert "pairwise@local/smollm2" in text and "still judging" not in text
        # bugs: the scripted backbone, with no reference, prefers the answer sharing the question's words, length
        # the longer one: the two that answered split, and there is no strict majority
        assert "split:" in text and "no strict majority: tie" in text
        header = panel_text_of(screen.query_one(RunHeader))
        assert "members' agreement" in header and "alpha" in header


def panel_text_of(widget) -> str:
    """Every Static line a header shows, as plain text."""
    return "\n".join(str(s.render()) for s in widget.query("Static"))


@pytest.fixture
def jury_session(tmp_path, monkeypatch) -> SessionStore:
    """20261122-093000-0001: the jury on the three items, finished."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    freeze_time(monkeypatch)
    store, config = SessionStore("sessions"), Config()
    run_headless(jury_job(store, config, dataset(Path("."))))
    return store


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_jury_session(snap_compare, jury_session, size) -> None:
    """The saved jury session, first item: members' agreement in the header, each member's verdict, the split."""
    assert snap_compare(QatuiApp(Config(), jury_session, open_id="20261122-093000-0001"), run_before=settle,
                        terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_jury_run_finished_on_a_ranking_item(snap_compare, tmp_path, monkeypatch, size) -> None:
    """A finished live jury run, the ranking item selected: Borda over three members, split on the best."""
    monkeypatch.chdir(tmp_path)
    freeze_time(monkeypatch)
    config, store = Config(), SessionStore("sessions")
    job = jury_job(store, config, dataset(Path(".")))

    async def watch(pilot) -> None:
        screen = RunScreen(job, clock=lambda: 0.0)
        await pilot.app.push_screen(screen)
        deadline = time.monotonic() + 20
        while screen.ended is None and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await pilot.press("j", "j")
        await settle(pilot)

    assert snap_compare(QatuiApp(config, store), run_before=watch, terminal_size=size)
