"""Pairwise verdicts (CALF): each pair of responses judged in both orders, and what the two orders make together."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from qatui.events import PairJudged
from qatui.events.labels import label_number
from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel


def short(label: str | None) -> str:
    """'Response 3' -> 'R3'; 'tie' and None ('?') as they are."""
    if label is None:
        return "?"
    return f"R{number}" if (number := label_number(label)) is not None else label


def _position(label: str) -> int:
    """'Response 3' -> 3 (other labels last)."""
    number = label_number(label)
    return int(number) if number is not None and number.isdigit() else 1 << 30


class PairwisePanel(TaskPanel):
    """One row per pair: the winner as first shown (left one as A), swapped, and the two combined; a judge asked
    K times (`repeats`) gets one row per pair per repeat, marked #k, each combining that repeat's orders only."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "pairwise-panel--consistent", "pairwise-panel--bias", "pairwise-panel--muted",
    }
    """
    | Class | Description |
    | :- | :- |
    | `pairwise-panel--consistent` | Both orders chose the same response. |
    | `pairwise-panel--bias` | The orders disagree (position bias): the pair counts as a tie. |
    | `pairwise-panel--muted` | Headings, rationales and unparsed answers. |
    """

    DEFAULT_CSS = """
    PairwisePanel {
        & > .pairwise-panel--consistent { color: $success; text-style: bold; }
        & > .pairwise-panel--bias { color: $warning; }
        & > .pairwise-panel--muted { color: $foreground-muted; }
    }
    """

    TITLE = "Pairwise · both orders"
    PARTS = ("pairs", "status")

    def has_content(self, task: TaskView) -> bool:
        return bool(task.pairs)

    def render(self) -> RenderableType:
        from qatui.judges.pairwise.judge import combine

        task = self.task
        if task is None:
            return ""
        muted = self.get_component_rich_style("pairwise-panel--muted", partial=True)
        pairs: dict[tuple[int, frozenset[str]], list[PairJudged]] = {}
        for judged in task.pairs:  # one row per pair of each repeat: a repeat's orders combine, never two repeats'
            pairs.setdefault((judged.repeat, frozenset((judged.first, judged.second))), []).append(judged)
        repeated = any(repeat for repeat, _ in pairs)
        table = Table(box=None, padding=(0, 2, 0, 0), header_style=muted)
        table.add_column("pair", no_wrap=True)
        table.add_column("as shown", no_wrap=True)
        table.add_column("swapped", no_wrap=True)
        table.add_column("result", no_wrap=True, overflow="ellipsis")
        rationales: list[Text] = []
        for (repeat, _), orders in pairs.items():
            orders.sort(key=lambda j: _position(j.first) > _position(j.second))  # as presented first, then swapped
            first = orders[0]
            votes = [short(j.winner) for j in orders[:2]] + ["…"] * (2 - len(orders))
            shown, kind = self._result(orders, combine([j.winner for j in orders]), task.status in ("done", "failed"))
            which = f" #{repeat + 1}" if repeated else ""
            table.add_row(f"{short(first.first)}–{short(first.second)}{which}", *votes,
                          Text(shown, style=self.get_component_rich_style(f"pairwise-panel--{kind}", partial=True)))
            for judged in orders:
                if judged.rationale:
                    line = Text.assemble((f"{short(judged.first)} vs {short(judged.second)}{which}: ", muted),
                                         plain(" ".join(judged.rationale.split())))
                    line.no_wrap, line.overflow = True, "ellipsis"
                    rationales.append(line)
        parts: list[RenderableType] = [table]
        if repeated:
            parts.append(Text("#k: repeat k of the judge asked several times; each row combines that repeat's "
                              "orders, the verdict the repeats", style=muted))
        if rationales:
            parts.append(Text(""))
            parts.extend(rationales)
        return Group(*parts)

    @staticmethod
    def _result(orders: list[PairJudged], result: str | None, finished: bool) -> tuple[str, str]:
        """What a pair's row says it came to, and the style of that (one order only when the judge asks once)."""
        if len(orders) < 2 and not finished:
            return "waiting", "muted"
        if result is None:
            return "no usable answer", "muted"
        if result == "tie" and any(j.winner not in (None, "tie") for j in orders):
            return "tie (order bias)", "bias"
        return short(result), "consistent"
