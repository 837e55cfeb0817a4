"""A saved session, read-only: the run screen's panels over the stored results.

    Header
    SessionHeader  status, dataset, LLM usage; per judge its metrics with CIs and a sparkline
                   of per-item Kendall tau
    ItemBrowser    items with status and tau | the selected item's panels | its LLM calls
    Footer

`w` walks the items from the judge's worst agreement with people upwards; `e` writes the HTML report;
`a` labels the items yourself; `g` measures the judges against another gold (an annotator, the majority).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header, LoadingIndicator

from qatui.engine.heap import collector_paused
from qatui.errors import DatasetError, QatuiError
from qatui.events import Event, ItemNotApplicable
from qatui.report.beside_people import or_why_not, session_beside_people, with_ceiling
from qatui.ties import judges_digits, summary_is_current
from qatui.tui.clipboard import copy_artifact
from qatui.tui.report_file import export_report
from qatui.tui.saved import READING, SavedState, next_items, page_events, reading_state, remeasure
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.widgets.item_browser import ItemBrowser
from qatui.tui.widgets.item_list import ItemList
from qatui.tui.widgets.session_header import SessionHeader

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.store.session import SessionStore


class SessionScreen(QatuiScreen):
    """Loads session `session_id` in a thread, then shows it."""

    HELP_TITLE = "a saved session"
    SHOWS_METRICS = True
    """The help screen explains the short metric names (tau, acc, route) shown here."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "worst", "Worst item"),
        Binding("r", "resume", "Resume"),
        Binding("t", "toggle_transcript", "Transcript"),
        Binding("y", "copy", "Copy"),
        Binding("z", "zoom", "Full texts", show=False),
        Binding("a", "label", "Label items", show=False),
        Binding("g", "gold", "Gold", priority=True),  # before a focused table's g (first row), when labels exist
        Binding("e", "export_report", "Export report (HTML)", show=False),
        Binding("escape", "app.pop_screen", "Home"),
    ]
    FOLD_SLICE = 2000
    """Stored events folded between two screen updates while a big session loads (about 40 ms of work)."""
    ITEM_PAGE = 1000
    """Dataset items read and validated in a thread between two screen updates while a big session loads."""

    def __init__(self, store: SessionStore, session_id: str, *, item: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.session_id = session_id
        self.item = item
        """An item to select once read, its transcript shown (the Judge Lab opens a flipped item so)."""
        self.state: SavedState | None = None
        self.meta: dict = {}
        self.found = False
        self.gold = "dataset"
        """The gold the figures on screen measure against (`report.gold`)."""
        self._asked = self.gold
        self.golds = ["dataset"]
        """The golds `g` cycles through: the dataset's, each annotator of this dataset, their majority."""
        self.dataset_items: list[Item] = []
        """The session's items with the dataset's gold, to measure against it again after another gold."""
        self._worst: list[tuple[str, str]] = []
        self._worst_at = -1
        self._items_coming = False
        """Whether the dataset's later items are still being read (`_read_items`)."""
        self._held: list[Event] = []
        """Stored events about items not read yet, folded once they are (`_fold`)."""

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield SessionHeader()
        yield LoadingIndicator()
        yield ItemBrowser()
        yield Footer(compact=True)

    def on_resize(self) -> None:
        """On a short terminal the title bar goes, leaving its row to the item's panels (Home names the session)."""
        self.query_one(Header).display = self.app.size.height >= ItemBrowser.COMPACT

    def on_mount(self) -> None:
        self.sub_title = f"session {self.session_id}"
        self.query_one(ItemBrowser).display = False
        self.load()

    @work(group="load", exclusive=True, exit_on_error=False, description="reading a session")
    async def load(self) -> None:
        """`_load` with the cyclic garbage collector paused (`collector_paused`: it re-walked the growing state)."""
        with collector_paused():
            await self._load()

    async def _load(self) -> None:
        """Draw the session from its first items and first page of results, then fold in the rest a page at a time.

        Reading and validating the dataset and the stored results runs in threads; folding them
        into the state runs here, a slice at a time, so a 10,000-item session paints its first rows
        at once and the list fills in while it stays responsive. Rows not read yet show as `reading`.
        """
        def first() -> tuple[dict, dict, SavedState, bool, Iterator[Item] | None, list[Callable[[], list[dict]]],
                             list[Event], list[str]]:
            from qatui.store.labels import LabelStore

            session = self.store.open(self.session_id)
            people = list(LabelStore(self.store.root).labels_of(session.meta["dataset"]["content_hash"]))
            state, found, rest = reading_state(session, ItemList.FIRST_ROWS)
            for task in state.tasks.values():
                task.status = READING
            pages = session.result_pages()
            events = page_events(pages[0], judges_digits(session.meta), str(session.path)) if pages else []
            summary = session.summary()
            if not summary_is_current(summary):  # stored before ties counted as ties: recomputed (or flagged)
                from qatui.report.gold import DATASET, session_summary

                summary, _, _ = session_summary(session, DATASET, self.store.root)
            if len(people) >= 2:  # the human ceiling beside every judge
                beside, why_not = or_why_not(lambda: session_beside_people(session, self.store.root))
                if why_not:
                    self.app.call_from_thread(self.notify, why_not, title="Labels", severity="warning", timeout=10)
                summary = with_ceiling(summary, beside)
            return session.meta, summary, state, found, rest, pages[1:], events, people

        try:
            self.meta, summary, self.state, found, rest, pages, events, people = await asyncio.to_thread(first)
        except QatuiError as e:
            self.notify(str(e), title="Cannot open the session", severity="error", timeout=10)
            self.app.pop_screen()
            return
        state = self.state
        self._items_coming = rest is not None
        read = self._fold(events)
        self.sub_title = f"session {self.meta.get('name') or self.session_id}"
        self.query_one(LoadingIndicator).remove()
        self.found = found
        header = self.query_one(SessionHeader)
        await header.show(self.meta, summary, state, found)
        header.update(state, read)
        browser = self.query_one(ItemBrowser)
        browser.display = True
        browser.show_transcript(state.counts.calls > 0)
        browser.show(state, rest_later=True, n_items=state.n_items)
        self.query_one("#items").focus()
        if rest is not None:
            read += await self._read_items(rest)
            header.update(state, read)
        for page in pages:
            try:
                events = await asyncio.to_thread(page_events, page, judges_digits(self.meta),
                                                 str(self.store.root / self.session_id))
            except QatuiError as e:
                self.notify(f"{e}; the items whose results it held show as not judged", severity="error",
                            title="Part of the session cannot be read", timeout=10)
                continue
            read += await self._fold_slices(events)
            header.update(state, read)
        for task in state.tasks.values():
            if task.status == READING:  # no stored result: never judged
                task.status = "queued"
                state.changed.add(task.key)
        browser.refresh_tasks(state.take_changed())
        self.query_one(ItemList).draw_rest()
        browser.show_transcript(state.counts.calls > 0)
        header.update(state, None)
        self.dataset_items = list(state.items)
        if self.item is not None:
            self._select_item(self.item)
        self._worst = state.worst_first()
        if people:  # `g` is offered once every result is read: a gold change measures them all again
            self.golds = ["dataset", *(f"annotator:{name}" for name in people), "majority"]
        self.refresh_bindings()

    async def _read_items(self, rest: Iterator[Item]) -> int:
        """The dataset's items after the first rows', a page at a time, their rows added; then the results held for them.

        Returns how many results those held events closed.
        """
        state, rows = self.state, self.query_one(ItemList)
        while True:
            try:
                items = await asyncio.to_thread(next_items, rest, self.ITEM_PAGE)
            except DatasetError as e:  # the file is the one the session ran on: only a stricter qatui gets here
                state.n_items = len(state.items)
                self.notify(f"{e}; items after the first {len(state.items)} show without their question",
                            title="Part of the dataset cannot be read", severity="error", timeout=10)
                rows.fill(state, n_items=state.n_items)
                break
            if not items:
                break
            added = state.add_items(items)
            for task in added:
                task.status = READING
            rows.extend(added)
            await asyncio.sleep(0)  # let the screen answer keys between pages
        self._items_coming = False
        held, self._held = self._held, []
        return await self._fold_slices(held)

    async def _fold_slices(self, events: list[Event]) -> int:
        """Fold `events` a slice at a time, redrawing what changed between slices; how many results they closed."""
        read = 0
        for start in range(0, len(events), self.FOLD_SLICE):
            read += self._fold(events[start:start + self.FOLD_SLICE])
            self.query_one(ItemBrowser).refresh_tasks(self.state.take_changed())
            await asyncio.sleep(0)  # let the screen answer keys between slices
        return read

    def _fold(self, events: list[Event]) -> int:
        """Fold stored events into the state; how many results (verdicts, failures, n/a) they closed.

        While the dataset's later items are still being read, an event about an item not read yet
        waits in `_held` (its task does not exist yet: made now, it would have no item and come last).
        """
        state = self.state
        if self._items_coming:
            known = [event for event in events if (event.item_id, event.judge) in state.tasks]
            if len(known) < len(events):
                self._held.extend(event for event in events if (event.item_id, event.judge) not in state.tasks)
            events = known
        closed = state.n_finished
        for event in events:
            state.fold(event)
        na = sum(1 for event in events if isinstance(event, ItemNotApplicable))
        return state.n_finished - closed + na

    def _select_item(self, item_id: str) -> None:
        """Select the item's first task and show its transcript (a toast when the session does not hold it)."""
        key = next((key for key in self.state.tasks if key[0] == item_id), None)
        if key is None:
            self.notify(f"this session holds no item {item_id}", severity="warning")
            return
        browser = self.query_one(ItemBrowser)
        browser.select(key)
        browser.choose_transcript(True)  # hidden on a short screen until asked for: the lab asks for it

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "worst":
            return bool(self._worst)
        if action == "gold":
            return len(self.golds) > 1
        if action == "resume":
            return self.state is not None and (self.state.count("done") < len(self.state.tasks))
        return True

    def action_worst(self) -> None:
        """The item with the lowest tau; pressed again, the next lowest."""
        self._worst_at = (self._worst_at + 1) % len(self._worst)
        key = self._worst[self._worst_at]
        self.query_one(ItemBrowser).select(key)
        task = self.state.tasks[key]  # a tie where people chose is no decision, never a measured 0 (as the list says)
        figure = "no decision (a tie where people chose)" if task.undecided else f"tau {task.tau:+.3f}"
        self.notify(f"{key[0]} ({key[1]}): {figure}, worst {self._worst_at + 1} of {len(self._worst)}", timeout=3)

    def action_resume(self) -> None:
        """Judge what this session has not finished: unjudged and failed items."""
        self.app.pop_screen()
        self.qatui.resume_session(self.session_id)

    def action_gold(self) -> None:
        """Measure the judges against the next gold: the dataset's, each annotator's labels, their majority.

        Pressed again before the figures come, the gold after that one: the last asked is shown.
        """
        self._asked = self.golds[(self.golds.index(self._asked) + 1) % len(self.golds)]
        self.measure(self._asked)

    @work(group="gold", exclusive=True, exit_on_error=False, description="measuring against another gold")
    async def measure(self, spec: str) -> None:
        """Measure every judge and task against gold `spec` off the UI thread, then redraw the header and the list."""
        from qatui.report.gold import session_summary

        try:
            session = self.store.open(self.session_id)
            summary, line, dataset = await asyncio.to_thread(session_summary, session, spec, self.store.root)
            beside, why_not = await asyncio.to_thread(or_why_not, lambda: session_beside_people(session,
                                                                                              self.store.root))
        except QatuiError as e:
            self._asked = self.gold
            self.notify(str(e), title="Cannot measure against that gold", severity="error", timeout=10)
            return
        self.gold = spec
        if why_not:
            self.notify(why_not, title="Labels", severity="warning", timeout=10)
        summary = with_ceiling(summary, beside)
        remeasure(self.state, dataset.items if dataset is not None else self.dataset_items)
        self.query_one(ItemBrowser).refresh_tasks(self.state.take_changed())
        header = self.query_one(SessionHeader)
        await header.show(self.meta, summary, self.state, self.found, gold=line)
        header.update(self.state, None)
        self._worst, self._worst_at = self.state.worst_first(), -1
        self.refresh_bindings()

    def action_label(self) -> None:
        """Label this session's items yourself (asks for your name)."""
        self.qatui.ask_labels(self.session_id)

    def action_copy(self) -> None:
        """Copy the focused panel (or every panel of the selected item) to the clipboard as plain text."""
        copy_artifact(self)

    def action_export_report(self) -> None:
        """Write this session as one self-contained HTML file beside the sessions folder (as `qatui report`)."""
        export_report(self, self.store, [self.session_id], self.gold)

    def action_zoom(self) -> None:
        """Every response of the selected item in full, in the judge's order (the panels clip them to a line)."""
        from qatui.tui.screens.full_text import FullTextScreen

        browser = self.query_one(ItemBrowser)
        if browser.state is not None and (key := browser.selected()) in browser.state.tasks:
            self.app.push_screen(FullTextScreen(browser.state.tasks[key]))

    def action_toggle_transcript(self) -> None:
        """Show or hide the LLM transcript pane."""
        self.query_one(ItemBrowser).toggle_transcript()
