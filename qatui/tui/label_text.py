"""What the Label screen writes: the responses as the draft orders them, and the judges' verdicts beside a label.

Pure functions over the draft and the verdicts (Textual `Content` out: data as text, never markup), so the
screen only places them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from qatui.metrics.pairwise import judge_preference
from qatui.metrics.people import CODES, gold_decisions, verdict_decisions
from qatui.report.versions import version_text
from qatui.text import plain
from qatui.ties import tiers_text

if TYPE_CHECKING:
    from qatui.data.labels import Label
    from qatui.data.model import Item
    from qatui.report.label_agreement import JudgeRun
    from qatui.tui.label_draft import Draft

_WORD = {v: k for k, v in CODES.items()}


def response_heading(draft: Draft, cid: str, names: dict[str, str]) -> Content:
    """A response's first line: its place (and tie) in a ranking, its side in a pair, or its ratings."""
    name = plain(names[cid])
    if draft.kind == "ranking":
        place = next(i for i, tier in enumerate(draft.tiers(), 1) if cid in tier)
        tie = " = tied with the one above" if cid in draft.tied else ""
        return Content.assemble((f"{place}.", "bold"), f" {name}", (tie, "bold"))
    if draft.kind == "pairwise":
        chosen = {"A": draft.order[0], "B": draft.order[1]}.get(draft.preference or "")
        mark = " ✓ preferred" if chosen == cid else " = tie" if draft.preference == "tie" else ""
        return Content.assemble((name, "bold"), (mark, "bold"))
    given = draft.ratings.get(cid, {})
    shown = [Content(plain(f"{dim} {given[dim]:g}" if dim in given else f"{dim} ·")) for dim in draft.dimensions]
    if len(shown) > 1:  # the dimension the digit keys rate now
        shown[draft.dimension] = shown[draft.dimension].stylize("bold underline")
    return Content.assemble((name, "bold"), "  ", Content(", ").join(shown))


def ranking_text(tiers: list[list[str]], names: dict[str, str]) -> str:
    """A judge's tied groups in the annotator's names: 'R2 > R1 = R3' (raw: show it through `plain`)."""
    return tiers_text(tiers, lambda cid: names.get(cid, cid))


def judge_lines(item: Item, label: Label | None, judges: list[JudgeRun],
                names: dict[str, str]) -> list[Content]:
    """Each judge's verdict on `item` and, once there is a label, where it differs from it (pairs of responses)."""
    mine = gold_decisions(item.id, label.as_gold()) if label is not None else {}
    lines = []
    versions: dict[str, set[str | None]] = {}
    for run in judges:
        versions.setdefault(run.judge, set()).add(run.version)
    for session_id, judge, version, verdicts in judges:
        if (verdict := verdicts.get(item.id)) is None:
            continue
        shown = f"{session_id} {version_text(version)}" if len(versions[judge]) > 1 else session_id  # which is which
        head = Content.assemble((plain(judge), "bold"), " ", (plain(shown), "dim"))
        if len(item.candidates) == 2:
            a, b = list(names)[:2]
            said = judge_preference(verdict, a, b)
            verdict_text = names[a] if said == "A" else names[b] if said == "B" else said or "?"
        else:
            verdict_text = ranking_text(verdict.tiers, names)
        lines.append(Content.assemble(head, ": ", plain(verdict_text)))
        if not mine:
            continue
        theirs = verdict_decisions(item, verdict)
        shared = [unit for unit in mine if unit in theirs]
        differ = [unit for unit in shared if mine[unit] != theirs[unit]]
        if not differ:
            lines.append(Content.from_markup("  [green]agrees with you[/] on $n of $n pairs", n=len(shared)))
            continue
        lines.append(Content.from_markup("  [red]differs[/] on $n of $of pairs:", n=len(differ), of=len(shared)))
        for _, x, y in differ:
            lines.append(Content(plain(f"    {names[x]} vs {names[y]}: judge {_side(theirs[(item.id, x, y)], x, y, names)}, "
                                       f"you {_side(mine[(item.id, x, y)], x, y, names)}")))
    return lines or [Content.from_markup("[dim]No session has judged this item yet.[/]")]


def _side(code: float, x: str, y: str, names: dict[str, str]) -> str:
    """Who a decision prefers: a response's name, or 'tie'."""
    word = _WORD[code]
    return names[x] if word == "A" else names[y] if word == "B" else "tie"
