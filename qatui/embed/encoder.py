"""A transformers encoder that yields contextual token vectors at a chosen layer.

Shared by the sentence embedder (pooling the last layer, on ONNX Runtime or torch:
`last_layer`) and the BERTScore judge (token vectors at any layer, special tokens dropped,
on torch). One instance per model per process (`load_encoder`); a lock serialises tokenizer
and forward, because a fast tokenizer must not be driven from two threads at once. The
tokenizer and config load at once; the torch model only when something runs on torch, so an
embedder on ONNX Runtime never builds it. torch and transformers are imported here, on first
load only.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from qatui import hub
from qatui.embed.base import EmbedderError
from qatui.embed.locate import ModelFolder, canonical_spec, locate

if TYPE_CHECKING:
    import torch

_SANE_MAX_LENGTH = 100_000
"""Tokenizers without a known limit report model_max_length as a huge sentinel."""


@dataclass
class TokenBatch:
    """One forward pass: hidden states (B, T, H), attention mask and special-token mask (B, T)."""

    states: torch.Tensor
    attention: torch.Tensor
    special: torch.Tensor


def resolve_layer(layer: int | None, num_layers: int) -> int:
    """None → the last layer; negative counts from the end (-1 = last); 0 is the embedding layer."""
    if layer is None:
        return num_layers
    resolved = num_layers + 1 + layer if layer < 0 else layer
    if not 0 <= resolved <= num_layers:
        raise EmbedderError(f"layer {layer} is out of range: the model has layers 0 (embeddings) to {num_layers}")
    return resolved


class TokenEncoder:
    """Tokenizer and config from one local folder at once; the AutoModel (eval, float32, CPU) on first use."""

    def __init__(self, folder: ModelFolder) -> None:
        try:
            import torch

            hub.import_transformers()
            from transformers import AutoConfig, AutoTokenizer
        except ImportError as e:  # pragma: no cover - both are qatui dependencies
            raise EmbedderError(f"loading {folder.spec!r} needs torch and transformers: {e}") from None
        self.folder = folder
        self.spec = folder.spec
        self._torch = torch
        self._model: Any = None
        path = str(folder.transformer_dir)
        with hub.quiet_loading():
            try:
                self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
                config = AutoConfig.from_pretrained(path, local_files_only=True)
            except (OSError, ValueError) as e:
                raise EmbedderError(f"embedding model {folder.spec!r} in {path} could not be loaded: {e}") from None
        self.num_layers: int = int(getattr(config, "num_hidden_layers", 0) or 0)
        self.dim: int = int(getattr(config, "hidden_size", 0) or 0)
        limits = [n for n in (self.tokenizer.model_max_length, getattr(config, "max_position_embeddings", None))
                  if isinstance(n, int) and 0 < n < _SANE_MAX_LENGTH]
        self.max_length: int = min(limits) if limits else 512
        self.forward_calls = 0
        self.lock = threading.RLock()
        self.last_layers: dict[str, Any] = {}
        """What runs the last layer for sentence vectors, by `[models] embedder_runtime` (`last_layer`)."""

    @property
    def model(self) -> Any:
        """The torch model (float32, eval, CPU), loaded on first use; `EmbedderError` when it cannot be."""
        with self.lock:
            if self._model is None:
                self._model = self.torch_model()
            return self._model

    def torch_model(self, attention: str | None = None) -> Any:
        """A new float32 torch model in eval mode on the CPU; `attention` ("eager") picks its attention code."""
        from transformers import AutoModel

        path = str(self.folder.transformer_dir)
        extra = {"attn_implementation": attention} if attention else {}
        with hub.quiet_loading():
            try:
                return AutoModel.from_pretrained(path, local_files_only=True, **extra).float().eval()
            except (OSError, ValueError) as e:
                raise EmbedderError(f"embedding model {self.spec!r} in {path} could not be loaded: {e}") from None

    def __repr__(self) -> str:
        return f"TokenEncoder({self.spec!r}, layers={self.num_layers}, dim={self.dim})"

    def batch(self, texts: Sequence[str], max_length: int | None = None) -> dict[str, np.ndarray]:
        """One padded batch as int64 numpy arrays by input name (input_ids, attention_mask, token_type_ids)."""
        limit = min(max_length or self.max_length, self.max_length)
        with self.lock:
            encoded = self.tokenizer(list(texts), padding=True, truncation=True, max_length=limit, return_tensors="np")
        return {key: np.asarray(value, dtype=np.int64) for key, value in encoded.items()}

    def forward(self, texts: Sequence[str], *, layer: int | None = None, max_length: int | None = None) -> TokenBatch:
        """One padded batch through the torch model; `layer` as in `resolve_layer`."""
        torch = self._torch
        target = resolve_layer(layer, self.num_layers)
        limit = min(max_length or self.max_length, self.max_length)
        with self.lock, torch.inference_mode():
            encoded = self.tokenizer(
                list(texts), padding=True, truncation=True, max_length=limit,
                return_tensors="pt", return_special_tokens_mask=True,
            )
            special = encoded.pop("special_tokens_mask").bool()
            hidden = target != self.num_layers
            output = self.model(**encoded, output_hidden_states=hidden)
            self.forward_calls += 1
            states = output.hidden_states[target] if hidden else output.last_hidden_state
        return TokenBatch(states=states, attention=encoded["attention_mask"].bool(), special=special)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text with special tokens and no truncation (to tell what gets cut)."""
        with self.lock:
            ids = self.tokenizer(list(texts), truncation=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]

    def token_vectors(self, texts: Sequence[str], *, layer: int | None = None, batch_size: int = 32) -> list[torch.Tensor]:
        """Unit-norm contextual vectors (n_tokens, H) of each text, special and padding tokens
        dropped, in the order of `texts`; batches are formed longest first to pad little."""
        torch = self._torch
        texts = list(texts)
        result: list[torch.Tensor | None] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        for start in range(0, len(order), max(1, batch_size)):
            index = order[start : start + batch_size]
            batch = self.forward([texts[i] for i in index], layer=layer)
            keep = batch.attention & ~batch.special
            for row, i in enumerate(index):
                vectors = batch.states[row][keep[row]]
                result[i] = torch.nn.functional.normalize(vectors, dim=-1)
        return result  # type: ignore[return-value]


_ENCODERS: dict[str, TokenEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def load_encoder(spec: str) -> TokenEncoder:
    """The token encoder for `spec` (see `qatui.embed.locate`), loaded once per process."""
    key = canonical_spec(spec)
    with _ENCODERS_LOCK:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = _ENCODERS[key] = TokenEncoder(locate(key))
        return encoder


def clear_encoders() -> None:
    """Forget every loaded encoder (tests; a long-lived process that swaps models)."""
    with _ENCODERS_LOCK:
        _ENCODERS.clear()
