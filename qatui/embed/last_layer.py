"""What runs an encoder's last layer for sentence vectors: ONNX Runtime over a checked copy, or torch.

The exported graph is the encoder's last hidden state (B, T, H) from the tokenizer's inputs,
with dynamic batch and sequence axes; pooling stays here in numpy (`pool`), so both runtimes
pool the same way. The copy is kept only when its pooled unit vectors on `PROBE_TEXTS`, in
batches of other shapes than the traced one, match torch's within `qatui.onnx.export.TOLERANCE`
(`qatui.onnx` makes, checks and caches it, as for the NLI cross-encoder). One `LastLayer` per
encoder and runtime, kept on the encoder, so every embedder over a model shares one session.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from qatui.embed.base import EmbedderError, normalise
from qatui.onnx.export import Export, ExportRefused, Graph
from qatui.onnx.pick import pick_forward
from qatui.onnx.runtime import RUNTIMES, Batch, OnnxForward, TorchForward

if TYPE_CHECKING:
    from qatui.embed.encoder import TokenEncoder

log = logging.getLogger(__name__)

PROBE_TEXTS = [
    "The Eiffel Tower was finished in 1889.",
    "A man is playing a guitar on a small stage while the crowd sings along.",
    "Water boils.",
    "Research shows that people often travel by train between the museum and the north station in winter.",
]
"""The export traces the first two (batch 2); its check runs all four and the third alone (other shapes)."""


def pool(states: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Sentence vectors (B, H) from token states (B, T, H) and the attention mask (B, T), as sentence-transformers
    pools them.

    "mean" averages the kept tokens ([CLS] and [SEP] included), "cls" takes the first token,
    "max" the largest value per dimension over kept tokens, "lasttoken" the last kept token.
    """
    keep = mask.astype(bool)
    if mode == "cls":
        return states[:, 0]
    if mode == "max":
        return np.where(keep[..., None], states, np.finfo(states.dtype).min).max(axis=1)
    if mode == "lasttoken":
        return states[np.arange(states.shape[0]), keep.sum(axis=1) - 1]
    weights = keep[..., None].astype(states.dtype)
    return (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))


class LastLayer:
    """The last hidden state of padded batches, on ONNX Runtime or torch (`[models] embedder_runtime`).

    "auto" runs ONNX Runtime when the model exports and agrees with torch, else torch, recording
    why in `runtime_note`; "onnx" insists (an `EmbedderError` with the reason); "torch" never exports.
    """

    def __init__(self, encoder: TokenEncoder, runtime: str) -> None:
        if runtime not in RUNTIMES:
            raise EmbedderError(f"unknown embedder runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
        self.encoder = encoder
        cpu = encoder._torch.device("cpu")
        try:
            picked = pick_forward(runtime, "cpu", self._graph,
                                  lambda: TorchForward(encoder.model, cpu, "last_hidden_state"))
        except ExportRefused as refused:
            raise EmbedderError(f"embedding model {encoder.spec!r} cannot run on ONNX Runtime: {refused}; "
                                "set [models] embedder_runtime = \"auto\" or \"torch\"") from None
        self.forward: TorchForward | OnnxForward = picked.forward
        self.export: Export | None = picked.export
        self.runtime_note: str | None = picked.note
        if picked.note:
            log.info("embedding model %r runs on %s", encoder.spec, picked.note)

    @property
    def runtime(self) -> str:
        """"onnx" or "torch": what runs the forward pass."""
        return self.forward.name

    def __call__(self, batch: Batch) -> np.ndarray:
        """The last hidden state (B, T, H), float32, of one padded batch."""
        return self.forward(batch)

    def _graph(self) -> Graph:
        """The last hidden state's graph, traced and checked on `PROBE_TEXTS`, compared as pooled unit vectors."""
        encoder, mode = self.encoder, self.encoder.folder.pooling
        return Graph(folder=encoder.folder.transformer_dir, output="last_hidden_state",
                     sample=encoder.batch(PROBE_TEXTS[:2]),
                     probes=(encoder.batch(PROBE_TEXTS), encoder.batch(PROBE_TEXTS[2:3])),
                     load_model=lambda: encoder.torch_model(attention="eager"),
                     outcome=lambda states, batch: normalise(pool(states, batch["attention_mask"], mode)),
                     compared="sentence vectors")


def last_layer(encoder: TokenEncoder, runtime: str = "auto") -> LastLayer:
    """The encoder's `LastLayer` for `runtime`, built once and kept on the encoder."""
    with encoder.lock:
        found = encoder.last_layers.get(runtime)
        if found is None:
            found = encoder.last_layers[runtime] = LastLayer(encoder, runtime)
        return found
