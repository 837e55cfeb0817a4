"""Premises longer than the NLI model reads: split into windows of whole sentences, the best window wins.

A cross-encoder reads at most `max_length` tokens of premise and hypothesis together; cutting
the premise there would silently drop whatever the response says last. Instead a long premise
is split at sentence ends into windows that each fit beside the hypothesis, consecutive windows
sharing one sentence (so a fact split across a boundary is seen whole once), and the pair scores
as its window with the highest P(entail) − P(contradict): the hypothesis holds if some part of
the premise supports it. A sentence longer than a window on its own is cut into token slices.
"""

from __future__ import annotations

import re
from collections.abc import Callable

SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")
"""Where a sentence ends: Latin and Chinese full stops, question and exclamation marks, semicolons."""
SPECIAL_TOKENS = 4
"""Room for [CLS], the separators and [EOS] of a pair template."""


def sentences(text: str) -> list[str]:
    """`text` split after each sentence end; empty pieces dropped."""
    return [piece for piece in SENTENCE_END.split(text) if piece.strip()]


def premise_windows(premise: str, hypothesis: str, max_length: int, count: Callable[[str], int],
                    cut: Callable[[str, int], list[str]]) -> list[str]:
    """The windows of `premise` to pair with `hypothesis` (just `[premise]` when the pair fits).

    `count(text)` is the text's token count; `cut(text, n)` splits it into pieces of at most n tokens.
    """
    budget = max_length - count(hypothesis) - SPECIAL_TOKENS
    if budget < 16 or count(premise) <= budget:
        return [premise]  # it fits; or the hypothesis alone nearly fills the model (truncation decides)
    pieces: list[str] = []
    for sentence in sentences(premise):
        pieces += [sentence] if count(sentence) <= budget else cut(sentence, budget)
    windows: list[str] = []
    current: list[str] = []
    for piece in pieces:
        if current and count(" ".join([*current, piece])) > budget:
            windows.append(" ".join(current))
            overlap = current[-1]
            current = [overlap] if count(f"{overlap} {piece}") <= budget else []
        current.append(piece)
    if current:
        windows.append(" ".join(current))
    return windows


def char_slices(text: str, n: int) -> list[str]:
    """`text` in pieces of at most `n` characters: the `cut` of a model whose windows are counted in characters."""
    return [text[i:i + n] for i in range(0, len(text), n)]
