"""Two rate-limited deployments behind one backbone against each alone: throughput adds up, no call is lost.

Run: .venv/bin/python bench/bench_router.py [N_ITEMS] [LATENCY_S] [LIMIT_A] [LIMIT_B]
(defaults 100, 0.05, 5 and 10)
Two scripted OpenAI-compatible servers (tests/llm_server.py, on 127.0.0.1, in one child process
so that their CPU is not counted as qatui's) stand for two endpoints of one model: deployment A
allows LIMIT_A requests a second and B LIMIT_B (a sliding one-second window; past it, 429 with
the Retry-After that frees a slot). The limits sit well under what qatui itself can send on this
machine (about 25 calls a second through the Router on 2 shared cores, `ms CPU/call` below), so
that they, not qatui's CPU, bound each run, as a provider's limits do. The real `pairwise` judge (both orders: 2 calls per item) runs
through `start_run` and the engine (LiteLLM's Router and HTTP client, the call cache, events,
the session store) on a fresh cache each time, against: A alone, B alone, A and B as one
backbone's deployments with their limits stated (`rpm`, at `STATED` of each), and A and B with no limit stated (qatui
then learns them only from 429s: Router cooldowns, moves to the other deployment, its own
backoff). Printed per run: answered calls a second, requests and 429s per deployment, and calls
lost (planned calls not answered: must be 0); then the ratio of the pair's throughput to the
sum of the two alone.
"""

from __future__ import annotations

import asyncio
import collections
import math
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))  # this checkout's qatui, whichever one the virtualenv installed

from bench_engine_http import KEY_ENV, make_dataset, pairwise_answer  # noqa: E402

from qatui.config import BackboneConfig, CacheConfig, Config, DeploymentConfig, GeneralConfig, ModelsConfig  # noqa: E402
from qatui.engine.jobs import finish_run, start_run  # noqa: E402
from qatui.llm._lazy import get_litellm  # noqa: E402
from qatui.store import SessionStore  # noqa: E402

LIMITS = {"A": 5, "B": 10}
"""Requests a second each deployment allows."""
CONCURRENCY = 16
STATED = 0.9
"""The share of a limit stated as `rpm`: requests spaced exactly at a limit meet a sliding window's edge
whenever the network jitters by a millisecond, so a quota is stated a little under (as docs/BACKBONES.md advises)."""


class Window:
    """A server's rate limit: at most `limit` requests in any one second; past it, a 429 saying when to retry."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.times: collections.deque[float] = collections.deque()
        self.lock = threading.Lock()

    def __call__(self, index: int, body: dict[str, Any]) -> Any:
        from llm_server import Fault

        with self.lock:
            now = time.monotonic()
            while self.times and now - self.times[0] >= 1.0:
                self.times.popleft()
            if len(self.times) >= self.limit:
                return Fault("429", retry_after=math.ceil(1.0 - (now - self.times[0])))  # whole seconds, as providers
            self.times.append(now)
            return "ok"


def serve(latency_s: float, pipe: Any) -> None:
    """Child process: deployments A and B until told to stop; on "count", what each has served."""
    from llm_server import FakeLLMServer

    servers = {name: FakeLLMServer(pairwise_answer, faults=Window(limit), latency_s=latency_s, max_requests=1_000_000,
                                   max_lifetime_s=3600).start() for name, limit in LIMITS.items()}
    pipe.send({name: server.base_url for name, server in servers.items()})
    while pipe.recv() != "stop":
        pipe.send({name: (server.n_requests, server.counts["429"]) for name, server in servers.items()})
    for server in servers.values():
        server.stop()


def make_config(urls: dict[str, str], names: list[str], stated: bool, cache_dir: Path) -> Config:
    """Default backbone `pool`: the named deployments, with their limits as rpm when `stated`."""
    deployments = [DeploymentConfig(name=name, model="openai/fake-model", api_base=urls[name], api_key_env=KEY_ENV,
                                    rpm=round(LIMITS[name] * 60 * STATED) if stated else None) for name in names]
    pool = BackboneConfig(model="openai/fake-model", deployments=deployments, max_concurrency=CONCURRENCY,
                          max_attempts=10, timeout_s=30.0)
    return Config(general=GeneralConfig(concurrency=CONCURRENCY), cache=CacheConfig(dir=str(cache_dir)),
                  models=ModelsConfig(default_backbone="pool"), backbones={"pool": pool})


def counted(pipe: Any) -> dict[str, tuple[int, int]]:
    """(requests, 429s) each server has answered so far."""
    pipe.send("count")
    return pipe.recv()


def run_once(n: int, config: Config, store: SessionStore, pipe: Any) -> dict[str, Any]:
    """One `pairwise` run over n items; wall time of the engine's run (the preflight excluded)."""
    job = start_run(store, make_dataset(n), ["pairwise"], config, concurrency=CONCURRENCY)
    before = counted(pipe)

    async def drive() -> None:
        async for _ in job.engine.run():
            pass

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(drive())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = counted(pipe)
    finish_run(job, "completed")
    counts = job.engine.counts
    answered = sum(row["calls"] for row in counts.deployments.values())
    return {"wall": wall, "cpu": cpu, "answered": answered, "lost": 2 * n - answered, "failed_items": counts.failed,
            "served": {k: (after[k][0] - before[k][0], after[k][1] - before[k][1]) for k in after},
            "deployments": counts.deployments}


def report(label: str, run: dict[str, Any]) -> float:
    """One line of figures; returns answered calls a second."""
    rate = run["answered"] / run["wall"]
    served = "  ".join(f"{name}: {req} requests, {r429} x 429" for name, (req, r429) in run["served"].items() if req)
    print(f"{label:<26} {run['answered']:4d} calls {run['wall']:6.1f} s {rate:5.1f} calls/s  "
          f"{run['cpu'] / max(run['answered'], 1) * 1000:4.1f} ms CPU/call  lost {run['lost']} "
          f"(items failed {run['failed_items']})  {served}")
    return rate


def main(n: int, latency_s: float) -> None:
    """A alone, B alone, A+B with limits stated, A+B without, against the same two servers."""
    os.environ[KEY_ENV] = "sk-bench-loopback"
    get_litellm()
    print(f"{n} items x 2 orders = {2 * n} calls a run; deployments A {LIMITS['A']} req/s, B {LIMITS['B']} req/s, "
          f"latency {latency_s * 1000:.0f} ms, concurrency {CONCURRENCY}, {os.cpu_count()} CPUs")
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=serve, args=(latency_s, there), daemon=True)
    child.start()
    urls = here.recv()
    rates: dict[str, float] = {}
    lost = 0
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            store = SessionStore(root / "sessions")
            plan = [("A alone (rpm stated)", ["A"], True), ("B alone (rpm stated)", ["B"], True),
                    ("A+B (rpm stated)", ["A", "B"], True), ("A+B (no rpm: 429s only)", ["A", "B"], False)]
            for i, (label, names, stated) in enumerate(plan):
                time.sleep(1.1)  # the servers' windows empty between runs
                run = run_once(n, make_config(urls, names, stated, root / f"cache-{i}"), store, here)
                rates[label] = report(label, run)
                lost += run["lost"]
    finally:
        here.send("stop")
        child.join(10)
    alone = rates["A alone (rpm stated)"] + rates["B alone (rpm stated)"]
    print(f"A+B / (A alone + B alone): {rates['A+B (rpm stated)'] / alone:.2f} with rpm stated, "
          f"{rates['A+B (no rpm: 429s only)'] / alone:.2f} from 429s only; sum of limits "
          f"{sum(LIMITS.values())} req/s; calls lost over all runs: {lost}")


if __name__ == "__main__":
    args = sys.argv[1:]
    LIMITS.update({name: int(value) for name, value in zip(LIMITS, args[2:4])})
    main(int(args[0]) if args else 100, float(args[1]) if len(args) > 1 else 0.05)
