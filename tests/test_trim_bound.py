"""The byte bound that lets a prompt skip its tokenizer (`trim.upper_bound`, `fits_uncounted`) is sound and changes nothing.

Against the real counters `trim.counter_for` builds (LiteLLM's `token_counter`: tiktoken for
OpenAI models, the Hugging Face tokenizer LiteLLM ships for Anthropic's), hypothesis draws chats
of CJK, emoji, long whitespace runs and any other text: the bound is never below the real count.
And a client, which skips the tokenizer when the bound fits, returns exactly what `fit` with the
counter returns, so no cache key changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qatui.config import BackboneConfig, CacheConfig, Config
from qatui.llm.fence import Fence
from qatui.llm.response import usage_problem
from qatui.llm.trim import MARGIN_TOKENS, counter_for, fit, fits_uncounted, sent_upper_bound, upper_bound

CJK = "".join(map(chr, range(0x4E00, 0x4E40))) + "日本語の文章한국어문장"
EMOJI = "".join(map(chr, range(0x1F600, 0x1F640))) + "👩‍👩‍👧‍👦🏳️‍🌈\u200d\ufe0f"
TEXTS = st.one_of(
    st.text(max_size=400),
    st.text(alphabet=" \t\n\r\u3000\u00a0", max_size=2000),
    st.text(alphabet=CJK + " ", max_size=400),
    st.text(alphabet=EMOJI, max_size=300),
    st.lists(st.sampled_from(["the", " ", "   ", "\n\n", "🙂", "汉", "{", "}", "ﬁ", "Ω", "x" * 40]), max_size=300).map("".join),
)
CHATS = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]), "content": TEXTS}),
                 min_size=1, max_size=4)


def _counters() -> list:
    found = [counter_for("openai/gpt-4", None), counter_for("openai/gpt-4o-mini", None)]
    from qatui.llm._lazy import get_litellm
    from litellm.utils import huggingface_tokenizer_kind

    ll = get_litellm()
    anthropic = [m for m in sorted(ll.anthropic_models) if huggingface_tokenizer_kind(m) == "anthropic"]
    if anthropic:  # LiteLLM's bundled Hugging Face tokenizer (byte-level BPE), read offline
        found.append(counter_for(anthropic[0], 100_000))
    return found


COUNTERS = _counters()


def test_the_counters_are_the_real_ones() -> None:
    assert COUNTERS[0].window == 8192 and COUNTERS[0].text("汉字 🙂") > 1
    assert len(COUNTERS) == 3, "LiteLLM ships no offline Hugging Face tokenizer for an Anthropic model any more"


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chat=CHATS)
def test_the_byte_bound_is_never_below_a_real_count(chat: list[dict]) -> None:
    bound = upper_bound(chat)
    for counter in COUNTERS:
        assert counter.messages(chat) <= bound, (counter, chat)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chat=CHATS, names=st.lists(TEXTS, min_size=1, max_size=3), texts=st.lists(TEXTS, min_size=1, max_size=4))
def test_a_true_usage_report_is_never_refused_as_one_that_cannot_be_true(chat: list[dict], names: list[str],
                                                                        texts: list[str]) -> None:
    """A chat with a JSON schema (its property names any text), and an embedding request's texts: what the real
    tokenizers count of them, as a provider reports it, is within the bound a usage report is held to (checked
    without the allowance a provider's own additions get)."""
    schema = {"type": "object", "properties": {name: {"type": "string"} for name in names}}
    request = {"messages": chat, "response_format": {"type": "json_schema", "json_schema": {"schema": schema}}}
    for counter in COUNTERS:
        prompt = counter.messages(chat) + counter.text(json.dumps(schema, ensure_ascii=False))
        assert prompt <= sent_upper_bound(request), (counter, request)
        assert usage_problem(prompt, 0, sent_upper_bound(request)) is None
        assert sum(counter.text(text) for text in texts) <= sent_upper_bound(texts), (counter, texts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chat=CHATS, window=st.integers(1, 6000), answer=st.integers(1, 3000))
def test_skipping_the_tokenizer_when_the_bound_fits_gives_what_fit_gives(chat: list[dict], window: int,
                                                                          answer: int) -> None:
    if not fits_uncounted(chat, window, answer):
        return
    budget = window - answer - MARGIN_TOKENS
    for counter in COUNTERS:  # counting would have cut nothing either
        assert budget <= 0 or counter.messages(chat) <= budget
        assert fit(chat, type(counter)(window, counter.messages, counter.text), answer) == (chat, None)


@pytest.mark.parametrize("long", [1, 40, 2_000])
@pytest.mark.parametrize("window", [300, 4_000, 9_000])
def test_a_client_trims_exactly_as_fit_with_the_counter_does(tmp_path: Path, long: int, window: int) -> None:
    """Fenced answers of every size against several windows: the client's result equals `fit`'s, trimmed or not."""
    from qatui.llm.client import make_client

    text = "Rayleigh scattering 汉字 🙂   \n" * long
    fence = Fence(text, "short")
    chat = [{"role": "system", "content": "Grade."},
            {"role": "user", "content": f"A:\n{fence('Answer A', text)}\nB:\n{fence('Answer B', 'short')}"}]
    config = Config(backbones={"g": BackboneConfig(model="openai/gpt-4", context_window=window)},
                    cache=CacheConfig(dir=str(tmp_path)))
    client = make_client("g", config)
    assert client.fit(chat, 256) == fit(chat, counter_for("openai/gpt-4", window), 256)
