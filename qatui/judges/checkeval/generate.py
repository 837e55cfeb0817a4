"""`qatui checklist generate`: CheckEval's question augmentation and filtering.

For every sub-dimension of a seed checklist:

1. diversification: one call asks for new questions on other facets of the sub-dimension;
2. elaboration: one call per seed question asks for 3 to `elaborate` (10) narrower questions;
   both start from the seeds only (run independently, never one on the other's output);
   a new question repeating an earlier one of its sub-dimension is dropped or marked
   redundant without asking.

Then, for every dimension, one filter call reviews its seeds and new questions together,
as the paper does (alignment, dimension consistency, redundancy across sub-dimensions,
style). Questions are never rewritten.

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

Each call's answer is read as one entry per line (`ask_lines`): JSON as asked, rewritten so.

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
from qatui.judges.prompts import load_prompts
from qatui.judges.schemas import capped_strings, numbered_answers

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
    return numbered_answers(n, ["KEEP", *(f"REMOVE {r}" for r in REASONS)])


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


async def ask_lines(llm: Any, section: dict, purpose: str, schema: dict, max_tokens: int = 600, **fields: Any) -> str:
    """The answer's text; with JSON as asked, rewritten as one line per entry for the line parsers."""
    from qatui.llm.errors import ParseError

    messages = [{"role": "system", "content": section["system"].format()},
                {"role": "user", "content": section["user"].format(**fields)}]
    try:
        result = await llm.complete(messages, purpose=purpose, schema=schema, max_tokens=max_tokens)
    except ParseError as e:  # not the JSON asked for: read its lines as they are
        return e.text
    data = result.data if isinstance(result.data, dict) else None
    if data is None:
        return result.text
    if isinstance(data.get("questions"), list):
        return "\n".join(str(q) for q in data["questions"])
    return "\n".join(f"{k}: {v}" for k, v in data.items())


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
    questions = capped_strings(limit, 200, min_items=1, min_length=10).json_schema
    return {"type": "object", "required": ["questions"], "additionalProperties": False,
            "properties": {"questions": questions}}


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
    from qatui.store.output_file import write_output

    written = write_output(output, text)
    if written.is_file():  # what was written must load back (a pipe or a device cannot be read again)
        load_checklist(written)
    return f"wrote {output}: {report}"
