"""Token log-probabilities: which backbones return them, and their plain, cacheable form.

G-Eval weighs a rating by the probability of each score token. LiteLLM passes OpenAI's
`logprobs=True, top_logprobs=k` to providers that take them; the answer's
`choices[0].logprobs.content` is a list of tokens, each with its log-probability and the
`k` most likely alternatives. Here that becomes a list of plain dicts
`{"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}`, which the call cache
stores beside the answer's text, so a cache hit gives the same weights as the first call.
"""

from __future__ import annotations

import math
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qatui.llm.facts import Facts

TokenLogprobs = list[dict[str, Any]]
"""One dict per generated token: token, logprob, top_logprobs (the alternatives)."""


def backbone_gives_logprobs(model: str, facts: Facts | None = None, api_base: str | None = None) -> bool:
    """Whether LiteLLM sends `logprobs` / `top_logprobs` to this model's provider (never the embedded ones).

    With `facts` (`llm.facts`) the answer is kept there, so a cached rerun asks no LiteLLM.
    """
    if model.startswith("local/"):
        return False
    if facts is None:
        return _gives_logprobs(model)
    from qatui.llm.facts import is_bool

    return facts.get("logprobs", {"model": model, "api_base": api_base}, lambda: _gives_logprobs(model), is_bool)


@cache
def _gives_logprobs(model: str) -> bool:
    """`backbone_gives_logprobs` asked of LiteLLM."""
    from qatui.llm._lazy import get_litellm

    ll = get_litellm()
    try:
        name, provider, *_ = ll.get_llm_provider(model)
        params = ll.get_supported_openai_params(model=name, custom_llm_provider=provider) or []
    except Exception:  # noqa: BLE001 - an unknown provider: do not ask for what it may reject
        return False
    return "logprobs" in params and "top_logprobs" in params


def _plain(value: Any) -> Any:
    """A pydantic object (LiteLLM's types) or a dict, as a dict; anything else unchanged."""
    return value.model_dump() if hasattr(value, "model_dump") else value


def _token(entry: Any) -> dict[str, Any] | None:
    entry = _plain(entry)
    if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
        return None
    try:
        logprob = float(entry.get("logprob"))
    except (TypeError, ValueError):
        return None
    return {"token": entry["token"], "logprob": logprob if math.isfinite(logprob) else -1e9}


def logprobs_of(response: Any) -> TokenLogprobs | None:
    """The answer's token log-probabilities as plain dicts; None when the provider returned none."""
    choices = getattr(response, "choices", None) or []
    raw = _plain(getattr(choices[0], "logprobs", None)) if choices else None
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list):
        return None
    tokens = []
    for entry in content:
        if (token := _token(entry)) is None:
            continue
        alternatives = (_plain(entry) or {}).get("top_logprobs") or []
        token["top_logprobs"] = [alt for alt in map(_token, alternatives) if alt is not None]
        tokens.append(token)
    return tokens or None
