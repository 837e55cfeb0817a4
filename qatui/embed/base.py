"""What an embedder is: texts in, L2-normalised float32 rows out, each distinct text run once.

An `Embedder` batches the texts it has not seen (longest first, so a batch pads little),
keeps every vector it computed in a per-instance LRU cache keyed by the exact text, and
serialises the model behind a lock: two threads must not drive one tokenizer at once (fast
tokenizers raise "Already borrowed"), and on a small machine one forward at a time is also
the fastest. `aembed` answers from the cache on the event loop when it can; otherwise the
requests of concurrent tasks are pooled and embedded together by one worker thread, so
sixteen judges asking for four texts each make two batches of 32, not sixteen of 4 (a text
costs about half as much in a batch as alone, bench/bench_embed.py).
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qatui.errors import QatuiError

if TYPE_CHECKING:
    from qatui.embed.stored import StoredVectors
    from qatui.store.model_outputs import Probed


@dataclass
class _Request:
    """One `aembed` call waiting for the worker thread: its texts and the future its task awaits."""

    texts: list[str]
    stored: StoredVectors | None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[np.ndarray]

    def settle(self, rows: np.ndarray | None, error: BaseException | None) -> None:
        """Resolve the future on its own loop (from the worker thread); a cancelled or closed one is left."""

        def resolve() -> None:
            if self.future.done():
                return
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(rows)

        try:
            self.loop.call_soon_threadsafe(resolve)
        except RuntimeError:  # the loop closed while its task waited: nobody is left to tell
            pass


class EmbedderError(QatuiError):
    """An embedding model cannot be found or loaded; the message says which and what to do."""


def normalise(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, as float32 (an all-zero row stays zero)."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.maximum(norms, np.float32(1e-12))


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of `a` (n, d) with every row of `b` (m, d): (n, m)."""
    return normalise(np.atleast_2d(a)) @ normalise(np.atleast_2d(b)).T


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors."""
    return float(cosine_matrix(a, b)[0, 0])


class Embedder(ABC):
    """A sentence embedder. Subclasses implement `_encode` for one batch of distinct texts.

    `forward_calls` counts batches the model actually ran and `texts_encoded` the texts in
    them, so a caller (or a test) can see that cached texts cost nothing.
    """

    def __init__(self, name: str, dim: int, *, batch_size: int = 32, cache_size: int = 50_000) -> None:
        self.name = name
        self.dim = dim
        self.batch_size = max(1, batch_size)
        self.cache_size = cache_size
        self.forward_calls = 0
        self.texts_encoded = 0
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.RLock()
        self._queued: list[_Request] = []
        self._queue_lock = threading.Lock()
        self._draining = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray:
        """One batch of texts → (len(texts), dim) vectors (the caller normalises them)."""

    def identity(self) -> str | None:
        """What names this model's vectors in the model-output store (files and settings), None to keep none."""
        return None

    def probed(self) -> Probed | None:
        """What a served model's probe learned, kept with its vectors in the model-output store; None for a model
        that is no server's."""
        return None

    def embed(self, texts: Sequence[str], stored: StoredVectors | None = None) -> np.ndarray:
        """(len(texts), dim) float32 rows of unit norm, in the order of `texts`.

        With `stored`, vectors missing from memory are read from the model-output store first,
        and the ones computed are written to it.
        """
        return self._embed(texts, stored)

    def _embed(self, texts: Sequence[str], stored: StoredVectors | None = None) -> np.ndarray:
        """What `embed` does, and what the worker thread of `aembed` calls (a subclass may wrap `embed` for callers
        outside a run's tasks without wrapping the worker: `embed.remote`)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            fresh: dict[str, np.ndarray] = {}
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if stored is not None and missing:
                fresh.update(stored.read(missing, self.dim))
                missing = [t for t in missing if t not in fresh]
                self._cache.update(fresh)  # kept at once: a batch that fails below does not lose them (`embed.remote`)
            missing.sort(key=len, reverse=True)
            computed: list[str] = []
            for start in range(0, len(missing), self.batch_size):
                batch = missing[start : start + self.batch_size]
                vectors = normalise(self._encode(batch))
                if vectors.shape != (len(batch), self.dim):
                    raise EmbedderError(f"embedder {self.name!r} returned shape {vectors.shape} for {len(batch)} texts")
                self.forward_calls += 1
                self.texts_encoded += len(batch)
                for text, vector in zip(batch, vectors):
                    vector.setflags(write=False)
                    fresh[text] = vector
                computed.extend(batch)
            if stored is not None and computed:
                stored.write({t: fresh[t] for t in computed})
            for i, text in enumerate(texts):
                vector = fresh.get(text)
                if vector is None:
                    vector = self._cache[text]
                    self._cache.move_to_end(text)
                out[i] = vector
            for text, vector in fresh.items():
                self._cache[text] = vector
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    async def aembed(self, texts: Sequence[str], stored: StoredVectors | None = None) -> np.ndarray:
        """`embed` without blocking the event loop: from memory at once, else pooled with the
        requests of other tasks and computed (or read from `stored`) in a worker thread."""
        texts = list(texts)
        known = self._from_cache(texts)
        if known is not None:
            return known
        loop = asyncio.get_running_loop()
        request = _Request(texts, stored, loop, loop.create_future())
        with self._queue_lock:
            self._queued.append(request)
            start, self._draining = not self._draining, True
        if start:
            threading.Thread(target=self._drain, name=f"embed {self.name}", daemon=True).start()
        return await request.future

    def _from_cache(self, texts: list[str], wait: bool = False) -> np.ndarray | None:
        """The rows of `texts` when every one is cached and the model is not busy (`wait`: once it is not; never
        on the event loop); None otherwise."""
        if not self._lock.acquire(blocking=wait):  # a forward pass holds it: never wait on the event loop
            return None
        try:
            if not all(t in self._cache for t in texts):
                return None
            out = np.empty((len(texts), self.dim), dtype=np.float32)
            for i, text in enumerate(texts):
                out[i] = self._cache[text]
                self._cache.move_to_end(text)
            return out
        finally:
            self._lock.release()

    def _drain(self) -> None:
        """The worker thread: embed every queued request's texts together, hand each its rows, until none is left."""
        while True:
            with self._queue_lock:
                requests, self._queued = self._queued, []
                if not requests:
                    self._draining = False
                    return
            by_store: dict[StoredVectors | None, list[_Request]] = {}
            for r in requests:
                by_store.setdefault(r.stored, []).append(r)
            for stored, group in by_store.items():
                try:
                    rows = self._embed([t for r in group for t in r.texts], stored)
                except BaseException as error:  # noqa: BLE001 - every waiting task gets the error, none waits forever
                    for r in group:
                        r.settle(None, error)
                    continue
                at = 0
                for r in group:
                    r.settle(rows[at : at + len(r.texts)], None)
                    at += len(r.texts)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of every text of `a` with every text of `b`: (len(a), len(b))."""
        return self.embed(a) @ self.embed(b).T

    def clear_cache(self) -> None:
        """Forget every cached vector (the counters keep counting)."""
        with self._lock:
            self._cache.clear()
