"""A scripted OpenAI-compatible HTTP server on loopback, for tests and benchmarks.

It serves `POST /v1/chat/completions` (SSE when the body says `"stream": true`; `n` copies of
the answer when the body asks for `n` choices), `POST /v1/embeddings` (hashed bag-of-words
vectors, counted in `n_embeddings`, faults scripted with `script_embeddings`), an NLI model on
text-embeddings-inference's contract (`GET /info`, `POST /predict`, at `root_url`; `script_nli`), `GET /v1/models`,
and OpenAI's files and batches endpoints (`tests/llm_batches.py`: scripted delays, failed requests, an expired
batch, counters) from a background thread with its own event loop, so sync tests, a CLI
run in-process with `asyncio.run`, and async tests can all call it through qatui's real
client (LiteLLM -> the OpenAI SDK -> HTTP). Point a backbone at it with
`BackboneConfig(model="openai/fake-model", api_base=server.base_url, api_key_env=...)`.

    with FakeLLMServer(responder=lambda body: "Paris", faults=["429", "ok"]) as server:
        ...                         # server.base_url, server.requests, server.counts
    # or the `llm_server` fixture (tests/conftest.py), then `llm_server.script(...)`

What each request gets is chosen, in order, by the script:

* `faults`: an explicit sequence (the n-th completion request gets the n-th entry, then
  `"ok"` once it is used up) or a function `(index, body) -> fault`;
* else `fault_rates` ({"429": 0.1, "500": 0.05}) drawn from `random.Random(seed)`;
* else `"ok"`: the responder's text (default "OK") after `latency_s`; a responder may return a
  `Reply` to set the finish reason or send `reasoning_content` beside the text.

A request that asks for log-probabilities (`"logprobs": true`, with `top_logprobs` k) gets them in
OpenAI's chat format: `choices[].logprobs.content[]`, one entry per token of the answer (`token_logprobs`:
a digit is a token of its own, as GPT and Llama tokenizers write digits) with its `logprob`, `bytes` and
the k most likely alternatives; streamed, the answer comes one token a chunk, each chunk carrying its
token's entry. A `Reply(logprobs=...)` sends its own value instead (a provider's odd shape: None, entries
with `top_logprobs: null`, a string for a number). A request that does not ask gets `logprobs: null`.

Before the script, `rate_per_s` (when set) rate-limits as a provider does: a token bucket
refilled at that many requests a second (holding at most `burst`) answers a request that
finds it empty with a 429 carrying `Retry-After` (seconds, fractional) and `retry-after-ms`
(the wait until the next token); those are counted as "429-rate" and do not advance the
script. `usage` (a function `(body, text) -> (prompt_tokens, completion_tokens)`) counts an
answer's tokens as the provider's tokenizer would (default: `count_tokens`, whitespace words).
A request that sends an option named in `refuse` (`script(refuse=["temperature"])`) is answered
with OpenAI's 400 for it ("Unsupported parameter: 'temperature' is not supported with this
model."), as a reasoning model answers; it is recorded in `requests` first. Every answer's usage
says how many of its completion tokens were thinking (`completion_tokens_details.reasoning_tokens`:
the words of `reasoning_content` and of `<think>` sections), as OpenAI's does.

A fault is a kind from `FAULT_KINDS`, or a `Fault(kind, ...)` carrying its own parameter
(`Fault("hang", seconds=2)`, `Fault("429", retry_after=1)`). It is bounded: past
`max_requests` completion requests every one is refused with a 400 (a permanent error, so a
client stops at once), and after `max_lifetime_s` the server shuts itself down, so a
runaway test can never loop forever against it. Only 127.0.0.1 is bound, on a free port.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import re
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from llm_batches import BatchEndpoints

FAULT_KINDS = {
    "ok": "200 with the responder's text",
    "429": "429 rate limited, no Retry-After header",
    "429-retry-after": "429 rate limited with `Retry-After: <retry_after>` (seconds)",
    "401": "401 invalid API key (a key the provider rejects); the message quotes the key it got, as providers do",
    "400-echo": "400 bad request whose message quotes the key it got (a permanent error a client prints)",
    "400-echo-part": "400 whose message quotes the key in part (`sk-test-7f3a…8e0c`, its first 12 and last 8 "
                     "characters) and escaped (`\\/` for `/`, every character as `\\uXXXX`)",
    "500": "500 internal server error",
    "503": "503 service unavailable",
    "hang": "sends nothing for `seconds` (default: the server's hang_s), then answers as ok",
    "drop": "closes the connection: before any byte, or for a stream after the first chunks",
    "end-mid-stream": "a stream: the role chunk and half the text's chunks, then an orderly end of the body with no "
                      "finish_reason and no `[DONE]` (a proxy or server that gave up mid-answer); not streamed: ok",
    "empty": "200 whose text is empty",
    "malformed": "200 whose text is JSON cut short (`{\"answer\": \"Par`)",
    "long": "200 whose text is `chars` characters long (default: the server's long_chars)",
    "garbage": "200 whose HTTP body is not JSON at all",
    "length": "200 with the responder's text and finish_reason \"length\" (cut off at max_tokens)",
    "no-choices": "200 whose `choices` is an empty list",
    "no-message": "200 whose choice has no `message` (a stream: chunks with no `delta`)",
    "content-number": "200 whose message `content` is a number, not text",
    "content-object": "200 whose message `content` is a JSON object, not text",
    "error-200": "200 whose body is OpenAI's error object (`{\"error\": {...}}`, no choices); a stream: that object "
                 "as its first and only chunk, then `[DONE]`",
    "error-mid-stream": "a stream: the role chunk and half the text's chunks, then the error object as a chunk, then "
                        "`[DONE]` (a server failing while it generates); not streamed: as error-200",
}

ERROR_200 = {"error": {"message": "The server had an error while processing your request (fake LLM server)",
                       "type": "server_error", "param": None, "code": 500}}
"""The error object an "error-200" or "error-mid-stream" fault sends with status 200 (a body, or an SSE chunk)."""

EMBED_DIM = 64
"""The length of the vectors `POST /v1/embeddings` answers (hashed bag of words)."""

EMBED_FAULT_KINDS = {
    "ok": "200 with one vector per input",
    "429": "429 rate limited, with `Retry-After: 0.05`",
    "500": "500 internal server error",
    "503": "503 service unavailable",
    "400": "400 bad request (a permanent error)",
    "drop": "closes the connection before any byte",
    "zero-vector": "200 whose first vector is all zeros",
    "short": "200 with one vector fewer than inputs",
}
"""What `script_embeddings(faults=[...])` may make the n-th `POST /v1/embeddings` get."""

NLI_CLASSES = ("entail", "neutral", "contradict")
NLI_NEGATIONS = frozenset({"no", "not", "nobody", "never", "nothing", "none"})


def nli_scorer(premise: str, hypothesis: str) -> dict[str, float]:
    """The scripted NLI model: a negated hypothesis contradicts, one whose words the premise holds is entailed,
    anything else is neutral (probabilities by class)."""
    words = lambda text: set(re.findall(r"\w+", text.lower()))  # noqa: E731
    said, claimed = words(premise), words(hypothesis)
    if claimed & NLI_NEGATIONS:
        return {"entail": 0.03, "neutral": 0.07, "contradict": 0.9}
    if claimed <= said:
        return {"entail": 0.9, "neutral": 0.07, "contradict": 0.03}
    return {"entail": 0.1, "neutral": 0.8, "contradict": 0.1}

MALFORMED_TEXT = '{"answer": "Par'
"""The answer a "malformed" fault sends: a JSON object cut off mid-string."""


@dataclass(frozen=True)
class Fault:
    """One scripted outcome; the optional fields override the server's defaults for it."""

    kind: str = "ok"
    retry_after: float | None = None  # "429-retry-after" (or "429" to add the header)
    seconds: float | None = None  # "hang"
    chars: int | None = None  # "long"
    error: Any = None  # "error-200", "error-mid-stream": the value of the body's "error" (default ERROR_200's)

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; known: {', '.join(FAULT_KINDS)}")


@dataclass(frozen=True)
class Reply:
    """What a responder may return instead of a string: the text, and how the choice ends.

    `finish_reason` "length" says the answer was cut off at max_tokens; `reasoning_content`
    is sent beside the content, as reasoning models served by vLLM or DeepSeek do.
    """

    text: str
    finish_reason: str = "stop"
    reasoning_content: str | None = None
    logprobs: Any = "generated"
    """What a request asking for log-probabilities gets as the choice's `logprobs`: "generated" (from the
    text, `token_logprobs`), or this value as it is (None, or an odd shape a provider sends)."""


FaultLike = str | Fault
Script = Iterable[FaultLike] | Callable[[int, dict[str, Any]], FaultLike]
Responder = Callable[[dict[str, Any]], Any]


def _as_fault(value: FaultLike) -> Fault:
    return value if isinstance(value, Fault) else Fault(str(value))


def default_responder(body: dict[str, Any]) -> str:
    """The default answer: "OK"."""
    return "OK"


def count_tokens(text: str) -> int:
    """A stand-in tokenizer: whitespace-separated words (at least 1 for non-empty text)."""
    return max(len(text.split()), 1 if text else 0)


_TOKEN = re.compile(r"\d|[^\W\d_]+|\s+|[^\w\s]")
"""The stand-in tokenizer of log-probabilities: a digit alone, a run of letters, of spaces, one other character."""


def token_logprobs(text: str, top: int) -> list[dict[str, Any]]:
    """OpenAI's `logprobs.content` for `text`: per token its log-probability (the chosen token is the likeliest)
    and the `top` likeliest alternatives, itself first; a digit's alternatives are the digits nearest it."""
    entries = []
    for i, token in enumerate(_TOKEN.findall(text)):
        chosen = -0.05 * (1 + i % 7)
        if token.isdigit():
            others = sorted("0123456789", key=lambda d: (abs(int(d) - int(token)), d))
        else:
            others = [token, token.upper(), token.lower(), f" {token}", f"{token} ", f"{token}."]
        alternatives = list(dict.fromkeys(others))[:top]
        entries.append({"token": token, "logprob": chosen, "bytes": list(token.encode()),
                        "top_logprobs": [{"token": t, "logprob": chosen - 1.25 * j, "bytes": list(t.encode())}
                                         for j, t in enumerate(alternatives)]})
    return entries


def _prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
        elif content is not None:
            parts.append(str(content))
    return "\n".join(parts)


class FakeLLMServer(BatchEndpoints):
    """A scripted OpenAI-compatible server; see the module docstring.

    Read from the test's thread: `base_url` (`http://127.0.0.1:PORT/v1`), `requests` (the
    JSON bodies of the completion requests served, in arrival order; refused ones are only
    counted),
    `headers` (their HTTP headers, same order), `counts` (a Counter of outcomes: the fault
    kinds served, plus "refused"), `n_requests` (refused included), `n_streamed`, `n_models`, `in_flight`,
    `max_in_flight`, `errors` (exceptions the responder raised; each was sent as a 500), and
    `stopped_because` (None while serving; "lifetime" or "stop()").
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        faults: Script | None = None,
        fault_rates: Mapping[str, float] | None = None,
        seed: int = 0,
        latency_s: float = 0.0,
        chunk_chars: int = 8,
        chunk_delay_s: float = 0.0,
        hang_s: float = 30.0,
        retry_after_s: float = 1.0,
        long_chars: int = 200_000,
        model: str = "fake-model",
        max_requests: int = 10_000,
        max_lifetime_s: float = 120.0,
        rate_per_s: float | None = None,
        burst: float = 1.0,
        usage: Callable[[dict[str, Any], str], tuple[int, int]] | None = None,
        embed_usage: Callable[[str], int] | None = None,
    ) -> None:
        self.model = model
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.usage = usage
        self.embed_usage = embed_usage or count_tokens
        """How `POST /v1/embeddings` counts a text's tokens in its `usage` (whitespace words unless given)."""
        self._tokens = burst
        self._refilled = time.monotonic()
        self.served_at: list[float] = []
        """`time.monotonic()` of each answered ("ok") completion, in order."""
        self.chunk_chars = max(1, chunk_chars)
        self.chunk_delay_s = chunk_delay_s
        self.hang_s = hang_s
        self.retry_after_s = retry_after_s
        self.long_chars = long_chars
        self.max_requests = max_requests
        self.max_lifetime_s = max_lifetime_s
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.counts: Counter[str] = Counter()
        self.n_requests = 0
        self.n_streamed = 0
        self.n_models = 0
        self.n_embeddings = 0
        self.embedding_requests: list[dict[str, Any]] = []
        """The JSON bodies of `POST /v1/embeddings`, in arrival order (faulted ones included)."""
        self.embed_counts: Counter[str] = Counter()
        self._embed_faults: list[str] = []
        self._embed_index = 0
        self.predict_requests: list[dict[str, Any]] = []
        """The JSON bodies of `POST /predict` (the NLI contract), in arrival order (faulted ones included)."""
        self.n_info = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.stopped_because: str | None = None
        self.errors: list[BaseException] = []
        self.port: int | None = None
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self._started_at = 0.0
        self._init_batches()
        self.script(responder, faults=faults, fault_rates=fault_rates, seed=seed, latency_s=latency_s)
        self.script_nli()

    # -- scripting (callable from any thread, between requests) -------------------------------

    def script(
        self,
        responder: Responder | None = None,
        *,
        faults: Script | None = None,
        fault_rates: Mapping[str, float] | None = None,
        seed: int = 0,
        latency_s: float | None = None,
        refuse: Iterable[str] = (),
    ) -> FakeLLMServer:
        """Set what the next requests get; restarts the fault sequence (and the seeded RNG).

        `refuse` names request options answered with a 400 "Unsupported parameter" when sent.

        `responder(body) -> text` (a string, a `Reply`, or an awaitable of one) makes an "ok" answer; `faults` is
        a sequence or a function `(index, body) -> fault`, where `index` counts completion
        requests from 0 since this call; `fault_rates` maps fault kinds to probabilities
        (summing to at most 1), drawn with `random.Random(seed)`.
        """
        for kind in fault_rates or {}:
            _as_fault(kind)
        if fault_rates and sum(fault_rates.values()) > 1.0 + 1e-9:
            raise ValueError("fault_rates must sum to at most 1")
        with self._lock:
            self.responder: Responder = responder or default_responder
            if faults is None or callable(faults):
                self._faults_fn = faults
                self._faults_seq: list[Fault] = []
            else:
                self._faults_fn = None
                self._faults_seq = [_as_fault(f) for f in faults]
            self._rates = dict(fault_rates or {})
            self._rng = random.Random(seed)
            self._index = 0
            self.refuse = frozenset(refuse)
            if latency_s is not None:
                self.latency_s = latency_s
        return self

    def script_embeddings(self, faults: Iterable[str] = ()) -> FakeLLMServer:
        """The n-th `POST /v1/embeddings` from now gets the n-th of `faults` (`EMBED_FAULT_KINDS`), then "ok"."""
        faults = list(faults)
        for kind in faults:
            if kind not in EMBED_FAULT_KINDS:
                raise ValueError(f"unknown embedding fault {kind!r}; known: {', '.join(EMBED_FAULT_KINDS)}")
        with self._lock:
            self._embed_faults, self._embed_index = faults, 0
        return self

    def script_nli(self, classes: Iterable[str] = NLI_CLASSES,
                   names: Iterable[str] = ("entailment", "neutral", "contradiction"), *, info: bool = True,
                   faults: Iterable[str] = (), raw_scores: bool = False,
                   scorer: Callable[[str, str], dict[str, float]] = nli_scorer) -> FakeLLMServer:
        """What the NLI routes serve (text-embeddings-inference's contract: `GET /info`, `POST /predict`).

        The served model's output i carries the probability of `classes[i]` and is named `names[i]`
        (in `/info`'s id2label and in each answer, which lists the labels by score, highest first, as
        text-embeddings-inference does): names that do not match the classes are a misnamed model.
        `info=False` serves no `/info` (404); `faults` ("429", "500", "503", "400") are what the n-th
        `/predict` gets, then answers; `raw_scores` sends logits that are no probabilities.
        """
        classes, names = tuple(classes), tuple(names)
        if len(classes) != len(names) or set(classes) - set(NLI_CLASSES):
            raise ValueError("classes and names must pair up, classes among entail, neutral, contradict")
        with self._lock:
            self.nli_classes, self.nli_names, self.nli_info = classes, names, info
            self._nli_faults, self._nli_index = list(faults), 0
            self.nli_raw_scores, self.nli_scorer = raw_scores, scorer
        return self

    def _next_fault(self, body: dict[str, Any]) -> Fault:
        with self._lock:
            index = self._index
            self._index += 1
            if self._faults_fn is not None:
                return _as_fault(self._faults_fn(index, body))
            if self._faults_seq or not self._rates:
                return self._faults_seq[index] if index < len(self._faults_seq) else Fault("ok")
            draw = self._rng.random()
            for kind, rate in self._rates.items():
                if draw < rate:
                    return _as_fault(kind)
                draw -= rate
            return Fault("ok")

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def root_url(self) -> str:
        """`http://127.0.0.1:PORT`: where the NLI contract's `/info` and `/predict` are."""
        return self.base_url.removesuffix("/v1")

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 10.0) -> FakeLLMServer:
        """Serve from a daemon thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("already started")
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._open())
            except BaseException as e:  # noqa: BLE001 - handed to start()
                failure.append(e)
                ready.set()
                loop.close()
                return
            loop.call_later(self.max_lifetime_s, lambda: loop.create_task(self._close("lifetime")))
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=serve, name="fake-llm-server", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError("the fake LLM server did not start in time")
        if failure:
            raise failure[0]
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (any hanging request is answered at once) and end the thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        if thread.is_alive() and not loop.is_closed():
            try:
                future = asyncio.run_coroutine_threadsafe(self._close("stop()"), loop)
                future.result(timeout)
            except (RuntimeError, TimeoutError):  # the loop ended meanwhile (lifetime), or is stuck
                pass
        thread.join(timeout)

    def __enter__(self) -> FakeLLMServer:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _open(self) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=64 * 2**20)  # a re-ask may carry back a long answer
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_post("/chat/completions", self._completions)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/info", self._info)
        app.router.add_post("/predict", self._predict)
        app.router.add_get("/models", self._models)
        self._add_batch_routes(app)
        # handler_cancellation: a request whose client went away (timed out) stops at once.
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, handler_cancellation=True,
                                     shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._started_at = time.monotonic()

    async def _close(self, why: str) -> None:
        if self.stopped_because is not None:
            return
        self.stopped_because = why
        assert self._stopping is not None and self._runner is not None
        self._stopping.set()  # wakes every hang
        try:
            await self._runner.cleanup()
        finally:
            asyncio.get_running_loop().call_soon(asyncio.get_running_loop().stop)

    # -- handlers -------------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        with self._lock:
            self.n_models += 1
        return web.json_response({"object": "list", "data": [
            {"id": self.model, "object": "model", "created": 0, "owned_by": "qatui-tests"}]})

    async def _embeddings(self, request: web.Request) -> web.Response:
        """`POST /v1/embeddings`: a unit vector per input, its words hashed into EMBED_DIM buckets (deterministic)."""
        body = await request.json()
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        with self._lock:
            self.n_embeddings += 1
            self.embedding_requests.append(body)
            index = self._embed_index
            self._embed_index += 1
            fault = self._embed_faults[index] if index < len(self._embed_faults) else "ok"
            self.embed_counts[fault] += 1
        if fault == "429":
            return _error(429, "Rate limit reached (fake LLM server)", "rate_limit_exceeded", {"Retry-After": "0.05"})
        if fault in ("500", "503", "400"):
            return _error(int(fault), f"embedding fault {fault} (fake LLM server)", "server_error")
        if fault == "drop":
            _drop(request)
            return web.Response(status=200)
        data = []
        for index, text in enumerate(texts):
            vector = [0.0] * EMBED_DIM
            for word in str(text).lower().split():
                vector[zlib.crc32(word.encode()) % EMBED_DIM] += 1.0
            norm = sum(v * v for v in vector) ** 0.5 or 1.0
            if fault == "zero-vector" and index == 0:
                vector, norm = [0.0] * EMBED_DIM, 1.0
            data.append({"object": "embedding", "index": index, "embedding": [v / norm for v in vector]})
        if fault == "short":
            data = data[:-1]
        tokens = sum(self.embed_usage(str(t)) for t in texts)
        return web.json_response({"object": "list", "data": data, "model": body.get("model", self.model),
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    async def _info(self, request: web.Request) -> web.Response:
        """`GET /info` as text-embeddings-inference answers it for a classifier (404 when scripted without)."""
        with self._lock:
            self.n_info += 1
        if not self.nli_info:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response({"model_id": "fake/nli-model", "model_sha": "0" * 40, "max_input_length": 512,
                                  "model_type": {"classifier": {"id2label": {str(i): n for i, n in
                                                                             enumerate(self.nli_names)}}}})

    async def _predict(self, request: web.Request) -> web.Response:
        """`POST /predict`: per [premise, hypothesis] pair, each output's label and score, highest first."""
        body = await request.json()
        with self._lock:
            self.predict_requests.append(body)
            index = self._nli_index
            self._nli_index += 1
            fault = self._nli_faults[index] if index < len(self._nli_faults) else "ok"
        if fault == "429":
            return _error(429, "Rate limit reached (fake LLM server)", "rate_limit_exceeded", {"Retry-After": "0.05"})
        if fault != "ok":
            return web.json_response({"error": f"fault {fault}", "error_type": "Backend"}, status=int(fault))
        rows = []
        for premise, hypothesis in body.get("inputs") or []:
            probs = self.nli_scorer(str(premise), str(hypothesis))
            row = [{"label": name, "score": probs[cls] * (7.0 if self.nli_raw_scores else 1.0)}
                   for cls, name in zip(self.nli_classes, self.nli_names)]
            rows.append(sorted(row, key=lambda x: -x["score"]))
        return web.json_response(rows)

    async def _pause(self, seconds: float) -> None:
        """Sleep, cut short when the server stops."""
        if seconds > 0:
            assert self._stopping is not None
            try:
                await asyncio.wait_for(self._stopping.wait(), seconds)
            except TimeoutError:
                pass

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the request body is not JSON", "invalid_request_error")
        if not isinstance(body, dict):
            return _error(400, "the request body is not a JSON object", "invalid_request_error")
        stream = bool(body.get("stream"))
        with self._lock:
            self.n_requests += 1
            if self.n_requests > self.max_requests:
                self.counts["refused"] += 1
                refused = True
            else:
                refused = False
                self.requests.append(body)
                self.headers.append(dict(request.headers))
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if refused:
            return _error(400, f"fake LLM server: more than max_requests={self.max_requests} requests; refused",
                          "invalid_request_error")
        if refused := sorted(self.refuse & set(body)):
            with self._lock:
                self.counts["unsupported"] += 1
                self.in_flight -= 1
            return _error(400, f"Unsupported parameter: '{refused[0]}' is not supported with this model.",
                          "unsupported_parameter", param=refused[0])
        try:
            if (wait := self._rate_limited()) is not None:
                with self._lock:
                    self.counts["429-rate"] += 1
                return _error(429, "Rate limit reached (fake LLM server)", "rate_limit_exceeded",
                              {"Retry-After": f"{wait:.3f}", "retry-after-ms": f"{wait * 1000:.0f}"})
            fault = self._next_fault(body)
            with self._lock:
                self.counts[fault.kind] += 1
                if stream:
                    self.n_streamed += 1
            await self._pause(self.latency_s)
            return await self._answer(request, body, fault, stream)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _rate_limited(self) -> float | None:
        """With `rate_per_s`: None when a token was taken, else the seconds until the next one."""
        if self.rate_per_s is None:
            return None
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._refilled) * self.rate_per_s)
            self._refilled = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return None
            return (1.0 - self._tokens) / self.rate_per_s

    async def _answer(self, request: web.Request, body: dict[str, Any], fault: Fault,
                      stream: bool) -> web.StreamResponse:
        kind = fault.kind
        if kind in ("429", "429-retry-after"):
            headers = {}
            after = fault.retry_after if fault.retry_after is not None else (
                self.retry_after_s if kind == "429-retry-after" else None)
            if after is not None:
                headers["Retry-After"] = f"{after:g}"
            return _error(429, "Rate limit reached (fake LLM server)", "rate_limit_exceeded", headers)
        if kind == "401":
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")  # echoed, as real providers do
            return _error(401, f"Incorrect API key provided: {key} (fake LLM server)", "invalid_api_key")
        if kind == "400-echo":
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")
            return _error(400, f"Invalid request for key {key}: unsupported value (fake LLM server)", "invalid_request")
        if kind == "400-echo-part":
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")
            escaped = "".join(f"\\u{ord(c):04x}" for c in key)
            return _error(400, f"Invalid key {key[:12]}…{key[-8:]} (as sent: {key.replace('/', chr(92) + '/')}, "
                               f"{escaped}) (fake LLM server)", "invalid_request")
        if kind == "500":
            return _error(500, "The server had an error (fake LLM server)", "server_error")
        if kind == "503":
            return _error(503, "The engine is currently overloaded (fake LLM server)", "server_error")
        if kind == "garbage":
            return web.Response(status=200, text="<html>this is not JSON</html>", content_type="application/json")
        if kind in ("error-200", "error-mid-stream") and not stream:
            return web.json_response(_error_body(fault))
        if kind == "error-200":
            response = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            return await _stream_error(response, fault)
        if kind == "drop" and not stream:
            _drop(request)
            return web.Response(status=200)  # never sent: the connection is gone
        if kind == "hang":
            await self._pause(fault.seconds if fault.seconds is not None else self.hang_s)
        try:
            reply = await self._reply(body, fault)
        except Exception as e:  # noqa: BLE001 - a broken responder: kept for the test, a 500 for the client
            self.errors.append(e)
            return _error(500, f"fake LLM server: the responder raised {type(e).__name__}: {e}", "server_error")
        text = reply.text
        usage = self._usage(body, reply)
        with self._lock:
            self.served_at.append(time.monotonic())
        created = int(time.time())
        ident = f"chatcmpl-fake-{self.n_requests}"
        finish = "length" if kind == "length" else reply.finish_reason
        if not stream:
            return web.json_response(self._completion(body, kind, reply, usage, ident))
        response = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream",
                                                            "Cache-Control": "no-cache"})
        await response.prepare(request)
        head = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": self.model}

        async def send(choices: list[dict[str, Any]], **extra: Any) -> None:
            await response.write(f"data: {json.dumps({**head, 'choices': choices, **extra})}\n\n".encode())

        if kind == "no-choices":
            pieces: list[Any] = []
        elif kind in _CONTENT:
            pieces = [_CONTENT[kind]]
        else:
            pieces = [text[i:i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)]
        logprobs = self._logprobs(body, reply)
        per_piece: list[Any] = [None] * len(pieces)
        if reply.logprobs == "generated" and logprobs is not None and kind not in _CONTENT and kind != "no-choices":
            entries = logprobs["content"]  # generated: one token a chunk, with its entry
            pieces, per_piece = [e["token"] for e in entries], [{"content": [e]} for e in entries]
        elif pieces and logprobs is not None:
            per_piece[0] = logprobs  # a scripted value: sent once, with the first piece
        if kind != "no-choices":
            await send([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        if reply.reasoning_content:
            await send([{"index": 0, "delta": {"reasoning_content": reply.reasoning_content}, "finish_reason": None}])
        for n, piece in enumerate(pieces):
            if kind == "drop" and n >= max(1, len(pieces) // 2):
                _drop(request)
                return response
            if kind == "error-mid-stream" and n >= max(1, len(pieces) // 2):
                return await _stream_error(response, fault)
            if kind == "end-mid-stream" and n >= max(1, len(pieces) // 2):
                await response.write_eof()
                return response
            delta = {} if kind == "no-message" else {"content": piece}
            asked = {"logprobs": per_piece[n]} if body.get("logprobs") else {}
            await send([{"index": 0, "delta": delta, **asked, "finish_reason": None}])
            await self._pause(self.chunk_delay_s)
        if kind == "drop":  # a text too short to split: drop after the role chunk
            _drop(request)
            return response
        if kind == "error-mid-stream":  # likewise: the error after the role chunk
            return await _stream_error(response, fault)
        if kind == "end-mid-stream":  # likewise: the end after the role chunk
            await response.write_eof()
            return response
        if kind != "no-choices":
            await send([{"index": 0, "delta": {}, "finish_reason": finish}])
        if (body.get("stream_options") or {}).get("include_usage"):
            await send([], usage=usage)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The answer's `usage`, as OpenAI reports it (thinking counted among the completion tokens)."""
        text = reply.text
        thought = count_tokens(reply.reasoning_content or "") + sum(
            count_tokens(t) for t in re.findall(r"<think>(.*?)(?:</think>|\Z)", text, re.DOTALL))
        if self.usage is not None:
            prompt_tokens, completion_tokens = self.usage(body, text)
        else:
            prompt_tokens = count_tokens(_prompt_text(body))
            completion_tokens = count_tokens(text) + count_tokens(reply.reasoning_content or "")
        return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "completion_tokens_details": {"reasoning_tokens": thought}}

    def _completion(self, body: dict[str, Any], kind: str, reply: Reply, usage: dict[str, Any],
                    ident: str) -> dict[str, Any]:
        """A whole (not streamed) `chat.completion` object: what a completion or a batch's output line carries."""
        finish = "length" if kind == "length" else reply.finish_reason
        message: dict[str, Any] = {"role": "assistant", "content": _CONTENT.get(kind, reply.text)}
        if reply.reasoning_content is not None:
            message["reasoning_content"] = reply.reasoning_content
        choice = {"finish_reason": finish, "logprobs": self._logprobs(body, reply),
                  **({} if kind == "no-message" else {"message": message})}
        choices = [] if kind == "no-choices" else [
            {"index": i, **choice} for i in range(max(1, int(body.get("n") or 1)))]
        return {"id": ident, "object": "chat.completion", "created": int(time.time()),
                "model": self.model, "choices": choices, "usage": usage}

    @staticmethod
    def _logprobs(body: dict[str, Any], reply: Reply) -> Any:
        """A choice's `logprobs`: None unless the request asks for them; then generated from the text, or scripted."""
        if not body.get("logprobs"):
            return None
        if reply.logprobs != "generated":
            return reply.logprobs
        return {"content": token_logprobs(reply.text, int(body.get("top_logprobs") or 0)), "refusal": None}

    async def _reply(self, body: dict[str, Any], fault: Fault) -> Reply:
        if fault.kind == "empty":
            return Reply("")
        if fault.kind == "malformed":
            return Reply(MALFORMED_TEXT)
        if fault.kind == "long":
            n = fault.chars if fault.chars is not None else self.long_chars
            unit = "lorem ipsum dolor sit amet "
            return Reply((unit * (n // len(unit) + 1))[:n])
        text = self.responder(body)
        if inspect.isawaitable(text):
            text = await text
        return text if isinstance(text, Reply) else Reply(text if isinstance(text, str) else json.dumps(text))


_CONTENT: dict[str, Any] = {"content-number": 42, "content-object": {"choice": "A"}}
"""The message `content` of the faults that send something other than text."""


def _error(status: int, message: str, code: str, headers: dict[str, str] | None = None,
           param: str | None = None) -> web.Response:
    """An error in OpenAI's shape, which the OpenAI SDK (and so LiteLLM) reads."""
    payload = {"error": {"message": message, "type": code, "param": param, "code": code}}
    return web.json_response(payload, status=status, headers=headers)


def _error_body(fault: Fault) -> dict[str, Any]:
    """The error object an "error-200" or "error-mid-stream" fault sends: `ERROR_200`, or the fault's own `error`."""
    return ERROR_200 if fault.error is None else {"error": fault.error}


async def _stream_error(response: web.StreamResponse, fault: Fault) -> web.StreamResponse:
    """End a stream begun with 200 as a server that fails while generating does: the error object as a chunk."""
    await response.write(f"data: {json.dumps(_error_body(fault))}\n\ndata: [DONE]\n\n".encode())
    await response.write_eof()
    return response


def _drop(request: web.Request) -> None:
    """Close the TCP connection under the request (an abort: no orderly end of the body)."""
    transport = request.transport
    if transport is not None:
        transport.abort()
