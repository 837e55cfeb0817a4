"""A saved session, read-only: the run screen's panels over the stored results.

    Header
    SessionHeader  status, dataset, LLM usage; per judge its metrics with CIs and a sparkline
                   of per-item Kendall tau
    ItemBrowser    items with status and tau | the selected item's panels | its LLM calls
    Footer

`w` walks the items from the judge's worst agreement with people upwards.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header, LoadingIndicator

from qatui.errors import QatuiError
from qatui.tui.saved import load_saved
from qatui.tui.clipboard import copy_artifact
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.state import RunState
from qatui.tui.widgets.item_browser import ItemBrowser
from qatui.tui.widgets.session_header import SessionHeader

if TYPE_CHECKING:
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
        Binding("a", "label", "Label"),
        Binding("g", "gold", "Gold"),
        Binding("escape", "app.pop_screen", "Home"),
    ]

    def __init__(self, store: SessionStore, session_id: str) -> None:
        super().__init__()
        self.store = store
        self.session_id = session_id
        self.state: RunState | None = None
        self.meta: dict = {}
        self.found = False
        self.gold = "dataset"
        self.golds = ["dataset"]
        """The golds `g` cycles through: the dataset's, each annotator of this dataset, their majority."""
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
        """Read the session's results and dataset off the UI thread, then draw them."""
        def read() -> tuple[dict, dict, RunState, bool, list[str]]:
            from qatui.store.labels import LabelStore

            session = self.store.open(self.session_id)
            people = list(LabelStore(self.store.root).labels_of(session.meta["dataset"]["content_hash"]))
            return (session.meta, session.summary(), *load_saved(session), people)

        try:
            self.meta, summary, self.state, found, people = await asyncio.to_thread(read)
        except QatuiError as e:
            self.notify(str(e), title="Cannot open the session", severity="error", timeout=10)
            self.app.pop_screen()
            return
        self.sub_title = f"session {self.meta.get('name') or self.session_id}"
        self.query_one(LoadingIndicator).remove()
        self.found = found
        if people:
            self.golds = ["dataset", *(f"annotator:{name}" for name in people), "majority"]
        self.query_one(SessionHeader).show(self.meta, summary, self.state, found)
        browser = self.query_one(ItemBrowser)
        browser.display = True
        browser.show_transcript(self.state.counts.calls > 0)
        browser.show(self.state)
        self._worst = self.state.worst_first()
        self.query_one("#items").focus()
        self.refresh_bindings()

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

    @work(group="gold", exclusive=True, exit_on_error=False, description="measuring against another gold")
    async def action_gold(self) -> None:
        """Measure the judges against the next gold: the dataset's, each annotator's labels, their majority."""
        from qatui.report.gold import session_summary

        spec = self.golds[(self.golds.index(self.gold) + 1) % len(self.golds)]
        session = self.store.open(self.session_id)
        summary, line = await asyncio.to_thread(session_summary, session, spec, self.store.root)
        self.gold = spec
        self.query_one(SessionHeader).show(self.meta, summary, self.state, self.found, gold=line)

    def action_label(self) -> None:
        """Label this session's items yourself (asks for your name)."""
        self.qatui.ask_labels(self.session_id)

    def action_copy(self) -> None:
        """Copy the focused panel (or every panel of the selected item) to the clipboard as plain text."""
        copy_artifact(self)

    def action_toggle_transcript(self) -> None:
        """Show or hide the LLM transcript pane."""
        self.query_one(ItemBrowser).toggle_transcript()
