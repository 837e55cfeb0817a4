"""Sentence vectors from a transformers encoder, pooled as sentence-transformers pools them.

The pooling mode comes from the folder's `1_Pooling/config.json` (via `modules.json`);
a plain transformers folder without one is mean-pooled. Mean pooling averages every
token the attention mask keeps, [CLS] and [SEP] included, which is what
sentence-transformers does for all-MiniLM-L6-v2; the vector is then L2-normalised.
Inputs are cut at the folder's `max_seq_length` (256 for all-MiniLM-L6-v2), else at
the model's limit.
"""

from __future__ import annotations

import numpy as np

from qatui.embed.base import Embedder
from qatui.embed.encoder import TokenEncoder


class TransformerEmbedder(Embedder):
    """An `Embedder` over a `TokenEncoder`'s last layer."""

    def __init__(self, encoder: TokenEncoder, *, name: str | None = None, batch_size: int = 32) -> None:
        super().__init__(name or encoder.spec, encoder.dim, batch_size=batch_size)
        self.encoder = encoder
        self.pooling = encoder.folder.pooling
        self.max_length = encoder.folder.max_seq_length or encoder.max_length

    def identity(self) -> str:
        """The model folder's files, the pooling and the length cut: what the vectors depend on."""
        from qatui.store.model_outputs import files_identity

        return files_identity(self.encoder.folder.transformer_dir, "sentence vectors", self.name, self.pooling,
                              str(self.max_length))

    def _encode(self, texts: list[str]) -> np.ndarray:
        torch = self.encoder._torch
        batch = self.encoder.forward(texts, max_length=self.max_length)
        states, mask = batch.states, batch.attention
        if self.pooling == "cls":
            pooled = states[:, 0]
        elif self.pooling == "max":
            pooled = states.masked_fill(~mask.unsqueeze(-1), torch.finfo(states.dtype).min).amax(dim=1)
        elif self.pooling == "lasttoken":
            last = mask.long().sum(dim=1) - 1
            pooled = states[torch.arange(states.shape[0]), last]
        else:
            weights = mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        return pooled.float().numpy()
