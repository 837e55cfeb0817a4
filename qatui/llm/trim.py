"""Fitting a prompt into the backbone's context window: the fenced data texts are trimmed, counted in tokens.

The rule (docs/BACKBONES.md, "Oversized inputs"): a request must leave room for its answer, so its
prompt may hold at most `window - max_tokens - MARGIN_TOKENS` tokens, where `window` is the
backbone's context window: `context_window` of its `[backbones.NAME]` table when set, else
LiteLLM's `max_input_tokens` for the model (`get_model_info`), else, for `local/...`, the
embedded model's context (`n_ctx`). A model whose window is unknown is sent as it is.

Tokens are counted with the backbone's own tokenizer: LiteLLM's `token_counter` for
providers (tiktoken for OpenAI models; `qatui.llm.tokens`, offline), the GGUF's tokenizer and chat
template for the embedded model. A prompt over its budget has its fenced texts (answers, references,
context: `qatui.llm.fence`) cut, never its instructions: the longest texts first, each cut to
a common cap so that the shortest keep all they have ("water filling"), keeping the head of
each text and ending it with a note saying how many tokens were kept. The fence lines stay,
so a trimmed text is still fenced. The result is recounted and cut again if a count was short.

Trimming is recorded, never silent: `Trimmed.record()` goes on the call's `LLMCallFinished`
(`trimmed`) and an `InputTrimmed` event on the item; `qatui sessions show --item`, its JSON
and the TUI's transcript show it. A prompt needs counting only when its UTF-8 size could
exceed the budget (a token is at least one byte), so short prompts cost nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qatui.llm.fence import fenced_blocks

if TYPE_CHECKING:
    from qatui.llm.facts import Facts

MARGIN_TOKENS = 32
"""Room kept beside the prompt and the answer (chat-template tokens a counter may miss)."""
OVERHEAD_PER_MESSAGE = 16
"""Upper bound of a message's own tokens (role and separators) in the quick byte-size bound."""
MIN_KEPT_TOKENS = 16
"""No text is cut below this many tokens."""
NOTE = "\n[… trimmed by qatui to fit the context window: the first {kept} of {total} tokens kept]"


@dataclass
class Trimmed:
    """What trimming did to one request: the window, the room for the answer, and each text cut."""

    window: int
    answer_tokens: int
    prompt_tokens: int
    """The prompt's tokens before trimming."""
    kept_tokens: int = 0
    """The prompt's tokens after trimming."""
    texts: list[dict[str, Any]] = field(default_factory=list)
    """One {"name", "tokens", "kept"} per text cut."""

    def fits(self) -> bool:
        """Whether the cut prompt fits the window beside the answer's room: texts are kept to `MIN_KEPT_TOKENS` at
        least, so instructions longer than the window do not, and such a prompt is never sent as one "trimmed to
        fit" (the client fails the call, naming both figures)."""
        return self.kept_tokens <= self.window - self.answer_tokens - MARGIN_TOKENS

    def record(self) -> dict[str, Any]:
        """The JSON-safe form stored on the call and in the event."""
        return {"window": self.window, "answer_tokens": self.answer_tokens, "prompt_tokens": self.prompt_tokens,
                "kept_tokens": self.kept_tokens, "texts": self.texts}


@dataclass(frozen=True)
class Counter:
    """A backbone's tokenizer: the tokens of a chat and of a text, and its context window."""

    window: int
    messages: Callable[[list[dict[str, Any]]], int]
    text: Callable[[str], int]


def _contents(messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(i, m["content"]) for i, m in enumerate(messages) if isinstance(m.get("content"), str)]


def _cut(text: str, keep: int, tokens: int, count: Callable[[str], int]) -> str:
    """The head of `text` holding at most `keep` tokens (found by proportion, then shrunk), with the note."""
    size = max(1, int(len(text) * keep / max(tokens, 1)))
    head = text[:size]
    while size > 1 and count(head) > keep:
        size = int(size * 0.9)
        head = text[:size]
    return head + NOTE.format(kept=keep, total=tokens)


def fit(messages: list[dict[str, Any]], counter: Counter, answer_tokens: int) -> tuple[list[dict[str, Any]],
                                                                                     Trimmed | None]:
    """`messages` within the window with room for `answer_tokens` (see the module docstring), and what was cut.

    Returns the messages unchanged and None when they fit, or when nothing fenced could be cut.
    """
    budget = counter.window - answer_tokens - MARGIN_TOKENS
    contents = _contents(messages)
    if fits_uncounted(messages, counter.window, answer_tokens):
        return messages, None
    total = counter.messages(messages)
    if total <= budget:
        return messages, None
    found = [(i, b, counter.text(text[b.start:b.end])) for i, text in contents for b in fenced_blocks(text)]
    if not found:
        return messages, None
    record = Trimmed(window=counter.window, answer_tokens=answer_tokens, prompt_tokens=total)
    out = messages
    excess = total - budget
    for _ in range(4):  # a cut text recounts a little differently: cut again what is still over
        caps = _cap([t for _, _, t in found], excess + len(found) * 24)  # 24: the note's own tokens
        out = [dict(m) for m in messages]
        record.texts = []
        for i in sorted({i for i, _, _ in found}, reverse=True):
            text = messages[i]["content"]
            for _, block, tokens in sorted((f for f in found if f[0] == i), key=lambda f: -f[1].start):
                keep = max(MIN_KEPT_TOKENS, caps)
                if tokens > keep:
                    text = text[:block.start] + _cut(text[block.start:block.end], keep, tokens, counter.text) \
                        + text[block.end:]
                    record.texts.insert(0, {"name": block.name, "tokens": tokens, "kept": keep})
            out[i]["content"] = text
        record.kept_tokens = counter.messages(out)
        if record.kept_tokens <= budget:
            break
        excess += record.kept_tokens - budget
    return out, record


def upper_bound(messages: list[dict[str, Any]]) -> int:
    """More tokens than any byte-level tokenizer makes of `messages`' texts: UTF-8 bytes plus `OVERHEAD_PER_MESSAGE` each.

    A byte-level BPE (tiktoken) or byte-fallback tokenizer gives each token at least one byte of
    text, so a text never has more tokens than bytes; LiteLLM's `token_counter` adds 3 per message,
    the role's tokens (at most its bytes: "assistant" is 9) and 3 for the reply's priming, which
    `OVERHEAD_PER_MESSAGE` covers. Counts only messages whose content is a string (what qatui sends).
    """
    return sum(len(text.encode("utf-8", "surrogatepass")) + OVERHEAD_PER_MESSAGE for _, text in _contents(messages))


def sent_upper_bound(sent: dict[str, Any] | list[str]) -> int:
    """More tokens than any byte-level tokenizer makes of what a request sends: `upper_bound` of a chat request's
    messages plus the UTF-8 bytes of the rest a provider reads (its response format's schema, tools, as JSON), or
    of an embedding request's texts (`OVERHEAD_PER_MESSAGE` each). What a provider's usage report is held to
    (`response.usage_problem`)."""
    if isinstance(sent, list):
        return sum(len(str(text).encode("utf-8", "surrogatepass")) + OVERHEAD_PER_MESSAGE for text in sent)
    rest = {k: sent[k] for k in ("response_format", "tools", "tool_choice", "functions") if sent.get(k)}
    return upper_bound(sent.get("messages") or []) + (
        len(json.dumps(rest, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")) if rest else 0)


def fits_uncounted(messages: list[dict[str, Any]], window: int, answer_tokens: int) -> bool:
    """Whether `fit` sends `messages` as they are without counting a token: they fit by `upper_bound`, or nothing can.

    True needs no tokenizer at all (`LLMClient.fit` builds none then), and `fit` returns the same."""
    budget = window - answer_tokens - MARGIN_TOKENS
    return budget <= 0 or upper_bound(messages) <= budget


def window_of(model: str, window: int | None, facts: Facts | None = None) -> int | None:
    """`model`'s context window: `window` (the config's) when set, else LiteLLM's `max_input_tokens`, else None.

    With `facts` (`llm.facts`) LiteLLM's answer is kept there, so a cached rerun asks no LiteLLM."""
    if window is not None:
        return window
    if facts is None:
        return _known_window(model)
    from qatui.llm.facts import is_window

    return facts.get("window", {"model": model}, lambda: _known_window(model), is_window)


def _known_window(model: str) -> int | None:
    """LiteLLM's `max_input_tokens` for `model`; None when it does not know the model or its window."""
    from qatui.llm._lazy import get_litellm

    try:
        window = get_litellm().get_model_info(model).get("max_input_tokens")
    except Exception:  # noqa: BLE001 - a model LiteLLM does not know: its window is unknown
        return None
    return int(window) if window else None


def _cap(tokens: list[int], excess: int) -> int:
    """The largest cap c with sum(max(0, t - c)) >= excess: cutting every text above c to c frees enough."""
    low, high = 0, max(tokens)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(max(0, t - mid) for t in tokens) >= excess:
            low = mid
        else:
            high = mid - 1
    return low


def counter_for(model: str, window: int | None) -> Counter | None:
    """The tokenizer and window of `model` (`window` overrides the known one); None when the window is unknown."""
    if model.startswith("local/"):
        from qatui.llm.local import get_model, model_name

        local = get_model(model_name(model))
        return Counter(window or local.n_ctx, local.count_prompt, local.count_text)
    from qatui.llm.tokens import count_messages, count_text

    window = window_of(model, window)
    if not window:
        return None
    return Counter(int(window), lambda messages: count_messages(model, messages), lambda text: count_text(model, text))
