"""Sentence vectors from a transformers encoder, pooled as sentence-transformers pools them.

The pooling mode comes from the folder's `1_Pooling/config.json` (via `modules.json`);
a plain transformers folder without one is mean-pooled. Mean pooling averages every
token the attention mask keeps, [CLS] and [SEP] included, which is what
sentence-transformers does for all-MiniLM-L6-v2; the vector is then L2-normalised.
Inputs are cut at the folder's `max_seq_length` (256 for all-MiniLM-L6-v2), else at
the model's limit. On a CPU the last layer runs on ONNX Runtime over a copy exported once
and checked against torch (`last_layer`); where that cannot be had, torch runs it and
`runtime_note` says why. Pooling is the same numpy code for both.
"""

from __future__ import annotations

import numpy as np

from qatui.embed.base import Embedder
from qatui.embed.encoder import TokenEncoder
from qatui.embed.last_layer import last_layer, pool


class TransformerEmbedder(Embedder):
    """An `Embedder` over a `TokenEncoder`'s last layer, run by `runtime` (`[models] embedder_runtime`)."""

    def __init__(self, encoder: TokenEncoder, *, name: str | None = None, batch_size: int = 32,
                 runtime: str = "auto") -> None:
        super().__init__(name or encoder.spec, encoder.dim, batch_size=batch_size)
        self.encoder = encoder
        self.pooling = encoder.folder.pooling
        self.max_length = encoder.folder.max_seq_length or encoder.max_length
        self.last_layer = last_layer(encoder, runtime)

    @property
    def runtime(self) -> str:
        """"onnx" or "torch": what runs the model (`runtime_note` says why torch, when it fell back)."""
        return self.last_layer.runtime

    @property
    def runtime_note(self) -> str | None:
        """Why torch runs the model although ONNX Runtime was tried; None otherwise."""
        return self.last_layer.runtime_note

    def identity(self) -> str:
        """The model folder's files, the pooling and the length cut: what the vectors depend on."""
        from qatui.store.model_outputs import files_identity

        return files_identity(self.encoder.folder.transformer_dir, "sentence vectors", self.name, self.pooling,
                              str(self.max_length))

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self.encoder.lock:
            batch = self.encoder.batch(texts, self.max_length)
            states = self.last_layer(batch)
            self.encoder.forward_calls += 1
        return pool(states, batch["attention_mask"], self.pooling)
