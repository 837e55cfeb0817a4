"""Reading a LiteLLM response once: its text, finish reason, token usage and cost."""

from __future__ import annotations

from typing import Any


def usage_of(response: Any) -> dict[str, int]:
    """Prompt, completion and total tokens (0 where the provider did not say)."""
    usage = getattr(response, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def text_of(response: Any) -> tuple[str, str]:
    """The first choice's text and its finish reason."""
    choice = response.choices[0]
    return choice.message.content or "", str(getattr(choice, "finish_reason", "") or "")


def cost_of(response: Any, model: str) -> float:
    """The call's cost in USD; 0 for a model missing from the price map.

    LiteLLM prices every response it returns (`_hidden_params["response_cost"]`, None when
    the model has no price), so that figure is read, not computed again; `completion_cost`
    runs only for a response that does not carry it.
    """
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        try:
            return float(hidden["response_cost"] or 0.0)
        except (TypeError, ValueError):
            return 0.0
    from qatui.llm._lazy import get_litellm

    try:
        return float(get_litellm().completion_cost(completion_response=response, model=model) or 0.0)
    except Exception:  # noqa: BLE001 - a model missing from the price map costs "unknown" = 0
        return 0.0
