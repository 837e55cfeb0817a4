"""Time per stored result at 200 vs 2,000 results: sharded sessions stay linear, one file does not.

Run: .venv/bin/python bench/bench_store.py
Each result is a realistic ~3 KB verdict with two backbone calls, flushed in batches of 20
as the engine does. The "one file" row puts every result in a single shard, which is what a
plain TinyDB session would do (docs/LIBRARIES.md#tinydb-writes: 10x the documents, ~100x the time).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from qatui.events import LLMCallFinished, Verdict
from qatui.store import SessionStore

BATCH = 20
SIZES = (200, 2000)


def make_verdict(i: int) -> tuple[Verdict, list[LLMCallFinished]]:
    """A verdict over five candidates with artifacts, and the calls that produced it."""
    ids = [f"c{k}" for k in range(5)]
    calls = [
        LLMCallFinished(
            model="local/smollm2", purpose=p, prompt_hash=f"{i:08x}{p}", prompt_tokens=900, completion_tokens=120
        )
        for p in ("classify", "rank")
    ]
    verdict = Verdict(
        item_id=f"q{i}",
        judge="minoseval",
        scores={c: k / 5 for k, c in enumerate(ids)},
        ranking=ids[::-1],
        order=ids,
        details={"silver_answers": ["An answer of moderate length, repeated. " * 8] * 5},
        artifacts=calls,
    )
    return verdict, calls


def run(n: int, shard_size: int) -> float:
    """Seconds to record and flush `n` results in batches into a fresh session."""
    records = [make_verdict(i) for i in range(n)]
    with tempfile.TemporaryDirectory() as root:
        session = SessionStore(Path(root), shard_size=shard_size).create({"dataset": {"name": "bench"}})
        start = time.perf_counter()
        for i, (verdict, calls) in enumerate(records, 1):
            session.record_verdict(verdict, calls)
            if i % BATCH == 0:
                session.flush()
        session.close()
        return time.perf_counter() - start


def main() -> None:
    """Print time per result at each size, and the ratio, for sharded sessions and for one file."""
    for label, shard_size in (("sharded (200/shard)", 200), ("one file", max(SIZES))):
        per_result = {n: run(n, shard_size) / n for n in SIZES}
        cells = "  ".join(f"{n:>5} results: {per_result[n] * 1e3:6.2f} ms/result" for n in SIZES)
        ratio = per_result[SIZES[1]] / per_result[SIZES[0]]
        print(f"{label:<20} {cells}  ratio {ratio:4.2f}")


if __name__ == "__main__":
    main()
