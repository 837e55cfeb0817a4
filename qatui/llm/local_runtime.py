"""The embedded model's runtime: transformers and torch for the network, llguidance for JSON schemas.

Every piece installs from a prebuilt wheel, so `pip install 'qatui[local]'` needs no C++ toolchain
(llama-cpp-python, the runtime before this one, compiled llama.cpp from source for about ten
minutes and failed outright where no compiler exists).

- Weights: the GGUF file of the model's package is dequantized by transformers (with `gguf` and
  `accelerate`) to float32 the first time, about 20-35 s on 2 cores, and the result is kept as
  safetensors in `$XDG_CACHE_HOME/qatui/models/<file>-<digest>/` (about 520 MB for SmolLM2-135M),
  so later loads take about 2 s. The digest covers the file's name, size and mtime and
  `WEIGHTS_FORMAT`: a reinstalled package converts again. A conversion goes to a temporary folder
  renamed into place, so two processes converting at once each end with a complete copy.
- Schemas: a JSON schema becomes an llguidance grammar whose token mask is applied to the logits
  before each token is picked, so the output always parses and fits the schema (minus what
  `max_tokens` cuts). llguidance compiles a `maxLength` as a bounded repeat in its lexer, with
  resource limits of its own: a schema past them is refused with a Python error, never a crash.
  The torch helper of llguidance (`apply_token_bitmask_inplace`) runs `torch.compile`, which
  needs a C++ compiler on a CPU, so the mask is unpacked here with plain tensor operations.
- Decoding: greedy at temperature 0; otherwise temperature and top_p sampling from a
  `torch.Generator` seeded with the request's seed, so a seeded call is reproducible.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WEIGHTS_FORMAT = 1
"""Bumped when the converted copy's layout changes, so older copies are converted again."""
PREFILL_CHUNK = 256
"""Prompt tokens read per forward pass: a cancelled call stops between chunks, not after the whole prompt."""
WHITESPACE = r"[\x20\x0A\x0D\x09]{0,20}"
"""Whitespace allowed between JSON tokens: bounded, so a small model cannot loop on blank lines forever."""


class SchemaUnsupported(ValueError):
    """A JSON schema llguidance cannot turn into a grammar (a permanent error: retrying cannot help)."""


def cache_root() -> Path:
    """Where the converted weights are kept (`qatui.paths.models_cache_dir`: `$XDG_CACHE_HOME/qatui/models`)."""
    from qatui.paths import models_cache_dir

    return models_cache_dir()


def converted_dir(gguf: Path) -> Path:
    """Where the float32 copy of `gguf` is kept (see the module docstring for what the digest covers)."""
    stat = gguf.stat()
    digest = hashlib.sha256(json.dumps([WEIGHTS_FORMAT, gguf.name, stat.st_size, stat.st_mtime_ns]).encode())
    return cache_root() / f"{gguf.stem}-{digest.hexdigest()[:16]}"


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """No progress bars or info logs from transformers while it loads or converts (they would land on a
    CLI's stderr). Its GGUF reader draws with tqdm directly, so that module's `tqdm` is silenced too."""
    from functools import partial

    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None:
        gguf_utils.tqdm = partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()


def convert(gguf: Path, target: Path) -> None:
    """Dequantize `gguf` to float32 safetensors in `target` (with its tokenizer and chat template)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
            # transformers marks a model read from GGUF as quantized and refuses to save it, although its
            # weights are plain float32 by now: drop the mark, so the copy loads as an ordinary model.
            model.hf_quantizer = None
            model.config.__dict__.pop("quantization_config", None)
            model.save_pretrained(work)
            tokenizer.save_pretrained(work)
        try:
            work.rename(target)
        except OSError:  # another process finished first: its copy is as good as ours
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def closed(schema: Any) -> Any:
    """`schema` with `additionalProperties: false` on every object that lists its properties and says nothing
    of others.

    JSON Schema allows unlisted keys by default, and llguidance follows it; a small model then adds
    key after key (`"score_with_two_decimals": ...`) until `max_tokens` cuts its JSON off. llama.cpp's
    converter, the runtime before, allowed only the listed keys: so do the judges' grammars here.
    """
    if isinstance(schema, list):
        return [closed(part) for part in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: closed(value) for key, value in schema.items()}
    if isinstance(schema.get("properties"), dict) and "additionalProperties" not in schema:
        out["additionalProperties"] = False
    return out


def grammar_of(response_format: Any) -> str | None:
    """OpenAI-style `response_format` → an llguidance grammar (None: free text).

    `json_schema` constrains to its schema; `json_object` (with an optional `schema`, llama-cpp-python's
    form) to that schema or to any JSON object.
    """
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema") or {"type": "object"}
    elif kind == "json_object":
        schema = response_format.get("schema") or {"type": "object"}
    else:
        return None
    import llguidance

    try:
        return llguidance.LLMatcher.grammar_from_json_schema(closed(schema), defaults={"whitespace_pattern": WHITESPACE})
    except ValueError as e:
        raise SchemaUnsupported(f"the JSON schema cannot become a grammar: {e}") from None


@dataclass
class Sampling:
    """What a request asks of decoding (OpenAI parameter names)."""

    max_tokens: int
    temperature: float = 0.0
    top_p: float | None = None
    seed: int = 0
    stop: tuple[str, ...] = ()
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0


class Runtime:
    """One chat model in torch: its tokenizer, its grammar tokenizer, and `generate`. Not thread-safe."""

    def __init__(self, gguf: Path, threads: int, n_ctx: int) -> None:
        import llguidance
        import llguidance.hf
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = converted_dir(gguf)
        if not (folder / "config.json").exists():
            convert(gguf, folder)
        self.threads = threads
        with quiet_transformers():
            self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
            self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.vocab = int(self.model.config.vocab_size)
        self.n_ctx = min(n_ctx, int(getattr(self.model.config, "max_position_embeddings", n_ctx) or n_ctx))
        self.eos = {int(self.tokenizer.eos_token_id)}
        self.lltokenizer = llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=self.vocab)
        self._bits = torch.arange(32, dtype=torch.int32)
        # transformers 5.x renames `past_key_values` to `cache` (the old name warns, then goes): the name it takes
        self.cache_arg = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The token ids of a chat as the model reads it: its chat template, ready for the answer."""
        if self.tokenizer.chat_template:
            encoded = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                         return_dict=True)
            return list(encoded["input_ids"])
        return self.text_ids("\n".join(m["content"] for m in messages), special=True)

    def text_ids(self, text: str, special: bool = False) -> list[int]:
        """A bare text's token ids (no chat template)."""
        return list(self.tokenizer.encode(text, add_special_tokens=special))

    def matcher(self, grammar: str) -> Any:
        """An llguidance matcher for `grammar`; SchemaUnsupported when the grammar is refused."""
        import llguidance

        problem = llguidance.LLMatcher.validate_grammar(grammar, self.lltokenizer)
        if problem:
            raise SchemaUnsupported(f"the JSON schema cannot become a grammar: {' '.join(problem.split())[:300]}")
        matcher = llguidance.LLMatcher(self.lltokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise SchemaUnsupported(f"the JSON schema cannot become a grammar: {matcher.get_error()}")
        return matcher

    def generate(self, prompt: list[int], sampling: Sampling, grammar: str | None,
                 on_text: Callable[[str], None] | None, stop: threading.Event | None) -> tuple[str, str, int]:
        """Decode after `prompt`; returns (text, finish_reason, completion tokens).

        finish_reason: "stop" (end of turn, a stop string, or the schema complete), "length"
        (`max_tokens`), "cancelled" (`stop` was set). `on_text` gets the text as it grows, held back
        while it could still be the start of a stop string.
        """
        import torch

        matcher = self.matcher(grammar) if grammar is not None else None
        previous_threads = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            with torch.inference_mode():
                return self._decode(prompt, sampling, matcher, on_text, stop)
        finally:
            torch.set_num_threads(previous_threads)

    def _decode(self, prompt: list[int], sampling: Sampling, matcher: Any,
                on_text: Callable[[str], None] | None, stop: threading.Event | None) -> tuple[str, str, int]:
        import torch
        from transformers import DynamicCache

        cache = DynamicCache()
        generator = torch.Generator().manual_seed(int(sampling.seed))
        mask = torch.full(((self.vocab + 31) // 32,), -1, dtype=torch.int32)
        counts: dict[int, int] = {}
        tokens: list[int] = []
        text, sent, finish = "", 0, "length"
        hold = max((len(s) for s in sampling.stop), default=1) - 1
        logits = None
        for start in range(0, len(prompt), PREFILL_CHUNK):
            if stop is not None and stop.is_set():
                return "", "cancelled", 0
            chunk = torch.tensor([prompt[start:start + PREFILL_CHUNK]])
            logits = self.model(input_ids=chunk, **{self.cache_arg: cache}, use_cache=True, logits_to_keep=1).logits
        while len(tokens) < sampling.max_tokens:
            if stop is not None and stop.is_set():
                finish = "cancelled"
                break
            scores = logits[0, -1].clone()
            if matcher is not None:
                matcher.unsafe_compute_mask_ptr(mask.data_ptr(), mask.numel() * 4)
                if matcher.is_error():  # a resource limit hit mid-answer: no token is known to be allowed
                    raise SchemaUnsupported(f"the grammar of the JSON schema failed: {matcher.get_error()}")
                allowed = ((mask[:, None] >> self._bits) & 1).bool().flatten()[:scores.shape[0]]
                scores.masked_fill_(~allowed, float("-inf"))
            token = self._pick(scores, sampling, counts, generator)
            if matcher is not None and not matcher.consume_token(token):
                raise RuntimeError(f"llguidance refused the token it allowed: {matcher.get_error()}")
            if token in self.eos:
                finish = "stop"
                break
            tokens.append(token)
            counts[token] = counts.get(token, 0) + 1
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
            cut = min((i for s in sampling.stop if (i := text.find(s)) >= 0), default=-1)
            if cut >= 0:
                text, finish = text[:cut], "stop"
                break
            ready = len(text) - hold if not text.endswith("\ufffd") else text.rfind("\ufffd") - hold
            if on_text is not None and ready > sent:
                on_text(text[sent:ready])
                sent = ready
            if matcher is not None and matcher.is_stopped():  # the schema is complete: nothing may follow
                finish = "stop"
                break
            logits = self.model(input_ids=torch.tensor([[token]]), **{self.cache_arg: cache}, use_cache=True).logits
        if on_text is not None and len(text) > sent:
            on_text(text[sent:])
        return text, finish, len(tokens)

    @staticmethod
    def _pick(scores: Any, sampling: Sampling, counts: dict[int, int], generator: Any) -> int:
        """The next token: penalties, then greedy at temperature 0, else top_p sampling."""
        import torch

        if counts and (sampling.presence_penalty or sampling.frequency_penalty):
            ids = torch.tensor(list(counts))
            seen = torch.tensor(list(counts.values()), dtype=scores.dtype)
            scores[ids] -= sampling.presence_penalty + sampling.frequency_penalty * seen
        if sampling.temperature <= 0:
            return int(torch.argmax(scores))
        probs = torch.softmax(scores / sampling.temperature, dim=-1)
        if sampling.top_p is not None and 0 < sampling.top_p < 1:
            ordered, order = torch.sort(probs, descending=True)
            drop = torch.cumsum(ordered, dim=-1) - ordered > sampling.top_p
            ordered[drop] = 0.0
            probs = torch.zeros_like(probs).scatter_(0, order, ordered)
        return int(torch.multinomial(probs, 1, generator=generator))
