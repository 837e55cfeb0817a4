"""What the Label screen writes: the responses as the draft orders them, and the judges' verdicts beside a label.

Pure functions over the draft and the verdicts (Rich markup out), so the screen only places them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from qatui.metrics.pairwise import judge_preference
from qatui.metrics.people import CODES, gold_decisions, verdict_decisions

if TYPE_CHECKING:
    from qatui.data.labels import Label
    from qatui.data.model import Item
    from qatui.events import Verdict
    from qatui.tui.label_draft import Draft

_WORD = {v: k for k, v in CODES.items()}


def response_heading(draft: Draft, cid: str, names: dict[str, str]) -> str:
    """A response's first line: its place (and tie) in a ranking, its side in a pair, or its ratings."""
    name = names[cid]
    if draft.kind == "ranking":
        place = next(i for i, tier in enumerate(draft.tiers(), 1) if cid in tier)
        tie = " [b]= tied with the one above[/]" if cid in draft.tied else ""
        return f"[b]{place}.[/] {name}{tie}"
    if draft.kind == "pairwise":
        chosen = {"A": draft.order[0], "B": draft.order[1]}.get(draft.preference or "")
        mark = " [b]✓ preferred[/]" if chosen == cid else " [b]= tie[/]" if draft.preference == "tie" else ""
        return f"[b]{name}[/]{mark}"
    given = draft.ratings.get(cid, {})
    shown = [escape(f"{dim} {given[dim]:g}" if dim in given else f"{dim} ·") for dim in draft.dimensions]
    if len(shown) > 1:  # the dimension the digit keys rate now
        shown[draft.dimension] = f"[b u]{shown[draft.dimension]}[/]"
    return f"[b]{name}[/]  " + ", ".join(shown)


def ranking_text(ranking: list[str], names: dict[str, str]) -> str:
    """A judge's strict ranking in the annotator's names: 'R2 > R1 > R3'."""
    return " > ".join(names.get(cid, cid) for cid in ranking)


def judge_lines(item: Item, label: Label | None, judges: list[tuple[str, str, dict[str, Verdict]]],
                names: dict[str, str]) -> list[str]:
    """Each judge's verdict on `item` and, once there is a label, where it differs from it (pairs of responses)."""
    mine = gold_decisions(item.id, label.as_gold()) if label is not None else {}
    lines = []
    for session_id, judge, verdicts in judges:
        if (verdict := verdicts.get(item.id)) is None:
            continue
        head = f"[b]{escape(judge)}[/] [dim]{escape(session_id)}[/]"
        if len(item.candidates) == 2:
            a, b = list(names)[:2]
            said = judge_preference(verdict, a, b)
            verdict_text = names[a] if said == "A" else names[b] if said == "B" else said or "?"
        else:
            verdict_text = ranking_text(verdict.ranking, names)
        lines.append(f"{head}: {escape(verdict_text)}")
        if not mine:
            continue
        theirs = verdict_decisions(item, verdict)
        shared = [unit for unit in mine if unit in theirs]
        differ = [unit for unit in shared if mine[unit] != theirs[unit]]
        if not differ:
            lines.append(f"  [green]agrees with you[/] on {len(shared)} of {len(shared)} pairs")
            continue
        lines.append(f"  [red]differs[/] on {len(differ)} of {len(shared)} pairs:")
        for _, x, y in differ:
            lines.append(f"    {names[x]} vs {names[y]}: judge {_side(theirs[(item.id, x, y)], x, y, names)}, "
                         f"you {_side(mine[(item.id, x, y)], x, y, names)}")
    return lines or ["[dim]No session has judged this item yet.[/]"]


def _side(code: float, x: str, y: str, names: dict[str, str]) -> str:
    """Who a decision prefers: a response's name, or 'tie'."""
    word = _WORD[code]
    return names[x] if word == "A" else names[y] if word == "B" else "tie"
