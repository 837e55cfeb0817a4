"""Sentence splitting for RAGAS: contexts to choose from, and answers the backbone gave no statements for."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _segmenter(language: str) -> Any:
    """pysbd's segmenter for `language` (Chinese or English rules), built once."""
    import pysbd

    return pysbd.Segmenter(language="zh" if language == "zh" else "en", clean=False)


def split_sentences(text: str, language: str = "en") -> list[str]:
    """Sentences of `text`: each line on its own (headings, list entries), then pysbd within a line.

    Pieces without a letter or digit (rules, stray punctuation) are dropped.
    """
    sentences = []
    for line in text.splitlines():
        if not line.strip():
            continue
        for piece in _segmenter(language).segment(line):
            piece = piece.strip()
            if piece and any(ch.isalnum() for ch in piece):
                sentences.append(piece)
    return sentences
