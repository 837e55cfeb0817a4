"""Tokens of a model's prompt or answer, counted offline: the one home of LiteLLM's `token_counter` in qatui.

LiteLLM counts most models with tiktoken's encodings, which it bundles, but a Llama 2 or 3, Cohere Command R or
Replicate model with a tokenizer it fetches from the Hugging Face hub on each count. With no network that fetch
retried for 23 s on every count (measured: a `run --plan` of 300 prompts would have waited two hours), and with
one it downloaded a file unasked. So qatui turns LiteLLM's download off (`qatui.llm._lazy.get_litellm`) and hands
it the tokenizer itself, found as the NLI models are (`qatui.hub.snapshot`: the local cache first, the hub only
when it answers a 3-second probe and the offline variables are unset), once per process. When it cannot be
found, the model is counted with tiktoken's `cl100k_base`, and `approximate(model)` says so, for the plan to
show: never a count that looks exact and is not.
"""

from __future__ import annotations

import threading
from typing import Any

HUB_TOKENIZERS = {
    "llama2": "hf-internal-testing/llama-tokenizer",
    "llama3": "Xenova/llama-3-tokenizer",
    "cohere": "Xenova/c4ai-command-r-v01-tokenizer",
}
"""LiteLLM's tokenizer kind (`litellm.utils.huggingface_tokenizer_kind`) -> the hub repository its counter reads
`tokenizer.json` from (LiteLLM 1.106's `_load_huggingface_tokenizer`); the other kinds are bundled with it."""

_lock = threading.Lock()
_found: dict[str, dict[str, Any] | None] = {}
"""Hub repository -> LiteLLM's custom tokenizer built from its `tokenizer.json`, or None when it was not found."""
_missing: dict[str, str] = {}
"""Hub repository -> why its tokenizer was not found (what `approximate` says)."""


def count_messages(model: str, messages: list[dict[str, Any]]) -> int:
    """The tokens of a chat's messages for `model`, as LiteLLM counts them (3 a message and 3 for the reply)."""
    from qatui.llm._lazy import get_litellm

    return int(get_litellm().token_counter(model=model, messages=messages, custom_tokenizer=_tokenizer(model)))


def count_text(model: str, text: str, *, answer: bool = False) -> int:
    """The tokens of `text` for `model`; `answer`: counted as a reply (LiteLLM's `count_response_tokens`)."""
    from qatui.llm._lazy import get_litellm

    if not text:
        return 0
    return int(get_litellm().token_counter(model=model, text=text, custom_tokenizer=_tokenizer(model),
                                           count_response_tokens=answer))


def approximate(model: str) -> str | None:
    """Why `model`'s counts are tiktoken's and not its own tokenizer's, or None when they are its own (or a model
    LiteLLM counts with tiktoken anyway). Known once `model` has been counted in this process."""
    repo = _repo(model)
    return None if repo is None else _missing.get(repo)


def _repo(model: str) -> str | None:
    from qatui.llm._lazy import get_litellm

    kind = get_litellm().utils.huggingface_tokenizer_kind(model)
    return HUB_TOKENIZERS.get(kind) if kind else None


def _tokenizer(model: str) -> dict[str, Any] | None:
    """LiteLLM's custom tokenizer for `model` when it is one of the hub's (None: LiteLLM's own choice, which with
    its download turned off is its bundled tokenizer or tiktoken)."""
    repo = _repo(model)
    if repo is None:
        return None
    with _lock:
        if repo not in _found:
            _found[repo] = _load(repo)
        return _found[repo]


def _load(repo: str) -> dict[str, Any] | None:
    from qatui.hub import HubMiss, snapshot
    from qatui.llm._lazy import get_litellm

    try:
        folder = snapshot(repo, ["tokenizer.json"])
        return get_litellm().create_tokenizer((folder / "tokenizer.json").read_text(encoding="utf-8"))
    except HubMiss as e:
        _missing[repo] = f"its tokenizer ({repo}) was not found: {e}; counted with tiktoken's cl100k_base"
    except Exception as e:  # noqa: BLE001 - a file of the cache that is not a tokenizer, whatever LiteLLM raises
        _missing[repo] = (f"its tokenizer ({repo}) could not be read ({type(e).__name__}); counted with tiktoken's "
                          "cl100k_base")
    return None
