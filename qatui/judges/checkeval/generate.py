"""`qatui checklist generate`: CheckEval's question augmentation and filtering.

For every sub-dimension of a seed checklist:

1. diversification: one call asks for new questions on other facets of the sub-dimension;
2. elaboration: one call per seed question asks for 3 to `elaborate` (10) narrower questions;
   both start from the seeds only (run independently, never one on the other's output);
   a new question repeating an earlier one of its sub-dimension is dropped or marked
   redundant without asking.

Then, for every dimension, one filter call reviews its seeds and new questions together,
as the paper does (`qatui.judges.checkeval.filter`: alignment, dimension consistency,
redundancy across sub-dimensions, style). Questions are never rewritten.

The output checklist (`stage = "augmented"`) records every question's origin (seed /
diversified / elaborated, and the seed it elaborates), and keeps removed questions with
`removed = true` and the reason, for a person to review; `load_checklist` skips them. Calls
go through the backbone client, so re-running with the same inputs is answered by the LLM
cache.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from qatui.judges.checkeval.checklist import (
    Checklist,
    ChecklistError,
    Dimension,
    Question,
    SubDimension,
    load_checklist,
    parse_checklist,
)
from qatui.judges.checkeval.ask import ask_lines
from qatui.judges.checkeval.filter import (
    DUPLICATE,
    EMPTIED,
    NO_VERDICT,
    filter_dimension,
)
from qatui.judges.prompts import load_prompts

_BULLET = re.compile(r"^\s*(?:[-*•]+|\(?\d+[.):]|Q\d+[.):])?\s*")


def question_lines(text: str, limit: int, exclude: set[str]) -> list[str]:
    """Questions from a one-per-line answer: bullets and numbers stripped, non-questions and repeats dropped."""
    out: list[str] = []
    seen = {q.lower() for q in exclude}
    for line in text.splitlines():
        q = _BULLET.sub("", line).strip().strip('"').strip()
        if len(q) < 10 or not q.endswith("?") or q.lower() in seen or not _encodable(q):
            continue
        seen.add(q.lower())
        out.append(q)
        if len(out) >= limit:
            break
    return out


def _encodable(text: str) -> bool:
    """Whether `text` can be written as UTF-8: a lone surrogate (half an emoji from a JSON escape) cannot."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def questions_schema(limit: int) -> dict:
    """What diversification and elaboration are asked for: {"questions": [...]} (lines are read too)."""
    item = {"type": "string", "minLength": 10, "maxLength": 200}
    return {"type": "object", "required": ["questions"], "additionalProperties": False,
            "properties": {"questions": {"type": "array", "items": item, "minItems": 1, "maxItems": limit}}}


async def augment_sub_dimension(llm: Any, checklist: Checklist, dimension: Dimension, sub: SubDimension,
                                prompts: dict, diversify: int, elaborate: int) -> SubDimension:
    """Seeds + diversified + elaborated questions of one sub-dimension (the filter comes after, per dimension)."""
    seeds = [q for q in sub.questions if not q.removed]
    common = {"task": checklist.task, "dimension": dimension.name, "definition": dimension.definition,
              "sub_dimension": sub.name}
    listed = "\n".join(f"- {q.text}" for q in seeds)
    calls = []
    if diversify:
        calls.append(ask_lines(llm, prompts["diversify"], "diversify", questions_schema(diversify),
                               questions=listed, count=diversify, **common))
    calls += [ask_lines(llm, prompts["elaborate"], "elaborate", questions_schema(elaborate),
                        question=q.text, low=3, high=elaborate, **common) for q in seeds]
    answers = await asyncio.gather(*calls)
    taken = {q.text for q in seeds}
    new: list[Question] = []
    if diversify:
        for text in question_lines(answers.pop(0), diversify, taken):
            new.append(Question(text=text, origin="diversified"))
    taken |= {q.text for q in new}
    for seed, answer in zip(seeds, answers, strict=True):
        for text in question_lines(answer, elaborate, set()):
            if text in taken:  # already asked: no need for the filter to say so
                new.append(Question(text=text, origin="elaborated", parent=seed.text, removed=True,
                                    reason=DUPLICATE))
                continue
            new.append(Question(text=text, origin="elaborated", parent=seed.text))
        taken |= {q.text for q in new}
    return SubDimension(name=sub.name, questions=[*sub.questions, *new])


def _question_table(q: Question) -> dict[str, Any]:
    """One question as its TOML table: text and origin, then only what differs from the defaults."""
    table: dict[str, Any] = {"text": q.text, "origin": q.origin}
    if q.parent:
        table["parent"] = q.parent
    if q.weight != 1.0:
        table["weight"] = q.weight
    if q.removed:
        table["removed"] = True
    if q.reason:
        table["reason"] = q.reason
    return table


def to_toml(checklist: Checklist, header: str = "") -> str:
    """A checklist as TOML, every question as a table (origin, parent, weight, removed, reason).

    Written by a TOML writer (tomli-w), so any text a backbone returns (an emoji, a quote, a
    backslash) is escaped as TOML wants it; the header becomes comment lines.
    """
    import tomli_w

    doc = {"name": checklist.name, "task": checklist.task, "stage": checklist.stage, "target": checklist.target,
           "inputs": dict(checklist.inputs),
           "dimensions": [{"name": d.name, "definition": d.definition,
                           "sub_dimensions": [{"name": sub.name, "questions": [_question_table(q) for q in sub.questions]}
                                              for sub in d.sub_dimensions]}
                          for d in checklist.dimensions]}
    comments = "".join(f"# {line}\n" for line in header.splitlines())
    return comments + tomli_w.dumps(doc)


def check_writable(checklist: Checklist, where: str) -> None:
    """Refuse now, not after the last call, a checklist that would not be written as TOML and read back."""
    try:
        text = to_toml(checklist)
        text.encode("utf-8")
    except (TypeError, ValueError) as e:  # UnicodeEncodeError is a ValueError
        raise ChecklistError(f"checklist {where}: cannot be written as TOML: {e}") from None
    parse_checklist(text, where)


async def generate_checklist(seed_path: str, output: str, llm: Any, *, diversify: int = 2,
                             elaborate: int = 10) -> str:
    """Augment and filter the checklist at `seed_path`, write it to `output`; returns a one-line report.

    Each seed question is elaborated into between 3 and `elaborate` narrower ones (the paper's
    3 to 10 by default). What will be written is checked before any call (the seed list, the
    output's folder) and again after each dimension's new questions, before its filter call,
    so a question that cannot be written stops the run with the calls still to make unpaid.
    """
    if not 3 <= elaborate <= 10:
        raise ChecklistError(f"--elaborate must be between 3 and 10 (got {elaborate})")
    if not 0 <= diversify <= 20:
        raise ChecklistError(f"--diversify must be between 0 and 20 (got {diversify})")
    seed = load_checklist(seed_path)
    if not Path(output).resolve().parent.is_dir():
        raise ChecklistError(f"cannot write {output}: its folder does not exist")
    check_writable(seed, seed_path)
    prompts = load_prompts("checkeval", "en")
    dimensions = []
    for d in seed.dimensions:
        subs = [await augment_sub_dimension(llm, seed, d, sub, prompts, diversify, elaborate) for sub in d.sub_dimensions]
        augmented = d.model_copy(update={"sub_dimensions": subs})
        check_writable(seed.model_copy(update={"dimensions": [augmented]}), f"{seed_path} ({d.name}, augmented)")
        dimensions.append(await filter_dimension(llm, seed, augmented, prompts))
    result = seed.model_copy(update={"dimensions": dimensions, "stage": "augmented"})
    questions = [q for d in dimensions for sub in d.sub_dimensions for q in sub.questions]
    counts = {origin: sum(q.origin == origin for q in questions) for origin in ("seed", "diversified", "elaborated")}
    removed = sum(q.removed for q in questions)
    seeds_removed = sum(q.removed and q.origin == "seed" for q in questions)
    no_verdict = sum(q.reason == NO_VERDICT for q in questions)
    emptied = sum(q.reason == EMPTIED for q in questions)
    report = (f"{counts['seed']} seed, {counts['diversified']} diversified, {counts['elaborated']} elaborated; "
              f"removed {removed} ({seeds_removed} seed), filter gave no verdict on {no_verdict}"
              + (f", seeds kept back in {emptied} emptied" if emptied else "")
              + f"; kept {len(questions) - removed}")
    header = (f"Generated by `qatui checklist generate` from {seed_path} with {getattr(llm, 'model', 'a backbone')}.\n"
              f"{report}.\nReview it: removed questions stay here with `removed = true` and the reason.")
    text = to_toml(result, header)
    Path(output).write_text(text, encoding="utf-8")
    load_checklist(output)  # what was written must load back
    return f"wrote {output}: {report}"
