"""The TUI refuses a run whose backbone cannot answer, before a session exists (a real loopback server)."""

from __future__ import annotations

import asyncio

from fakes import settle, wait_until
from textual.widgets import Select, SelectionList

from qatui.config import parse_config
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.home import HomeScreen
from qatui.tui.screens.new_run import NewRunScreen
from qatui.tui.screens.run import RunScreen
from qatui.tui.screens.spot_check import SpotCheckScreen


def rejecting_backbone(llm_server, tmp_path, monkeypatch):
    """A config whose backbone `fake` is the loopback server, which rejects every key (401)."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    llm_server.script(faults=["401"] * 10)
    return parse_config(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                        f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n', "test.toml")


async def filled_spot_check(app: QatuiApp, pilot) -> SpotCheckScreen:
    """Spot check opened with its judges loaded, and one question, reference and two responses typed in."""
    from textual.widgets import TextArea

    app.open_spot_check()
    await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen) and bool(app.screen.judges))
    form = app.screen
    form.query_one("#question", TextArea).text = "What is the capital of France?"
    form.query_one("#reference", TextArea).text = "Paris is the capital of France."
    form.query_one("#response-1", TextArea).text = "Lyon."
    form.query_one("#response-2", TextArea).text = "Paris is the capital."
    return form


async def start_new_run(app: QatuiApp, pilot, limit: str) -> None:
    """From Home: New run on the demo set, `pairwise` alone on the backbone `fake`, its first `limit` items; started."""
    await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    await pilot.press("n")
    screen = app.screen
    assert isinstance(screen, NewRunScreen)
    listing = screen.query_one("#judges", SelectionList)
    await wait_until(pilot, lambda: listing.option_count > 0 and "71 responses" in str(screen.query_one("#preview").content))
    listing.deselect("minos")
    listing.select("pairwise")
    await pilot.press("f4")
    screen.query_one("#backbone").value = "fake"
    screen.query_one("#limit").value = limit
    await settle(pilot, lambda: screen.query_one("#backbone").value == "fake", "the form filled")
    await pilot.press("ctrl+s")


async def test_new_run_with_a_rejected_key_is_refused_and_makes_no_session(llm_server, tmp_path, monkeypatch) -> None:
    config = rejecting_backbone(llm_server, tmp_path, monkeypatch)
    store = SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        await start_new_run(app, pilot, "2")
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
        form = await filled_spot_check(app, pilot)
        await pilot.pause()
        form.query_one("#judge", Select).value = "pairwise"
        form.query_one("#backbone").value = "fake"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("authentication failed (401)" in str(n.message) for n in app._notifications))
        assert not isinstance(app.screen, SpotRunScreen) and store.list() == [] and llm_server.n_requests == 1


TYPED = "openai/gpt-4o-mini"
"""A LiteLLM model string named in no config: the backbone field takes it as `--backbone` does."""


def cli_refusal(tmp_path, capsys, backbone: str) -> str:
    """What `qatui run --backbone BACKBONE` says when it refuses the backbone (the line after 'error: ')."""
    from pathlib import Path

    from qatui.cli import main

    demo = Path(__file__).resolve().parents[1] / "qatui" / "data" / "demo" / "demo.jsonl"
    capsys.readouterr()
    code = main(["run", str(demo), "--judge", "pairwise", "--backbone", backbone, "--limit", "2",
                 "--sessions-dir", str(tmp_path / "cli")])
    err = " ".join(capsys.readouterr().err.split())
    assert code != 0 and "error: " in err
    return err.split("error: ", 1)[1]


def refused(app, message: str) -> bool:
    return any(" ".join(str(n.message).split()) == message for n in app._notifications)


async def test_new_run_takes_a_typed_model_string_and_checks_it_as_the_cli_does(tmp_path, monkeypatch, capsys) -> None:
    """No key for the typed provider: the run is refused in the CLI's words, before a session exists; a name
    that is no backbone at all is refused on the form as it is typed."""
    from qatui.config import Config
    from qatui.tui.widgets.backbone_input import BackboneInput

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    expected = await asyncio.to_thread(cli_refusal, tmp_path, capsys, TYPED)  # the CLI runs its own loop
    store = SessionStore(tmp_path / "sessions")
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("n")
        screen = app.screen
        listing = screen.query_one("#judges", SelectionList)
        await wait_until(pilot, lambda: listing.option_count > 0 and "71 responses" in str(screen.query_one("#preview").content))
        listing.deselect("minos")
        listing.select("pairwise")
        await pilot.press("f4")
        field = screen.query_one("#backbone", BackboneInput)
        assert field.has_focus
        field.value = "nonsense"
        await wait_until(pilot, lambda: "unknown backbone 'nonsense'" in str(screen.query_one("#plan").content))
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, NewRunScreen) and store.list() == []
        field.value = TYPED
        screen.query_one("#limit").value = "2"
        await wait_until(pilot, lambda: f"pairwise · {TYPED}" in str(screen.query_one("#plan").content))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: refused(app, expected))
        assert not isinstance(app.screen, RunScreen) and store.list() == []
        assert app.last_new_run is not None and app.last_new_run.backbone == TYPED


async def test_spot_check_backbone_is_typed_on_screen_at_80x24_and_checked_as_the_cli_does(
        tmp_path, monkeypatch, capsys) -> None:
    """At 80×24 the backbone field is on screen once focused (no menu to open below the fold), takes a typed
    model string, and a start is refused in the CLI's words before a session exists."""
    from textual.widgets import TextArea

    from qatui.config import Config
    from qatui.tui.screens.spot_check import SpotCheckScreen, SpotRunScreen
    from qatui.tui.widgets.backbone_input import BackboneInput

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    expected = await asyncio.to_thread(cli_refusal, tmp_path, capsys, TYPED)  # the CLI runs its own loop
    store = SessionStore(tmp_path / "sessions")
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await filled_spot_check(app, pilot)
        await wait_until(pilot, lambda: "pairwise" in [value for _, value in form.query_one("#judge", Select)._options])
        form.query_one("#judge", Select).value = "pairwise"
        field = form.query_one("#backbone", BackboneInput)
        field.focus()
        await wait_until(pilot, lambda: field.region.height > 0 and field.region.bottom <= 23)  # above the footer line
        field.value = "nonsense"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("unknown backbone 'nonsense'" in str(n.message) for n in app._notifications))
        field.value = TYPED
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: refused(app, expected))
        assert not isinstance(app.screen, SpotRunScreen) and store.list() == []


async def test_a_new_run_whose_cached_backbone_fails_its_put_off_check_stops_and_says_so(
        llm_server, tmp_path, monkeypatch) -> None:
    """New run on a backbone whose answers the cache holds: its check waits for the first call the cache cannot
    answer; when the backbone then rejects the key, the run screen ends `stopped` and says why, the items answered
    from the cache kept, the rest pending (none failed), and Home offers the session for resuming."""
    import json

    from qatui.tui.screens.home import resumable
    from qatui.tui.widgets.session_info import info_lines

    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    llm_server.script(lambda body: json.dumps({"rationale": "A is closer.", "choice": "A"}))
    config = parse_config(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                          f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n', "test.toml")
    store = SessionStore(tmp_path / "sessions")

    async def new_run(app: QatuiApp, pilot, limit: str) -> RunScreen:
        await start_new_run(app, pilot, limit)
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None, timeout=60)
        return app.screen

    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        first = await new_run(app, pilot, "2")
        assert first.ended.status == "completed"
    asked = llm_server.n_requests
    llm_server.script(faults=["401"] * 50)
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        run = await new_run(app, pilot, "3")
        assert run.ended.status == "stopped"
        counts = run.state.counts  # what the header shows: the calls the cache answered, none refused counted
        assert counts.calls == counts.cached > 0
        await wait_until(pilot, lambda: any(n.title == "Run stopped: a model is down"
                                            and "authentication failed (401)" in " ".join(str(n.message).split())
                                            for n in app._notifications))
    assert llm_server.n_requests == asked + 1  # the check alone
    (meta,) = [row for row in store.list() if row["id"] == run.handle.job.session.id]
    doc = meta["summary"]["pairwise"]
    assert meta["status"] == "stopped" and doc["n_done"] == 2 and doc["n_failed"] == 0 and resumable(meta)
    shown = " ".join(" ".join(str(part) for row in info_lines(meta) for part in row).split())  # Home's panel says why
    assert "stopped: backbone 'fake' did not answer a one-line test request: authentication failed (401)" in shown
