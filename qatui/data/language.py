"""Language of an item (the dataset's word when given, else a CJK-character count), and how long a text is in it.

A response's length has one rule, here, for every figure that reads it (the length baseline's
scores, the length-bias figure's "longer"): words for languages written with spaces, characters
(whitespace left out) for Chinese, Japanese and Korean, which have no spaces between words.
"""

from __future__ import annotations

from typing import Literal, Protocol

UNSPACED_LANGUAGES = ("zh", "ja", "ko")
"""Languages counted in characters under `unit = "auto"` (a region or script suffix, zh-CN, is read as zh)."""

LengthUnit = Literal["words", "characters"]


class HasLanguage(Protocol):
    """What `item_language` reads of an item (an `Item` has all three): no import of the model needed."""

    language: str | None
    question: str
    references: list[str]


def detect_language(text: str) -> str:
    """'zh' when at least a fifth of the letters are CJK ideographs, else 'en'."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "en"
    cjk = sum(1 for ch in letters if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf")
    return "zh" if cjk / len(letters) >= 0.2 else "en"


def item_language(item: HasLanguage) -> str:
    """The item's language code, detected from its question and references when absent."""
    if item.language:
        return item.language
    return detect_language(item.question + " " + " ".join(item.references[:1]))


def length_unit(language: str, unit: str = "auto") -> LengthUnit:
    """The unit a text of `language` is counted in: `unit` itself when "words" or "characters"; under "auto",
    characters for `UNSPACED_LANGUAGES` (any region suffix) and words otherwise."""
    if unit in ("words", "characters"):
        return unit  # type: ignore[return-value]
    return "characters" if language.split("-")[0].split("_")[0].lower() in UNSPACED_LANGUAGES else "words"


def text_length(text: str, unit: LengthUnit) -> int:
    """Words (whitespace-separated) or characters (whitespace left out) in `text`."""
    return len(text.split()) if unit == "words" else sum(1 for ch in text if not ch.isspace())
