"""What a backbone's model takes: whether it is a reasoning model, which request options it refuses.

Reasoning models (o-series, gpt-5, Claude with extended thinking, DeepSeek-R1...) refuse some
options a judge sets on every call (OpenAI's reasoning models take no `temperature` but 1,
Anthropic none with thinking on), and spend part of `max_tokens` thinking before they answer.
So, once per backbone and option values, LiteLLM's knowledge of the model decides:

- whether it reasons (`litellm.supports_reasoning`, or the backbone asks for a reasoning
  effort or a thinking budget): then each call's `max_tokens` gets `THINKING_ROOM` (or the
  thinking budget) more than the answer's own budget, so that thinking cannot eat the answer;
- which options are left out: those LiteLLM would drop for the model (`drop_params`, read
  through `litellm.utils.get_optional_params`, else `get_supported_openai_params`; a temperature
  LiteLLM keeps only because it is the model's one accepted value, o-series' 1, is left out
  too, as every other temperature is: the request then says what the session's note says), those the
  backbone's `leave_out` names, and `temperature` where thinking is turned on (Anthropic
  refuses any but its default then). A left-out option is not in the request at all: the
  call's record (`LLMCallFinished.options`, `left_out`) and the cache key say what was sent.

A model that still refuses an option answers with a 400 naming it; `refused_option` reads
that name out of the provider's message, so the preflight can say it in one line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qatui.config import BackboneConfig
    from qatui.llm.facts import Facts

THINKING_ROOM = 4096
"""Tokens added to every call's `max_tokens` on a reasoning model (without a thinking budget), for its thinking."""

SENT_OPTIONS = ("temperature", "max_tokens", "seed", "reasoning_effort", "thinking")
"""The request options a call's record keeps as sent (`LLMCallFinished.options`)."""

_REFUSED = (
    re.compile(r"Unsupported (?:parameter|value): '(\w+)'", re.IGNORECASE),  # OpenAI
    re.compile(r"""["']param["']\s*:\s*["'](\w+)["']"""),  # an OpenAI-style error body
    re.compile(r"\b(temperature|top_p|top_k|seed|reasoning_effort|thinking|max_tokens)\b[^.]*?"
               r"(?:not supported|unsupported|may only be set|is not allowed|not allowed|invalid)", re.IGNORECASE),
    re.compile(r"(?:unsupported|unknown|unrecognized|extra)\s+(?:parameter|argument|field)s?:?\s*['\"]?(\w+)",
               re.IGNORECASE),
)


@dataclass(frozen=True)
class Shape:
    """What one backbone's requests look like: reasoning or not, the options left out, the room for thinking."""

    reasoning: bool
    left_out: tuple[str, ...]
    room: int
    """Tokens added to each call's `max_tokens` (0 for a model that does not reason)."""
    extra: tuple[tuple[str, Any], ...] = ()
    """Options the backbone adds to every request (`reasoning_effort`, `thinking`), as (name, value)."""

    def note(self, model: str, answer_tokens: int) -> str:
        """One line for the preflight and the session: "openai/o3-mini: a reasoning model; temperature left out; …".

        Empty for a model that does not reason and leaves nothing out.
        """
        if not self.reasoning and not self.left_out:
            return ""
        parts = [f"{model}: a reasoning model" if self.reasoning else f"{model}:"]
        if sent := request_extra(self):
            parts.append(", ".join(f"thinking budget {value['budget_tokens']:,} tokens" if name == "thinking"
                                   else f"{name} {value}" for name, value in sent.items()))
        if self.left_out:
            parts.append(f"{', '.join(self.left_out)} left out")
        if self.room:
            parts.append(f"max_tokens raised to {answer_tokens + self.room:,} ({answer_tokens:,} for the answer "
                         f"+ {self.room:,} for thinking)")
        return "; ".join(parts).replace(":;", ":", 1)


def shape_of(settings: BackboneConfig, temperature: float | None, facts: Facts | None = None) -> Shape:
    """The `Shape` of a request to `settings`' model at `temperature` (None: not sent); `local/` models: as asked.

    With `facts` (`llm.facts`), a remote model's shape is kept there: LiteLLM is asked once per model,
    api_base, option values and LiteLLM version, not once per process.
    """
    extra: list[tuple[str, Any]] = []
    if settings.reasoning_effort:
        extra.append(("reasoning_effort", settings.reasoning_effort))
    if settings.thinking_budget:
        extra.append(("thinking", (("type", "enabled"), ("budget_tokens", settings.thinking_budget))))
    if settings.model.startswith("local/"):  # the embedded model takes temperature and seed, and nothing else here
        left = tuple(name for name, _ in extra) + tuple(settings.leave_out)
        return Shape(reasoning=False, left_out=left, room=0)
    args = (settings.model, settings.api_base, temperature, tuple(extra), tuple(settings.leave_out))
    if facts is None:
        return _shape(*args)
    inputs = {"model": args[0], "api_base": args[1], "temperature": temperature, "extra": args[3], "leave_out": args[4]}
    found = facts.get("shape", inputs, lambda: _plain(_shape(*args)), _is_plain_shape)
    return Shape(reasoning=found["reasoning"], left_out=tuple(found["left_out"]), room=found["room"], extra=args[3])


def _plain(shape: Shape) -> dict[str, Any]:
    """What a fact keeps of a `Shape` (its `extra` is the backbone's own settings, part of the fact's key)."""
    return {"reasoning": shape.reasoning, "left_out": list(shape.left_out), "room": shape.room}


def _is_plain_shape(value: Any) -> bool:
    """Whether a fact read back is a `_plain` shape."""
    return (isinstance(value, dict) and isinstance(value.get("reasoning"), bool)
            and isinstance(value.get("left_out"), list) and all(isinstance(v, str) for v in value["left_out"])
            and isinstance(value.get("room"), int) and not isinstance(value["room"], bool) and value["room"] >= 0)


def request_extra(shape: Shape) -> dict[str, Any]:
    """The options `shape` adds to a request (`thinking` as the dict LiteLLM takes), without any left out."""
    return {name: dict(value) if name == "thinking" else value for name, value in shape.extra
            if name not in shape.left_out}


@lru_cache(maxsize=256)
def _shape(model: str, api_base: str | None, temperature: float | None, extra: tuple[tuple[str, Any], ...],
           leave_out: tuple[str, ...]) -> Shape:
    """`shape_of` for a remote model, computed once per model and option values (LiteLLM's lookups cost ~1 ms)."""
    from qatui.llm._lazy import get_litellm

    ll = get_litellm()
    try:
        name, provider, _, _ = ll.get_llm_provider(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001 - an unknown provider: the preflight says so; send what was asked
        return Shape(reasoning=bool(extra), left_out=leave_out, room=THINKING_ROOM if extra else 0, extra=extra)
    try:
        reasoning = bool(ll.supports_reasoning(model=model))
    except Exception:  # noqa: BLE001 - unknown to LiteLLM: not a reasoning model unless it is asked to think
        reasoning = False
    asked: dict[str, Any] = {"seed": 0, "max_tokens": 1}
    if temperature is not None:
        asked["temperature"] = temperature
    asked.update((key, dict(value) if key == "thinking" else value) for key, value in extra)
    dropped = _dropped(ll, name, provider, asked)
    if temperature and "temperature" not in dropped and "temperature" in _dropped(ll, name, provider,
                                                                                   {**asked, "temperature": 0.0}):
        dropped.add("temperature")  # a model that takes no temperature but its default (o-series: 1) gets none
    if "thinking" in asked and "thinking" not in dropped and "temperature" in asked:
        dropped.add("temperature")  # thinking on: Anthropic refuses any temperature but its default
    left = tuple(dict.fromkeys([k for k in ("temperature", "seed", "reasoning_effort", "thinking") if k in dropped]
                               + list(leave_out)))
    thinks = reasoning or any(key not in left for key, _ in extra)
    budget = dict(extra).get("thinking")
    room = (dict(budget)["budget_tokens"] if budget and "thinking" not in left else THINKING_ROOM) if thinks else 0
    return Shape(reasoning=thinks, left_out=left, room=room, extra=extra)


def _dropped(ll: Any, name: str, provider: str, asked: dict[str, Any]) -> set[str]:
    """The options of `asked` LiteLLM would not send to the model (`drop_params=True`).

    `reasoning_effort` and `thinking` count as sent when LiteLLM sends either in their place
    (it maps one to the other for some providers).
    """
    try:
        from litellm.utils import get_optional_params

        sent = set(get_optional_params(model=name, custom_llm_provider=provider, drop_params=True, **asked))
    except Exception:  # noqa: BLE001 - LiteLLM's mapping refused or changed: its list of supported options instead
        try:
            sent = set(ll.get_supported_openai_params(model=name, custom_llm_provider=provider) or asked)
        except Exception:  # noqa: BLE001 - nothing known: send everything asked
            sent = set(asked)
    if sent & {"reasoning_effort", "thinking"}:
        sent |= {"reasoning_effort", "thinking"}
    return {key for key in asked if key not in sent and key != "max_tokens"}


def refused_option(message: str) -> str | None:
    """The request option a provider's 400 names as refused ("Unsupported parameter: 'temperature'"), if any."""
    for pattern in _REFUSED:
        if found := pattern.search(message):
            return found[1]
    return None
