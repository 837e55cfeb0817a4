"""The raw text the backbone wrote for the selected item, streaming in as tokens arrive."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from qatui.text import plain
from qatui.tui.state import TaskView

TAIL_CHARS = 8_000
"""How much of a long transcript is kept on screen (the calls are stored in full)."""


class TranscriptPanel(VerticalScroll):
    """A scrolling pane of the task's LLM calls; follows the end unless the user scrolled up."""

    DEFAULT_CSS = """
    TranscriptPanel {
        height: 1fr;
        border: round $panel-border;
        border-title-color: $accent;
        border-title-style: bold;
        padding: 0 1;
        &:focus { border: round $primary; }
        & > Static { width: 1fr; color: $text-muted; }
    }
    """

    task: reactive[TaskView | None] = reactive(None, always_update=True)
    """The task whose transcript is shown; set it through `show`."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._drawn: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static()

    def on_mount(self) -> None:
        self.border_title = "LLM transcript"

    def show(self, task: TaskView) -> None:
        """Draw `task` if it is another task, or if text arrived or its status changed since the last draw."""
        drawn = (task.key, task.revision["transcript"], task.revision["status"])
        if drawn != self._drawn:
            follow = not self._drawn or self._drawn[0] != task.key or self.is_vertical_scroll_end
            self._drawn = drawn
            self.task = task
            if follow:
                self.call_after_refresh(self.scroll_end, animate=False)

    def watch_task(self, task: TaskView | None) -> None:
        text = "".join(task.transcript)[-TAIL_CHARS:] if task else ""
        if task is not None and not text:
            calls = {"queued": "not started yet", "running": "waiting for the first LLM answer (a call that does not "
                     "stream shows here whole when it ends)"}.get(task.status, "this judge made no LLM calls")
            self.query_one(Static).update(Content.from_markup("[$foreground-muted i]$what[/]", what=calls))
        else:
            self.query_one(Static).update(Content(plain(text)))
