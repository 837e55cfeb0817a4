"""A jury in the workbench: each member's verdict arrives live in the jury panel with where the members split,
and the members' agreement sits beside the jury's agreement with people; snapshots at 80x24 and 120x40."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from fakes import scripted_resources, wait_until
from test_tui_snapshots import session, watch_to_the_end
from tui_support import freeze_time, run_headless

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
    """The jury on `data`, one item at a time, its members' verdicts arriving in one order (`in_member_order`)."""
    job = start_run(store, load_dataset(data), ["jury"], config, concurrency=1, judge_options=JURY,
                    resources=scripted_resources(config, gate))
    in_member_order(job)
    return job


def in_member_order(job) -> None:
    """Each item's LLM member starts judging only once rouge-l has judged the item (where it can: it needs a
    reference), so the verdicts always arrive length, rouge-l, then the LLM's.

    The jury panel lists members as their verdicts arrive, and rouge-l scores on a thread: without this
    order, a snapshot would draw whichever of rouge-l's thread and the scripted backbone won the race.
    """
    members = {m.name: m.judge for m in job.engine.judges[0].members}
    rouge, llm = members["rouge-l"], members["pairwise@local/smollm2"]
    judge_rouge, judge_llm = rouge.judge, llm.judge
    judged: dict[str, asyncio.Event] = {}

    async def rouge_then_say_so(view):
        async for event in judge_rouge(view):
            yield event
        judged.setdefault(view.item_id, asyncio.Event()).set()

    async def after_rouge(view):
        if view.references:
            await judged.setdefault(view.item_id, asyncio.Event()).wait()
        async for event in judge_llm(view):
            yield event

    rouge.judge, llm.judge = rouge_then_say_so, after_rouge


async def test_members_arrive_live_and_the_split_shows(tmp_path) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    gate = threading.Semaphore(0)  # the pairwise member waits; rouge-l and length answer at once
    job = jury_job(store, config, dataset(tmp_path), gate)
    app = QatuiApp(config, store, job=job, make_resources=lambda: scripted_resources(config))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state is not None
                         and len(app.screen.state.tasks[("bugs", "jury")].members) == 2, "two members' verdicts")
        screen = app.screen
        panel = screen.query_one(JuryPanel)
        await wait_until(pilot, lambda: "rouge-l" in panel_text(panel), "the jury panel's first rows")
        text = panel_text(panel)
        assert panel.display and "rouge-l" in text and "n/a" in text and "length" in text
        assert "members still judging" in text and "pairwise@local/smollm2" not in text
        gate.release(100)
        await wait_until(pilot, lambda: screen.ended is not None, "the run's end")
        await wait_until(pilot, lambda: "pairwise@local/smollm2" in panel_text(panel), "the last member's row")
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
    assert snap_compare(QatuiApp(Config(), jury_session, open_id="20261122-093000-0001"), run_before=session,
                        terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_jury_run_finished_on_a_ranking_item(snap_compare, tmp_path, monkeypatch, size) -> None:
    """A finished live jury run, the ranking item selected: Borda over three members, split on the best."""
    monkeypatch.chdir(tmp_path)
    freeze_time(monkeypatch)
    config, store = Config(), SessionStore("sessions")
    job = jury_job(store, config, dataset(Path(".")))

    async def watch(pilot) -> None:
        await watch_to_the_end(pilot, job, keys=("j", "j"), selected="salt")

    assert snap_compare(QatuiApp(config, store), run_before=watch, terminal_size=size)


def test_jury_rows_keep_their_order_when_rouge_l_is_slow(snap_compare, tmp_path, monkeypatch) -> None:
    """The ranking-item snapshot again, rouge-l's thread made slower than the scripted backbone: the rows come out
    as they do when it is fast (`in_member_order` holds the LLM member), so no snapshot depends on which wins."""
    monkeypatch.chdir(tmp_path)
    freeze_time(monkeypatch)
    config, store = Config(), SessionStore("sessions")
    job = jury_job(store, config, dataset(Path(".")))
    rouge = next(m.judge for m in job.engine.judges[0].members if m.name == "rouge-l")
    judge_rouge = rouge.judge

    async def slow_rouge(view):
        await asyncio.sleep(0.3)  # a loaded machine's thread pool, made certain
        async for event in judge_rouge(view):
            yield event

    rouge.judge = slow_rouge

    async def watch(pilot) -> None:
        await watch_to_the_end(pilot, job, keys=("j", "j"), selected="salt")

    assert snap_compare(QatuiApp(config, store), run_before=watch, terminal_size=(80, 24))
