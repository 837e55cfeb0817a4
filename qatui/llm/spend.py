"""What backbone calls cost: prices from LiteLLM's price map, a request's tokens, and a run's cost cap.

Prices are LiteLLM's (`cost_per_token`, read from the price map bundled with it: qatui sets
`LITELLM_LOCAL_MODEL_COST_MAP` before importing it, so no price list is ever fetched). An
embedded `local/` model is free; a model the map does not hold has no price (`price` says None,
and `unpriced` why), never a guessed one.

A cost cap (`SpendCap`, `--max-cost`) is kept before each call, not after: a call reserves
its worst case (its prompt's tokens and all of `max_tokens` answered) before it starts, and
settles with what it really cost once it ends, so what was spent plus what is in flight
never passes the cap. A call that would pass it is refused with `CapReached`; the engine
leaves its item pending (a resume with a higher cap asks again), never failed. Each item's
calls see the cap through `SPEND`, bound by the engine per (item, judge) with a `TaskSpend`
that remembers a refusal even when a judge catches the error (a jury's member, say).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import threading
from collections.abc import Coroutine
from contextvars import ContextVar
from typing import Any

from qatui.llm._lazy import get_litellm
from qatui.llm.capture import CAPTURE, Captured
from qatui.llm.errors import LLMCallError
from qatui.llm.response import cost_of
from qatui.text import usd


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for a call of `model` with these tokens: 0 for `local/`, None when LiteLLM's price map lacks it."""
    if model.startswith("local/"):
        return 0.0
    try:
        prompt_usd, completion_usd = get_litellm().cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    except Exception:  # noqa: BLE001 - LiteLLM raises its own errors for a model it cannot price
        return None
    total = float(prompt_usd) + float(completion_usd)
    return total if math.isfinite(total) else None


def unpriced(model: str) -> str | None:
    """Why calls of `model` cannot be priced ("not in LiteLLM's price map"), or None when they can."""
    return None if price(model, 1, 1) is not None else "not in LiteLLM's price map"


@functools.lru_cache(maxsize=64)
def _counter(model: str, window: int | None) -> Any:
    from qatui.llm.trim import counter_for

    return counter_for(model, window)


def prompt_tokens(model: str, request: dict[str, Any], window: int | None = None) -> int:
    """The tokens a request's prompt holds: its messages, and the JSON schema of its `response_format` (a provider
    reads that too), counted with the backbone's tokenizer (`qatui.llm.trim.counter_for`: the GGUF's for `local/`,
    else LiteLLM's `token_counter` for the model)."""
    from qatui.llm.tokens import count_messages, count_text

    counter = _counter(model, window)
    messages = request.get("messages") or []
    schema = (request.get("response_format") or {}).get("json_schema")
    schema_text = json.dumps(schema.get("schema"), ensure_ascii=False) if isinstance(schema, dict) else ""
    if counter is not None:
        return counter.messages(messages) + (counter.text(schema_text) if schema_text else 0)
    return count_messages(model, messages) + count_text(model, schema_text)


class CapReached(Exception):
    """A call was refused: it could take the run past its cost cap."""


class SpendCap:
    """A run's cost cap: spent (recorded) plus reserved (in flight) never passes `cap_usd`; safe across threads."""

    def __init__(self, cap_usd: float, spent_usd: float = 0.0) -> None:
        self.cap_usd = cap_usd
        self.spent_usd = spent_usd
        """What the session's calls cost so far: its earlier runs' recorded cost plus this run's settled calls."""
        self.reserved_usd = 0.0
        self.refused = 0
        """Calls refused by the cap in this run."""
        self._lock = threading.Lock()

    @property
    def reached(self) -> bool:
        """Whether a call was refused: the run stops starting items."""
        return self.refused > 0

    def reserve(self, worst_usd: float) -> float:
        """Hold `worst_usd` for a call about to start; raises `CapReached` when it would pass the cap."""
        with self._lock:
            if self.spent_usd + self.reserved_usd + worst_usd > self.cap_usd:
                self.refused += 1
                raise CapReached(f"the next call could cost up to {usd(worst_usd)}, and {usd(self.spent_usd)} spent "
                                 f"plus {usd(self.reserved_usd)} in flight would then pass the ${self.cap_usd:g} cap")
            self.reserved_usd += worst_usd
            return worst_usd

    def settle(self, reserved_usd: float, cost_usd: float) -> None:
        """A call ended: its reservation becomes what it really cost."""
        with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - reserved_usd)
            self.spent_usd += cost_usd


class TaskSpend:
    """One (item, judge)'s view of the cap: whether any of its calls was refused."""

    def __init__(self, cap: SpendCap) -> None:
        self.cap = cap
        self.refused = False

    def reserve(self, worst_usd: float) -> float:
        """`SpendCap.reserve`, noting a refusal for this task."""
        try:
            return self.cap.reserve(worst_usd)
        except CapReached:
            self.refused = True
            raise


SPEND: ContextVar[TaskSpend | None] = ContextVar("qatui_spend", default=None)
"""The cap the current item's calls keep; None outside a capped run."""


async def within_cap(client: Any, request: dict[str, Any], call: Coroutine[Any, Any, tuple[Any, int]]
                     ) -> tuple[Any, int]:
    """Await `call` (an `LLMClient`'s send of `request`) within the run's cost cap, when it has one: the call's
    worst case (its prompt, all of `max_tokens` answered) is reserved before it starts (`CapReached`, the call
    never made, when that could pass the cap) and settled with its real cost once it ends (a failed call's is what
    its `LLMCallError` says the provider billed, 0 for most; its worst case when what it cost is unknown: its
    usage report cannot be true, so the cap keeps the most the request could honestly have cost)."""
    if (spend := SPEND.get()) is None or client.is_local:
        return await call
    try:
        tokens = prompt_tokens(client.model, request, client.settings.context_window)
        held = spend.reserve(price(client.model, tokens, int(request.get("max_tokens") or 0)) or 0.0)
    except BaseException:
        call.close()  # never started
        raise
    cost = 0.0
    try:
        response, attempts = await call
        cost = cost_of(response, client.model)
        return response, attempts
    except LLMCallError as e:  # a failed call the provider billed all the same (an unusable batch line)
        cost = max(held, e.cost_usd) if e.cost_unknown else e.cost_usd  # billed, for how much unknown: its worst case
        raise
    finally:
        spend.cap.settle(held, cost)


def planning() -> bool:
    """Whether this task runs under `run --plan` (`qatui.llm.capture.CAPTURE` bound): requests are built, never sent."""
    return CAPTURE.get() is not None


async def hold(client: Any, request: dict[str, Any], purpose: str) -> None:
    """Under `run --plan` (`qatui.llm.capture.CAPTURE` bound): record `request` of `client` (an `LLMClient`) and never
    return (the planner cancels the judge); in a run, return at once.

    An embedded backbone's prompt is not counted (0 tokens): it is free, and its tokenizer is the model's own, which
    a plan never loads. Its request is held as built, untrimmed (`LLMClient.complete`): the same request, and the
    same cache key, as the run's unless the run would trim it to the model's window."""
    if (capture := CAPTURE.get()) is None:
        return
    from qatui.llm.cache import cache_key

    key = cache_key(request)
    hit = client.cache.get(key) if client.use_cache else None
    tokens = 0 if client.is_local else prompt_tokens(client.model, request, client.settings.context_window)
    capture.calls.append(Captured(client.model, purpose, tokens, int(request.get("max_tokens") or 0), hit is not None,
                                  hit["text"] if hit is not None else None, key))
    await asyncio.get_running_loop().create_future()
