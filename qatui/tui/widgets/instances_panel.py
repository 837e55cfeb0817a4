"""The silver answers (Excellent … Bad) a judge wrote from the reference for the selected item."""

from __future__ import annotations

from textual.content import Content

from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel


class InstancesPanel(TaskPanel):
    """One line per quality level, best first."""

    TITLE = "Silver instances"
    PARTS = ("instances",)

    def has_content(self, task: TaskView) -> bool:
        return bool(task.instances)

    def render(self) -> Content:
        levels = self.task.instances if self.task else {}
        return Content("\n").join(
            Content.from_markup("[b $secondary]$level[/] $text", level=plain(level.capitalize()), text=plain(text))
            for level, text in levels.items()
        )
