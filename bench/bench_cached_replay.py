"""Cached replay: the same run again reads every answer from qatui's call cache and sends nothing.

Run: .venv/bin/python bench/bench_cached_replay.py [N_ITEMS] [LATENCY_S] [--profile]   (defaults 1000 and 0.05)
Two runs, each first against the loopback server of bench/loopback.py (a child process,
answering after LATENCY_S) and then again on the same cache, through `start_run` and the
engine as `qatui run` does (concurrency 32, not streamed):
  * `pairwise` on N two-answer items (2 calls an item);
  * `minos` on N six-answer items, half factoid (classify, key points, then the NLI: the
    scripted word-overlap NLI of tests/fakes.py, so no model is loaded) and half not
    (classify, silver instances, listwise ranking);
  * `minos` again on N/10 of those items with the real NLI model (the bundled cross-encoder on
    ONNX Runtime): its replay runs no NLI either, since the probabilities are read back from
    `models.sqlite3` beside the call cache (the model's forward passes are counted).
The replay's requests are read from the server's own count and must be 0; the preflight's live
request is counted apart (one for a first run; none for a replay, whose cache holds answers of the
backbone, so the check waits for a call the cache cannot answer: `qatui.llm.preflight`). Printed:
wall and CPU seconds of each run, the replay's share of the first run (goal: < 5% for
pairwise on 1,000 items), and that the MinosEval replay takes seconds. `--profile` writes a
cProfile of the pairwise replay to bench/replay.prof and prints its top functions.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_engine_http import KEY_ENV, make_config, make_dataset
from loopback import serve_in_child
from session_fixture import CANDIDATES, SENTENCE

from qatui.config import Config
from qatui.data.model import Dataset, Item
from qatui.engine.jobs import finish_run, start_run
from qatui.judges.resources import Resources
from qatui.store import SessionStore

CONCURRENCY = 32


def minos_dataset(n: int) -> Dataset:
    """N items with six candidates: even ones factoid ("What ..."), odd ones open-ended."""
    reference = "The process moves water upward; the sun heats the surface first; the rain returns it later."
    items = [Item(id=f"m{i}", question=(f"What moves water in process {i}?" if i % 2 == 0
                                        else f"Question {i}: how does the process work, and why does it matter?"),
                  references=[reference],
                  candidates={f"r{k}": f"Answer {k} to {i}. " + SENTENCE * (1 + k % 3) for k in range(CANDIDATES)})
             for i in range(n)]
    return Dataset(name="bench-minos", path="bench://minos", format="jsonl", content_hash=f"bench-minos-{n}",
                   items=items)


def run(dataset: Dataset, judge: str, config: Config, store: SessionStore, served: Any,
        profile: cProfile.Profile | None = None, real_nli: bool = False) -> dict[str, float]:
    """One run; its wall and CPU seconds (the engine's run), calls, cache hits, and requests served during it."""
    resources = Resources(config)
    if judge == "minos" and not real_nli:
        from fakes import OverlapNLI

        resources.__dict__["nli"] = OverlapNLI()  # scripted NLI: the replay measures the cache, not a model
    before = served.count()
    job = start_run(store, dataset, [judge], config, concurrency=CONCURRENCY, resources=resources)
    preflight = served.count() - before
    job.engine.watch_tokens = False

    async def drive() -> None:
        async for _ in job.engine.run():
            pass

    before = served.count()
    wall, cpu = time.perf_counter(), time.process_time()
    if profile:
        profile.enable()
    asyncio.run(drive())
    if profile:
        profile.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    requests = served.count() - before
    finish_run(job, "completed")
    counts = job.engine.counts
    if counts.failed:
        raise SystemExit(f"{judge}: {counts.failed} items failed, e.g. {counts.failures[0].reason}")
    figures = {"wall": wall, "cpu": cpu, "calls": counts.calls, "cached": counts.cached, "requests": requests,
               "preflight": preflight}
    if real_nli:
        figures["nli_forwards"] = resources.nli.inner.loaded.forward_calls  # type: ignore[attr-defined]
    return figures


def line(label: str, figures: dict[str, float]) -> str:
    """One run's figures."""
    return (f"{label:<22} {figures['wall']:7.2f} s wall {figures['cpu']:7.2f} s CPU  {figures['calls']:5.0f} calls "
            f"({figures['cached']:.0f} cached)  {figures['requests']:.0f} requests (+{figures['preflight']:.0f} preflight)")


def main(n: int, latency_s: float, profile: bool) -> None:
    """Both judges, first run then replay, against one server."""
    os.environ[KEY_ENV] = "sk-bench-loopback"
    print(f"{n} items a run, server latency {latency_s * 1000:.0f} ms, concurrency {CONCURRENCY}, not streamed")
    results = {}
    with serve_in_child(latency_s=latency_s) as served, tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        store = SessionStore(root / "sessions")
        warm = make_config(served.base_url, 8, root / "cache-warm-up")
        run(make_dataset(4), "pairwise", warm, store, served)  # first-call costs out of the timing
        for judge, dataset in (("pairwise", make_dataset(n)), ("minos", minos_dataset(n))):
            config = make_config(served.base_url, CONCURRENCY, root / f"cache-{judge}")
            first = run(dataset, judge, config, store, served)
            prof = cProfile.Profile() if profile and judge == "pairwise" else None
            replay = run(dataset, judge, config, store, served, prof)
            results[judge] = (first, replay)
            print(line(f"{judge} first run", first))
            print(line(f"{judge} cached replay", replay))
            print(f"{judge} replay / first run: wall {replay['wall'] / first['wall']:.3f}, "
                  f"CPU {replay['cpu'] / first['cpu']:.3f}; {replay['wall'] / replay['calls'] * 1000:.2f} ms wall, "
                  f"{replay['cpu'] / replay['calls'] * 1000:.2f} ms CPU per cached call")
            if prof:
                prof.dump_stats(Path(__file__).with_name("replay.prof"))
                pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        real = minos_dataset(max(1, n // 10))
        from qatui.nli import load_nli

        model = load_nli(Config().models.nli)
        model.predict([("warm", "up")])  # the model's load (seconds, once) out of the timing
        warm = model.loaded.forward_calls
        config = make_config(served.base_url, CONCURRENCY, root / "cache-minos-real-nli")
        first = run(real, "minos", config, store, served, real_nli=True)
        replay = run(real, "minos", config, store, served, real_nli=True)
        forwards = replay["nli_forwards"] - first["nli_forwards"]
        print(line("minos, real NLI, first", first) + f"  {first['nli_forwards'] - warm} NLI forward passes")
        print(line("minos, real NLI, replay", replay) + f"  {forwards} NLI forward passes")
        print(f"minos with the real NLI ({len(real.items)} items): replay / first run wall "
              f"{replay['wall'] / first['wall']:.3f}, CPU {replay['cpu'] / first['cpu']:.3f}")
    first, replay = results["pairwise"]
    ratio = replay["wall"] / first["wall"]
    zero = all(r[1]["requests"] == 0 and r[1]["cached"] == r[1]["calls"] for r in results.values())
    print(f"goal replay sends 0 requests: {'met' if zero else 'missed'}; "
          f"goal pairwise replay < 5% of the first run ({n} items): {'met' if ratio < 0.05 else 'missed'} "
          f"({ratio:.3f}; CPU {replay['cpu'] / first['cpu']:.3f}); "
          f"MinosEval replay of {n} items: {results['minos'][1]['wall']:.1f} s")


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(args[0]) if args else 1000, float(args[1]) if len(args) > 1 else 0.05, "--profile" in flags)
