"""N calls to the embedded backbone, uncached then cached: what the content-addressed cache saves.

Run: .venv/bin/python bench/bench_llm_cache.py [N] [MAX_TOKENS]
Each call asks `local/smollm2` (SmolLM2-135M on transformers and torch) for key points of a short text
with a JSON schema, as MinosEval does, through `LLMClient.complete` (streaming on). The
first pass generates every answer; the second, identical pass reads them from the cache
and makes no model call. Also printed: the model's load time and decode speed.
`$QATUI_LOCAL_THREADS` sets its threads (default: half the CPUs).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time

from pydantic import BaseModel, Field

from qatui.config import CacheConfig, Config
from qatui.llm import make_client
from qatui.llm._lazy import get_litellm
from qatui.llm.errors import LLMCallError
from qatui.llm.local import get_model, n_threads

TEXTS = [
    "Paris is the capital of France. It has about two million inhabitants.",
    "Water boils at 100 degrees Celsius at sea level and at lower temperatures at altitude.",
    "The mitochondria produce most of the chemical energy that powers a cell.",
    "The Great Wall of China was built over many centuries to protect against invasions.",
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
]


class KeyPoints(BaseModel):
    key_points: list[str] = Field(min_length=1, max_length=4)


def messages(i: int) -> list[dict[str, str]]:
    text = TEXTS[i % len(TEXTS)]
    return [{"role": "system", "content": "You extract key points."},
            {"role": "user", "content": f"({i}) List the key points of this text as JSON.\n\nText: {text}"}]


async def run_pass(client, indices: list[int], max_tokens: int) -> tuple[float, int, int, list[int]]:
    """Seconds for the calls of `indices` (sequential, as one judge does), completion tokens, cache hits, and the
    indices answered: an answer cut off at `max_tokens` fails its call and is never cached (as in a run)."""
    started = time.perf_counter()
    tokens = hits = 0
    answered = []
    for i in indices:
        try:
            result = await client.complete(messages(i), purpose="key_points", schema=KeyPoints, max_tokens=max_tokens)
        except LLMCallError:
            continue
        answered.append(i)
        tokens += result.event.completion_tokens
        hits += result.event.cached
    return time.perf_counter() - started, tokens, hits, answered


async def main(n: int, max_tokens: int) -> None:
    started = time.perf_counter()
    get_litellm()
    import_s = time.perf_counter() - started
    load_s = get_model("smollm2").load()
    print(f"litellm import {import_s:.2f} s, SmolLM2-135M load {load_s:.2f} s, threads {n_threads()}")
    with tempfile.TemporaryDirectory() as folder:
        client = make_client("local/smollm2", Config(cache=CacheConfig(dir=folder)))
        await client.complete(messages(-1), purpose="warm-up", max_tokens=4, cut_text_ok=True)  # first-call costs out of the timing (4 tokens: cut, and fine)
        cold_s, tokens, _, answered = await run_pass(client, list(range(n)), max_tokens)
        warm_s, _, hits, _ = await run_pass(client, answered, max_tokens)  # the answers kept: each a hit
    done = max(1, len(answered))
    print(f"{n} calls uncached: {cold_s:7.3f} s  ({cold_s / n * 1000:7.1f} ms/call, {tokens} tokens, "
          f"{tokens / cold_s:.1f} tokens/s; {n - len(answered)} cut off at {max_tokens} tokens, never cached)")
    print(f"{len(answered)} answered calls again, cached: {warm_s:7.3f} s  ({warm_s / done * 1000:7.1f} ms/call, "
          f"{hits}/{len(answered)} hits)")
    print(f"ratio uncached / cached, per call: {(cold_s / n) / max(warm_s / done, 1e-9):.0f}x")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 96
    asyncio.run(main(count, limit))
