"""Language of an item: the dataset's word when given, else a CJK-character count."""

from __future__ import annotations

from typing import Protocol


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
