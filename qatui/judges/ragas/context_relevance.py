"""RAGAS context relevance: a context split into sentences, the backbone picking those the question needs.

Score = picked / all. Picks come back as sentence numbers or copied sentences; both are mapped
back, and numbers out of range or text that matches no sentence are ignored, never guessed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import AsyncIterator, Callable
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, WithJsonSchema, create_model

from qatui.events import ContextSentencesSelected, Event
from qatui.judges.prompts import chat, guarded, numbered_lines
from qatui.judges.ragas.sentences import split_sentences
from qatui.llm.errors import ParseError

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView
    from qatui.judges.resources import Resources

ITEM_CONTEXT = "context"
"""The key of the item's own context in `details["failures"]` (responses use their labels)."""


@cache
def selection_schema(n: int) -> type[BaseModel]:
    """`relevant`: advertised as sentence numbers 1..n (an enum, which llama.cpp's grammar supports);
    validation takes anything in a list, so copied sentences and stray numbers reach `map_selection`."""
    advertised = WithJsonSchema({"type": "array", "items": {"enum": list(range(1, n + 1))}, "maxItems": n})
    return create_model("SentenceSelection", relevant=(Annotated[list[Any], advertised], ...))


def _norm(text: str) -> str:
    """Casefolded, spaces collapsed, brackets / quotes / closing punctuation trimmed, for matching."""
    flat = " ".join(text.casefold().split())
    return flat.strip(" \"'“”‘’「」[]()").rstrip(".。!！?？;；,，").strip()


_NUMBER = re.compile(r"^\s*\[?\s*(\d+)\s*\]?\s*[.)]?\s*$")
_LEADING_NUMBER = re.compile(r"^\s*\[\s*(\d+)\s*\]\s*")


def map_selection(raw: list[Any], sentences: list[str]) -> tuple[list[int], list[str]]:
    """0-based indexes of the picked sentences, and the entries that named none.

    An entry is a 1-based number (an int, or a string like "3" / "[3]"), or a copied sentence:
    matched exactly (ignoring case, spacing, quotes and closing punctuation), else every
    sentence it contains (several copied as one), else the sentence containing it, else the
    closest sentence by difflib ratio >= 0.85. Numbers out of range and unmatched text are
    ignored, never guessed; repeats count once.
    """
    normed = [_norm(s) for s in sentences]
    picked: set[int] = set()
    ignored: list[str] = []
    for entry in raw:
        found: list[int] = []
        if isinstance(entry, bool):
            pass
        elif isinstance(entry, int | float) and float(entry).is_integer():
            if 1 <= int(entry) <= len(sentences):
                found = [int(entry) - 1]
        elif isinstance(entry, str):
            if (number := _NUMBER.match(entry)) is not None:
                k = int(number[1])
                found = [k - 1] if 1 <= k <= len(sentences) else []
            else:
                found = _match_text(_norm(_LEADING_NUMBER.sub("", entry)), normed)
        if found:
            picked.update(found)
        elif not (isinstance(entry, str) and _is_nothing(entry)):
            ignored.append(str(entry)[:120])
    return sorted(picked), ignored


def _is_nothing(entry: str) -> bool:
    """The paper's "Insufficient Information" (or a blank): the model saying no sentence helps."""
    return not entry.strip() or _norm(entry) in ("insufficient information", "信息不足", "none")


def _match_text(text: str, normed: list[str]) -> list[int]:
    """The sentences a copied text names (see `map_selection`), by index; empty when it names none."""
    if len(text) < 3:
        return []
    exact = [i for i, s in enumerate(normed) if s == text]
    if exact:
        return exact[:1]
    inside = [i for i, s in enumerate(normed) if len(s) >= 3 and s in text]
    if inside:
        return inside
    around = [i for i, s in enumerate(normed) if text in s]
    if around:
        return around[:1]
    ratios = [difflib.SequenceMatcher(None, text, s).ratio() for s in normed]
    best = max(range(len(normed)), key=ratios.__getitem__, default=None)
    return [best] if best is not None and ratios[best] >= 0.85 else []


async def context_relevance(view: ItemView, key: str, context: str, prompts: dict, record: Callable[..., None],
                            extra: dict, *, resources: Resources, temperature: float | None,
                            ) -> AsyncIterator[Event]:
    """Score one context (a candidate's, or the item's own under ITEM_CONTEXT): `record("context_relevance", key, ...)`."""
    sentences = split_sentences(context, view.language)
    if not sentences:
        record("context_relevance", key, None, "the context has no sentence")
        return
    section = prompts["sentences"]
    numbered = numbered_lines(section["sentence_line"], sentences)
    try:
        result = await resources.llm.complete(
            guarded(chat(section, ("relevant",), {"sentences": "Context sentences"}, question=view.question,
                         sentences=numbered), view.language),
            purpose="sentences", schema=selection_schema(len(sentences)), temperature=temperature,
            max_tokens=16 + 6 * len(sentences))
    except ParseError as e:
        record("context_relevance", key, None, f"the sentence choice could not be read: {e.reason}")
        return
    relevant, ignored = map_selection(list(result.data.relevant), sentences)
    if ignored:
        extra.setdefault("ignored", {})[key] = ignored
    yield ContextSentencesSelected(response="" if key == ITEM_CONTEXT else key, sentences=sentences,
                                   relevant=relevant)
    record("context_relevance", key, len(relevant) / len(sentences))
