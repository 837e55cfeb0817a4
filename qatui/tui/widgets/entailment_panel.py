"""Key points × responses: how far each response entails each key point, P(entail) − P(contradict)."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from qatui.events.labels import response_labels
from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel


class EntailmentPanel(TaskPanel):
    """One table per reference: key points down, responses across, cells coloured by support."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "entailment-panel--support", "entailment-panel--neutral", "entailment-panel--against",
        "entailment-panel--muted",
    }
    """
    | Class | Description |
    | :- | :- |
    | `entailment-panel--support` | A response that entails the point (above +0.3). |
    | `entailment-panel--neutral` | Neither (between −0.3 and +0.3). |
    | `entailment-panel--against` | A response that contradicts the point (below −0.3). |
    | `entailment-panel--muted` | Headings and points not scored yet. |
    """

    DEFAULT_CSS = """
    EntailmentPanel {
        & > .entailment-panel--support { color: $success; text-style: bold; }
        & > .entailment-panel--neutral { color: $warning; }
        & > .entailment-panel--against { color: $error; text-style: bold; }
        & > .entailment-panel--muted { color: $foreground-muted; }
    }
    """

    TITLE = "Key points × responses  P(e)−P(c)"
    PARTS = ("points", "ranking")

    def has_content(self, task: TaskView) -> bool:
        return bool(task.key_points)

    def render(self) -> RenderableType:
        task = self.task
        if task is None:
            return ""
        tables: list[RenderableType] = [self._table(task, ref) for ref in sorted(task.key_points)]
        if task.nli:
            muted = self.get_component_rich_style("entailment-panel--muted", partial=True)
            tables.append(Text(plain(f"NLI model: {task.nli}"), style=muted))
        return Group(*tables)

    def _table(self, task: TaskView, ref: int) -> Table:
        muted = self.get_component_rich_style("entailment-panel--muted", partial=True)
        labels = response_labels(task.order)
        labels = labels or sorted({label for (r, label, _) in task.support if r == ref})
        title = f"reference {ref + 1}" if len(task.key_points) > 1 else None
        table = Table(box=None, padding=(0, 1, 0, 0), expand=True, title=title, title_justify="left",
                      title_style=muted, header_style=muted)
        table.add_column("key point", ratio=1, overflow="fold")
        for label in labels:
            table.add_column(f"R{label.rsplit(' ', 1)[-1]}", justify="right", no_wrap=True, width=5)
        for point in task.key_points[ref]:
            cells = [self._cell(task.support.get((ref, label, point))) for label in labels]
            table.add_row(Text(plain(point)), *cells)
        return table

    def _cell(self, value: float | None) -> Text:
        if value is None:
            return Text("·", style=self.get_component_rich_style("entailment-panel--muted", partial=True))
        kind = "support" if value > 0.3 else "against" if value < -0.3 else "neutral"
        return Text(f"{value:+.2f}", style=self.get_component_rich_style(f"entailment-panel--{kind}", partial=True))
