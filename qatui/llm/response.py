"""Reading a LiteLLM response once: its answer (never its thinking), finish reason, token usage and cost.

A reasoning model's draft is never its answer. LiteLLM moves a `<think>…</think>` block into
`reasoning_content` only when the block is closed and opens the content; one after a newline,
a second one, an unclosed one cut off by `max_tokens`, or a `</think>` whose opening tag the
chat template sent (DeepSeek-R1's) stays in `content`, where a judge would read the draft's
verdict as the model's. So every such section is taken out of the text here, and kept apart as
`thinking`. An answer that is cut off (`finish_reason` "length") or that is only thinking is
no answer: `answer_of` raises `UnusableAnswer` with the reason, and the caller fails the call.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from qatui.llm.errors import LLMCallError
from qatui.llm.trim import sent_upper_bound

_TAGS = r"(?:think|thinking|budget:thinking)"
_CLOSED = re.compile(rf"<{_TAGS}>(.*?)</{_TAGS}>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(rf"<{_TAGS}>(.*)\Z", re.DOTALL | re.IGNORECASE)
_CLOSE = re.compile(rf"</{_TAGS}>", re.IGNORECASE)

CUT_REASONS = {
    "length": "answer cut off at max_tokens",
    "max_tokens": "answer cut off at max_tokens",
    "content_filter": "answer cut off by the provider's content filter",
}
"""Finish reasons that mean the answer stopped before its end, and how a failure says so."""


class UnusableAnswer(ValueError):
    """The provider replied, but with nothing a judge may read: no choices, no text, cut off, only thinking."""


@dataclass(frozen=True)
class Answer:
    """One reply read: the answer's text (thinking removed), the thinking, and why generation stopped."""

    text: str
    thinking: str
    finish_reason: str
    cut_off: str = ""
    """Why the answer is unusable although the provider answered ("" when it is usable); see `answer_of`."""


def split_thinking(content: str) -> tuple[str, str]:
    """(`content` without any thinking section, the thinking sections joined).

    Closed `<think>…</think>` blocks anywhere (also `<thinking>`, `<budget:thinking>`), then
    an unclosed opening tag to the end, then everything before a stray closing tag (its
    opening tag was part of the prompt's template), unless the tag lies inside a JSON value
    begun before it (`_json_depths`): then it is quoted inside the answer (an echoed
    candidate), and cutting there could drop the model's own verdict and leave a quoted one.
    A draft that wrote a whole JSON verdict before the tag is cut off with the rest of it.
    """
    kept, thoughts = answer_positions(content)
    text = content if len(kept) == len(content) else "".join(content[i] for i in kept)
    return text, "\n\n".join(t for t in thoughts if t)


def answer_positions(content: str) -> tuple[list[int] | range, list[str]]:
    """(the positions in `content` of the answer's characters, in order; the thinking sections), by
    `split_thinking`'s rules: what reads a model's tokens (G-Eval's log-probabilities) finds its answer's verdict
    among them, never a digit the thinking wrote."""
    if "<" not in content:  # no tag at all: the whole text is the answer
        return range(len(content)), []
    thoughts: list[str] = []
    text, index = content, list(range(len(content)))
    closed = list(_CLOSED.finditer(text))
    thoughts.extend(m[1].strip() for m in closed)
    for m in reversed(closed):
        text, index = text[:m.start()] + text[m.end():], index[:m.start()] + index[m.end():]
    if opened := _OPEN.search(text):
        thoughts.append(opened[1].strip())
        text, index = text[:opened.start()], index[:opened.start()]
    depths = _json_depths(text)
    for close in reversed(list(_CLOSE.finditer(text))):  # the last tag that no JSON value holds
        if not depths[close.start()]:
            thoughts.insert(0, text[: close.start()].strip())
            text, index = text[close.end():], index[close.end():]
            break
    return index, thoughts


def _json_depths(text: str) -> list[int]:
    """For each position of `text` (and its end), how many `{…}` / `[…]` opened before it are still open.

    Brackets are counted outside JSON strings (a quote opens a string only within brackets,
    so prose quotes and apostrophes count for nothing; escapes are honoured). Computed only
    for a text holding a closing tag; one pass, linear.
    """
    if not _CLOSE.search(text):
        return []
    depths = [0] * (len(text) + 1)
    depth, in_string, escaped = 0, False, False
    for i, char in enumerate(text):
        depths[i] = depth
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth = max(0, depth - 1)
        elif char == '"' and depth:
            in_string = True
    depths[len(text)] = depth
    return depths


def _reasoning_of(message: Any) -> str:
    """What the provider (or LiteLLM) set apart as reasoning: `reasoning_content`, thinking blocks."""
    parts = []
    reasoning = getattr(message, "reasoning_content", None)
    if isinstance(reasoning, str) and reasoning.strip():
        parts.append(reasoning.strip())
    for block in getattr(message, "thinking_blocks", None) or []:
        thought = block.get("thinking") if isinstance(block, dict) else getattr(block, "thinking", None)
        if isinstance(thought, str) and thought.strip() and thought.strip() not in parts:
            parts.append(thought.strip())
    return "\n\n".join(parts)


def answer_of(response: Any) -> Answer:
    """The first choice's answer; `UnusableAnswer` when the reply holds none (see the module docstring).

    A reply cut off or holding only thinking is returned with `cut_off` set (the preflight
    accepts it as proof the backbone answers; a judge's call fails with it as the reason).
    """
    choices = getattr(response, "choices", None)
    if not choices:
        raise UnusableAnswer("the provider returned no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise UnusableAnswer("the provider's reply has no message")
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise UnusableAnswer(f"the provider's answer is a {type(content).__name__}, not text")
    finish = str(getattr(choice, "finish_reason", "") or "")
    text, thought = split_thinking(content or "")
    thinking = "\n\n".join(t for t in (_reasoning_of(message), thought) if t)
    unclosed = _OPEN.search(_CLOSED.sub("", content or "")) is not None
    cut = ""
    if finish in CUT_REASONS:
        cut = (CUT_REASONS[finish].replace("answer cut off", "cut off") + " while thinking"
               if unclosed or (thinking and not text.strip()) else CUT_REASONS[finish])
    elif unclosed:
        cut = "the answer ended inside its thinking (an unclosed <think>)"
    elif thinking and not text.strip():
        cut = "the answer was only thinking, with no answer after it"
    return Answer(text=text.strip() if thinking else text, thinking=thinking, finish_reason=finish, cut_off=cut)


def read_answer(response: Any, model: str, request: dict[str, Any], *, attempts: int, accept_cut: bool = False,
                accept_cut_text: bool = False) -> Answer:
    """The reply's answer, or `LLMCallError` ("MODEL: REASON") when it holds none a judge may read.

    With `accept_cut` (the preflight's check), an answer cut off or only thinking is
    returned with `cut_off` set; with `accept_cut_text`, only an answer cut off after its
    thinking ended (a text that is no verdict, such as G-Eval's evaluation steps). The
    error of one that is refused carries its thinking.
    """
    try:
        answer = answer_of(response)
    except UnusableAnswer as e:
        raise LLMCallError(f"{model}: {e}", attempts=attempts) from None
    kept = accept_cut or (accept_cut_text and answer.cut_off in CUT_REASONS.values())
    if answer.cut_off and not kept:
        limit = request.get("max_tokens")
        reason = answer.cut_off.replace("max_tokens", f"max_tokens ({limit})", 1) if limit else answer.cut_off
        raise LLMCallError(f"{model}: {reason}", attempts=attempts, thinking=answer.thinking)
    return answer


def usage_of(response: Any) -> dict[str, int]:
    """Prompt, completion, reasoning and total tokens (0 where the provider did not say).

    `reasoning_tokens` are part of `completion_tokens` (and priced with them), as OpenAI
    counts them (`usage.completion_tokens_details.reasoning_tokens`); LiteLLM fills the same
    field for the providers it translates.
    """
    usage = getattr(response, "usage", None)
    prompt = token_count(getattr(usage, "prompt_tokens", 0))
    completion = token_count(getattr(usage, "completion_tokens", 0))
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = token_count(details.get("reasoning_tokens") if isinstance(details, dict)
                            else getattr(details, "reasoning_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "reasoning_tokens": reasoning,
            "total_tokens": prompt + completion}


def token_count(value: Any) -> int:
    """A token count a provider reported; 0 for a missing, negative or non-numeric one (a batch line's too)."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


PROVIDER_PROMPT_TOKENS = 65_536
"""Prompt tokens a provider may count beyond what it was sent (its chat template, a system prompt or a schema
instruction of its own): part of `usage_problem`'s bound on a prompt's tokens."""

MOST_PROMPT_TOKENS = 16_777_216
"""The most prompt tokens a usage report may hold when what was sent is not at hand (a batch's record): more than the
largest context window any model is served with (10 million tokens in 2026)."""

MOST_ANSWER_TOKENS = 1_048_576
"""The most answer tokens (thinking included) one reply may report: no model writes a million tokens in one answer
(the longest outputs offered in 2026 are a few hundred thousand)."""


def usage_problem(prompt_tokens: int, completion_tokens: int, most_sent: int | None) -> str | None:
    """Why a usage report cannot be true, or None: more prompt tokens than `most_sent` (`trim.sent_upper_bound` of
    the request: since a byte-level tokenizer makes at most one token of each byte, no tokenizer a provider runs
    makes more of what was sent) plus `PROVIDER_PROMPT_TOKENS`, or more than `MOST_PROMPT_TOKENS` when `most_sent`
    is None (unknown); or more answer tokens than `MOST_ANSWER_TOKENS`.

    Such a report comes from a broken server or proxy (an overflowed counter, garbage in the field): priced, one
    call of it would be the run's whole cost, and under `--max-cost` it would stop the run as if spent. The caller
    fails the call instead, its cost unknown and recorded as 0 (`client.LLMClient._send`, `embeddings`), or leaves the
    line out of a batch's record (`batch`)."""
    most = MOST_PROMPT_TOKENS if most_sent is None else most_sent + PROVIDER_PROMPT_TOKENS
    if prompt_tokens > most:
        bound = (f"no model reads more than {MOST_PROMPT_TOKENS:,}" if most_sent is None else
                 f"what was sent makes at most {most_sent:,} in any tokenizer, and a provider may add "
                 f"{PROVIDER_PROMPT_TOKENS:,}")
        return f"the provider reported {prompt_tokens:,} prompt tokens ({bound}): its usage report cannot be true, " \
               "so what the call cost is unknown"
    if completion_tokens > MOST_ANSWER_TOKENS:
        return (f"the provider reported {completion_tokens:,} answer tokens (no model writes more than "
                f"{MOST_ANSWER_TOKENS:,} in one answer): its usage report cannot be true, so what the call cost is "
                "unknown")
    return None


def reply_usage_problem(response: Any, sent: dict[str, Any] | list[str]) -> str | None:
    """`usage_problem` of a reply (`usage_of`) to a request that sent `sent` (a chat request, or an embedding
    request's texts: `trim.sent_upper_bound`)."""
    usage = usage_of(response)
    if usage["prompt_tokens"] <= PROVIDER_PROMPT_TOKENS and usage["completion_tokens"] <= MOST_ANSWER_TOKENS:
        return None  # within the bound whatever was sent: not measured (most calls)
    return usage_problem(usage["prompt_tokens"], usage["completion_tokens"], sent_upper_bound(sent))


def spent_on(response: Any, model: str, *, free: bool, facts: Any = None) -> dict[str, Any]:
    """What a reply cost, as `LLMCallFinished` fields (prompt, completion and reasoning tokens, USD, and `unpriced`
    when the price map has no price for it; 0 USD when `free`)."""
    usage = usage_of(response)
    cost, known = (0.0, True) if free else priced_cost(response, model, facts=facts)
    return {"prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"],
            "reasoning_tokens": usage["reasoning_tokens"], "cost_usd": cost, **({} if known else {"unpriced": True})}


PAID_BEFORE_USD = "qatui_paid_before_usd"
"""`_hidden_params` key of what earlier sends of a call were billed, their answers unused (a batch's two different
answers to one request: `llm.batch`): `cost_of` adds it to the reply's own cost."""


def cost_of(response: Any, model: str, *, facts: Any = None) -> float:
    """The call's cost in USD, never negative: the reply's (`_reply_cost`), plus what earlier sends of the call were
    billed (`PAID_BEFORE_USD`).

    A reply whose usage reports a negative token count (a provider's bug) is priced from its counts as `usage_of`
    reads them, each negative one as 0 (LiteLLM's own figure, from the raw counts, would be negative and give a
    cost cap room that was never there): the cost recorded is the price of the tokens recorded.
    """
    return priced_cost(response, model, facts=facts)[0]


def priced_cost(response: Any, model: str, *, facts: Any = None) -> tuple[float, bool]:
    """(`cost_of` the reply, whether its price is known): False when LiteLLM's price map has no price for it, so
    the cost is a floor (what earlier sends were billed, else 0)."""
    priced = _as_counted(response) if _negative_usage(response) else response
    found = _reply_cost(priced, model, facts=facts)
    return _usd(found) + paid_before(response), found is not None


def paid_before(response: Any) -> float:
    """What earlier sends of the call `response` answers were billed (`PAID_BEFORE_USD`; 0 when none)."""
    hidden = getattr(response, "_hidden_params", None)
    return _usd(hidden.get(PAID_BEFORE_USD) if isinstance(hidden, dict) else None)


def _usd(value: Any) -> float:
    """A cost as recorded: a finite number of USD, at least 0."""
    try:
        found = float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0
    return found if math.isfinite(found) and found > 0 else 0.0


def _negative_usage(response: Any) -> bool:
    """Whether the reply's usage reports a prompt or completion token count below 0."""
    usage = getattr(response, "usage", None)
    return any(isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0
               for value in (getattr(usage, "prompt_tokens", 0), getattr(usage, "completion_tokens", 0)))


def _as_counted(response: Any) -> Any:
    """A stand-in for the reply holding its token counts as `usage_of` reads them, for `_reply_cost` to price as it
    prices a reply read by `llm.direct` (`priced`: the dict LiteLLM's `completion_cost` takes)."""
    usage = usage_of(response)
    served = str(getattr(response, "model", "") or "")
    counts = {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return SimpleNamespace(model=served, priced={"model": served, "usage": counts})


def _reply_cost(response: Any, model: str, *, facts: Any = None) -> float | None:
    """The reply's cost in USD; None for a model missing from the price map.

    LiteLLM prices every response it returns (`_hidden_params["response_cost"]`, None when
    the model has no price), so that figure is read, not computed again; `completion_cost`
    runs only for a response that does not carry it (a LiteLLM stream, a reply read by
    `llm.direct`, whose `priced` is the dict LiteLLM prices). LiteLLM prices by the model the
    reply names, else by `model`; a pair of those it has no price for is remembered, since its
    search through the price map's fallbacks costs ~1.7 ms a call: in `facts` (`llm.facts.Facts`, kept
    beside the call cache and keyed by LiteLLM's version, so that a new process pricing a reply of an
    unpriced model, a cached run's preflight say, needs no LiteLLM at all), else in this process (`_UNPRICED`).
    """
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        return None if hidden["response_cost"] is None else _usd(hidden["response_cost"])
    pair = (model, str(getattr(response, "model", "") or ""))
    if pair in _UNPRICED:
        return None
    found: dict[str, float | None] = {}

    def priced() -> bool:
        """Price the reply with LiteLLM; False only when its price map has no such model (any other error leaves
        this reply's price unknown, `found["usd"]` None, and the model priced)."""
        from qatui.llm._lazy import get_litellm

        reply = getattr(response, "priced", None)
        try:
            found["usd"] = float(get_litellm().completion_cost(
                completion_response=response if reply is None else reply, model=model) or 0.0)
        except Exception as e:  # noqa: BLE001 - a model missing from the price map: its cost is unknown
            found["usd"] = None
            return type(e).__name__ != "ModelNotMappedError"
        return True

    if facts is not None:
        from qatui.llm.facts import is_bool

        if not facts.get("priced", {"model": pair[0], "reply_model": pair[1]}, priced, is_bool):
            return None
        if "usd" not in found:  # the fact was known already: price this reply now
            priced()
        return found.get("usd")
    if not priced():
        if len(_UNPRICED) < 1024:
            _UNPRICED.add(pair)
        return None
    return found.get("usd")


_UNPRICED: set[tuple[str, str]] = set()
"""(model asked, model the reply names) pairs LiteLLM's price map has no price for, in this process."""
