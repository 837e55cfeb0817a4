"""Engine overhead over real HTTP: `pairwise` through the whole path against a loopback server.

Run: .venv/bin/python bench/bench_engine_http.py [N_ITEMS] [LATENCY_S]   (defaults 500 and 0.05)
The scripted OpenAI-compatible server of tests/llm_server.py (aiohttp on 127.0.0.1, in a
child process so that its CPU is not counted as qatui's) answers every request after a fixed
latency with a pairwise answer. The real `pairwise` judge (both orders: 2 calls per
two-answer item) runs through `start_run` and the engine (qatui's direct HTTP client for this
`openai/` backbone with an api_base, `qatui.llm.direct`; the call cache, events, the session store), as `qatui run` does, at concurrency 8, 32 and 128, with
tokens streamed (as the TUI watches them) and not (the CLI), each on a fresh cache; then the
last run again on its cache. Printed: calls/s and its ratio to the ideal (concurrency /
latency), this process's CPU seconds per call (`time.process_time`), and the replay's wall
time against the first run's. Then each client alone: the very requests qatui sent at
concurrency 32 (recorded as they went out), sent again through a bare aiohttp session (no qatui,
no parsing: this harness's own ceiling, `bare_post`), straight through qatui's direct client
and through `litellm.acompletion`, under a semaphore of 32, with no judge, cache, events or
store: the ceiling one Python process reaches through each, and the share of LiteLLM's qatui keeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from qatui.config import BackboneConfig, CacheConfig, Config, GeneralConfig, ModelsConfig  # noqa: E402
from qatui.data.model import Dataset, Item  # noqa: E402
from qatui.engine.jobs import finish_run, start_run  # noqa: E402
from qatui.llm import direct  # noqa: E402
from qatui.llm._lazy import get_litellm  # noqa: E402
from qatui.store import SessionStore  # noqa: E402

from loopback import Served, serve_in_child  # noqa: E402

CONCURRENCIES = (8, 32, 128)
KEY_ENV = "QATUI_BENCH_FAKE_KEY"
ANSWER = json.dumps({"rationale": "Answer A states the reference's facts; B does not.", "choice": "A"})


def pairwise_answer(body: dict[str, Any]) -> str:
    """Every request gets the same valid pairwise answer (the preflight's too)."""
    return ANSWER


def make_dataset(n: int) -> Dataset:
    """N synthetic two-answer items with a reference each."""
    items = [Item(id=f"q{i}", question=f"Question {i}: what is the capital of country {i}?",
                  references=[f"The capital of country {i} is City {i}."],
                  candidates={"a": f"City {i} is the capital of country {i}.", "b": f"It may be Town {i}."})
             for i in range(n)]
    return Dataset(name="bench-pairwise", path="bench://pairwise", format="jsonl",
                   content_hash=f"bench-{n}", items=items)


def make_config(base_url: str, concurrency: int, cache_dir: Path) -> Config:
    """A config whose default backbone `fake` is the loopback server."""
    fake = BackboneConfig(model="openai/fake-model", api_base=base_url, api_key_env=KEY_ENV,
                          max_concurrency=concurrency, timeout_s=60.0)
    return Config(general=GeneralConfig(concurrency=concurrency), cache=CacheConfig(dir=str(cache_dir)),
                  models=ModelsConfig(default_backbone="fake"), backbones={"fake": fake})


def run_once(dataset: Dataset, config: Config, store: SessionStore, concurrency: int, stream: bool,
             server: Served) -> dict[str, float]:
    """One `pairwise` run; wall and CPU seconds over the engine's run, and the requests it sent (the preflight, made
    by `start_run` when the cache holds no answer of the backbone and put off otherwise, excluded)."""
    job = start_run(store, dataset, ["pairwise"], config, concurrency=concurrency)  # its preflight, when live, here
    job.engine.watch_tokens = stream
    before = server.count()

    async def drive() -> None:
        async for _ in job.engine.run():
            pass

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(drive())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finish_run(job, "completed")
    counts = job.engine.counts
    if counts.failed:
        raise SystemExit(f"{counts.failed} items failed, e.g. {counts.failures[0].reason}")
    return {"wall": wall, "cpu": cpu, "calls": counts.calls, "cached": counts.cached,
            "requests": server.count() - before}


def record_requests(sink: list[dict[str, Any]]) -> Any:
    """Wrap `litellm.acompletion` and `qatui.llm.direct.acompletion` so that every request qatui sends is also
    kept in `sink`; returns a function that puts the originals back."""
    ll = get_litellm()
    originals = (ll.acompletion, direct.acompletion)

    def recorded(send: Any) -> Any:
        async def recording(**kwargs: Any) -> Any:
            sink.append(dict(kwargs))
            return await send(**kwargs)

        return recording

    ll.acompletion, direct.acompletion = recorded(originals[0]), recorded(originals[1])

    def restore() -> None:
        ll.acompletion, direct.acompletion = originals

    return restore


def alone(requests: list[dict[str, Any]], concurrency: int, send: Any) -> dict[str, float]:
    """The same requests straight through `send` (`litellm.acompletion`, or qatui's direct client),
    `concurrency` at a time: wall and CPU seconds."""

    async def drive() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(kwargs: dict[str, Any]) -> None:
            async with gate:
                await send(**kwargs)

        await asyncio.gather(*(one(kwargs) for kwargs in requests))
        if (close := getattr(send, "close", None)) is not None:
            await close()

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(drive())
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "calls": len(requests),
            "requests": len(requests)}


def bare_post(base_url: str) -> Any:
    """A `send` that posts each request's body with one aiohttp session and reads the reply whole, nothing else:
    no qatui, no LiteLLM, no parsing. What it reaches is this harness's own ceiling (the loopback server in its
    child process, the event loop, the two sharing the machine's cores), so the engine's ratio can be read
    against it rather than against 1.0."""
    import aiohttp

    session: aiohttp.ClientSession | None = None
    url = base_url.rstrip("/") + "/chat/completions"

    async def send(**kwargs: Any) -> None:
        nonlocal session
        if session is None:
            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        body = {k: v for k, v in kwargs.items() if k not in ("api_base", "api_key", "drop_params", "timeout")}
        body["model"] = str(body["model"]).split("/", 1)[-1]
        async with session.post(url, json=body, headers={"Authorization": f"Bearer {kwargs.get('api_key', '')}"}) as r:
            await r.read()

    async def close() -> None:
        if session is not None:
            await session.close()

    send.close = close  # type: ignore[attr-defined]  # `alone` closes the session inside its own loop
    return send


def report(label: str, concurrency: int, latency_s: float, run: dict[str, float]) -> None:
    """One line of figures."""
    rate = run["calls"] / run["wall"]
    ideal = concurrency / latency_s
    print(f"{label:<22} c={concurrency:<4} {run['calls']:5.0f} calls {run['wall']:7.2f} s "
          f"{rate:7.1f} calls/s  {rate / ideal:5.2f} of ideal {ideal:5.0f}/s  "
          f"{run['cpu'] / run['calls'] * 1000:5.2f} ms CPU/call  {run['requests']:.0f} requests")


def main(n: int, latency_s: float) -> None:
    """Every configuration, then the cached replay, in one process against one server."""
    os.environ[KEY_ENV] = "sk-bench-loopback"
    started = time.perf_counter()
    get_litellm()
    print(f"{n} items x 2 orders = {2 * n} calls a run, server latency {latency_s * 1000:.0f} ms, "
          f"litellm import {time.perf_counter() - started:.1f} s, {os.cpu_count()} CPUs")
    dataset = make_dataset(n)
    with serve_in_child(pairwise_answer, latency_s) as server:
        base_url = server.base_url
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            store = SessionStore(root / "sessions")
            first: dict[str, float] = {}
            rates: dict[int, float] = {}
            streamed_rates: dict[int, float] = {}
            sent: list[dict[str, Any]] = []
            config = make_config(base_url, CONCURRENCIES[0], root / "cache-warm-up")
            run_once(make_dataset(4), config, store, CONCURRENCIES[0], False, server)  # first-call costs out of the timing
            for stream in (True, False):
                for concurrency in CONCURRENCIES:
                    config = make_config(base_url, concurrency, root / f"cache-{concurrency}-{stream}")
                    keep = not stream and concurrency == 32
                    restore = record_requests(sent) if keep else None
                    first = run_once(dataset, config, store, concurrency, stream, server)
                    if restore is not None:
                        restore()
                    report("streamed" if stream else "not streamed", concurrency, latency_s, first)
                    (streamed_rates if stream else rates)[concurrency] = first["calls"] / first["wall"]
            replay = run_once(dataset, config, store, CONCURRENCIES[-1], False, server)
            print(f"cached replay          c={CONCURRENCIES[-1]:<4} {replay['calls']:5.0f} calls "
                  f"{replay['wall']:7.2f} s  {replay['cached']:.0f} cached, {replay['requests']:.0f} requests  "
                  f"{replay['wall'] / first['wall']:.3f} of the first run  "
                  f"{replay['wall'] / replay['calls'] * 1000:.2f} ms/call  "
                  f"{replay['cpu'] / replay['calls'] * 1000:.2f} ms CPU/call")
            requests = [r for r in sent if r.get("max_tokens") != 8]  # the preflight left out
            ceiling = alone(requests, 32, bare_post(base_url))
            report("bare aiohttp alone", 32, latency_s, ceiling)
            report("direct alone", 32, latency_s, alone(requests, 32, direct.acompletion))
            alone_ = alone(requests, 32, get_litellm().acompletion)
            report("litellm alone", 32, latency_s, alone_)
            print(f"qatui at c=32 keeps {rates[32] / (alone_['calls'] / alone_['wall']):.2f} of LiteLLM alone's calls/s "
                  f"(the ceiling of one process through LiteLLM: {alone_['calls'] / alone_['wall'] / (32 / latency_s):.2f} "
                  "of the ideal)")
    at_32 = rates[32] / (32 / latency_s)
    harness = ceiling["calls"] / ceiling["wall"] / (32 / latency_s)
    print(f"the harness's own ceiling at c=32 (a bare aiohttp client, no qatui): {harness:.2f} of the ideal; "
          f"qatui not streamed keeps {at_32 / harness:.2f} of it")
    streamed_32 = streamed_rates[32] / (32 / latency_s)
    print(f"goal >= 0.6 of the ideal at concurrency 32 streamed: {'met' if streamed_32 >= 0.6 else 'missed'} "
          f"({streamed_32:.2f} of ideal)")
    rising = all(rates[a] < rates[b] for a, b in zip(CONCURRENCIES, CONCURRENCIES[1:]))
    print(f"goal >= 0.9 of the ideal at concurrency 32, rising to 128 (not streamed): "
          f"{'met' if at_32 >= 0.9 and rising else 'missed'} ({at_32:.2f} of ideal at 32; calls/s "
          + " / ".join(f"{rates[c]:.0f}" for c in CONCURRENCIES) + ")")
    totals = server.totals
    print(f"server: {totals['requests']} requests ({totals['streamed']} streamed), preflights included; "
          "requests per run above exclude the preflight (sent by start_run; none for the cached replay, whose check is put off and never needed)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500, float(sys.argv[2]) if len(sys.argv) > 2 else 0.05)
