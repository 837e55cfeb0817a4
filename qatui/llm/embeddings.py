"""Sentence vectors from an embedding model through LiteLLM (`[embedders.NAME]`): the one call of `litellm.embedding`.

Any LiteLLM embedding model works: `openai/text-embedding-3-small`, or a vLLM or
text-embeddings-inference server's OpenAI-compatible `/v1/embeddings` (`openai/MODEL` with its
`api_base`). The rules are the backbone calls' (`qatui.llm.backbone`): LiteLLM's own retries are
off (`max_retries=0`), and only transient failures (429, timeouts, dropped connections, 500, 502,
503) are retried here, with jittered backoff, a 429's `Retry-After` waited out, up to
`max_attempts`; anything else fails at once. A reply that is not one finite, non-zero vector per
text, all of one length, fails too: a missing vector never becomes a zero vector (a cosine of 0
would be scored as if it were measured), and so does one whose usage report cannot be true
(`response.usage_problem`: more tokens than the texts' bytes allow), its cost unknown. Every
failure is an `LLMCallError` whose message names the model and the reason, and never holds the key.

Synchronous: the embedder calls it from its worker thread (`qatui.embed.base.Embedder.aembed`),
so the run's event loop never waits on it.

Every request is a call of the run, as a backbone's is: an `LLMCallFinished` (purpose "embed") with
the reply's `usage.prompt_tokens`, the cost LiteLLM's price map gives it (`priced_cost`; `unpriced` when
it has none), latency, attempts, and ok or the error. The worker thread pools the texts of several tasks into one request,
so the call is kept until a task whose texts it holds comes back (`after`, in that task's context)
and is recorded on that task's item, once; a task whose texts were all answered without a request of
its own (memory, the model-output store, or a request another task records) records one cached call
of 0 USD, as a cache hit of a backbone does. Under `--max-cost` a task reserves its texts' worst case
(every text asked, counted with LiteLLM's tokenizer for the model) before the lookup, and settles what
its calls cost after. The probe a served model is checked with (`probe`: before the run, or put off until its
first text the model-output store cannot answer) is a check, like the backbone's preflight, and is not recorded.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from qatui.llm._lazy import get_litellm
from qatui.llm.backbone import Backbone
from qatui.llm.errors import is_transient
from qatui.events import LLMCallFinished, emit
from qatui.llm.errors import LLMCallError
from qatui.llm.response import priced_cost, reply_usage_problem, usage_of
from qatui.llm.spend import SPEND, price
from qatui.store.credentials import key_from_env

if TYPE_CHECKING:
    from qatui.config import EmbedderConfig

BASE_DELAY_S = 0.5
"""The first wait before a retry (doubled each time, jittered, capped by the backbone's rule)."""
PURPOSE = "embed"
"""The `purpose` of an embedding request's `LLMCallFinished`."""


class RemoteEmbeddings:
    """`encode(texts)` → (len(texts), dim) float32 rows from one `[embedders.NAME]` model, retried as above."""

    def __init__(self, name: str, settings: EmbedderConfig, *, sleep: Callable[[float], Any] = time.sleep) -> None:
        self.name = name
        self.settings = settings
        self.sleep = sleep
        self.requests = 0
        """HTTP requests sent (tries included): what a test or a profile counts."""
        self._rules = Backbone(settings.model, timeout_s=settings.timeout_s, max_attempts=settings.max_attempts,
                               api_key_env=settings.api_key_env, base_delay_s=BASE_DELAY_S)
        self._made: list[tuple[frozenset[str], LLMCallFinished]] = []
        """Requests made and not yet recorded on a task: the texts each asked for, and its call."""
        self._made_lock = threading.Lock()

    def api_key(self) -> str | None:
        """The key from `$api_key_env`, read now and never kept; a variable that is not set is an error."""
        return key_from_env(self.settings.api_key_env, self.settings.model, f"[embedders.{self.name}]", LLMCallError)

    def precheck(self) -> None:
        """Refuse before any request a provider whose key is not set (LiteLLM would call it a 500 and retry it)."""
        if self.settings.api_key_env or self.settings.api_base:
            return
        from qatui.llm.facts import facts_at
        from qatui.llm.keys import missing_keys

        if keys := missing_keys(self.settings.model, facts_at(None)):  # LiteLLM's answer (`llm.keys`)
            raise LLMCallError(f"{self.settings.model}: no API key: set {' or '.join(keys)} (or name the variable "
                               f"with api_key_env in [embedders.{self.name}])")

    def encode(self, texts: list[str], *, record: bool = True) -> np.ndarray:
        """One request for `texts` (retried when transient); `LLMCallError` with the reason when it cannot be had.

        `record=False`: the probe (`probe`), a check of the server and not a call of the run: kept for no task.
        A server of one's own (`api_base`) without `api_key_env` is sent the placeholder key "EMPTY", as vLLM's
        and text-embeddings-inference's OpenAI-compatible routes take when they check none."""
        ll = get_litellm()
        self.precheck()
        api_key = self.api_key() or ("EMPTY" if self.settings.api_base else None)
        kwargs: dict[str, Any] = {"model": self.settings.model, "input": list(texts),
                                  "timeout": self.settings.timeout_s, "max_retries": 0}
        for key, value in (("api_base", self.settings.api_base), ("api_key", api_key),
                           ("dimensions", self.settings.dimensions)):
            if value is not None:
                kwargs[key] = value
        failures: list[str] = []
        started = time.monotonic()
        last: BaseException | None = None
        for attempt in range(1, self.settings.max_attempts + 1):
            self.requests += 1
            try:
                response = ll.embedding(**kwargs)
            except Exception as e:  # noqa: BLE001 - asked again when transient; else retrying cannot help
                if is_transient(e, ll):
                    last = e
                    failures.append(self._rules._describe_transient(e, ll))
                    if attempt < self.settings.max_attempts:
                        self.sleep(self._rules.backoff(attempt, e))
                    continue
                error = LLMCallError(self._rules._describe_permanent(e, ll, api_key), attempts=attempt)
                if record:
                    self._made_call(texts, started, attempt, error=str(error))
                raise error from None
            if (problem := reply_usage_problem(response, texts)) is not None:  # its cost unknown: recorded as 0
                error = LLMCallError(f"{self.settings.model}: {problem}", attempts=attempt, cost_unknown=True)
                if record:
                    self._made_call(texts, started, attempt, error=str(error), unpriced=True)
                raise error
            try:
                rows = vectors_of(response, len(texts), self.settings.model)
            except LLMCallError as error:  # answered (and paid for), but unusable
                if record:
                    self._made_call(texts, started, attempt, response=response, error=str(error))
                raise
            if record:
                self._made_call(texts, started, attempt, response=response)
            return rows
        error = LLMCallError(self._rules._summary(failures, time.monotonic() - started, api_key, last),
                             attempts=len(failures), transient=True)
        if record:
            self._made_call(texts, started, len(failures), error=str(error))
        raise error from None

    def _made_call(self, texts: list[str], started: float, attempts: int, *, response: Any = None,
                   error: str = "", unpriced: bool = False) -> None:
        """Keep one request's call (tokens and cost from its reply, when it has one) until a task records it;
        `unpriced`: its cost is unknown (so is a reply's that the price map cannot price)."""
        tokens = usage_of(response)["prompt_tokens"] if response is not None else 0
        cost, known = priced_cost(response, self.settings.model) if response is not None else (0.0, True)
        digest = self._digest(texts)
        call = LLMCallFinished(call_id=digest[:12], model=self.settings.model, purpose=PURPOSE, prompt_hash=digest,
                               prompt_tokens=tokens, cost_usd=cost, unpriced=unpriced or not known,
                               latency_s=round(time.monotonic() - started, 6), attempts=max(1, attempts),
                               ok=not error, error=error)
        with self._made_lock:
            self._made.append((frozenset(texts), call))

    def _digest(self, texts: list[str]) -> str:
        """What names a request in its call (`prompt_hash`): SHA-256 of the model and the texts."""
        return hashlib.sha256("\0".join([self.settings.model, *texts]).encode("utf-8", "surrogatepass")).hexdigest()

    def probe(self, texts: list[str]) -> np.ndarray:
        """`encode` for the probe a served embedder is checked with: a check of the server, like the backbone's
        preflight, and never a call of the run (not recorded, not counted by a cap)."""
        return self.encode(texts, record=False)

    def before(self, texts: list[str]) -> float:
        """Under `--max-cost` (`qatui.llm.spend.SPEND` bound): reserve what asking every text of `texts` could cost
        (`CapReached` when that could pass the cap); the USD held, 0 outside a capped run."""
        if (spend := SPEND.get()) is None or not texts:
            return 0.0
        from qatui.llm.tokens import count_text

        tokens = count_text(self.settings.model, "\n".join(texts))
        return spend.reserve(price(self.settings.model, tokens, 0) or 0.0)

    def after(self, texts: list[str], held: float) -> None:
        """Record, in the asking task's context, each request made for any of `texts` not recorded yet (one cached
        call of 0 USD when there is none), and settle the cap's reservation with what they cost."""
        asked = set(texts)
        with self._made_lock:
            mine = [call for made, call in self._made if made & asked]
            self._made = [(made, call) for made, call in self._made if not made & asked]
        if not mine:
            digest = self._digest(texts)
            mine = [LLMCallFinished(call_id=digest[:12], model=self.settings.model, purpose=PURPOSE, prompt_hash=digest,
                                    cached=True)]
        for call in mine:
            emit(call)
        if (spend := SPEND.get()) is not None:  # a request of unknown cost keeps what was held for it
            cost = sum(call.cost_usd for call in mine)
            spend.cap.settle(held, max(held, cost) if any(call.unpriced for call in mine) else cost)


def vectors_of(response: Any, count: int, model: str) -> np.ndarray:
    """The (count, dim) float32 rows of an embedding reply, in input order; `LLMCallError` for any other shape."""
    data = getattr(response, "data", None)
    if not isinstance(data, list) or len(data) != count:
        got = len(data) if isinstance(data, list) else "no"
        raise LLMCallError(f"{model}: the embedding reply has {got} vectors for {count} texts")
    rows: list[list[float] | None] = [None] * count
    for position, entry in enumerate(data):
        entry = entry if isinstance(entry, dict) else getattr(entry, "__dict__", {})
        index = entry.get("index", position)
        vector = entry.get("embedding")
        if not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
            raise LLMCallError(f"{model}: the embedding reply's vector indices are not 0..{count - 1} once each")
        if not isinstance(vector, list) or not vector or not all(isinstance(v, int | float) for v in vector):
            raise LLMCallError(f"{model}: the embedding reply's vector {index} is not a list of numbers "
                               "(a base64 encoding is not read)")
        rows[index] = vector
    if len({len(row) for row in rows if row is not None}) != 1:
        raise LLMCallError(f"{model}: the embedding reply's vectors differ in length")
    out = np.asarray(rows, dtype=np.float64)
    if not np.isfinite(out).all():
        raise LLMCallError(f"{model}: the embedding reply holds a value that is not a finite number")
    norms = np.linalg.norm(out, axis=1)
    if (zero := np.flatnonzero(norms == 0.0)).size:
        raise LLMCallError(f"{model}: the embedding reply's vector {int(zero[0])} is all zeros: it has no direction "
                           "to compare")
    if not all(math.isfinite(n) for n in norms):
        raise LLMCallError(f"{model}: the embedding reply's vectors are too large to compare")
    return out.astype(np.float32)

