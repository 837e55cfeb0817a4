"""The `[[...]]` verdict format of the MinosEval and LINKAGE baselines: a strict reader and one re-ask.

The papers' prompts end with "output your final verdict strictly as [[8.12]]" (or [[A]],
[[2]]). Reading is strict: the LAST `[[...]]` in the answer is the verdict (an answer may
quote the format before giving its own), and its inside must be exactly the expected type
in range (a number 0-10 with at most two decimals, the letter A or B, a whole number
1..n); anything else is unreadable, never guessed. Model output is only matched with
regular expressions, never evaluated.

`ask_bracketed` makes the call and reads it. The judges send a JSON schema whose one string
field is constrained to the bracket format (a pattern or an enum), so a backbone with
constrained decoding (the embedded `local/smollm2`) cannot drift from it; the reader still
reads the verdict field of the parsed JSON (`verdict_text`), and a backbone that answers in prose
is read from its raw text the same way. One re-ask
at most per answer: the client's repair re-ask when the JSON does not parse (its answer
is then read as it is), else, when the JSON parsed but its verdict cannot be read, one
re-ask here naming the problem (purpose `<purpose>:reask`). Still unreadable: `ParseError`
with the reason and the answer, and the judge fails the item. An answer that gives two different
verdicts (two JSON values that each fit the schema, one key twice: `ParseError.ambiguous`) is never read as
prose after the client's re-ask: its last `[[...]]` may be the draft's, or a quote inside an explanation, so
the item fails with the client's reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from qatui.llm.errors import ParseError, snippet
from qatui.llm.fence import without_fenced

T = TypeVar("T")

_BRACKETED = re.compile(r"\[\[([^\[\]]*)\]\]")
_SCORE = re.compile(r"\d{1,2}(?:\.\d{1,2})?")
_WHOLE = re.compile(r"\d{1,3}")


class Unreadable(ValueError):
    """An answer whose `[[...]]` verdict is missing, of the wrong type, or out of range."""


def last_bracketed(text: str) -> str:
    """The inside of the last `[[...]]` in `text`, stripped; `Unreadable` when there is none.

    Fenced blocks the answer echoes back from the prompt (`qatui.llm.fence`) are left out first:
    a `[[A]]` inside a candidate the model quoted whole is the candidate's, never the verdict.
    """
    found = _BRACKETED.findall(without_fenced(text))
    if not found:
        raise Unreadable("no [[...]] verdict in the answer")
    return found[-1].strip()


def _number(text: str, shape: re.Pattern[str], kind: str, convert: Callable[[str], T], low: T, high: T,
            bounds: str) -> T:
    """The last `[[...]]` as a number of `shape` (else "not {kind}") from `low` to `high` (else "outside {bounds}")."""
    inside = last_bracketed(text)
    if not shape.fullmatch(inside):
        raise Unreadable(f"[[{inside}]] is not {kind}")
    value = convert(inside)
    if not low <= value <= high:  # type: ignore[operator]
        raise Unreadable(f"[[{inside}]] is outside {bounds}")
    return value


def read_score(text: str, low: float = 0.0, high: float = 10.0) -> float:
    """A score such as `[[8.12]]`: a number with at most two decimals, from `low` to `high`."""
    return _number(text, _SCORE, "a score such as [[8.12]]", float, low, high, f"{low:.2f}-{high:.2f}")


def read_choice(text: str, choices: Sequence[str] = ("A", "B")) -> str:
    """One of `choices` (case ignored), such as `[[A]]`."""
    inside = last_bracketed(text)
    for choice in choices:
        if inside.upper() == choice.upper():
            return choice
    raise Unreadable(f"[[{inside}]] is not one of {', '.join(f'[[{c}]]' for c in choices)}")


def read_whole(text: str, low: int, high: int) -> int:
    """A whole number from `low` to `high`, such as `[[2]]`."""
    return _number(text, _WHOLE, "a whole number", int, low, high, f"{low}-{high}")


def score_pattern() -> str:
    """The JSON-schema pattern of `[[0.00]]`..`[[10.00]]` with two decimals (constrained decoding)."""
    return r"^\[\[(10[.]00|[0-9][.][0-9][0-9])\]\]$"


def bracket_enum(values: Sequence[object]) -> list[str]:
    """The exact answers allowed, `[[v]]` for each value (an enum for constrained decoding)."""
    return [f"[[{v}]]" for v in values]


@dataclass(frozen=True)
class Bracketed(Generic[T]):
    """One answer read: the text read, its value, whether it took a re-ask, and the call's result."""

    raw: str
    value: T
    reasked: bool
    result: Any = None


async def ask_bracketed(llm: Any, messages: list[dict[str, Any]], read: Callable[[str], T], *, purpose: str,
                        schema: Any, reask: str, **call: Any) -> Bracketed[T]:
    """Ask, read the last `[[...]]` strictly, re-ask once when it cannot be read (see the module docstring)."""
    repaired = False
    try:
        result = await llm.complete(messages, purpose=purpose, schema=schema, **call)
        text = result.text
        repaired = str(getattr(getattr(result, "event", None), "purpose", "")).endswith(":repair")
    except ParseError as e:  # the JSON did not parse after the client's own re-ask: read what came back
        if e.ambiguous:  # two different answers in one: reading its raw text would pick one of them
            raise
        result, text, repaired = None, e.text, True
    try:
        return Bracketed(raw=text, value=read(verdict_text(result, text, schema)), reasked=repaired, result=result)
    except Unreadable as first:
        if repaired:
            raise _unreadable(purpose, first, text) from None
        again = [*messages, {"role": "assistant", "content": text},
                 {"role": "user", "content": reask.format(reason=first)}]
    try:
        result = await llm.complete(again, purpose=f"{purpose}:reask", schema=schema, **call)
        text2 = result.text
    except ParseError as e:
        if e.ambiguous:
            raise
        result, text2 = None, e.text
    try:
        return Bracketed(raw=text2, value=read(verdict_text(result, text2, schema)), reasked=True, result=result)
    except Unreadable as second:
        raise _unreadable(purpose, second, text2, first_text=text) from None


def verdict_text(result: Any, text: str, schema: Any = None) -> str:
    """What the verdict is read from: the verdict field of the JSON answer, else the raw `text`.

    Each bracket schema ends with its verdict field (`verdict`, `score`, `position`), after any
    explanation. When the answer parsed as that JSON, or the whole answer is a JSON object
    holding that field (one that failed the schema otherwise, say without its explanation),
    only that field is read: an explanation quoting a candidate's `[[B]]` (before or after the
    verdict, in any key order) is never the verdict. A prose answer is read whole (its last `[[...]]`).
    """
    data = getattr(result, "data", None)
    model = type(data) if isinstance(data, BaseModel) else schema
    field = list(model.model_fields)[-1] if isinstance(model, type) and issubclass(model, BaseModel) else None
    if field is None:
        return text
    if isinstance(data, BaseModel) and isinstance(value := getattr(data, field), str):
        return value
    try:
        whole = json.loads(text, strict=False)
    except ValueError:
        return text
    return whole[field] if isinstance(whole, dict) and isinstance(whole.get(field), str) else text


def _unreadable(purpose: str, reason: Unreadable, text: str, first_text: str | None = None) -> ParseError:
    earlier = f"; first answer {snippet(first_text)}" if first_text is not None else ""
    return ParseError(f"{purpose}: {reason} after one re-ask (answer {snippet(text)}{earlier})",
                      text=text, reason=str(reason))
