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
        labels = response_labels(task.order) or sorted({r for _, r, _ in task.answers})
        dimensions: dict[str, list[str]] = {}
        for qid, (dimension, _) in task.checklist.items():
            dimensions.setdefault(dimension, []).append(qid)
        given: dict[tuple[str, str], list[str | None]] = {}
        """(question id, response label) -> every repeat's answer, in repeat order (one for a judge asked once)."""
        for (qid, label, _), answer in sorted(task.answers.items(), key=lambda found: found[0][2]):
            given.setdefault((qid, label), []).append(answer)
        repeated = any(repeat for _, _, repeat in task.answers)
        tables: list[RenderableType] = [self._table(task, given, dimension, qids, labels, 5 if repeated else 4)
                                        for dimension, qids in dimensions.items()]
        if repeated:
            tables.append(Text("k/K: yes in k of the K repeats that answered it (the judge was asked several times; "
                               "its verdict combines them)", style=self._muted()))
        return Group(*tables)

    def _muted(self):
        return self.get_component_rich_style("checklist-panel--muted", partial=True)

    def _table(self, task: TaskView, given: dict[tuple[str, str], list[str | None]], dimension: str, qids: list[str],
               labels: list[str], width: int) -> Table:
        muted = self._muted()
        table = Table(box=None, padding=(0, 1, 0, 0), expand=True, title=Text(plain(dimension), style=muted), title_justify="left",
                      title_style=muted, header_style=muted)
        table.add_column("question", ratio=1, overflow="fold")
        for label in labels:
            table.add_column(f"R{label.rsplit(' ', 1)[-1]}", justify="right", no_wrap=True, width=width)
        for qid in qids:
            cells = [self._cell(given.get((qid, label), [])) for label in labels]
            table.add_row(Text(plain(task.checklist[qid][1])), *cells)
        shares = []
        for label in labels:  # over every repeat's answers, as the verdict combines them
            found = [a for q in qids for a in given.get((q, label), []) if a is not None]
            shares.append(Text(f"{sum(a == 'yes' for a in found) / len(found):.0%}" if found else "–", style=muted))
        table.add_row(Text("share of yes", style=muted), *shares)
        return table

    def _cell(self, given: list[str | None]) -> Text:
        """One answer's mark; with repeats, the mark they all gave, else k/K (yes in k of K that answered)."""
        if not given:
            return Text("·", style=self._muted())
        if len(set(given)) == 1:
            answer = given[0]
            kind = {"yes": "yes", "no": "no"}.get(answer or "", "muted")
            return Text(MARKS[answer], style=self.get_component_rich_style(f"checklist-panel--{kind}", partial=True))
        answered = [a for a in given if a is not None]
        return Text(f"{sum(a == 'yes' for a in answered)}/{len(answered)}")
