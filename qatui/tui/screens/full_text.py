"""Every response of one item in full, over the screen that asked (z): the panels clip a response to one line.

The ranking table gives each response a line and cuts it with an ellipsis, so two answers that
open alike read the same there. This pane shows the question, each reference and every
response whole, wrapped, in the judge's ranking order with its rank, score and gold place, so
the texts behind a verdict can be read before trusting it. Data is drawn as text, never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from qatui.text import plain

if TYPE_CHECKING:
    from qatui.tui.state import TaskView


def full_text(task: TaskView) -> Content:
    """The item's question, references and every response in full, ranked responses first (as the judge ranked)."""
    from qatui.data.model import PairwiseGold, RankingGold
    from qatui.tui.widgets.ranking_panel import gold_positions

    item = task.item
    if item is None:
        return Content.from_markup("[$foreground-muted]The dataset file cannot be reloaded: its texts are gone.[/]")
    gold = gold_positions(item.gold) if isinstance(item.gold, (RankingGold, PairwiseGold)) else {}
    parts = [Content.assemble(("Question", "bold"), "\n", plain(item.question))]
    for i, ref in enumerate(item.references, 1):
        parts.append(Content.assemble((f"Reference {i}" if len(item.references) > 1 else "Reference", "bold"),
                                      "\n", plain(ref)))
    ranked = [task.candidate(label) for label in task.ranking]
    rest = [cid for cid in item.candidates if cid not in ranked]
    for cid in [*ranked, *rest]:
        label = task.label(cid)
        facts = [f"id {cid}"]
        if cid in ranked:
            facts.insert(0, f"#{ranked.index(cid) + 1}")
        if (score := task.scores.get(label)) is not None:
            facts.append(f"score {score:.3f}")
        if cid in gold:
            facts.append(f"gold {gold[cid]}")
        head = Content.assemble((plain(label), "bold"), "  ", (plain(" · ".join(facts)), "dim"))
        parts.append(Content.assemble(head, "\n", plain(item.candidates.get(cid, ""))))
    return Content("\n\n").join(parts)


class FullTextScreen(ModalScreen[None]):
    """The selected item's texts whole, scrolling; escape or z closes it."""

    HELP_TITLE = "full texts"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,z,q", "dismiss", "Close"),
    ]
    DEFAULT_CSS = """
    FullTextScreen {
        align: center middle;
        & > VerticalScroll {
            width: 90%; height: 90%; border: round $primary; border-title-color: $accent;
            background: $surface; padding: 0 1; scrollbar-size-vertical: 1;
        }
    }
    """

    def __init__(self, task: TaskView) -> None:
        super().__init__()
        self.task_view = task

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = Content(plain(f"{self.task_view.item_id} · {self.task_view.judge} · full texts"))
            box.border_subtitle = "esc closes"
            yield Static(full_text(self.task_view), id="texts")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
