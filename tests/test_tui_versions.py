"""The Compare screen with two runs of one judge in different versions: the note naming both, and `v`'s prompt diff.

Two pointwise sessions on the demo set (fixed ids and times), the second after one word of the
built-in prompt changed (`prompt_edits`). Snapshots at 80×24 and 120×40, as `test_tui_snapshots`.
"""

from __future__ import annotations

import pytest
from fakes import ScriptedLLM, pressing, scripted_resources, settle, wait_until
from prompt_edits import edited_prompts  # noqa: F401 - a fixture
from tui_support import demo_workdir, run_headless

from qatui.config import Config
from qatui.engine.jobs import start_run
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp

SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def store(tmp_path, monkeypatch, edited_prompts) -> SessionStore:
    """20261122-093000-0001 (pointwise as shipped) and -0002 (pointwise after "smoothly" became "evenly"), 4 items."""
    dataset = demo_workdir(tmp_path, monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path))
    store, config = SessionStore("sessions"), Config()

    def run() -> None:
        resources = scripted_resources(config, llm=ScriptedLLM(lambda call: {"score": "[[7.50]]"}))
        run_headless(start_run(store, dataset, ["pointwise"], config, limit=4, concurrency=1, resources=resources))

    run()
    edited_prompts("baselines", "pointwise.en.toml", "smoothly", "evenly")
    run()
    return store


def compared(pilot) -> bool:
    """The compare screen has read both sessions."""
    from qatui.tui.screens.compare import CompareScreen

    screen = pilot.app.screen
    return isinstance(screen, CompareScreen) and screen.comparison is not None


def home_listed(pilot) -> bool:
    """Home lists both sessions."""
    from qatui.tui.screens.home import HomeScreen

    screen = pilot.app.screen
    return isinstance(screen, HomeScreen) and len(screen.query_one("SessionsTable").sessions) == 2


async def test_compare_names_both_versions_and_v_shows_the_changed_word(store) -> None:
    from textual.widgets import Static

    from qatui.tui.screens.version_diff import VersionDiffScreen

    ids = [meta["id"] for meta in store.list()]
    versions = {store.open(i).meta["judges"]["pointwise"]["version"] for i in ids}
    assert len(versions) == 2
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: home_listed(pilot), "Home's list")
        await pilot.press("space", "j", "space", "c")
        await wait_until(pilot, lambda: compared(pilot), "the comparison")
        note = str(app.screen.query_one("#note", Static).render())
        assert all(v in note for v in versions) and "pointwise" in note
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, VersionDiffScreen), "the prompt diff")
        shown = str(app.screen.query_one("#diff", Static).render())
        lines = shown.splitlines()
        removed = " ".join(line for line in lines if line.startswith("-") and not line.startswith("---"))
        added = " ".join(line for line in lines if line.startswith("+") and not line.startswith("+++"))
        # run A is the session Home lists first (the newer): the diff goes from A to B, whichever that is
        assert ("smoothly" in removed and "evenly" in added) or ("evenly" in removed and "smoothly" in added), shown
        pane = app.screen.query_one("#diff-pane")
        assert pane.has_focus and pane.max_scroll_x > 0  # the prompt's long lines are kept whole: it scrolls across
        await pilot.press("right")
        await wait_until(pilot, lambda: pane.scroll_x > 0, "the diff scrolled")
        await pilot.press("escape")
        await wait_until(pilot, lambda: compared(pilot), "back on the comparison")


@pytest.fixture
def one_version(tmp_path, monkeypatch) -> SessionStore:
    """Two rouge-l sessions on the demo set's first 4 items: one version of one judge."""
    dataset = demo_workdir(tmp_path, monkeypatch)
    store = SessionStore("sessions")
    for _ in range(2):
        run_headless(start_run(store, dataset, ["rouge-l"], Config(), limit=4))
    return store


async def test_v_is_not_offered_when_every_judge_ran_in_one_version(one_version) -> None:
    from qatui.tui.screens.version_diff import VersionDiffScreen

    app = QatuiApp(Config(), one_version)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: home_listed(pilot), "Home's list")
        await pilot.press("space", "j", "space", "c")
        await wait_until(pilot, lambda: compared(pilot), "the comparison")
        assert not app.screen.query_one("#note").display
        # keys are handled in order: had v opened the diff, escape would close it and leave Compare showing
        await pilot.press("v", "escape")
        await wait_until(pilot, lambda: home_listed(pilot), "Home again, straight from Compare")
        await settle(pilot)  # nor pushed late by a worker
        assert not any(isinstance(screen, VersionDiffScreen) for screen in app.screen_stack)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_compare_with_two_versions(snap_compare, store, size) -> None:
    """Two versions of pointwise compared: the note names both, the footer offers the prompt diff."""
    assert snap_compare(QatuiApp(Config(), store), run_before=pressing("space", "j", "space", "c",
                                                                       ready=home_listed, what="Home's list"),
                        terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_prompt_diff(snap_compare, store, size) -> None:
    """`v` on that comparison: the unified diff of pointwise's two definitions."""
    assert snap_compare(QatuiApp(Config(), store), run_before=pressing("space", "j", "space", "c", "v",
                                                                       ready=home_listed, what="Home's list"),
                        terminal_size=size)
