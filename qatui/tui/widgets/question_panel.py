"""The selected item's question, its reference answers and the human gold."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive

from qatui.data.model import PairwiseGold, RankingGold
from qatui.report import describe_gold
from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel


class QuestionPanel(TaskPanel):
    """Question, references (numbered when several) and the gold, or why they are unknown."""

    TITLE = "Question"
    PARTS = ("status",)

    compact: reactive[bool] = reactive(False, layout=True)
    """Set on short screens (`ItemBrowser.COMPACT`): a ranking or pairwise gold is left out here, since the
    Ranking panel shows it (its gold column, or "people prefer")."""

    def watch_task(self, task: TaskView | None) -> None:
        super().watch_task(task)
        if task is not None:
            self.border_title = Content(plain(f"{task.item_id} · {task.judge}"))

    def render(self) -> Content:
        task = self.task
        if task is None:
            return Content("")
        item = task.item
        if item is None:
            missing = Content.from_markup(
                "[$foreground-muted]The dataset file cannot be reloaded: stored results only.[/]")
            return missing if not task.failure else Content.from_markup(
                "$missing\n[b $error]failed[/] [$error]$why[/]", missing=missing, why=plain(task.failure))
        lines = [Content(plain(item.question)).stylize("bold")]
        many = len(item.references) > 1
        for i, ref in enumerate(item.references, 1):
            label = f"reference {i}" if many else "reference"
            lines.append(Content.from_markup("[$foreground-muted]$label[/] $ref", label=label, ref=plain(ref)))
        if item.gold is not None and not (self.compact and isinstance(item.gold, (RankingGold, PairwiseGold))):
            lines.append(Content.from_markup("[$foreground-muted]gold[/] $gold", gold=plain(describe_gold(item))))
        if task.failure:
            lines.append(Content.from_markup("[b $error]failed[/] [$error]$why[/]", why=plain(task.failure)))
        return Content("\n").join(lines)
