"""The TUI refuses a run whose backbone cannot answer, before a session exists (a real loopback server)."""

from __future__ import annotations

from fakes import settle, wait_until
from textual.widgets import Select, SelectionList

from qatui.config import parse_config
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.home import HomeScreen
from qatui.tui.screens.new_run import NewRunScreen
from qatui.tui.screens.run import RunScreen


def rejecting_backbone(llm_server, tmp_path, monkeypatch):
    """A config whose backbone `fake` is the loopback server, which rejects every key (401)."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    llm_server.script(faults=["401"] * 10)
    return parse_config(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                        f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n', "test.toml")


async def test_new_run_with_a_rejected_key_is_refused_and_makes_no_session(llm_server, tmp_path, monkeypatch) -> None:
    config = rejecting_backbone(llm_server, tmp_path, monkeypatch)
    store = SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("n")
        screen = app.screen
        assert isinstance(screen, NewRunScreen)
        listing = screen.query_one("#judges", SelectionList)
        await wait_until(pilot, lambda: listing.option_count > 0 and "71 responses" in str(screen.query_one("#preview").content))
        listing.deselect("minos")
        listing.select("pairwise")
        await pilot.press("f4")
        screen.query_one("#backbone", Select).value = "fake"
        screen.query_one("#limit").value = "2"
        await settle(pilot, lambda: screen.query_one("#backbone", Select).value == "fake", "the form filled")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("authentication failed (401)" in str(n.message) for n in app._notifications))
        assert not isinstance(app.screen, RunScreen)
        assert store.list() == [] and llm_server.n_requests == 1


async def test_spot_check_with_a_rejected_key_is_refused_and_makes_no_session(llm_server, tmp_path, monkeypatch) -> None:
    from textual.widgets import TextArea

    from qatui.tui.screens.spot_check import SpotCheckScreen, SpotRunScreen

    config = rejecting_backbone(llm_server, tmp_path, monkeypatch)
    store = SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        app.open_spot_check()
        await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen) and bool(app.screen.judges))
        form = app.screen
        form.query_one("#question", TextArea).text = "What is the capital of France?"
        form.query_one("#reference", TextArea).text = "Paris is the capital of France."
        form.query_one("#response-1", TextArea).text = "Lyon."
        form.query_one("#response-2", TextArea).text = "Paris is the capital."
        await pilot.pause()
        form.query_one("#judge", Select).value = "pairwise"
        form.query_one("#backbone", Select).value = "fake"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("authentication failed (401)" in str(n.message) for n in app._notifications))
        assert not isinstance(app.screen, SpotRunScreen) and store.list() == [] and llm_server.n_requests == 1
