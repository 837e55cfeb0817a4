"""Pairs per second of the bundled NLI cross-encoder: batched (32 a pass) vs one pair a pass.

Run: .venv/bin/python bench/bench_nli.py [--pairs 256] [--spec bundled] [--threads N]
The pairs are the first SNLI test pairs when ../shared/data is there, else made-up captions
of similar length. MinosEval scores every (response, key point) pair of an item in one call,
which is the batched row.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from qatui.nli import load_nli  # noqa: E402

SNLI_TEST = Path(__file__).resolve().parents[2] / "shared" / "data" / "SNLI" / "snli_test.jsonl"


def sample_pairs(n: int) -> list[tuple[str, str]]:
    if SNLI_TEST.is_file():
        with SNLI_TEST.open(encoding="utf-8") as f:
            rows = [json.loads(line) for _, line in zip(range(n), f, strict=False)]
        return [(r["premise"], r["hypothesis"]) for r in rows]
    subjects = ["A man", "Two children", "A woman in a red coat", "A dog", "Several people"]
    actions = ["walks along the beach", "plays a guitar on stage", "reads a newspaper in a cafe", "runs through a park"]
    return [(f"{subjects[i % 5]} {actions[i % 4]} while it rains.", f"{subjects[(i + 1) % 5]} is outside.")
            for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=256)
    parser.add_argument("--spec", default="bundled")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    pairs = sample_pairs(args.pairs)
    started = time.perf_counter()
    scorer = load_nli(args.spec, batch_size=args.batch_size)
    print(f"model {args.spec!r} loaded in {time.perf_counter() - started:.1f} s; "
          f"{len(pairs)} pairs, torch threads {torch.get_num_threads()}")
    scorer.predict(pairs[:8])  # warm-up

    started = time.perf_counter()
    batched = scorer.predict(pairs)
    batched_s = time.perf_counter() - started
    started = time.perf_counter()
    single = [scorer.predict([pair])[0] for pair in pairs]
    single_s = time.perf_counter() - started

    drift = max(abs(a - b) for x, y in zip(batched, single, strict=True)
                for a, b in zip(x.as_tuple(), y.as_tuple(), strict=True))
    print(f"{'mode':<22}{'seconds':>10}{'pairs/s':>10}")
    print(f"{f'batched ({args.batch_size} a pass)':<22}{batched_s:>10.2f}{len(pairs) / batched_s:>10.1f}")
    print(f"{'one pair a pass':<22}{single_s:>10.2f}{len(pairs) / single_s:>10.1f}")
    print(f"batched is {single_s / batched_s:.1f}x faster; largest probability difference {drift:.1e}")


if __name__ == "__main__":
    main()
