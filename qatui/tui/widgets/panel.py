"""The base of the item panels: a bordered box that draws one task and hides while it has nothing to say."""

from __future__ import annotations

from typing import ClassVar

from textual.reactive import reactive
from textual.widget import Widget

from qatui.tui.state import TaskView


class TaskPanel(Widget):
    """Renders `task`; subclasses name the parts they draw, say when they have content, and render."""

    DEFAULT_CSS = """
    TaskPanel {
        height: auto;
        border: round $panel-border;
        border-title-color: $accent;
        border-title-style: bold;
        padding: 0 1;
        &:focus { border: round $primary; }
    }
    """

    can_focus = True
    """Focusable (tab), so `y` can copy this one panel."""

    TITLE = ""
    """The panel's border title."""
    PARTS: ClassVar[tuple[str, ...]] = ()
    """The parts of a task this panel draws (keys of `TaskView.revision`)."""

    task: reactive[TaskView | None] = reactive(None, always_update=True, layout=True)
    """The task drawn; set it through `show`, which skips redraws nothing asked for."""

    def __init__(self) -> None:
        super().__init__()
        self._drawn: tuple[object, ...] = ()

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def show(self, task: TaskView) -> None:
        """Draw `task` if it is another task, or if a part this panel draws changed since the last draw."""
        drawn = (task.key, *(task.revision[part] for part in self.PARTS))
        if drawn != self._drawn:
            self._drawn = drawn
            self.task = task

    def watch_task(self, task: TaskView | None) -> None:
        self.display = task is not None and self.has_content(task)

    def has_content(self, task: TaskView) -> bool:
        """Whether this task gives the panel anything to show."""
        return True
