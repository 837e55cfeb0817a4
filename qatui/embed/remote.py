"""An embedder whose vectors come from a server (`[embedders.NAME]`): the model runs elsewhere, the rest is local.

What the server computes goes through the same `Embedder` as a local model's: the texts of
concurrent tasks pooled into batches, each distinct text asked once, every vector kept in
memory and in the model-output store, so a rerun in a new process asks the server for nothing
but the one-text probe. The embedders never import LiteLLM (the models' packages are
independent): the caller passes `encode` (`qatui.llm.embeddings.RemoteEmbeddings.encode`),
which retries and raises with the reason; an error there fails the items that needed the
vectors, never turns into a zero vector.

Built only after one probe request has answered: it proves the server is there before a session
exists, and gives the vectors' length, which is part of their identity in the store.

What the requests cost is the caller's `meter` (`qatui.llm.embeddings.RemoteEmbeddings`): told of a
task's texts before they are looked up (`before`: a capped run reserves their worst case there) and
after (`after`: in the task's own context, so the calls it records land on that task's item).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from qatui.embed.base import Embedder, EmbedderError

if TYPE_CHECKING:
    from qatui.embed.stored import StoredVectors

PROBE_TEXT = "qatui checks that this embedding server answers."
"""The whole input of the probe request (a server or a test tells it by this text)."""

Encode = Callable[[list[str]], np.ndarray]


class Meter(Protocol):
    """What counts a served model's requests: called in the asking task's context around each `aembed`."""

    def before(self, texts: list[str]) -> Any:
        """A task is about to ask for `texts`; what it returns is handed to `after` (may raise to refuse them)."""

    def after(self, texts: list[str], held: Any) -> None:
        """The task's `texts` were answered (or failed): record the requests made for them."""


class RemoteEmbedder(Embedder):
    """Vectors from `encode` (one request per batch); `key` names the model and settings they depend on."""

    def __init__(self, name: str, encode: Encode, key: str, *, batch_size: int = 64,
                 meter: Meter | None = None) -> None:
        probe = np.atleast_2d(np.asarray(encode([PROBE_TEXT]), dtype=np.float32))
        if probe.shape[0] != 1 or probe.shape[1] < 1:
            raise EmbedderError(f"embedder {name!r}: the server's probe vector has shape {probe.shape}")
        super().__init__(name, int(probe.shape[1]), batch_size=batch_size)
        self.encode = encode
        self.key = key
        self.meter = meter

    async def aembed(self, texts: Sequence[str], stored: StoredVectors | None = None) -> np.ndarray:
        """`Embedder.aembed`, with the meter told before and after (in this task's context)."""
        if self.meter is None:
            return await super().aembed(texts, stored)
        asked = list(texts)
        held = self.meter.before(asked)
        try:
            return await super().aembed(asked, stored)
        finally:
            self.meter.after(asked, held)

    def identity(self) -> str:
        """The served model, its settings and the vectors' length: what keys them in the model-output store."""
        return hashlib.sha256(f"remote sentence vectors\0{self.key}\0{self.dim}".encode()).hexdigest()[:32]

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.atleast_2d(np.asarray(self.encode(texts), dtype=np.float32))
