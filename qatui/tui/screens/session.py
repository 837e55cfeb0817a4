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
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header, LoadingIndicator

from qatui.errors import QatuiError
from qatui.events import Event, ItemNotApplicable
from qatui.tui.clipboard import copy_artifact
from qatui.tui.report_file import export_report
from qatui.tui.saved import READING, page_events, remeasure, saved_state
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.state import RunState
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
        Binding("a", "label", "Label items", show=False),
        Binding("g", "gold", "Gold", priority=True),  # before a focused table's g (first row), when labels exist
        Binding("e", "export_report", "Export report (HTML)", show=False),
        Binding("escape", "app.pop_screen", "Home"),
    ]
    FOLD_SLICE = 2000
    """Stored events folded between two screen updates while a big session loads (about 40 ms of work)."""

    def __init__(self, store: SessionStore, session_id: str) -> None:
        super().__init__()
        self.store = store
        self.session_id = session_id
        self.state: RunState | None = None
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

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield SessionHeader()
        yield LoadingIndicator()
        yield ItemBrowser()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"session {self.session_id}"
        self.query_one(ItemBrowser).display = False
        self.load()

    @work(group="load", exclusive=True, exit_on_error=False, description="reading a session")
    async def load(self) -> None:
        """Draw the session from its first page of results, then fold in the rest a page at a time.

        Reading and validating stored results runs in threads; folding them into the state runs
        here, a slice at a time, so a 10,000-item session paints its first rows at once and the
        list fills in while it stays responsive. Rows not read yet show as `reading`.
        """
        def first() -> tuple[dict, dict, RunState, bool, list[Callable[[], list[dict]]], list[Event], list[str]]:
            from qatui.store.labels import LabelStore

            session = self.store.open(self.session_id)
            people = list(LabelStore(self.store.root).labels_of(session.meta["dataset"]["content_hash"]))
            state, found = saved_state(session)
            for task in state.tasks.values():
                task.status = READING
            pages = session.result_pages()
            events = page_events(pages[0]) if pages else []
            return session.meta, session.summary(), state, found, pages[1:], events, people

        try:
            self.meta, summary, self.state, found, pages, events, people = await asyncio.to_thread(first)
        except QatuiError as e:
            self.notify(str(e), title="Cannot open the session", severity="error", timeout=10)
            self.app.pop_screen()
            return
        state = self.state
        read = self._fold(events)
        self.sub_title = f"session {self.meta.get('name') or self.session_id}"
        self.query_one(LoadingIndicator).remove()
        self.found, self.dataset_items = found, list(state.items)
        header = self.query_one(SessionHeader)
        await header.show(self.meta, summary, state, found)
        header.update(state, read)
        browser = self.query_one(ItemBrowser)
        browser.display = True
        browser.show_transcript(state.counts.calls > 0)
        browser.show(state, rest_later=True)
        self.query_one("#items").focus()
        for page in pages:
            try:
                events = await asyncio.to_thread(page_events, page)
            except QatuiError as e:
                self.notify(f"{e}; the items whose results it held show as not judged", severity="error",
                            title="Part of the session cannot be read", timeout=10)
                continue
            for start in range(0, len(events), self.FOLD_SLICE):
                read += self._fold(events[start:start + self.FOLD_SLICE])
                browser.refresh_tasks(state.take_changed())
                await asyncio.sleep(0)  # let the screen answer keys between slices
            header.update(state, read)
        for task in state.tasks.values():
            if task.status == READING:  # no stored result: never judged
                task.status = "queued"
                state.changed.add(task.key)
        browser.refresh_tasks(state.take_changed())
        self.query_one(ItemList).draw_rest()
        browser.show_transcript(state.counts.calls > 0)
        header.update(state, None)
        self._worst = state.worst_first()
        if people:  # `g` is offered once every result is read: a gold change measures them all again
            self.golds = ["dataset", *(f"annotator:{name}" for name in people), "majority"]
        self.refresh_bindings()

    def _fold(self, events: list[Event]) -> int:
        """Fold stored events into the state; how many results (verdicts, failures, n/a) they closed."""
        state = self.state
        closed = state.n_finished
        for event in events:
            state.fold(event)
        na = sum(1 for event in events if isinstance(event, ItemNotApplicable))
        return state.n_finished - closed + na

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
        tau = self.state.tasks[key].tau
        self.notify(f"{key[0]} ({key[1]}): tau {tau:+.3f}, worst {self._worst_at + 1} of {len(self._worst)}",
                    timeout=3)

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
        except QatuiError as e:
            self._asked = self.gold
            self.notify(str(e), title="Cannot measure against that gold", severity="error", timeout=10)
            return
        self.gold = spec
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

    def action_toggle_transcript(self) -> None:
        """Show or hide the LLM transcript pane."""
        self.query_one(ItemBrowser).toggle_transcript()
