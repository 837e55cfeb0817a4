"""A jury's members on the selected item: each member's verdict as it comes, and where they split."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text

from qatui.events import MemberVerdict
from qatui.text import plain
from qatui.ties import member_tiers, tiers_text
from qatui.tui.state import TaskView
from qatui.tui.widgets.pairwise_panel import short
from qatui.tui.widgets.panel import TaskPanel


def verdict_text(member: MemberVerdict) -> str:
    """A member's verdict in a few characters: 'R2', 'tie', 'R2 > R1 > R3', or why there is none."""
    if member.status == "n/a":
        return "n/a"
    if member.status == "failed":
        return "failed"
    if member.winner is not None:
        return short(member.winner)
    return tiers_text(member_tiers(member), short)


def split_text(members: list[MemberVerdict]) -> tuple[str, bool]:
    """(where the members that answered stand, whether they split)."""
    done = [m for m in members if m.status == "done"]
    if len(done) < 2:
        return ("fewer than two members answered", False)
    if all(m.winner is not None for m in done):
        votes = Counter(short(m.winner) for m in done)
        top, n = votes.most_common(1)[0]
        counted = " · ".join(f"{choice} {k}" for choice, k in votes.most_common())
        if n == len(done):
            return (f"all {len(done)} say {top}", False)
        return (f"split: {counted}" + (f"; majority {top}" if n * 2 > len(done) else "; no strict majority: tie"),
                True)
    best = Counter(tiers_text(member_tiers(m)[:1], short) for m in done)  # a top tie is its own answer
    if len(best) == 1:
        return (f"all {len(done)} put {next(iter(best))} first", False)
    return ("split on the best: " + " · ".join(f"{label} {n}" for label, n in best.most_common()), True)


class JuryPanel(TaskPanel):
    """One row per member (its verdict, its scores or why it gave none), then whether the members split."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"jury-panel--agree", "jury-panel--split", "jury-panel--muted"}
    """
    | Class | Description |
    | :- | :- |
    | `jury-panel--agree` | The members that answered agree. |
    | `jury-panel--split` | They split: the verdict is the aggregation's, not a consensus. |
    | `jury-panel--muted` | Headings, scores, reasons. |
    """

    DEFAULT_CSS = """
    JuryPanel {
        & > .jury-panel--agree { color: $success; text-style: bold; }
        & > .jury-panel--split { color: $warning; text-style: bold; }
        & > .jury-panel--muted { color: $foreground-muted; }
    }
    """

    TITLE = "Jury · members"
    PARTS = ("jury", "status")

    def has_content(self, task: TaskView) -> bool:
        return bool(task.members)

    def render(self) -> RenderableType:
        task = self.task
        if task is None:
            return ""
        muted = self.get_component_rich_style("jury-panel--muted", partial=True)
        members = list(task.members.values())
        by_repeat: dict[int, list[MemberVerdict]] = {}
        for m in members:  # a jury asked K times: each repeat's members, and where they stand, apart
            by_repeat.setdefault(m.repeat, []).append(m)
        repeated = any(by_repeat.keys() - {0})
        name_width = min(max(len(m.member) for m in members), 30)
        verdict_width = max(len(verdict_text(m)) for m in members)
        lines: list[Text] = []
        for repeat in sorted(by_repeat):
            which = f"#{repeat + 1} " if repeated else ""
            for m in by_repeat[repeat]:
                detail = " · ".join(f"{short(label)} {value:.3g}" for label, value in m.scores.items()) \
                    if m.status == "done" else " ".join(m.reason.split())
                name = m.member if len(m.member) <= name_width else m.member[:name_width - 1] + "…"
                line = Text.assemble(plain(f"{which}{name:<{name_width}}  {verdict_text(m):<{verdict_width}}  "),
                                     (plain(detail), muted))
                line.no_wrap, line.overflow = True, "ellipsis"
                lines.append(line)
            words, split = split_text(by_repeat[repeat])
            if task.status == "running" and repeat == max(by_repeat):
                words += " (members still judging…)"
            lines.append(Text(which + words, style=self.get_component_rich_style(
                f"jury-panel--{'split' if split else 'agree' if task.status == 'done' else 'muted'}", partial=True)))
        if repeated:
            lines.append(Text("#k: repeat k of the jury asked several times; the verdict combines the repeats",
                              style=muted))
        return Group(*lines)
