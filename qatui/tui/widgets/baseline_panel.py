"""The baselines' steps for the selected item: pointwise scores, A/B choices, LINKAGE places, G-Eval ratings."""

from __future__ import annotations

from textual.content import Content

from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel

SHOWN_STEPS = 40
"""At most this many lines (a G-Eval item of 8 responses × 3 dimensions is 24)."""


class BaselinePanel(TaskPanel):
    """Shown once a baseline judge has taken a step on the item."""

    TITLE = "Baseline steps"
    PARTS = ("baseline",)

    def has_content(self, task: TaskView) -> bool:
        """Whether a baseline judge has reported a step."""
        return bool(task.baseline_steps)

    def render(self) -> Content:
        """One line a step, the latest last."""
        steps = self.task.baseline_steps if self.task else []
        more = len(steps) - SHOWN_STEPS
        lines = [Content(plain(line)) for line in steps[-SHOWN_STEPS:]]
        if more > 0:
            lines.insert(0, Content.from_markup("[$foreground-muted]$n earlier steps not shown[/]", n=more))
        return Content("\n").join(lines)
