"""Items on the left, the selected item's panels on the right: the body of the run and session screens."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize

from qatui.tui.state import RunState, TaskKey
from qatui.tui.widgets.baseline_panel import BaselinePanel
from qatui.tui.widgets.checklist_panel import ChecklistPanel
from qatui.tui.widgets.entailment_panel import EntailmentPanel
from qatui.tui.widgets.instances_panel import InstancesPanel
from qatui.tui.widgets.item_list import ItemList
from qatui.tui.widgets.jury_panel import JuryPanel
from qatui.tui.widgets.pairwise_panel import PairwisePanel
from qatui.tui.widgets.panel import TaskPanel
from qatui.tui.widgets.question_panel import QuestionPanel
from qatui.tui.widgets.ragas_panel import RagasPanel
from qatui.tui.widgets.ranking_panel import RankingPanel
from qatui.tui.widgets.routing_panel import RoutingPanel
from qatui.tui.widgets.transcript_panel import TranscriptPanel


class RankingBox(VerticalScroll, can_focus=False):
    """Holds the ranking below the scrolling panels, so it is always in view; scrolls only when it is very long."""


class ItemBrowser(Horizontal):
    """Shows a `RunState`; the owner calls `show` once and `refresh_tasks` as tasks change.

    The ranking beside the gold is the verdict people look for, so it is pinned under the
    scrolling panels (question, routing, key points, …) and above the transcript: whatever the
    size, it is in view without scrolling.
    """

    DEFAULT_CSS = """
    ItemBrowser {
        height: 1fr;
        & > #detail { width: 1fr; }
        & #panels { height: 1fr; min-height: 3; }
        & #panels:focus { background-tint: $foreground 4%; }
        & #panels, & RankingBox { scrollbar-size-vertical: 1; }
        & RankingBox { height: auto; max-height: 55%; }
        & TranscriptPanel { height: 35%; min-height: 6; }
        & TranscriptPanel.-hidden { display: none; }
        & #detail.-transcript-only > #panels, & #detail.-transcript-only > RankingBox { display: none; }
        & #detail.-transcript-only > TranscriptPanel { height: 1fr; }
        &.-compact #panels > TaskPanel, &.-compact RankingBox > TaskPanel {
            border: none; border-top: round $panel-border;
        }
        &.-compact #panels > TaskPanel:focus, &.-compact RankingBox > TaskPanel:focus { border-top: round $primary; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("h", "toggle_thinking", "Thinking", show=False),  # the transcript's folded thoughts say the key
    ]

    SMALL = 30
    """Below this many rows the transcript starts hidden, leaving the judge's output the room (t shows it), and
    when shown it takes the panels' place rather than squeezing them to their titles."""

    def __init__(self, *, transcript: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: RunState | None = None
        self._transcript = transcript
        self._chosen = False

    def compose(self) -> ComposeResult:
        yield ItemList(id="items")
        with Vertical(id="detail"):
            with VerticalScroll(id="panels"):
                yield QuestionPanel()
                yield JuryPanel()
                yield RoutingPanel()
                yield EntailmentPanel()
                yield InstancesPanel()
                yield ChecklistPanel()
                yield PairwisePanel()
                yield RagasPanel()
                yield BaselinePanel()
            with RankingBox(id="ranking-box"):
                yield RankingPanel()
            yield TranscriptPanel(id="transcript").set_class(not self._transcript, "-hidden")

    COMPACT = 30
    """Below this many terminal rows the panels drop their bottom borders (each still opens with its titled top
    border; the ranking's hint moves into its title) and the question leaves out a gold the ranking shows in its
    own column, so that on 80x24 the judge's own output (MinosEval's routing and key points) fits under the
    question without scrolling."""

    def on_resize(self, event: Resize) -> None:
        compact = self.app.size.height < self.COMPACT
        self.set_class(compact, "-compact")
        self.query_one(QuestionPanel).compact = compact
        self.query_one(RankingPanel).compact = compact
        if self._transcript and not self._chosen:
            self.query_one(TranscriptPanel).set_class(event.size.height < self.SMALL, "-hidden")
        self._place_transcript()

    def _place_transcript(self) -> None:
        """On a short screen a shown transcript has the detail column to itself (t gives the panels back)."""
        transcript = self.query_one(TranscriptPanel)
        alone = not transcript.has_class("-hidden") and 0 < self.size.height < self.SMALL
        self.query_one("#detail").set_class(alone, "-transcript-only")
        transcript.border_title = "LLM transcript · t: back to the verdict" if alone else "LLM transcript"

    def show(self, state: RunState, *, rest_later: bool = False, n_items: int | None = None) -> None:
        """Draw a run from scratch and select its first task (`rest_later`, `n_items`: see `ItemList.fill`)."""
        self.state = state
        items = self.query_one(ItemList)
        items.fill(state, rest_later=rest_later, n_items=n_items)
        if state.tasks:
            self._draw(next(iter(state.tasks)))

    def refresh_tasks(self, keys: Iterable[TaskKey]) -> None:
        """Redraw these tasks' rows, and the panels if the selected task is among them."""
        if self.state is None:
            return
        keys = set(keys)
        self.query_one(ItemList).update_tasks(self.state.tasks[k] for k in keys if k in self.state.tasks)
        if (selected := self.query_one(ItemList).selected()) in keys:
            self._draw(selected)

    def select(self, key: TaskKey) -> None:
        """Move the list's cursor to a task (its panels follow)."""
        self.query_one(ItemList).select(key)

    def selected(self) -> TaskKey | None:
        """The task whose panels are shown."""
        return self.query_one(ItemList).selected()

    def watched(self) -> TaskKey | None:
        """The task whose transcript is on screen (None when the transcript is hidden): the one worth streaming."""
        transcript = self.query_one(TranscriptPanel)
        return None if transcript.has_class("-hidden") or not self.display else self.selected()

    def toggle_transcript(self) -> None:
        """Show or hide the transcript pane, whatever the size (the `t` key)."""
        self.choose_transcript(self.query_one(TranscriptPanel).has_class("-hidden"))

    def choose_transcript(self, shown: bool) -> None:
        """Show or hide the transcript pane as asked, whatever the size: the choice stands against the size rule."""
        self._chosen = True
        self.query_one(TranscriptPanel).set_class(not shown, "-hidden")
        self._place_transcript()

    def action_toggle_thinking(self) -> None:
        """Unfold (or fold again) what a reasoning model thought before each answer in the transcript."""
        self.query_one(TranscriptPanel).toggle_thinking()

    def show_transcript(self, visible: bool) -> None:
        """Whether this run has a transcript at all (not for judges that make no LLM calls).

        Said again as a session's later pages are read: a choice made with `t` meanwhile stands (it was undone).
        Said before the browser is laid out (no height yet: not a short one), the size rule waits for `on_resize`
        (it hid the transcript of a tall screen until the first resize, a state a key could act on)."""
        self._transcript = visible
        panel = self.query_one(TranscriptPanel)
        if not visible:
            panel.add_class("-hidden")
        elif not self._chosen and self.size.height:
            panel.set_class(self.size.height < self.SMALL, "-hidden")
        self._place_transcript()

    def on_item_list_picked(self, event: ItemList.Picked) -> None:
        event.stop()
        self._draw(event.key)

    def _draw(self, key: TaskKey) -> None:
        if self.state is None or key not in self.state.tasks:
            return
        task = self.state.tasks[key]
        for panel in self.query(TaskPanel):
            panel.show(task)
        self.query_one(TranscriptPanel).show(task)
