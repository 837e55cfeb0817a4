"""CheckEval's checklist for the selected item: questions down, responses across, yes / no per cell."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from qatui.events.labels import response_labels
from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel

MARKS = {"yes": "yes", "no": "no", None: "?"}
"""How a cell shows an answer; "?" is a question the backbone left unanswered (not scored)."""


class ChecklistPanel(TaskPanel):
    """One table per dimension: each question's answer for each response, and the share of yes."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "checklist-panel--yes", "checklist-panel--no", "checklist-panel--muted",
    }
    """
    | Class | Description |
    | :- | :- |
    | `checklist-panel--yes` | A question the response satisfies. |
    | `checklist-panel--no` | A question it does not. |
    | `checklist-panel--muted` | Headings, unanswered and pending cells. |
    """

    DEFAULT_CSS = """
    ChecklistPanel {
        & > .checklist-panel--yes { color: $success; text-style: bold; }
        & > .checklist-panel--no { color: $error; text-style: bold; }
        & > .checklist-panel--muted { color: $foreground-muted; }
    }
    """

    TITLE = "Checklist  questions × responses"
    PARTS = ("checklist",)

    def has_content(self, task: TaskView) -> bool:
        return bool(task.checklist)

    def render(self) -> RenderableType:
        task = self.task
        if task is None:
            return ""
        labels = response_labels(task.order) or sorted({r for _, r in task.answers})
        dimensions: dict[str, list[str]] = {}
        for qid, (dimension, _) in task.checklist.items():
            dimensions.setdefault(dimension, []).append(qid)
        return Group(*(self._table(task, dimension, qids, labels) for dimension, qids in dimensions.items()))

    def _table(self, task: TaskView, dimension: str, qids: list[str], labels: list[str]) -> Table:
        muted = self.get_component_rich_style("checklist-panel--muted", partial=True)
        table = Table(box=None, padding=(0, 1, 0, 0), expand=True, title=Text(plain(dimension), style=muted), title_justify="left",
                      title_style=muted, header_style=muted)
        table.add_column("question", ratio=1, overflow="fold")
        for label in labels:
            table.add_column(f"R{label.rsplit(' ', 1)[-1]}", justify="right", no_wrap=True, width=4)
        for qid in qids:
            cells = [self._cell(task, qid, label) for label in labels]
            table.add_row(Text(plain(task.checklist[qid][1])), *cells)
        shares = []
        for label in labels:
            found = [task.answers[(q, label)] for q in qids if task.answers.get((q, label)) is not None]
            shares.append(Text(f"{sum(a == 'yes' for a in found) / len(found):.0%}" if found else "–", style=muted))
        table.add_row(Text("share of yes", style=muted), *shares)
        return table

    def _cell(self, task: TaskView, qid: str, label: str) -> Text:
        if (qid, label) not in task.answers:
            return Text("·", style=self.get_component_rich_style("checklist-panel--muted", partial=True))
        answer = task.answers[(qid, label)]
        kind = {"yes": "yes", "no": "no"}.get(answer or "", "muted")
        return Text(MARKS[answer], style=self.get_component_rich_style(f"checklist-panel--{kind}", partial=True))
