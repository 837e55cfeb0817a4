"""Language of an item (the dataset's word when given, else a CJK-character count), and how long a text is in it.

A response's length has one rule, here, for every figure that reads it (the length baseline's
scores, the length-bias figure's "longer"): words for languages written with spaces, characters
(whitespace left out) for Chinese, Japanese and Korean, and for Thai, Lao, Khmer and Burmese,
which have no spaces between words.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal, Protocol

UNSPACED_LANGUAGES = ("zh", "ja", "ko", "th", "lo", "km", "my")
"""Languages counted in characters under `unit = "auto"`."""

LengthUnit = Literal["words", "characters"]


class HasLanguage(Protocol):
    """What `item_language` reads of an item (an `Item` has all three): no import of the model needed."""

    language: str | None
    question: str
    references: list[str]


UNDETERMINED = "und"
"""BCP 47's code for a language not determined: what `detect_language` says of text mostly in a script other than
Latin and those it names (Cyrillic, Arabic, Devanagari, ...). Not English: no English-only model reads it."""


_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
_HANGUL = re.compile("[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_HAN = re.compile("[\u4e00-\u9fff\u3400-\u4dbf]")
_SOUTHEAST_ASIAN = (("th", re.compile("[\u0e00-\u0e7f]")), ("lo", re.compile("[\u0e80-\u0eff]")),
                    ("km", re.compile("[\u1780-\u17ff]")), ("my", re.compile("[\u1000-\u109f]")))
"""The scripts written without spaces between words that name their language: Thai, Lao, Khmer, Burmese."""
_LATIN = re.compile("[\u0000-\u024f\u1e00-\u1eff]")


def _share(script: re.Pattern[str], letters: str) -> int:
    """How many of `letters` are in `script` (counted by the regex engine: a Python loop per character cost 60 µs
    an item, which every run pays for every item when it records their languages)."""
    return len(script.findall(letters))


def detect_language(text: str) -> str:
    """The language of untagged text, from its letters' scripts: 'ja' when a tenth of them are kana, 'ko' when a
    fifth are Hangul, 'zh' when a fifth are CJK ideographs, 'th', 'lo', 'km' or 'my' when a fifth are Thai, Lao,
    Khmer or Burmese letters, `UNDETERMINED` when most are in another non-Latin script, else 'en' (English, and
    any language written in Latin letters, which scripts cannot tell apart)."""
    letters = "".join(filter(str.isalpha, text))
    if not letters:
        return "en"
    n = len(letters)
    if _share(_KANA, letters) >= 0.1 * n:
        return "ja"
    if _share(_HANGUL, letters) >= 0.2 * n:
        return "ko"
    if _share(_HAN, letters) >= 0.2 * n:
        return "zh"
    for code, script in _SOUTHEAST_ASIAN:
        if _share(script, letters) >= 0.2 * n:
            return code
    return "en" if _share(_LATIN, letters) * 2 >= n else UNDETERMINED


def language_code(tag: str) -> str:
    """The primary language of a BCP 47 tag or a locale name, lowercased: "zh-CN", "zh_Hans" and "ZH" are "zh".

    Every rule keyed by language (the tokenizers of BLEU and ROUGE-L, the NLI model, the prompt's
    language, how length is counted) reads this code, so a tag's region or script never sends a
    Chinese item down the English path ("" when the tag holds no language)."""
    return tag.strip().replace("_", "-").split("-")[0].lower()


def item_language(item: HasLanguage) -> str:
    """The item's language code (`language_code` of the dataset's tag), detected from its question and references
    when the dataset gives none."""
    if item.language and (code := language_code(item.language)):
        return code
    return detect_language(item.question + " " + " ".join(item.references[:1]))


class HasIdAndLanguage(HasLanguage, Protocol):
    """An item as `language_reading` reads it: its language's fields and its id."""

    id: str


def language_reading(items: Iterable[HasIdAndLanguage]) -> dict[str, Any]:
    """How the items' languages were read, as a session records it: the count per language code, and a digest of
    every (id, language) pair.

    Every rule keyed by language follows this reading, so two runs of one judge on the same items gave their
    verdicts under the same rules only if they read the items' languages alike: a session judged before a
    change of `item_language` (a tag's region, a script newly told apart) is not reused for a table's row
    (`report.table.find_reusable`), where its figures would be taken as today's."""
    pairs = [(item.id, item_language(item)) for item in items]
    digest = hashlib.sha256("\n".join(f"{i}\t{code}" for i, code in pairs).encode("utf-8")).hexdigest()[:16]
    return {"counts": dict(sorted(Counter(code for _, code in pairs).items())), "digest": digest}


def length_unit(language: str, unit: str = "auto") -> LengthUnit:
    """The unit a text of `language` is counted in: `unit` itself when "words" or "characters"; under "auto",
    characters for `UNSPACED_LANGUAGES` and words otherwise."""
    if unit in ("words", "characters"):
        return unit  # type: ignore[return-value]
    return "characters" if language_code(language) in UNSPACED_LANGUAGES else "words"


def text_length(text: str, unit: LengthUnit) -> int:
    """Words (whitespace-separated) or characters (whitespace left out) in `text`."""
    return len(text.split()) if unit == "words" else sum(1 for ch in text if not ch.isspace())
