"""A provider that rate-limits at a fixed rate: the run slows to that rate and fails nothing.

Run: .venv/bin/python bench/bench_rate_limit.py [N_ITEMS] [RATE] [BURST] [CONCURRENCY]
(defaults 60, 10, 2 and 16)
The scripted OpenAI-compatible server (tests/llm_server.py, on 127.0.0.1) answers RATE requests a
second from a token bucket holding BURST, and past it answers 429 with `Retry-After` (the wait
until its next token). The real `pointwise` judge (one call per item) runs N items through
`start_run` and the engine (LiteLLM, the call cache, events, the session store) on a fresh cache,
at CONCURRENCY items and backbone calls at once, well above what the rate allows, so that the
backbone's adaptive limit (`qatui.llm.pacing`: halved on 429s, one more per round of answers,
paused by Retry-After) is what paces the run. Printed: answers a second (first to last answer),
its ratio to RATE (the goal: within 0.8 to 1.2), the 429s, the limit's cuts and where it ended,
and the items failed (must be 0). Then the same with a bucket of one request, where every
millisecond between the end of a pause and the next request reaching the server is lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # this checkout's qatui, whichever one the virtualenv installed
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from llm_server import FakeLLMServer  # noqa: E402

from qatui.config import BackboneConfig, CacheConfig, Config, GeneralConfig, ModelsConfig  # noqa: E402
from qatui.data.model import Dataset, Item  # noqa: E402
from qatui.engine.jobs import finish_run, start_run  # noqa: E402
from qatui.events import ItemFailed, Verdict  # noqa: E402
from qatui.llm import client as client_module  # noqa: E402
from qatui.store import SessionStore  # noqa: E402

KEY_ENV = "QATUI_BENCH_RATE_KEY"
ANSWER = json.dumps({"score": "[[7.50]]"})


def dataset(n: int, tag: str) -> Dataset:
    """N one-answer items: `pointwise` makes one call each."""
    items = [Item(id=f"{tag}{i}", question=f"Question {i} ({tag}): what is the capital of country {i}?",
                  references=[f"The capital of country {i} is City {i}."], candidates={"a": f"City {i}."})
             for i in range(n)]
    return Dataset(name=f"rate-{tag}", path=f"bench://{tag}", format="jsonl", content_hash=f"rate-{tag}-{n}",
                   items=items)


def run(n: int, rate: float, burst: float, concurrency: int) -> dict[str, float]:
    """One run against a fresh server and cache; its figures."""
    client_module._backbones.clear()
    with FakeLLMServer(lambda body: ANSWER, rate_per_s=rate, burst=burst, latency_s=0.02, max_requests=100_000,
                       max_lifetime_s=600) as server, tempfile.TemporaryDirectory() as tmp:
        backbone = BackboneConfig(model="openai/fake-model", api_base=server.base_url, api_key_env=KEY_ENV,
                                  max_concurrency=concurrency, timeout_s=60.0)
        config = Config(general=GeneralConfig(concurrency=concurrency), cache=CacheConfig(dir=f"{tmp}/cache"),
                        models=ModelsConfig(default_backbone="fake"), backbones={"fake": backbone})
        job = start_run(SessionStore(Path(tmp) / "sessions"), dataset(n, f"b{burst:g}"), ["pointwise"], config)
        failed = done = 0

        async def drive() -> None:
            nonlocal failed, done
            async for event in job.engine.run():
                done += isinstance(event, Verdict)
                failed += isinstance(event, ItemFailed)

        started = time.monotonic()
        asyncio.run(drive())
        wall = time.monotonic() - started
        finish_run(job, "completed")
        served = server.served_at[-n:]
        [used] = client_module._backbones.values()
        pace = used.pace
        return {"answers_per_s": (len(served) - 1) / (served[-1] - served[0]), "wall_s": wall, "done": done,
                "failed": failed, "429s": server.counts["429-rate"], "cuts": pace.cuts, "limit_end": pace.allowed}


def main() -> None:
    args = [float(a) for a in sys.argv[1:]]
    n, rate, burst, concurrency = int(args[0]) if args else 60, *(args[1:3] or [10.0, 2.0]), 16
    if len(args) > 3:
        concurrency = int(args[3])
    os.environ[KEY_ENV] = "sk-bench-rate"
    print(f"pointwise, {n} items (1 call each), concurrency {concurrency}; server: {rate:g} requests/s")
    for bucket in (burst, 1.0):
        r = run(n, rate, bucket, concurrency)
        print(f"  bucket of {bucket:g}: {r['answers_per_s']:.2f} answers/s (ratio to the rate {r['answers_per_s'] / rate:.2f}), "
              f"{r['429s']} × 429, limit cut {r['cuts']} times, ending at {r['limit_end']} of {concurrency}; "
              f"items done {r['done']}, failed {r['failed']}; wall {r['wall_s']:.1f} s")


if __name__ == "__main__":
    main()
