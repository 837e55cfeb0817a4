"""CheckEval's question filter as the paper has it: one call per dimension, seeds and new questions together.

The filter sees every question of a dimension that is still in (the seeds people wrote and
the diversified and elaborated ones), grouped by sub-dimension and numbered Q1..Qn in one
sequence, beside the dimension's definition and the other dimensions' definitions, and
answers `Qk: KEEP` or `Qk: REMOVE <reason>` for each, with the paper's criteria:
misaligned ("yes" would not mean better), off-dimension (strays from the definition, or
belongs more to another dimension), redundant (asks what an earlier question of the
dimension asks, in any sub-dimension), exaggerated (overstated wording) and minor (a
detail too small to matter). Questions are never rewritten; a question without a parsable
verdict is kept with the reason "filter gave no verdict"; a question whose text repeats
an earlier one of the dimension word for word is removed as redundant before the call.
Seeds can be removed like any other question. Should the filter remove every question of
a dimension, its seeds are kept (with a reason saying so), so the list still loads.
"""

from __future__ import annotations

import re
from typing import Any

from qatui.judges.checklist import Checklist, Dimension, Question, SubDimension
from qatui.judges.checklist_ask import ask_lines

NO_VERDICT = "filter gave no verdict"
DUPLICATE = "redundant: the same text as an earlier question"
EMPTIED = "kept: the filter removed every question of this dimension"
REASONS = ("misaligned", "off-dimension", "redundant", "exaggerated", "minor")

_VERDICT = re.compile(r"^[\s>*_#-]*Q\s*(\d+)\s*[*_]*\s*[:.)\-=]\s*[*_]*\s*(keep|remove)\b[ \t:,;.\-–—]*([a-z-]*)",
                      re.IGNORECASE | re.MULTILINE)


def parse_verdicts(text: str, n: int) -> list[tuple[bool, str] | None]:
    """(removed, reason) per question Q1..Qn; None without a usable (single, consistent) verdict."""
    found: dict[int, set[tuple[bool, str]]] = {}
    for m in _VERDICT.finditer(text):
        k = int(m.group(1))
        if not 1 <= k <= n:
            continue
        if m.group(2).lower() == "keep":
            found.setdefault(k, set()).add((False, ""))
        else:
            reason = m.group(3).lower()
            found.setdefault(k, set()).add((True, reason if reason in REASONS else "removed (no reason given)"))
    return [next(iter(found[k])) if len(found.get(k, ())) == 1 else None for k in range(1, n + 1)]


def verdicts_schema(n: int) -> dict:
    """What the filter is asked for: {"Q1": "KEEP" | "REMOVE <reason>", ...} (lines are read too)."""
    choice = {"type": "string", "enum": ["KEEP", *(f"REMOVE {r}" for r in REASONS)]}
    keys = [f"Q{k}" for k in range(1, n + 1)]
    return {"type": "object", "required": keys, "additionalProperties": False,
            "properties": dict.fromkeys(keys, choice)}


def _judged(question: Question, verdict: tuple[bool, str] | None) -> Question:
    if verdict is None:
        return question.model_copy(update={"removed": False, "reason": NO_VERDICT})
    removed, reason = verdict
    return question.model_copy(update={"removed": removed, "reason": reason})


def _drop_repeats(dimension: Dimension) -> list[list[Question]]:
    """Each sub-dimension's questions, those repeating an earlier active question word for word removed."""
    seen: set[str] = set()
    out = []
    for sub in dimension.sub_dimensions:
        kept = []
        for q in sub.questions:
            key = " ".join(q.text.lower().split())
            if not q.removed and key in seen:
                q = q.model_copy(update={"removed": True, "reason": DUPLICATE})
            seen.add(key)
            kept.append(q)
        out.append(kept)
    return out


async def filter_dimension(llm: Any, checklist: Checklist, dimension: Dimension, prompts: dict) -> Dimension:
    """`dimension` with every active question reviewed by one filter call (see the module docstring)."""
    section = prompts["filter"]
    groups = _drop_repeats(dimension)
    review = [(i, j) for i, qs in enumerate(groups) for j, q in enumerate(qs) if not q.removed]
    if not review:
        return dimension
    lines, k = [], 0
    for sub, qs in zip(dimension.sub_dimensions, groups, strict=True):
        if active := [q for q in qs if not q.removed]:
            lines.append(section["group_line"].format(sub_dimension=sub.name))
            for q in active:
                k += 1
                lines.append(f"Q{k}: {q.text}")
    others = "\n".join(section["other_line"].format(dimension=d.name, definition=d.definition)
                       for d in checklist.dimensions if d.name != dimension.name) or "(none)"
    budget = max(600, 64 + 12 * len(review))
    text = await ask_lines(llm, section, "filter", verdicts_schema(len(review)), max_tokens=budget, task=checklist.task,
                           dimension=dimension.name, definition=dimension.definition, others=others,
                           questions="\n".join(lines))
    for (i, j), verdict in zip(review, parse_verdicts(text, len(review)), strict=True):
        groups[i][j] = _judged(groups[i][j], verdict)
    if not any(not q.removed for qs in groups for q in qs):
        reviewed = {(i, j) for i, j in review}
        seeds = {(i, j) for i, j in reviewed if groups[i][j].origin == "seed"} or reviewed
        for i, j in seeds:
            groups[i][j] = groups[i][j].model_copy(update={"removed": False, "reason": EMPTIED})
    subs = [SubDimension(name=sub.name, questions=qs) for sub, qs in zip(dimension.sub_dimensions, groups, strict=True)]
    return dimension.model_copy(update={"sub_dimensions": subs})
