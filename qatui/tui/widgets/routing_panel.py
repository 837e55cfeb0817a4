"""MinosEval's routing decision for the selected item: factoid or not, who decided, and why."""

from __future__ import annotations

from textual.content import Content

from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel


class RoutingPanel(TaskPanel):
    """Shown once the judge has routed the question."""

    TITLE = "Routing"
    PARTS = ("route",)

    def has_content(self, task: TaskView) -> bool:
        return task.route is not None

    def render(self) -> Content:
        route = self.task.route if self.task else None
        if route is None:
            return Content("")
        by = "the dataset's label" if route.source == "gold" else "the LLM"
        head = Content.from_markup("[b $accent]$kind[/] [$foreground-muted]decided by $by[/]",
                                   kind=plain(route.question_type), by=by)
        # one line with its reason where it fits: the key points below are what this judge is read for
        return Content.assemble(head, ": ", plain(route.rationale)) if route.rationale else head
