"""Sentence vectors from an embedding model through LiteLLM (`[embedders.NAME]`): the one call of `litellm.embedding`.

Any LiteLLM embedding model works: `openai/text-embedding-3-small`, or a vLLM or
text-embeddings-inference server's OpenAI-compatible `/v1/embeddings` (`openai/MODEL` with its
`api_base`). The rules are the backbone calls' (`qatui.llm.backbone`): LiteLLM's own retries are
off (`max_retries=0`), and only transient failures (429, timeouts, dropped connections, 500, 502,
503) are retried here, with jittered backoff, a 429's `Retry-After` waited out, up to
`max_attempts`; anything else fails at once. A reply that is not one finite, non-zero vector per
text, all of one length, fails too: a missing vector never becomes a zero vector (a cosine of 0
would be scored as if it were measured). Every failure is an `LLMCallError` whose message names
the model and the reason, and never holds the key.

Synchronous: the embedder calls it from its worker thread (`qatui.embed.base.Embedder.aembed`),
so the run's event loop never waits on it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from qatui.llm._lazy import get_litellm
from qatui.llm.backbone import Backbone, _transient_classes
from qatui.llm.errors import LLMCallError
from qatui.store.credentials import key_from_env

if TYPE_CHECKING:
    from qatui.config import EmbedderConfig

BASE_DELAY_S = 0.5
"""The first wait before a retry (doubled each time, jittered, capped by the backbone's rule)."""


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

    def api_key(self) -> str | None:
        """The key from `$api_key_env`, read now and never kept; a variable that is not set is an error."""
        return key_from_env(self.settings.api_key_env, self.settings.model, f"[embedders.{self.name}]", LLMCallError)

    def precheck(self) -> None:
        """Refuse before any request a provider whose key is not set (LiteLLM would call it a 500 and retry it)."""
        if self.settings.api_key_env or self.settings.api_base:
            return
        try:
            missing = get_litellm().validate_environment(model=self.settings.model).get("missing_keys") or []
        except Exception:  # noqa: BLE001 - an unknown provider: the request itself will say
            return
        if keys := [k for k in missing if k.endswith("_KEY") or k.endswith("_TOKEN")]:
            raise LLMCallError(f"{self.settings.model}: no API key: set {' or '.join(keys)} (or name the variable "
                               f"with api_key_env in [embedders.{self.name}])")

    def encode(self, texts: list[str]) -> np.ndarray:
        """One request for `texts` (retried when transient); `LLMCallError` with the reason when it cannot be had.

        A server of one's own (`api_base`) without `api_key_env` is sent the placeholder key "EMPTY", as vLLM's
        and text-embeddings-inference's OpenAI-compatible routes take when they check none."""
        ll = get_litellm()
        transient = _transient_classes(ll)
        self.precheck()
        api_key = self.api_key() or ("EMPTY" if self.settings.api_base else None)
        kwargs: dict[str, Any] = {"model": self.settings.model, "input": list(texts), "timeout": self.settings.timeout_s,
                                  "max_retries": 0}
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
            except transient as e:
                last = e
                failures.append(self._rules._describe_transient(e, ll))
                if attempt < self.settings.max_attempts:
                    self.sleep(self._rules.backoff(attempt, e))
                continue
            except Exception as e:  # noqa: BLE001 - a permanent error: retrying cannot help
                raise LLMCallError(self._rules._describe_permanent(e, ll, api_key), attempts=attempt) from None
            return vectors_of(response, len(texts), self.settings.model)
        raise LLMCallError(self._rules._summary(failures, time.monotonic() - started, api_key, last),
                           attempts=len(failures), transient=True) from None


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

