"""Sentence vectors kept in the model-output store, so that a rerun in a new process embeds nothing again.

`StoredVectors` is what `Embedder.embed(texts, stored)` reads and writes: the store, the
embedder's identity (its files and settings, `Embedder.identity`) and whether reads are on
(`--no-cache` turns them off and still writes, as the call cache does). A vector that cannot
be read is computed again; one that cannot be written is only logged. A served embedder's
`probed` (its vectors' length, by its settings) is written with its vectors (`store.model_outputs`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from qatui.store.model_outputs import ModelOutputs, Probed

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class StoredVectors:
    """One embedder's vectors in one store; hashable by identity, so `aembed` can pool requests per store."""

    store: ModelOutputs
    identity: str
    reads: bool = True
    probed: Probed | None = None

    def read(self, texts: list[str], dim: int) -> dict[str, np.ndarray]:
        """The stored unit vectors of `texts` (read-only float32 rows); texts without one are left out."""
        if not self.reads:
            return {}
        found: dict[str, np.ndarray] = {}
        for text, raw in zip(texts, self.store.get_many(self.identity, texts)):
            if raw is not None and len(raw) == 4 * dim:  # another length is a damaged row: computed again
                vector = np.frombuffer(raw, dtype=np.float32)
                if np.isfinite(vector).all():
                    found[text] = vector  # frombuffer over bytes is read-only already
        return found

    def write(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep newly computed vectors; a store that cannot be written is logged and left."""
        try:
            self.store.put_many(self.identity, ((t, np.asarray(v, dtype=np.float32).tobytes()) for t, v in vectors.items()),
                                self.probed)
        except OSError as e:
            log.info("sentence vectors not stored: %s", e)
