"""Token counts made offline (`qatui.llm.tokens`): a model whose tokenizer LiteLLM would fetch from the Hugging Face
hub is counted at once without it, and said approximate; with its tokenizer in the local cache, counted by it.

Before, with no network, each count of a Llama 3 model waited out the hub's retries: 23 s a count, so a `run --plan`
of 300 prompts would have waited two hours. The hub here is an address on 127.0.0.1 that refuses connections, and the
local cache a folder of the test's own holding a real `tokenizers` tokenizer.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

LLAMA3 = "hosted_vllm/meta-llama/Meta-Llama-3-8B-Instruct"
"""A model string LiteLLM counts with the hub's Llama 3 tokenizer (its name holds "llama-3")."""
LONG_WORDS = "antidisestablishmentarianism floccinaucinihilipilification"
"""Two words: two tokens to a tokenizer of whole words, many more to tiktoken."""


@pytest.fixture
def no_hub(tmp_path, monkeypatch) -> Path:
    """An empty Hugging Face cache of the test's own and a hub that refuses connections; the process's tokenizers
    found so far forgotten before and after. Returns the cache folder."""
    import huggingface_hub.constants as hub_constants

    from qatui.llm import tokens
    from qatui.llm._lazy import get_litellm

    get_litellm()
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens there
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    tokens._found.clear()
    tokens._missing.clear()
    yield cache
    tokens._found.clear()
    tokens._missing.clear()


def cache_tokenizer(cache: Path, repo: str) -> None:
    """Put a tokenizer of whole words (any word one token) in the Hugging Face cache layout as `repo`'s snapshot."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    folder = cache / f"models--{repo.replace('/', '--')}"
    (folder / "snapshots" / "0123abcd").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("0123abcd", encoding="utf-8")
    (folder / "snapshots" / "0123abcd" / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")


def test_a_hub_tokenizer_out_of_reach_is_counted_at_once_with_tiktoken_and_said_so(no_hub) -> None:
    from qatui.llm.tokens import approximate, count_messages, count_text

    started = time.perf_counter()
    counted = [count_text(LLAMA3, LONG_WORDS) for _ in range(3)]
    messages = count_messages(LLAMA3, [{"role": "user", "content": LONG_WORDS}])
    took = time.perf_counter() - started
    assert took < 5.0, f"{took:.1f} s for four counts"  # before: 23 s each, waiting out the hub's retries
    assert counted[0] > 2 and len(set(counted)) == 1  # tiktoken's pieces of the two long words
    assert messages > counted[0]
    why = approximate(LLAMA3)
    assert why is not None and "Xenova/llama-3-tokenizer" in why and "tiktoken" in why
    assert approximate("openai/gpt-4o-mini") is None  # a model LiteLLM counts with a tokenizer it bundles


def test_a_hub_tokenizer_in_the_local_cache_counts_the_model(no_hub) -> None:
    from qatui.llm.tokens import approximate, count_text

    cache_tokenizer(no_hub, "Xenova/llama-3-tokenizer")
    assert count_text(LLAMA3, LONG_WORDS) == 2  # its own tokenizer's words, not tiktoken's pieces
    assert count_text(LLAMA3, LONG_WORDS, answer=True) == 2
    assert approximate(LLAMA3) is None


def test_a_broken_tokenizer_file_is_named_and_counting_goes_on(no_hub) -> None:
    from qatui.llm.tokens import approximate, count_text

    cache_tokenizer(no_hub, "Xenova/llama-3-tokenizer")
    next(no_hub.rglob("tokenizer.json")).write_text('{"version": "1.0", "model": 5}', encoding="utf-8")
    assert count_text(LLAMA3, LONG_WORDS) > 2
    assert "could not be read" in (approximate(LLAMA3) or "")


def test_the_plan_of_a_llama_3_backbone_says_its_counts_are_approximate(no_hub, llm_server, tmp_path,
                                                                         capsys) -> None:
    """`run --plan` on a served Llama 3, its tokenizer out of reach: priced in seconds, the counts said to be
    tiktoken's, in the JSON and in the table's notes."""
    from qatui.cli import main

    llm_server.script(lambda body: "OK")
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"What is the capital of country {i}?", "references": [f"City {i}."],
        "candidates": {"a": f"City {i} is its capital.", "b": f"Town {i}."}}) + "\n" for i in range(6)),
        encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[models]\ndefault_backbone = "llama"\n[cache]\ndir = "{tmp_path / "cache"}"\n'
                      f'[backbones.llama]\nmodel = "{LLAMA3}"\napi_base = "{llm_server.base_url}"\n'
                      'context_window = 8192\n', encoding="utf-8")
    common = ["--config", str(config), "--sessions-dir", str(tmp_path / "sessions"), "run", str(data),
              "--judge", "pairwise", "--plan"]
    started = time.perf_counter()
    code = main([*common, "--json"])
    out, err = capsys.readouterr()
    took = time.perf_counter() - started
    assert code == 0, err
    row = json.loads(out)["cost"]["pairwise"]
    assert row["prompts_counted"] == 12 and row["prompt_tokens"] > 0
    assert "tiktoken" in row["approximate"] and "Xenova/llama-3-tokenizer" in row["approximate"]
    assert took < 30.0, f"{took:.1f} s"  # 12 prompts: 4.6 minutes before
    assert main(common) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"token counts of pairwise on llama ({LLAMA3}) are approximate" in out
