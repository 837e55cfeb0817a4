"""`qatui checklist generate`: CheckEval's question augmentation and filtering.

For every sub-dimension of a seed checklist:

1. diversification: one call asks for new questions on other facets of the sub-dimension;
2. elaboration: one call per seed question asks for 3-10 narrower questions;
   both start from the seeds only (run independently, never one on the other's output);
3. filtering: one call shows the seeds (approved, not reviewed) and the new questions
   numbered Q1..Qn, and takes `Qk: KEEP` or `Qk: REMOVE misaligned|off-dimension|redundant`
   per question. Questions are never rewritten. A question without a parsable verdict is
   kept with the reason "filter gave no verdict"; a question identical to an earlier one
   is removed as redundant before the filter sees it.

The output checklist records every question's origin (seed / diversified / elaborated, and
the seed it elaborates), and keeps removed questions with `removed = true` and the reason,
for a person to review; `load_checklist` skips them. Calls go through the backbone client,
so re-running with the same inputs is answered by the LLM cache.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from qatui.judges.checklist import Checklist, ChecklistError, Dimension, Question, SubDimension, load_checklist
from qatui.judges.prompts import load_prompts

NO_VERDICT = "filter gave no verdict"
REASONS = ("misaligned", "off-dimension", "redundant")

_BULLET = re.compile(r"^\s*(?:[-*•]+|\(?\d+[.):]|Q\d+[.):])?\s*")
_VERDICT = re.compile(r"^[\s>*_#-]*Q\s*(\d+)\s*[*_]*\s*[:.)\-=]\s*[*_]*\s*(keep|remove)\b[ \t:,;.\-–—]*([a-z-]*)",
                      re.IGNORECASE | re.MULTILINE)


def question_lines(text: str, limit: int, exclude: set[str]) -> list[str]:
    """Questions from a one-per-line answer: bullets and numbers stripped, non-questions and repeats dropped."""
    out: list[str] = []
    seen = {q.lower() for q in exclude}
    for line in text.splitlines():
        q = _BULLET.sub("", line).strip().strip('"').strip()
        if len(q) < 10 or not q.endswith("?") or q.lower() in seen:
            continue
        seen.add(q.lower())
        out.append(q)
        if len(out) >= limit:
            break
    return out


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


def questions_schema(limit: int) -> dict:
    """What diversification and elaboration are asked for: {"questions": [...]} (lines are read too)."""
    item = {"type": "string", "minLength": 10, "maxLength": 200}
    return {"type": "object", "required": ["questions"], "additionalProperties": False,
            "properties": {"questions": {"type": "array", "items": item, "minItems": 1, "maxItems": limit}}}


def verdicts_schema(n: int) -> dict:
    """What the filter is asked for: {"Q1": "KEEP" | "REMOVE <reason>", ...} (lines are read too)."""
    choice = {"type": "string", "enum": ["KEEP", *(f"REMOVE {r}" for r in REASONS)]}
    keys = [f"Q{k}" for k in range(1, n + 1)]
    return {"type": "object", "required": keys, "additionalProperties": False,
            "properties": dict.fromkeys(keys, choice)}


async def _ask(llm: Any, section: dict, purpose: str, schema: dict, **fields: Any) -> str:
    """The answer's text; with JSON as asked, rewritten as one line per entry for the line parsers."""
    from qatui.llm.errors import ParseError

    messages = [{"role": "system", "content": section["system"].format()},
                {"role": "user", "content": section["user"].format(**fields)}]
    try:
        result = await llm.complete(messages, purpose=purpose, schema=schema, max_tokens=600)
    except ParseError as e:  # not the JSON asked for: read its lines as they are
        return e.text
    data = result.data if isinstance(result.data, dict) else None
    if data is None:
        return result.text
    if isinstance(data.get("questions"), list):
        return "\n".join(str(q) for q in data["questions"])
    return "\n".join(f"{k}: {v}" for k, v in data.items())


async def augment_sub_dimension(llm: Any, checklist: Checklist, dimension: Dimension, sub: SubDimension,
                                prompts: dict, diversify: int, elaborate: int) -> SubDimension:
    """Seeds + diversified + elaborated questions of one sub-dimension, reviewed by the filter."""
    seeds = [q for q in sub.questions if not q.removed]
    common = {"task": checklist.task, "dimension": dimension.name, "definition": dimension.definition,
              "sub_dimension": sub.name}
    listed = "\n".join(f"- {q.text}" for q in seeds)
    calls = []
    if diversify:
        calls.append(_ask(llm, prompts["diversify"], "diversify", questions_schema(diversify),
                          questions=listed, count=diversify, **common))
    calls += [_ask(llm, prompts["elaborate"], "elaborate", questions_schema(elaborate),
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
                                    reason="redundant: the same text as an earlier question"))
                continue
            new.append(Question(text=text, origin="elaborated", parent=seed.text))
        taken |= {q.text for q in new}
    review = [q for q in new if not q.removed]
    if review:
        others = ", ".join(d.name for d in checklist.dimensions if d.name != dimension.name) or "(none)"
        text = await _ask(llm, prompts["filter"], "filter", verdicts_schema(len(review)), others=others, seeds=listed,
                            questions="\n".join(f"Q{k}: {q.text}" for k, q in enumerate(review, 1)), **common)
        verdicts = iter(parse_verdicts(text, len(review)))
        new = [q if q.removed else _judged(q, next(verdicts)) for q in new]
    return SubDimension(name=sub.name, questions=[*sub.questions, *new])


def _judged(question: Question, verdict: tuple[bool, str] | None) -> Question:
    if verdict is None:
        return question.model_copy(update={"reason": NO_VERDICT})
    removed, reason = verdict
    return question.model_copy(update={"removed": removed, "reason": reason})


def to_toml(checklist: Checklist, header: str = "") -> str:
    """A checklist as TOML, every question as a table (origin, parent, weight, removed, reason)."""
    s = json.dumps
    out = [f"# {line}" for line in header.splitlines()]
    out += [f"name = {s(checklist.name)}", f"task = {s(checklist.task)}", f"target = {s(checklist.target)}", "",
            "[inputs]"]
    out += [f"{k} = {s(v)}" for k, v in checklist.inputs.items()]
    for d in checklist.dimensions:
        out += ["", "[[dimensions]]", f"name = {s(d.name)}", f"definition = {s(d.definition)}"]
        for sub in d.sub_dimensions:
            out += ["", "[[dimensions.sub_dimensions]]", f"name = {s(sub.name)}"]
            for q in sub.questions:
                out += ["[[dimensions.sub_dimensions.questions]]", f"text = {s(q.text)}", f"origin = {s(q.origin)}"]
                if q.parent:
                    out.append(f"parent = {s(q.parent)}")
                if q.weight != 1.0:
                    out.append(f"weight = {q.weight}")
                if q.removed:
                    out.append("removed = true")
                if q.reason:
                    out.append(f"reason = {s(q.reason)}")
    return "\n".join(out) + "\n"


async def generate_checklist(seed_path: str, output: str, llm: Any, *, diversify: int = 2,
                             elaborate: int = 3) -> str:
    """Augment and filter the checklist at `seed_path`, write it to `output`; returns a one-line report."""
    if not 3 <= elaborate <= 10:
        raise ChecklistError(f"--elaborate must be between 3 and 10 (got {elaborate})")
    if not 0 <= diversify <= 20:
        raise ChecklistError(f"--diversify must be between 0 and 20 (got {diversify})")
    seed = load_checklist(seed_path)
    prompts = load_prompts("checkeval", "en")
    dimensions = []
    for d in seed.dimensions:
        subs = [await augment_sub_dimension(llm, seed, d, sub, prompts, diversify, elaborate) for sub in d.sub_dimensions]
        dimensions.append(d.model_copy(update={"sub_dimensions": subs}))
    result = seed.model_copy(update={"dimensions": dimensions})
    questions = [q for d in dimensions for sub in d.sub_dimensions for q in sub.questions]
    counts = {origin: sum(q.origin == origin for q in questions) for origin in ("seed", "diversified", "elaborated")}
    removed = sum(q.removed for q in questions)
    no_verdict = sum(q.reason == NO_VERDICT for q in questions)
    report = (f"{counts['seed']} seed, {counts['diversified']} diversified, {counts['elaborated']} elaborated; "
              f"filter removed {removed}, gave no verdict on {no_verdict}; kept {len(questions) - removed}")
    header = (f"Generated by `qatui checklist generate` from {seed_path} with {getattr(llm, 'model', 'a backbone')}.\n"
              f"{report}.\nReview it: removed questions stay here with `removed = true` and the reason.")
    text = to_toml(result, header)
    Path(output).write_text(text, encoding="utf-8")
    load_checklist(output)  # what was written must load back
    return f"wrote {output}: {report}"
