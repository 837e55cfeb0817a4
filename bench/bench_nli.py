"""Pairs per second of the bundled NLI cross-encoder: batched (32 a pass) vs one pair a pass, and vs transformers.

Run: .venv/bin/python bench/bench_nli.py [--pairs 256] [--compare 2000] [--spec bundled] [--threads N]
     [--runtime auto|onnx|torch]
The pairs are the first SNLI test pairs when ../shared/data is there, else made-up captions
of similar length. MinosEval scores every (response, key point) pair of an item in one call,
which is the batched row. Then qatui's scorer against a plain transformers
`pipeline("text-classification")` over the same `--compare` pairs, given every advantage
qatui has (the same float32 model, inputs sorted by length, batches of 32, truncation, no
grad): pairs/s (wall and CPU), their ratio (goal: >= 1.5) and the largest
difference between the two's probabilities (the same scores: < 1e-4). It prints which runtime
ran qatui's model ("onnx": ONNX Runtime over the copy exported once into the user's cache, the
default on a CPU; "torch"), and the export's time when this run made the copy.
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
from qatui.nli.loader import resolve  # noqa: E402

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


def with_pipeline(spec: str, pairs: list[tuple[str, str]], batch_size: int) -> list[list[float]]:
    """Every pair's softmax through a plain transformers pipeline, in input order."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    folder = str(resolve(spec)[1])
    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).float().eval()
    classify = pipeline("text-classification", model=model, tokenizer=AutoTokenizer.from_pretrained(folder),
                        device="cpu", top_k=None, function_to_apply="softmax")
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]), reverse=True)
    classify([{"text": a, "text_pair": b} for a, b in pairs[:8]], batch_size=8, truncation=True)  # warm-up
    started, cpu = time.perf_counter(), time.process_time()
    with torch.no_grad():
        out = classify([{"text": pairs[i][0], "text_pair": pairs[i][1]} for i in order], batch_size=batch_size,
                       truncation=True)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    index = {name: i for i, name in model.config.id2label.items()}
    rows: list[list[float]] = [[]] * len(pairs)
    for i, scores in zip(order, out, strict=True):
        row = [0.0] * len(index)
        for entry in scores:
            row[index[entry["label"]]] = entry["score"]
        rows[i] = row
    return rows, seconds, cpu


def against_pipeline(spec: str, pairs: list[tuple[str, str]], batch_size: int, runtime: str) -> None:
    """qatui's scorer vs the plain pipeline over the same pairs: speed and the largest score difference."""
    scorer = load_nli(spec, batch_size=batch_size, runtime=runtime)
    scorer.predict(pairs[:8])
    started, cpu = time.perf_counter(), time.process_time()
    ours = scorer.predict(pairs)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    rows, base_s, base_cpu = with_pipeline(spec, pairs, batch_size)
    labels = scorer.labels
    drift = max(abs(a - b) for probs, row in zip(ours, rows, strict=True)
                for a, b in zip(probs.as_tuple(), (sum(row[i] for i in labels.entail), sum(row[i] for i in labels.neutral),
                                                   sum(row[i] for i in labels.contradict)), strict=True))
    print(f"{len(pairs)} pairs, batches of {batch_size}: qatui ({scorer.runtime}) {len(pairs) / seconds:8.1f} pairs/s "
          f"({seconds:.2f} s, {cpu:.2f} s CPU); transformers pipeline {len(pairs) / base_s:8.1f} pairs/s "
          f"({base_s:.2f} s, {base_cpu:.2f} s CPU)")
    ratio, cpu_ratio = base_s / seconds, base_cpu / cpu
    print(f"goal NLI >= 1.5x a plain transformers pipeline with the same scores: "
          f"{'met' if ratio >= 1.5 and drift < 1e-4 else 'missed'} ({ratio:.2f}x wall, {cpu_ratio:.2f}x CPU; "
          f"largest probability difference {drift:.1e})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=256)
    parser.add_argument("--spec", default="bundled")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--runtime", default="auto", choices=["auto", "onnx", "torch"], help="what runs qatui's model")
    parser.add_argument("--compare", type=int, default=2000, help="pairs for the comparison with transformers (0: none)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    pairs = sample_pairs(args.pairs)
    started = time.perf_counter()
    scorer = load_nli(args.spec, batch_size=args.batch_size, runtime=args.runtime)
    loaded = scorer.loaded
    export = f", exported to ONNX in {loaded.export.seconds:.1f} s" if loaded.export and loaded.export.seconds else ""
    print(f"model {args.spec!r} loaded in {time.perf_counter() - started:.1f} s{export}; runtime {scorer.runtime}"
          f"{f' ({loaded.runtime_note})' if loaded.runtime_note else ''}; {len(pairs)} pairs, "
          f"threads {torch.get_num_threads()}")
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
    if args.compare:
        against_pipeline(args.spec, sample_pairs(args.compare), args.batch_size, args.runtime)


if __name__ == "__main__":
    main()
