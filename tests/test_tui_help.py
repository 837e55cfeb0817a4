"""The help screen explains the short metric names a screen shows (tau, acc, route), within its box."""

from __future__ import annotations

import pytest
from fakes import settle, wait_until
from tui_support import freeze_time, lexical_sessions

from qatui.config import Config
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.format import METRIC_MEANINGS
from qatui.tui.screens.help import HelpScreen
from qatui.tui.widgets.vim_table import VimTable


@pytest.fixture
def saved(tmp_path, monkeypatch) -> tuple[SessionStore, str]:
    """A finished lexical session (built before the app's event loop runs)."""
    monkeypatch.chdir(tmp_path)
    freeze_time(monkeypatch)
    store = SessionStore("sessions")
    first, _ = lexical_sessions(store, Config())
    return store, first


async def test_help_on_a_session_lists_what_each_figure_means(saved) -> None:
    store, first = saved
    app = QatuiApp(Config(), store, open_id=first)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: type(app.screen).__name__ == "SessionScreen", "the session")
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        table = app.screen.query_one(VimTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        figures = {row[0]: row[1] for row in rows if row[2] == "figure"}
        assert set(figures) == set(METRIC_MEANINGS)
        assert "Kendall tau-b" in figures["tau"] and "route accuracy" in figures["route"]
        assert "human ceiling" in figures["ceiling"] and "repeats" in figures["self"]  # the figures beside people's
        assert table.virtual_size.width <= table.size.width  # wrapped: no sideways scrolling at 80 columns


def test_a_spot_check_of_an_item_with_gold_saves_and_reloads(tmp_path) -> None:
    """The item file in the session keeps the gold's kind, so the spot check reopens and resumes."""
    from qatui.data.loaders import demo_dataset, load_dataset
    from qatui.judges.resources import Resources
    from qatui.tui.spot import SPOT_FILE, start_spot_check

    item = next(it for it in demo_dataset().items if it.gold is not None)
    job = start_spot_check(SessionStore(tmp_path / "s"), item, "bleu", Config(), Resources(Config()))
    reloaded = load_dataset(job.session.path / SPOT_FILE, "jsonl").items[0]
    assert reloaded.gold == item.gold and reloaded.candidates == item.candidates
