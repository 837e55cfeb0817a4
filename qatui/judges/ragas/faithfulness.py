"""RAGAS faithfulness: the answer split into statements, each checked against the item's context.

One call extracts the statements (an answer the backbone returns none for is split into its
sentences instead); one call verifies them all. Score = supported / statements with a verdict.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, WithJsonSchema, create_model

from qatui.events import (
    Event,
    StatementsExtracted,
    StatementsVerified,
    StatementVerdict,
)
from qatui.judges.prompts import chat, guarded, numbered_lines
from qatui.judges.ragas.plan import EMPTY_ANSWER
from qatui.judges.ragas.sentences import split_sentences
from qatui.judges.schemas import capped_strings, token_budget
from qatui.llm.errors import ParseError

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView
    from qatui.judges.resources import Resources

MAX_STATEMENTS = 16
"""Statements kept per response (small models loop); the advertised schema caps the list too."""
STATEMENT_CHARS = 300
REASON_CHARS = 160


class Statements(BaseModel):
    """The statements call's answer: the answer's short self-contained claims."""

    statements: Annotated[list[str], capped_strings(MAX_STATEMENTS, STATEMENT_CHARS, 1)]


@cache
def verdicts_schema(n: int) -> type[BaseModel]:
    """`verdicts`: advertised as exactly `n` {reason, verdict: yes|no} objects; any list validates,
    so a short or odd answer reaches `read_verdicts` and its gaps become unanswered."""
    advertised = WithJsonSchema({
        "type": "array",
        "items": {"type": "object",
                  "properties": {"reason": {"type": "string", "maxLength": REASON_CHARS},
                                 "verdict": {"type": "string", "enum": ["yes", "no"]}},
                  "required": ["reason", "verdict"], "additionalProperties": False},
        "minItems": n, "maxItems": n,
    })
    return create_model("Verdicts", verdicts=(Annotated[list[Any], advertised], ...))


def _verdict_value(value: Any) -> bool | None:
    """True for yes, False for no (in the forms models write them), None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().strip(".!\"'").casefold()
        if word in ("yes", "y", "true", "supported", "是"):
            return True
        if word in ("no", "n", "false", "not supported", "unsupported", "否"):
            return False
    return None


def read_verdicts(raw: list[Any], statements: list[str]) -> list[StatementVerdict]:
    """One verdict per statement, by position, or by the entries' `statement` numbers when every
    entry carries a distinct valid one. Missing, extra and unreadable entries leave the
    statement unanswered (supported None)."""
    n = len(statements)
    entries = [e if isinstance(e, dict) else {"verdict": e} for e in raw]
    numbers = [e.get("statement") for e in entries]
    if (entries and all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n for k in numbers)
            and len(set(numbers)) == len(numbers)):
        slots = {k - 1: e for k, e in zip(numbers, entries)}
    else:
        slots = dict(enumerate(entries[:n]))
    out = []
    for i, statement in enumerate(statements):
        entry = slots.get(i, {})
        reason = entry.get("reason")
        out.append(StatementVerdict(statement=statement, supported=_verdict_value(entry.get("verdict")),
                                    reason=reason.strip()[:REASON_CHARS] if isinstance(reason, str) else ""))
    return out


async def faithfulness(view: ItemView, label: str, answer: str, prompts: dict, record: Callable[..., None],
                       extra: dict, *, resources: Resources, temperature: float | None) -> AsyncIterator[Event]:
    """Score one response's faithfulness: `record("faithfulness", label, score, failure)`, events as it goes.

    An empty answer claims nothing: no call is made, and it has no score."""
    if not answer.strip():
        record("faithfulness", label, None, EMPTY_ANSWER)
        return
    llm = resources.llm
    try:
        result = await llm.complete(guarded(chat(prompts["statements"], ("statements",), {"answer": "Answer"},
                                                 question=view.question, answer=answer), view.language),
                                    purpose="statements", schema=Statements, temperature=temperature,
                                    max_tokens=token_budget(MAX_STATEMENTS, STATEMENT_CHARS))
        raw = list(result.data.statements)
    except ParseError as e:
        record("faithfulness", label, None, f"statements could not be read: {e.reason}")
        return
    statements = list(dict.fromkeys(s.strip() for s in raw if isinstance(s, str) and s.strip()))
    if not statements:
        statements = list(dict.fromkeys(split_sentences(answer, view.language)))
        extra.setdefault("statements_fallback", []).append(label)
    statements = statements[:MAX_STATEMENTS]
    yield StatementsExtracted(response=label, statements=statements)
    if not statements:
        record("faithfulness", label, None, "the answer has no statement to check")
        return
    section = prompts["verify"]
    numbered = numbered_lines(section["statement_line"], statements)
    try:
        result = await llm.complete(guarded(chat(section, ("verdicts",), {"context": "Context"},
                                                 context="\n\n".join(view.context), statements=numbered),
                                            view.language),
                                    purpose="verify", schema=verdicts_schema(len(statements)),
                                    temperature=temperature, max_tokens=token_budget(len(statements), REASON_CHARS, 20))
        verdicts = read_verdicts(list(result.data.verdicts), statements)
    except ParseError as e:  # not the verdict list asked for, after the client's re-ask: no score from a part of it
        record("faithfulness", label, None, f"verdicts could not be read: {e.reason}")
        return
    yield StatementsVerified(response=label, verdicts=verdicts)
    answered = [v.supported for v in verdicts if v.supported is not None]
    extra.setdefault("statements", {})[label] = {"total": len(verdicts), "supported": sum(answered),
                                                 "unanswered": len(verdicts) - len(answered)}
    if not answered:
        record("faithfulness", label, None, "no statement got a yes / no verdict")
        return
    record("faithfulness", label, sum(answered) / len(answered))
