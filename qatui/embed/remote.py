"""An embedder whose vectors come from a server (`[embedders.NAME]`): the model runs elsewhere, the rest is local.

What the server computes goes through the same `Embedder` as a local model's: the texts of
concurrent tasks pooled into batches, each distinct text asked once, every vector kept in
memory and in the model-output store, so a rerun in a new process asks the server for nothing
but the one-text probe. The embedders never import LiteLLM (the models' packages are
independent): the caller passes `encode` (`qatui.llm.embeddings.RemoteEmbeddings.encode`),
which retries and raises with the reason; an error there fails the items that needed the
vectors, never turns into a zero vector.

Built with the vectors' length, which is part of their identity in the store: learned by one probe
request (`probe_dim`), which also proves the server is there before a session exists, or, when the
store holds vectors of this embedder, read from what that probe learned then (`probed`, kept with
the vectors). The probe is then put off (`check`, a `PutOffCheck`) until the first text the store
cannot answer, so a rerun the store answers sends nothing; a text is never sent before it has passed.

What the requests cost is the caller's `meter` (`qatui.llm.embeddings.RemoteEmbeddings`): told of a
task's texts before they are looked up (`before`: a capped run reserves their worst case there) and
after (`after`: in the task's own context, so the calls it records land on that task's item).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from qatui.embed.base import Embedder, EmbedderError
from qatui.store.model_outputs import Probed, PutOffCheck

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


class _Unchecked(Exception):  # noqa: N818 - not an error: a signal to the asking task
    """A text must be sent, and the put-off probe has not passed: the asking task makes it, then asks again."""


def probe_dim(name: str, encode: Encode) -> int:
    """Send the one-text probe: the vectors' length; `EmbedderError` for a reply of another shape (`encode`
    raises its own error, with the reason, when the server cannot be had)."""
    probe = np.atleast_2d(np.asarray(encode([PROBE_TEXT]), dtype=np.float32))
    if probe.shape[0] != 1 or probe.shape[1] < 1:
        raise EmbedderError(f"embedder {name!r}: the server's probe vector has shape {probe.shape}")
    return int(probe.shape[1])


def probed_key(key: str) -> str:
    """Where what the probe of the embedder with settings `key` learned is kept (`store.model_outputs.Probed`)."""
    return f"served embedder\0{key}"


class RemoteEmbedder(Embedder):
    """Vectors from `encode` (one request per batch); `key` names the model and settings they depend on, `dim` is
    their length (`probe_dim`'s, or the one kept with the stored vectors while `check` has not passed)."""

    def __init__(self, name: str, encode: Encode, key: str, dim: int, *, batch_size: int = 64,
                 meter: Meter | None = None, check: PutOffCheck | None = None) -> None:
        super().__init__(name, dim, batch_size=batch_size)
        self.encode = encode
        self.key = key
        self.meter = meter
        self.check = check

    async def aembed(self, texts: Sequence[str], stored: StoredVectors | None = None) -> np.ndarray:
        """`Embedder.aembed`, with the meter told before and after (in this task's context), and the put-off probe
        made in this task's context before its first text is sent (a failing one stops the run from here)."""
        asked = list(texts)
        held = self.meter.before(asked) if self.meter is not None else None
        try:
            try:
                return await super().aembed(asked, stored)
            except _Unchecked:  # pooled with a task whose texts must be sent: this task's may all be known now
                if (known := await asyncio.to_thread(self._from_cache, asked, True)) is not None:
                    return known
                assert self.check is not None
                await self.check.before_call()
                return await super().aembed(asked, stored)
        finally:
            if self.meter is not None:
                self.meter.after(asked, held)

    def embed(self, texts: Sequence[str], stored: StoredVectors | None = None) -> np.ndarray:
        """`Embedder.embed`, the put-off probe made first when a text must be sent (from synchronous code with no
        running event loop: a test, a script)."""
        try:
            return super().embed(texts, stored)
        except _Unchecked:
            assert self.check is not None
            asyncio.run(self.check.before_call())
            return super().embed(texts, stored)

    def probed(self) -> Probed:
        """What the probe learned (the vectors' length), to keep with the vectors in the model-output store."""
        return Probed(probed_key(self.key), {"dim": self.dim})

    def identity(self) -> str:
        """The served model, its settings and the vectors' length: what keys them in the model-output store."""
        return hashlib.sha256(f"remote sentence vectors\0{self.key}\0{self.dim}".encode()).hexdigest()[:32]

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.check is not None and not self.check.passed:
            raise _Unchecked
        return np.atleast_2d(np.asarray(self.encode(texts), dtype=np.float32))
