"""The loopback harness's own ceiling: how near the ideal any client gets, and qatui's engine beside that client.

Run: .venv/bin/python bench/bench_harness_ceiling.py [N_ITEMS] [LATENCY_S]   (defaults 1000 and 0.05)

The engine goal (bench_engine_http.py: >= 0.9 of the ideal, concurrency / latency, at c=32 not streamed) is read
against a harness whose client and server share this machine's cores and one event loop each. Measured here, in
one run:
1. a bare aiohttp client (no qatui, no parsing) against the lean server (bench/loopback.py's `serve_lean_in_child`:
   aiohttp's low-level server, one fixed answer, nothing scripted) at concurrency 1, 8 and 32: its ratio to the
   ideal and each request's round trip (the server's sleep is the latency; the rest is the loop's and the sockets');
2. at c=32, qatui's engine (the real `pairwise` judge through `start_run`, the direct client, the cache, events and
   the session store, as bench_engine_http.py runs it) and the bare client sending the very requests qatui sent,
   against the scripted server every other benchmark uses (tests/llm_server.py) and against the lean one: each one's
   ratio, its CPU per call, and the server's CPU per request (its process's, from /proc).
The engine's ratio over the bare client's on the same server is the share of the harness's ceiling it keeps.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_engine_http import (ANSWER, KEY_ENV, alone, bare_post, make_config, make_dataset,  # noqa: E402
                               pairwise_answer, record_requests, run_once)
from loopback import Served, serve_in_child, serve_lean_in_child  # noqa: E402

from qatui.llm._lazy import get_litellm  # noqa: E402
from qatui.store import SessionStore  # noqa: E402

CONCURRENCY = 32
ROUND_TRIP_BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "Which answer is better? " * 60}]}
"""The request of the round-trip probe: about the size of a pairwise prompt."""


def round_trips(base_url: str, concurrency: int, n: int) -> tuple[float, list[float]]:
    """`n` requests of a bare aiohttp client, `concurrency` at a time: wall seconds and each one's round trip."""
    import aiohttp

    async def drive() -> tuple[float, list[float]]:
        trips: list[float] = []
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            gate = asyncio.Semaphore(concurrency)

            async def one() -> None:
                async with gate:
                    started = time.perf_counter()
                    async with session.post(base_url + "/chat/completions", json=ROUND_TRIP_BODY) as reply:
                        await reply.read()
                    trips.append(time.perf_counter() - started)

            await asyncio.gather(*(one() for _ in range(min(n, 2 * concurrency))))  # connections opened, untimed
            trips.clear()
            started = time.perf_counter()
            await asyncio.gather(*(one() for _ in range(n)))
            return time.perf_counter() - started, trips

    return asyncio.run(drive())


def engine_and_bare(server: Served, n: int, latency_s: float, folder: Path, label: str) -> tuple[float, float]:
    """qatui's pairwise run at c=32, then the bare client sending its requests: a line each; their ratios."""
    store = SessionStore(folder / f"sessions-{label}")
    run_once(make_dataset(4), make_config(server.base_url, CONCURRENCY, folder / f"warm-{label}"), store,
             CONCURRENCY, False, server)  # first-call costs out of the timing
    sent: list[dict[str, Any]] = []
    restore = record_requests(sent)
    cpu = server.cpu_s()
    try:
        engine = run_once(make_dataset(n), make_config(server.base_url, CONCURRENCY, folder / f"cache-{label}"), store,
                          CONCURRENCY, False, server)
    finally:
        restore()
    engine_server = (server.cpu_s() - cpu) / engine["calls"]
    requests = [r for r in sent if r.get("max_tokens") != 8]  # the preflight left out
    cpu = server.cpu_s()
    bare = alone(requests, CONCURRENCY, bare_post(server.base_url))
    bare_server = (server.cpu_s() - cpu) / bare["calls"]
    ideal = CONCURRENCY / latency_s
    ratios = []
    for who, run, per_request in (("qatui's engine", engine, engine_server), ("bare aiohttp", bare, bare_server)):
        ratio = run["calls"] / run["wall"] / ideal
        ratios.append(ratio)
        print(f"{label:<16} {who:<15} c={CONCURRENCY}  {run['calls']:5.0f} calls {run['wall']:6.2f} s  {ratio:5.2f} of ideal"
              f"  {run['cpu'] / run['calls'] * 1000:5.2f} ms CPU/call  server {per_request * 1000:5.3f} ms CPU/request")
    return ratios[0], ratios[1]


def main(n: int, latency_s: float) -> None:
    os.environ[KEY_ENV] = "sk-bench-loopback"
    get_litellm()  # imported once, outside every timing
    print(f"{n} items x 2 orders = {2 * n} pairwise calls a run, server latency {latency_s * 1000:.0f} ms, "
          f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp, serve_lean_in_child(ANSWER, latency_s) as lean:
        print("1. a bare aiohttp client against the lean server (round trips, the server's sleep included):")
        for concurrency in (1, 8, CONCURRENCY):
            count = 40 * concurrency
            wall, trips = round_trips(lean.base_url, concurrency, count)
            ratio = count * latency_s / concurrency / wall
            deciles = statistics.quantiles(trips, n=10)
            print(f"   c={concurrency:<3} {count:5d} requests  {ratio:5.3f} of ideal  round trip mean "
                  f"{statistics.mean(trips) * 1000:6.2f} ms, p10 {deciles[0] * 1000:6.2f}, p90 {deciles[-1] * 1000:6.2f}, "
                  f"max {max(trips) * 1000:6.2f}")
        print("2. at c=32: qatui's engine, then a bare client sending the very requests qatui sent")
        folder = Path(tmp)
        with serve_in_child(pairwise_answer, latency_s) as scripted:
            engine_scripted, bare_scripted = engine_and_bare(scripted, n, latency_s, folder, "scripted server")
        engine_lean, bare_lean = engine_and_bare(lean, n, latency_s, folder, "lean server")
    print(f"qatui's engine keeps {engine_scripted / bare_scripted:.2f} of the bare client's ratio on the scripted server "
          f"and {engine_lean / bare_lean:.2f} on the lean one")
    print(f"goal >= 0.9 of the ideal at concurrency 32 (not streamed), lean server: "
          f"{'met' if engine_lean >= 0.9 else 'missed'} ({engine_lean:.2f}; the bare client, no qatui: {bare_lean:.2f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000, float(sys.argv[2]) if len(sys.argv) > 2 else 0.05)
