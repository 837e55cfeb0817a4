"""What got in the way in a workbench's second hour: screens that hid the judge's output, figures that misled
while a run went, lists that dropped ticks, and the Home table's counts; each checked on the real app (Pilot).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from fakes import laid_out, scripted_resources, wait_until
from tui_support import minos_job, run_headless, write_sums

from qatui.config import Config
from qatui.data.loaders import demo_dataset, load_dataset
from qatui.engine.jobs import start_run
from qatui.events import ItemStarted, RunStarted, Verdict
from qatui.judges.registry import JUDGES
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.new_run import NewRunScreen
from qatui.tui.screens.run import RunScreen
from qatui.tui.state import RunState
from qatui.tui.widgets.judge_list import JudgeList
from qatui.tui.widgets.run_header import RunHeader
from qatui.tui.widgets.transcript_panel import TranscriptPanel


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch) -> None:
    """No test reads or writes the user's config, themes or LLM cache."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("QATUI_SESSIONS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)


def footer_text(screen) -> str:
    """The key hints the footer shows now."""
    return " ".join(key.description for key in screen.query("FooterKey"))


def line_text(widget, y: int) -> str:
    """What one row of a widget draws, as text."""
    return "".join(segment.text for segment in widget.render_line(y))


# -- New run's judges ------------------------------------------------------------------------------


async def test_judge_boxes_read_ticked_or_not_without_colour_and_say_what_runs(tmp_path) -> None:
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n", "f3")
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and app.screen.judge_classes)
        listing = app.screen.query_one(JudgeList)
        rows = {line_text(listing, y).split()[-1]: line_text(listing, y) for y in range(listing.option_count)}
        assert rows["minos"].startswith("[x] ") and rows["bleu"].startswith("[ ] "), rows
        assert "ticked: minos" in str(app.screen.query_one("#ticked").render())


async def test_the_batch_box_reads_ticked_or_not_without_colour(tmp_path) -> None:
    """Batch API on New run (and every yes/no box of a form) draws X when ticked and a blank when not."""
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n", "f4")
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and app.screen.query("#batch"))
        box = app.screen.query_one("#batch")
        assert not box.value and line_text(box, 0).startswith("▐ ▌ Batch API"), line_text(box, 0)
        box.value = True
        await wait_until(pilot, lambda: line_text(box, 0).startswith("▐X▌ Batch API"), "the ticked box drawn")


async def test_keys_sent_before_the_judges_load_tick_the_rows_they_meant(tmp_path) -> None:
    """Down and space pressed at once, while the judges import and the dataset loads: the ticks land and stay."""
    names = list(JUDGES)
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n", "f3", "down", "space", "down", "space", "down", "space")
        screen = app.screen
        await wait_until(pilot, lambda: screen.judge_classes and screen.dataset is not None
                         and not any(w.is_running for w in screen.workers if w.group != "_loader"))  # the tree's loader lives on
        listing = screen.query_one(JudgeList)
        assert listing.highlighted == 3
        assert set(listing.selected) == {"minos"} ^ {names[1], names[2], names[3]}


# -- figures while a run goes ----------------------------------------------------------------------


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_counts_down_between_finishes_and_holds_at_the_tail() -> None:
    """Twenty tasks, four at a time, each taking 40 s: the run ends at 200 s. At every second the ETA is within
    a few seconds of the truth (total elapsed / tasks finished grew to 5:16 at 79 s and fell to 0:50 at 199 s)."""
    items = demo_dataset().items[:20]
    clock = Clock()
    state = RunState(items, ["minos"], 0, clock)
    state.fold(RunStarted(session_id="s", n_items=20, n_tasks=20, n_skipped=0))
    order = [item.id for item in items]
    starts = {item_id: 40.0 * (i // 4) for i, item_id in enumerate(order)}
    started, finished = set(), set()
    worst = 0.0
    for second in range(0, 200):
        clock.now = float(second)
        for item_id in order:
            if item_id not in finished and starts[item_id] + 40 <= clock.now:
                finished.add(item_id)
                state.fold(Verdict(item_id=item_id, judge="minos", ranking=[], scores={}, order=[]))
            if item_id not in started and starts[item_id] <= clock.now:
                started.add(item_id)
                state.fold(ItemStarted(item_id=item_id, judge="minos"))
        eta = state.eta()
        if second < 40:
            assert eta is None  # nothing finished: no pace yet
            continue
        worst = max(worst, abs(eta - (200 - second)))
    assert worst <= 2.0, worst


def test_eta_ignores_tasks_the_cache_answered() -> None:
    """Five tasks answered from the cache at once, then one every 10 s: the ETA follows the real pace."""
    from qatui.events import LLMCallFinished

    items = demo_dataset().items[:20]
    clock = Clock()
    state = RunState(items, ["minos"], 0, clock)
    state.fold(RunStarted(session_id="s", n_items=20, n_tasks=20, n_skipped=0))
    for item in items[:5]:
        state.fold(ItemStarted(item_id=item.id, judge="minos"))
        state.fold(LLMCallFinished(item_id=item.id, judge="minos", call_id="c", model="m", purpose="rank",
                                   prompt_hash="h", cached=True, response="{}"))
        state.fold(Verdict(item_id=item.id, judge="minos", ranking=[], scores={}, order=[]))
    state.fold(ItemStarted(item_id=items[5].id, judge="minos"))
    clock.now = 10.0
    state.fold(Verdict(item_id=items[5].id, judge="minos", ranking=[], scores={}, order=[]))
    state.fold(ItemStarted(item_id=items[6].id, judge="minos"))
    clock.now = 12.0
    assert state.eta() == pytest.approx(14 * 10 - 2)


async def test_no_gold_is_named_as_the_data_s_not_as_waiting(tmp_path) -> None:
    """Items without gold say so; the old line promised a comparison 'yet' that could never come."""
    config, store = Config(), SessionStore(tmp_path / "sessions")
    job = start_run(store, load_dataset(write_sums(tmp_path / "sums.jsonl", 3)), ["rouge-l"], config)
    app = QatuiApp(config, store, job=job)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None)
        text = str(app.screen.query_one(RunHeader).query_one("#metrics").render())
        assert "no gold in these items" in text and "yet" not in text


async def test_a_running_task_s_transcript_says_it_waits_for_an_answer(tmp_path) -> None:
    config, store = Config(), SessionStore(tmp_path / "sessions")
    gate = threading.Semaphore(0)  # the first backbone call waits
    job = minos_job(store, config, gate, limit=2)
    app = QatuiApp(config, store, job=job)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state is not None
                         and app.screen.state.tasks[("en-01", "minos")].status == "running")
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one(TranscriptPanel).task is not None
                         and screen.query_one(TranscriptPanel).task.status == "running")
        shown = str(screen.query_one(TranscriptPanel).query_one("Static").render())
        assert "waiting for the first LLM answer" in shown and "no LLM calls" not in shown
        waiting = str(screen.query_one(RunHeader).query_one("#metrics").render())  # the demo's items carry gold
        assert "no gold" not in waiting and "metrics appear as items finish" in waiting, waiting
        gate.release(200)
        await wait_until(pilot, lambda: screen.ended is not None)


async def test_footer_drops_cancel_at_the_end_and_names_r_for_what_it_does(tmp_path) -> None:
    """The end is read while the engine's thread still closes the session: x must go all the same; r says
    "Retry failed" only when something failed, "Resume rest" after a cancel, and nothing after a clean end."""
    config, store = Config(), SessionStore(tmp_path / "sessions")
    job = minos_job(store, config, limit=2)
    screen = RunScreen(job)
    slow = threading.Event()
    set_now = screen.handle.ended.set

    def late_set() -> None:  # the engine's thread is slow to mark the run ended
        slow.wait(0.5)
        set_now()

    screen.handle.ended.set = late_set
    app = QatuiApp(config, store)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.ended is not None)
        await pilot.pause()
        assert screen.ended.status == "completed" and screen.state.count("failed") == 0
        assert "Cancel run" not in footer_text(screen) and "Retry failed" not in footer_text(screen)
        assert "x" not in screen.active_bindings and "r" not in screen.active_bindings


def gated_run(tmp_path) -> tuple[QatuiApp, threading.Semaphore, SessionStore, object]:
    """The app on a 4-item MinosEval run whose backbone calls each wait for a permit of the gate: (app, gate, store,
    job)."""
    config, store = Config(), SessionStore(tmp_path / "sessions")
    gate = threading.Semaphore(0)
    job = minos_job(store, config, gate, limit=4)
    return QatuiApp(config, store, job=job, make_resources=lambda: scripted_resources(config)), gate, store, job


async def first_item_running(pilot) -> RunScreen:
    """The run screen once its first item is under way (its call held at the gate)."""
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state is not None
                     and app.screen.state.count("running") == 1)
    return app.screen


async def test_a_cancelled_run_offers_to_resume_the_rest_not_to_retry_failures(tmp_path) -> None:
    app, gate, _, _ = gated_run(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await first_item_running(pilot)
        await pilot.press("x")
        await pilot.press("y")
        gate.release(200)
        await wait_until(pilot, lambda: screen.ended is not None)
        await pilot.pause()
        assert screen.ended.status == "cancelled" and screen.state.count("failed") == 0
        assert "Resume rest" in footer_text(screen) and "Retry failed" not in footer_text(screen)


@pytest.mark.parametrize("key", ["x", "escape"])
async def test_a_stop_waits_for_the_call_in_flight_and_the_same_key_again_stops_at_once(tmp_path, key: str) -> None:
    """x (or esc) asks, then waits for the call held at the gate: the footer offers "Stop now" in place of
    "Cancel run"; the same key again asks whether to stop without it, and yes ends the run (esc: back on Home)
    with the call still held."""
    from qatui.tui.screens.confirm import ConfirmScreen
    from qatui.tui.screens.home import HomeScreen
    from qatui.tui.screens.run import STOP_NOW_QUESTION

    app, gate, store, job = gated_run(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await first_item_running(pilot)
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: any(n.title == "Stopping" for n in app._notifications), "the stop said")
        await wait_until(pilot, lambda: "Stop now" in footer_text(screen), "Stop now in the footer")
        assert screen.ended is None and "Cancel run" not in footer_text(screen)  # the held call is waited for
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the stop-now question")
        assert app.screen.question == STOP_NOW_QUESTION
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.handle.ended.is_set(), "the run stopped with the call still held")
        if key == "escape":  # the screen left once the run was summarised
            await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), "Home")
        else:
            await wait_until(pilot, lambda: screen.ended is not None, "the end shown")
            assert screen.ended.status == "cancelled" and screen.state.count("failed") == 0
    gate.release(200)
    assert store.open(job.session.id).meta["status"] == "cancelled"


# -- the judge's output in view ----------------------------------------------------------------------


def visible_rows(screen, widget) -> int:
    """How many of a widget's rows are on screen with nothing drawn over them."""
    region = widget.region
    bottom = min(region.bottom, screen.size.height)
    return sum(1 for y in range(region.y, bottom) if screen.get_widget_at(region.x + 2, y)[0] is widget)


def shown_words(screen, widget) -> list[str]:
    """The words of a widget's rows that are on screen (not scrolled away, nothing drawn over them), in order."""
    strips = screen._compositor.render_strips()
    region = widget.region
    rows = [strips[y].crop(region.x, region.right).text for y in range(region.y, min(region.bottom, len(strips)))
            if screen.get_widget_at(region.x + 2, y)[0] is widget]
    return " ".join(rows).split()


def in_view(screen, widget, text: str) -> bool:
    """Whether every word of `text` is on screen in `widget`, in order (a wrapped line's columns may come between)."""
    words = iter(shown_words(screen, widget))
    return all(word in words for word in text.split())


async def saved_minos_app(tmp_path, limit: int) -> QatuiApp:
    """The app, opening a finished MinosEval session of the demo's first `limit` items (the scripted backbone)."""
    config, store = Config(), SessionStore(tmp_path / "sessions")
    job = minos_job(store, config, limit=limit)
    await asyncio.to_thread(run_headless, job)
    return QatuiApp(config, store, open_id=job.session.id)


def key_points_shown(app: QatuiApp) -> bool:
    """Whether the session screen is up with its key-points panel shown."""
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.entailment_panel import EntailmentPanel

    return isinstance(app.screen, SessionScreen) and app.screen.query_one(EntailmentPanel).display


async def session_opened(pilot, app: QatuiApp) -> None:
    """Wait for the session screen's key points, its browser laid out (the transcript's size rule applied)."""
    from qatui.tui.widgets.item_browser import ItemBrowser

    await wait_until(pilot, lambda: key_points_shown(app))
    await laid_out(pilot, app.screen.query_one(ItemBrowser))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_t_s_choice_stands_when_the_session_s_later_pages_arrive(tmp_path, size) -> None:
    """The session screen says whether there is a transcript once when its first page is read and again after the
    last; a `t` pressed between the two was undone by the second on a busy machine (the transcript shown or hidden
    again under the user's key). The second saying is made here after the key, as the loader makes it."""
    from qatui.tui.widgets.item_browser import ItemBrowser

    app = await saved_minos_app(tmp_path, limit=2)
    async with app.run_test(size=size) as pilot:
        await session_opened(pilot, app)
        transcript = app.screen.query_one(TranscriptPanel)
        for _ in range(2):
            before = transcript.display
            await pilot.press("t")
            await wait_until(pilot, lambda: transcript.display != before)
            app.screen.query_one(ItemBrowser).show_transcript(True)  # the loader, after its last page
            await pilot.pause()
            assert transcript.display != before, f"t undone at {size}"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_transcript_s_size_rule_waits_for_the_browser_s_height(size) -> None:
    """The session screen says there is a transcript as it shows its browser, before the browser has a height: a
    height of 0 was read as a short screen, so a tall screen's transcript was hidden until the first resize (a `t`
    in between hid it again). A choice made before the first resize (the Judge Lab's: show it) stands after it."""
    from textual.app import App

    from qatui.tui.widgets.item_browser import ItemBrowser

    class Host(App):
        get_theme_variable_defaults = QatuiApp.get_theme_variable_defaults

        def compose(self):
            yield ItemBrowser().set_styles("display: none;")

    tall = size[1] >= 40
    for choose in (None, True, False):
        app = Host()
        async with app.run_test(size=size) as pilot:
            browser = app.query_one(ItemBrowser)
            transcript = browser.query_one(TranscriptPanel)
            assert browser.size.height == 0
            browser.show_transcript(True)
            if tall:
                assert not transcript.has_class("-hidden"), "a tall screen's transcript hidden before its first resize"
            if choose is not None:
                browser.choose_transcript(choose)
            browser.display = True
            await laid_out(pilot, browser)
            await wait_until(pilot, lambda: transcript.display == (tall if choose is None else choose), f"{choose}")
            browser.show_transcript(True)  # said again after the last page
            await pilot.pause()
            assert transcript.display == (tall if choose is None else choose)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_minos_routing_and_key_points_are_in_view_without_scrolling(tmp_path, size) -> None:
    """MinosEval is read for its routing and its key points (or, not factoid, its silver instances): on the first
    screen of the session, whatever the size, with the transcript shown and hidden. On a short screen a shown
    transcript has the detail column to itself (its own test below): hiding it again gives them back in view."""
    from qatui.tui.widgets.entailment_panel import EntailmentPanel
    from qatui.tui.widgets.instances_panel import InstancesPanel
    from qatui.tui.widgets.routing_panel import RoutingPanel

    app = await saved_minos_app(tmp_path, limit=3)
    async with app.run_test(size=size) as pilot:
        await session_opened(pilot, app)
        screen = app.screen
        routing, transcript = screen.query_one(RoutingPanel), screen.query_one(TranscriptPanel)

        def all_in_view(panel, texts: list[str]) -> bool:
            return (screen.query_one("#panels").scroll_y == 0 and in_view(screen, routing, routing.task.route.rationale)
                    and all(in_view(screen, panel, text) for text in texts))

        for n, key in enumerate(("", "j", "j")):  # en-01 and en-02 are factoid (key points), en-03 is not (instances)
            if key:
                await pilot.press(key)
            await wait_until(pilot, lambda: routing.task is not None and routing.task.item_id == f"en-0{n + 1}"
                             and routing.task.route is not None)
            factoid = routing.task.route.question_type == "factoid"
            panel = screen.query_one(EntailmentPanel if factoid else InstancesPanel)
            await wait_until(pilot, lambda: panel.display)
            texts = ([p for points in panel.task.key_points.values() for p in points] if factoid
                     else list(panel.task.instances.values()))
            assert texts
            shown = transcript.display
            await wait_until(pilot, lambda: all_in_view(panel, texts), f"{panel.TITLE} at {size}")
            await pilot.press("t")  # the transcript shown if it was hidden, hidden if it was shown
            await wait_until(pilot, lambda: transcript.display != shown)
            if transcript.display and not screen.query_one("#panels").display:  # short: it took the column; back
                await pilot.press("t")
                await wait_until(pilot, lambda: not transcript.display)
            await wait_until(pilot, lambda: all_in_view(panel, texts), f"{panel.TITLE} at {size}, transcript toggled")


async def test_the_transcript_on_a_short_screen_takes_the_panels_place_not_their_rows(tmp_path) -> None:
    """At 80×24, t shows the transcript with the detail column to itself; t again gives the pairwise table back."""
    from qatui.tui.widgets.pairwise_panel import PairwisePanel

    config, store = Config(), SessionStore(tmp_path / "sessions")
    job = start_run(store, demo_dataset(), ["pairwise"], config, limit=1, resources=scripted_resources(config))
    app = QatuiApp(config, store, job=job)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None)
        screen = app.screen
        pairwise, transcript = screen.query_one(PairwisePanel), screen.query_one(TranscriptPanel)
        assert not transcript.display and visible_rows(screen, pairwise) >= 4
        await pilot.press("t")
        await wait_until(pilot, lambda: transcript.display and transcript.region.height >= 10)
        assert not screen.query_one("#panels").display
        await pilot.press("t")
        await wait_until(pilot, lambda: not transcript.display and visible_rows(screen, pairwise) >= 4)


# -- whole responses --------------------------------------------------------------------------------


async def test_z_shows_every_response_of_the_item_whole_where_the_ranking_cuts_them(tmp_path) -> None:
    """en-06's two answers both open "The capital of Australia is": the ranking cuts them alike, z tells them apart."""
    from qatui.tui.screens.full_text import FullTextScreen
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.item_browser import ItemBrowser

    app = await saved_minos_app(tmp_path, limit=6)
    item = next(it for it in demo_dataset().items if it.id == "en-06")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen)
                         and app.screen.query_one(ItemBrowser).state is not None
                         and ("en-06", "minos") in app.screen.query_one(ItemBrowser).state.tasks)
        screen = app.screen
        screen.query_one(ItemBrowser).select(("en-06", "minos"))
        await wait_until(pilot, lambda: screen.query_one(ItemBrowser).selected() == ("en-06", "minos"))
        await pilot.press("z")
        await wait_until(pilot, lambda: isinstance(app.screen, FullTextScreen))
        shown = " ".join(str(app.screen.query_one("#texts").render()).split())
        for text in [item.question, *item.candidates.values()]:
            assert " ".join(text.split()) in shown
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)


# -- Home ------------------------------------------------------------------------------------------


@pytest.fixture
def lexical_store(tmp_path) -> SessionStore:
    """lexical-baseline (rouge-l and bleu on the 20 demo items) and a bleu run on 5."""
    from tui_support import lexical_sessions

    store = SessionStore(tmp_path / "sessions")
    lexical_sessions(store, Config())
    return store


async def test_home_counts_items_names_the_metric_s_judge_and_keeps_judges_at_80_columns(lexical_store) -> None:
    from qatui.tui.widgets.sessions_table import SessionsTable

    app = QatuiApp(Config(), lexical_store)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 2)
        await pilot.pause()
        columns = [str(column.key.value) for column in table.columns.values()]
        assert "judges" in columns and "status" in columns
        cells = {key: str(table.get_cell(next(m["id"] for m in table.sessions if m["name"] == "lexical-baseline"),
                                         key)) for key in columns}
        assert cells["done"] == "20/20"  # items, not (item, judge) pairs: 40
        assert cells["metric"].startswith("rouge-l tau ")  # two judges: the figure says whose it is


async def test_home_highlights_the_run_just_left_so_enter_opens_it(lexical_store, tmp_path) -> None:
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.sessions_table import SessionsTable

    config = Config()
    app = QatuiApp(config, lexical_store)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 2)
        await pilot.press("j")  # the older session, as a user who looked at it before starting a run
        older = table.row_key_at_cursor()
        job = await asyncio.to_thread(start_run, lexical_store, demo_dataset(), ["rouge-l"], config, limit=3)
        app.show_run(job)
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None)
        await pilot.press("escape")
        await wait_until(pilot, lambda: table.row_count == 3 and table.row_key_at_cursor() != older)
        assert table.row_key_at_cursor() == job.session.id
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert app.screen.session_id == job.session.id
