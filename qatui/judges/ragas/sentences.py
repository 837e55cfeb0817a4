"""Sentence splitting for RAGAS: contexts to choose from, and answers the backbone gave no statements for."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _segmenter(language: str) -> Any:
    """pysbd's segmenter for `language`: its own rules where pysbd has them (English rules cut German "ca." and
    "bzw." or Russian "г." and "т.е." into sentences of their own), else English rules; built once."""
    import pysbd
    from pysbd.languages import LANGUAGE_CODES

    return pysbd.Segmenter(language=language if language in LANGUAGE_CODES else "en", clean=False)


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
