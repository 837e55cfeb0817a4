"""The judge's ranking of the selected item beside the human one, with the item's Kendall tau."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive

from qatui.data.model import PairwiseGold, RankingGold
from qatui.text import plain
from qatui.ties import rank_label
from qatui.tui.widgets.panel import TaskPanel


class RankingPanel(TaskPanel):
    """Rank, label, candidate id, score and gold rank per response; or the failure, or what it waits for."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ranking-panel--agree", "ranking-panel--disagree", "ranking-panel--muted", "ranking-panel--failed",
    }
    """
    | Class | Description |
    | :- | :- |
    | `ranking-panel--agree` | A tau of +0.3 or more. |
    | `ranking-panel--disagree` | A tau below −0.3. |
    | `ranking-panel--muted` | Headings, waiting text, response snippets. |
    | `ranking-panel--failed` | The reason an item failed. |
    """

    DEFAULT_CSS = """
    RankingPanel {
        & > .ranking-panel--agree { color: $success; text-style: bold; }
        & > .ranking-panel--disagree { color: $error; text-style: bold; }
        & > .ranking-panel--muted { color: $foreground-muted; }
        & > .ranking-panel--failed { color: $error; }
    }
    """

    TITLE = "Ranking"
    PARTS = ("status", "ranking")

    HINT = "z: full texts"
    """The texts are cut to a line here: the key that shows them whole."""

    compact: reactive[bool] = reactive(False)
    """Set on short screens (`ItemBrowser.COMPACT`): no bottom border, so the hint goes in the title."""

    def on_mount(self) -> None:
        super().on_mount()
        self.watch_compact(self.compact)

    def watch_compact(self, compact: bool) -> None:
        self.border_title = f"{self.TITLE} · {self.HINT}" if compact else self.TITLE
        self.border_subtitle = "" if compact else self.HINT

    def render(self) -> RenderableType:
        task = self.task
        muted = self.get_component_rich_style("ranking-panel--muted", partial=True)
        if task is None:
            return ""
        if task.status == "failed":
            return Text("no ranking: the item failed (reason above); resuming the session retries it",
                        style=self.get_component_rich_style("ranking-panel--failed", partial=True))
        if not task.ranking:
            waiting = {"queued": "not judged yet", "running": "waiting for the judge…"}.get(task.status, "no ranking")
            return Text(waiting, style=muted)
        gold = task.item.gold if task.item is not None else None
        grades = gold_positions(gold) if isinstance(gold, (RankingGold, PairwiseGold)) else {}
        table = Table(box=None, padding=(0, 1, 0, 0), expand=True, header_style=muted)
        table.add_column("#", justify="right", no_wrap=True)
        table.add_column("response", no_wrap=True)
        table.add_column("id", no_wrap=True)
        table.add_column("score", justify="right", no_wrap=True)
        if grades:
            table.add_column("gold", justify="right", no_wrap=True)
        table.add_column("text", ratio=1, no_wrap=True, overflow="ellipsis", style=muted)
        for place, label in enumerate(task.ranking, 1):
            cid = task.candidate(label)
            score = task.scores.get(label)
            rank = rank_label(task.tiers, cid) or str(place)  # "1=": tied, as the judge said
            cells = [rank, label, plain(cid), "" if score is None else f"{score:.3f}"]
            if grades:
                cells.append(plain(grades.get(cid, "")))
            text = task.item.candidates.get(cid, "") if task.item is not None else ""
            table.add_row(*map(Text, cells), Text(plain(" ".join(text.split()))))  # Text: a str cell is markup
        parts: list[RenderableType] = [table]
        if task.tau is not None:
            kind = "agree" if task.tau >= 0.3 else "disagree" if task.tau < -0.3 else "muted"
            style = self.get_component_rich_style(f"ranking-panel--{kind}", partial=True)
            if isinstance(gold, PairwiseGold):
                parts.append(Text.assemble(("people prefer ", muted), plain(_side(gold, gold.label)), ("  judge ", muted),
                                           (plain(_side(gold, task.preference)), style)))
            else:
                parts.append(Text.assemble(("Kendall tau vs gold ", muted), (f"{task.tau:+.3f}", style),
                                           (" · no decision: all tied" if task.undecided else "", muted)))
        if task.repair:
            parts.append(Text(plain(f"ranking repaired: {task.repair}"), style=muted))
        return Group(*parts)


def gold_positions(gold: RankingGold | PairwiseGold) -> dict[str, str]:
    """Each candidate's gold tier, 1 = best; tied tiers share a number (a pair's tie: both 1)."""
    if isinstance(gold, PairwiseGold):
        return {gold.a: "2" if gold.label == "B" else "1", gold.b: "2" if gold.label == "A" else "1"}
    return {cid: str(i) for i, tier in enumerate(gold.tiers, 1) for cid in tier}


def _side(gold: PairwiseGold, preference: str | None) -> str:
    """'A (answer)', 'B (poor_answer)' or 'tie'."""
    if preference in ("A", "B"):
        return f"{preference} ({gold.a if preference == 'A' else gold.b})"
    return preference or "?"
