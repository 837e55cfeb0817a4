"""Reading structured answers out of model text: JSON first, then repaired JSON. Never eval.

Models wrap JSON in prose, in ```json fences, leave trailing commas, write Python-style single
quotes and True/None, leave keys unquoted, add // comments or forget a comma. `extract_json_values`
yields every plausible JSON value in the text, best guess first: the whole text, fenced blocks,
then balanced {...} / [...] spans; each strictly with `json.loads`, and only if that fails through
the `json-repair` library, under qatui's own rules on top (`_repaired`; what the library does
without them: docs/LIBRARIES.md#json-repair):

- only a balanced span is repaired: one that opens with { or [ and ends at its own closer, every
  string in it closed. json-repair would close a cut-off answer (`{"choice": "A", "rat`) and make
  a value of it; a truncated answer is never read as a verdict;
- only an object or a list counts: json-repair turns prose into "" rather than failing;
- a value that opens inside other brackets is taken only when those brackets are strict JSON
  (`_candidates`): json-repair reads a quote with unescaped quotes in many ways, and a
  candidate's `{"choice": "B"}` quoted inside a broken rationale is never the model's verdict.

Nothing here evaluates model output (`eval` and `ast.literal_eval` are not used anywhere);
json-repair parses text, it runs none.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from qatui.llm.errors import LLMCallError, ParseError, snippet

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}
_MAX_SPANS = 32
PARSE_INLINE_CHARS = 50_000
"""An answer longer than this is read off the event loop (`parse_within`): 8 MB of brackets take seconds."""
_MAX_OPENERS = 256
_MAX_SCAN = 2_000_000
"""Characters the span search may step over in all, whatever the text: a megabyte of brackets took minutes."""
_NEXT = re.compile(r"\s*(\S?)")
_WORD = re.compile(r"\b[^\W\d]\w*\b")
_MARKER = re.compile(r'"qatui\d+_\d+"')
_LITERALS = frozenset({"true", "false", "null", "True", "False", "None"})
"""Words a repair turns into values, not strings: the only ones it may take out of the text."""
_DOUBLE_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)


class _TwoValuesForOneKey(ValueError):
    """An object that gives one key two different values: `{"choice": "A", "choice": "B"}` is two answers, and
    Python's reader would keep the last one silently."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the answer gives the key {key!r} two different values: which one it means cannot be told")


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key given twice is taken only when both values are the same."""
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value and value[key] != item:
            raise _TwoValuesForOneKey(key)
        value[key] = item
    return value


def _loads(text: str) -> Any:
    """`json.loads`, lenient on raw newlines in strings; nesting too deep for Python's reader is no JSON, and an
    object giving one key two values is none either (ValueError)."""
    try:  # strict=False: raw newlines inside strings are fine
        return json.loads(text, strict=False, object_pairs_hook=_one_value_per_key)
    except RecursionError:
        raise ValueError("nested too deep") from None


def _end_of_double(text: str, start: int) -> int:
    """Index of the closing quote of the "string" opening at `start` (or len(text) if unterminated)."""
    end = _DOUBLE_BODY.match(text, start + 1).end()  # a regular expression: a long string is read at C speed
    return end if end < len(text) and text[end] == '"' else len(text)


def _end_of_single(text: str, start: int) -> int:
    """Index of the closing quote of the 'string' opening at `start`.

    An apostrophe only closes the string when what follows it (after blanks) could follow
    a JSON value (, } ] : or the end), so 'it's fine' stays one string.
    """
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "'":
            follow = _NEXT.match(text, i + 1)[1]  # not a copy of the rest: linear on a long text
            if not follow or follow in ",}]:":
                return i
        i += 1
    return len(text)


def _span_end(text: str, start: int, limit: int) -> tuple[int, bool]:
    """Where the {...} or [...] opening at `start` ends (the index after its closer), and whether it closed
    before `limit` with every bracket matched (strings respected)."""
    stack = [_CLOSERS[text[start]]]
    i = start + 1
    while i < limit and stack:
        c = text[i]
        if c == '"':
            i = _end_of_double(text, i)
        elif c == "'":
            i = _end_of_single(text, i)
        elif c in _CLOSERS:
            stack.append(_CLOSERS[c])
        elif c in "}]":
            if c != stack[-1]:
                break
            stack.pop()
        i += 1
    return i, not stack


def _balanced_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every balanced {...} or [...] span, by position of its opener (strings respected)."""
    found = tried = scanned = 0
    for start, ch in enumerate(text):
        if ch not in _CLOSERS:
            continue
        tried += 1
        if tried > _MAX_OPENERS:  # each try scans to the end: bound the work on long, bracket-heavy text
            return
        end, closed = _span_end(text, start, min(len(text), start + 1 + _MAX_SCAN - scanned))
        scanned += end - start
        if closed:
            yield start, end
            found += 1
            if found >= _MAX_SPANS:
                return
        if scanned >= _MAX_SCAN:
            return


def _strict(piece: str) -> tuple[bool, Any]:
    """(True, value) when `piece` is JSON as it stands; (False, None) otherwise."""
    try:
        return True, _loads(piece)
    except ValueError:
        return False, None


class _Unrepairable(Exception):
    """A repair that broke one of qatui's rules: the piece is no JSON."""


def _hold_strings(piece: str) -> tuple[str, dict[str, str]]:
    """`piece` with each double-quoted string replaced by a marker string, and what each marker stands for.

    The strings are read as JSON reads them (the first unescaped quote closes one), so json-repair
    sees no quote whose meaning it could guess at. A string JSON cannot decode raises `_Unrepairable`.
    """
    nonce = 0
    while f"qatui{nonce}_" in piece:
        nonce += 1
    out: list[str] = []
    held: dict[str, str] = {}
    i = 0
    while i < len(piece):
        c = piece[i]
        if c == '"':
            end = _end_of_double(piece, i)
            try:
                text = _loads(piece[i : end + 1])
            except ValueError:
                raise _Unrepairable from None
            marker = f"qatui{nonce}_{len(held)}"
            held[marker] = text
            out.append(f'"{marker}"')
            i = end + 1
        elif c == "'":
            end = _end_of_single(piece, i)
            out.append(piece[i : end + 1])
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), held


def _restore(value: Any, held: dict[str, str], used: list[str], words: Counter[str]) -> Any:
    """`value` with each marker string put back, counting the words of the strings json-repair made in `words`.

    A marker merged into other text raises `_Unrepairable`; an object giving one key two values, `ValueError`.
    """
    if isinstance(value, str):
        if value in held:
            used.append(value)
            return held[value]
        if any(marker in value for marker in held):
            raise _Unrepairable
        words.update(_WORD.findall(value))
        return value
    if isinstance(value, dict):  # each key was held apart: two of one name meet again only here
        return _one_value_per_key([(_restore(k, held, used, words), _restore(v, held, used, words))
                                   for k, v in value.items()])
    if isinstance(value, list):
        return [_restore(v, held, used, words) for v in value]
    return value


def _repaired(piece: str) -> tuple[bool, Any]:
    """(True, value) when json-repair makes an object or a list of `piece` under qatui's rules; (False, None) otherwise.

    Only a balanced span is repaired (it opens with { or [ and its own closer ends it, every string
    closed): json-repair would complete a cut-off answer, and a truncated answer is never a verdict.
    json-repair never decides where a double-quoted string ends: each is read as JSON reads it and
    held out of the repair (`_hold_strings`), and the repair must keep every one of them, whole and
    once (it would read `"it says {"choice": "B"} there", "choice": "A"` as a choice of B and drop
    the A), and drop no word written outside them (it would read `{note: B wrote {"choice": "B"},
    choice: maybe}` as a choice of B, dropping `choice: maybe`; a // comment is refused so too).
    Only an object or a list counts (json-repair makes "" of prose). Nesting too deep for the
    repairer is no JSON.
    """
    if not piece or piece[0] not in _CLOSERS or _span_end(piece, 0, len(piece)) != (len(piece), True):
        return False, None
    import json_repair  # 28 ms to import, and only an answer that is not strict JSON needs it

    try:
        held_piece, held = _hold_strings(piece)
        value = json_repair.repair_json(held_piece, return_objects=True, skip_json_loads=True)
        if not isinstance(value, (dict, list)):
            return False, None
        used: list[str] = []
        kept: Counter[str] = Counter()
        value = _restore(value, held, used, kept)
    except (_Unrepairable, ValueError, RecursionError):
        return False, None
    written = Counter(w for w in _WORD.findall(_MARKER.sub(" ", held_piece)) if w not in _LITERALS)
    return (True, value) if sorted(used) == sorted(held) and not written - kept else (False, None)


def _open_depths(text: str) -> list[int]:
    """For each position, how many {, [ are open before it, counted plainly (quotes ignored, never below 0)."""
    depths, depth = [], 0
    for ch in text:
        depths.append(depth)
        if ch in _CLOSERS:
            depth += 1
        elif ch in "}]":
            depth = max(0, depth - 1)
    return depths


def _candidates(text: str) -> list[tuple[int, int, str]]:
    """(start, end, piece) of the pieces of `text` that may be the JSON value, best guess first.

    The whole text, fenced blocks, then balanced spans. A span that opens inside brackets is
    taken only when it lies within a span that is strict JSON: otherwise it is a value quoted
    inside text that is not JSON (say `{"rationale": "it says {"choice": "B"}", ...` with the
    inner quotes unescaped), never the answer. Repaired JSON does not vouch for what it holds:
    json-repair guesses where a string with unescaped quotes ends.
    """
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    found = [(lead, lead + len(stripped), stripped)]
    found += [(m.start(2), m.end(2), m.group(2)) for m in _FENCE.finditer(text)]
    spans = list(_balanced_spans(text))
    json_spans = [(s, e) for s, e in spans if _strict(text[s:e])[0]]
    depths = _open_depths(text)
    for s, e in spans:
        if depths[s] > 0 and not any(ps < s and e <= pe for ps, pe in json_spans):
            continue
        found.append((s, e, text[s:e]))
    out, seen = [], set()
    for s, e, piece in found:
        piece_stripped = piece.strip()
        if piece_stripped and piece_stripped not in seen:
            seen.add(piece_stripped)
            out.append((s, e, piece_stripped))
    return out


def extract_json_values(text: str) -> Iterator[Any]:
    """Every JSON value found in `text`, best guess first: strict parses, then repaired ones."""
    for value, _, _ in _located_values(text):
        yield value


def _located_values(text: str) -> Iterator[tuple[Any, int, int]]:
    """(value, start, end) of every JSON value found in `text`: strict parses first, then repaired ones."""
    candidates = _candidates(text)
    strict: set[int] = set()
    for index, (start, end, candidate) in enumerate(candidates):
        try:
            value = _loads(candidate)
        except ValueError:
            continue
        strict.add(index)
        yield value, start, end
    for index, (start, end, candidate) in enumerate(candidates):
        if index in strict:
            continue
        ok, value = _repaired(candidate)
        if ok:
            yield value, start, end


def extract_json(text: str) -> Any:
    """The first JSON value in `text`; `ParseError` (with a snippet) when there is none."""
    for value in extract_json_values(text):
        return value
    raise ParseError(f"no JSON found in the model's answer: {snippet(text)}", text=text, reason="no JSON found")


def schema_name(schema: type[BaseModel] | dict[str, Any]) -> str:
    """A name for the schema, for messages and for response_format (letters, digits, _ and -)."""
    raw = schema.__name__ if isinstance(schema, type) else str(schema.get("title") or "answer")
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:64] or "answer"


def json_schema_of(schema: type[BaseModel] | dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of a pydantic model, or the dict itself.

    A model's docstring is for people reading the code, not for the backbone: pydantic turns
    it into the schema's `description`, which is dropped here (top level and `$defs`), so
    documenting a schema class never changes a request or its cache key. Field descriptions stay.
    A model's schema is built once per class (`_model_schema_text`); each call gets its own copy.
    """
    if not isinstance(schema, type):
        return schema
    return json.loads(_model_schema_text(schema))


def json_schema_text(schema: type[BaseModel] | dict[str, Any]) -> str:
    """`json_schema_of(schema)` as JSON text: a model's is the text built once per class, not rebuilt per call."""
    return _model_schema_text(schema) if isinstance(schema, type) else json.dumps(schema)


@functools.lru_cache(maxsize=256)
def _model_schema_text(schema: type[BaseModel]) -> str:
    """The JSON text of a model's schema without docstring descriptions, built once per class."""
    found = schema.model_json_schema()
    found.pop("description", None)
    for definition in (found.get("$defs") or {}).values():
        definition.pop("description", None)
    return json.dumps(found)


def _validate(value: Any, schema: type[BaseModel] | dict[str, Any]) -> Any:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate(value)
    import jsonschema  # a dependency of litellm too; imported only when a dict schema is used

    jsonschema.validate(value, schema)
    return value


def _reason(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
        return f"{where}: {first['msg']}{more}"
    message = getattr(error, "message", None) or str(error)
    path = "/".join(str(p) for p in getattr(error, "absolute_path", []) or [])
    return f"{path + ': ' if path else ''}{message}"


def parse_output(text: str, schema: type[BaseModel] | dict[str, Any]) -> Any:
    """The JSON value in `text` that satisfies `schema`.

    A pydantic model gives a validated instance; a JSON schema dict gives the value. The whole
    text, when it is such a value, is the answer. Otherwise the values found in it that satisfy
    the schema are taken outermost first (one nested inside another is part of it); when they
    differ, the answer quotes one it did not give (a candidate's `{"rank": [...]}`, say) or gives
    two, and neither is guessed: `ParseError` (the client then re-asks once). Raises `ParseError`
    naming the schema, the reason and a snippet of the output.
    """
    try:
        whole = _loads(text.strip())
    except _TwoValuesForOneKey as e:
        raise ParseError(f"{e}; answer was {snippet(text)}", text=text, reason=str(e), ambiguous=True) from None
    except ValueError:
        pass
    else:  # the usual answer, one JSON value and nothing else: no need to look for spans inside it
        try:
            return _validate(whole, schema)
        except Exception as e:  # noqa: BLE001 - as below; the search that follows names the reason
            if type(e).__name__ != "ValidationError":
                raise
    first_error: Exception | None = None
    matches: list[tuple[Any, int, int]] = []
    for value, start, end in _located_values(text):
        try:
            valid = _validate(value, schema)
        except Exception as e:  # noqa: BLE001 - pydantic or jsonschema ValidationError
            if type(e).__name__ != "ValidationError":
                raise
            first_error = first_error or e
            continue
        if start == len(text) - len(text.lstrip()) and end == len(text.rstrip()):
            return valid  # the whole answer is this value
        matches.append((valid, start, end))
    outermost = [m for m in matches if not any(o[1] <= m[1] and m[2] <= o[2] and (o[1], o[2]) != (m[1], m[2])
                                               for o in matches)]
    distinct: list[Any] = []
    for valid, _, _ in outermost:
        if all(valid != other for other in distinct):
            distinct.append(valid)
    name = schema_name(schema)
    if len(distinct) == 1:
        return distinct[0]
    if len(distinct) > 1:
        reason = (f"the answer holds {len(distinct)} different JSON values for {name} (one may quote the text "
                  "being judged): give only your own answer")
    elif first_error is None:
        reason = f"expected JSON for {name}, found none"
    else:
        reason = f"the JSON does not match {name}: {_reason(first_error)}"
    raise ParseError(f"{reason}; answer was {snippet(text)}", text=text, reason=reason, ambiguous=len(distinct) > 1)


async def parse_within(text: str, schema: type[BaseModel] | dict[str, Any], timeout_s: float, model: str) -> Any:
    """`parse_output`, a long answer read off the event loop and within `timeout_s`, else LLMCallError.

    The call's timeout then holds for the reading too: the loop (and every other call's
    timeout) never waits on a parse, and a judge gets an answer or a reason in time.
    """
    if len(text) <= PARSE_INLINE_CHARS:
        return parse_output(text, schema)
    try:
        async with asyncio.timeout(timeout_s):
            return await asyncio.to_thread(parse_output, text, schema)
    except TimeoutError:
        raise LLMCallError(f"{model}: reading its answer ({len(text):,} characters) took longer than the call's "
                           f"timeout ({timeout_s:g} s)") from None


def append_to_last_user(messages: list[dict[str, Any]], text: str) -> None:
    """Add `text` to the last user message (a new user message if there is none)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                message["content"] = [*content, {"type": "text", "text": text}]
            else:
                message["content"] = f"{content or ''}{text}"
            return
    messages.append({"role": "user", "content": text.strip()})
