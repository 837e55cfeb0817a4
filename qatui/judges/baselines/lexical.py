"""Lexical baselines with no LLM: sentence BLEU (sacrebleu) and ROUGE-L (rouge-score).

Each response is scored against every reference; the best reference counts (sacrebleu
takes all references at once, as BLEU defines; ROUGE-L keeps the maximum F-measure).
The item's language (`qatui.data.language.item_language`) picks the tokenizers:
- Chinese: jieba's words for ROUGE-L, sacrebleu's `zh` tokenizer for BLEU.
- Japanese, Thai, Lao, Khmer and Burmese (no spaces between words): characters for both.
- Any other language: words. ROUGE-L's are rouge-score's own (lowercased runs of letters
  and digits, Porter-stemmed for English) but read in any script: rouge-score's tokenizer
  keeps only a-z and 0-9, so it scored Russian or Korean text 0 and cut "café" to "caf".
  English text in ASCII is tokenized exactly as rouge-score does. BLEU's is sacrebleu's `13a`.
Ranking and pairwise preference follow `qatui.judges.ranking`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable
from functools import cache
from typing import TYPE_CHECKING

from pydantic import Field

from qatui.events import Event, Judgement
from qatui.judges.base import MAX_TIE_DIGITS, Judge, JudgeOptions, Needs

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView

_WORDLIKE = re.compile(r"\w", re.UNICODE)


@cache
def _bleu(language: str):
    """One sacrebleu BLEU scorer per language (building one costs more than scoring)."""
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=True, tokenize="zh" if language == "zh" else
                "char" if language in CHARACTER_TOKENS else "13a")


class _JiebaTokenizer:
    """rouge-score tokenizer for Chinese: jieba words, punctuation and spaces dropped."""

    def tokenize(self, text: str) -> list[str]:
        """Chinese text segmented into words by jieba."""
        import jieba

        jieba.setLogLevel(logging.WARNING)
        return [w.lower() for w in jieba.lcut(text) if _WORDLIKE.search(w)]


CHARACTER_TOKENS = ("ja", "th", "lo", "km", "my")
"""Languages written without spaces between words, and without a word segmenter here (Chinese has jieba): their
BLEU and ROUGE-L count characters."""


class _CharacterTokenizer:
    """rouge-score tokenizer for `CHARACTER_TOKENS`: each letter or digit a token (no spaces between words)."""

    def tokenize(self, text: str) -> list[str]:
        """The letters and digits of `text`, lowercased, one token each."""
        return [ch for ch in text.lower() if ch.isalnum()]


_LETTERS_AND_DIGITS = re.compile(r"[^\W_]+")


class _WordTokenizer:
    """rouge-score's own tokenizer read in any script: lowercased runs of letters and digits, the English ones
    Porter-stemmed as rouge-score stems them (tokens over 3 characters)."""

    def __init__(self, stem: bool) -> None:
        from nltk.stem import porter

        self.stemmer = porter.PorterStemmer() if stem else None

    def tokenize(self, text: str) -> list[str]:
        """`text`'s words; for ASCII text the very tokens of rouge-score's default tokenizer."""
        words = _LETTERS_AND_DIGITS.findall(text.lower())
        if self.stemmer is None:
            return words
        return [self.stemmer.stem(w) if len(w) > 3 else w for w in words]


@cache
def _rouge(language: str):
    """One ROUGE-L scorer per language (rouge-score's default tokenizer keeps only a-z and 0-9)."""
    from rouge_score import rouge_scorer

    if language == "zh":
        tokenizer: object = _JiebaTokenizer()
    elif language in CHARACTER_TOKENS:
        tokenizer = _CharacterTokenizer()
    else:
        tokenizer = _WordTokenizer(stem=language == "en")
    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=tokenizer)


def bleu_score(response: str, references: list[str], language: str) -> float:
    """Sentence BLEU in [0, 1] against all references at once."""
    return _bleu(language).sentence_score(response, references).score / 100.0


def rouge_l_score(response: str, references: list[str], language: str) -> float:
    """ROUGE-L F-measure in [0, 1], the best over the references."""
    scorer = _rouge(language)
    return max(scorer.score(ref, response)["rougeL"].fmeasure for ref in references)


class LexicalOptions(JudgeOptions):
    """Options of the lexical judges: CALF's tie rule by default."""

    tie_digits: int = Field(2, ge=0, le=MAX_TIE_DIGITS)
    """Scores equal once rounded to this many digits are a tie (2, as CALF rounds its lexical baselines)."""


class _LexicalJudge(Judge):
    """Scores every response against the references in a worker thread."""

    needs = Needs(reference=True)
    Options = LexicalOptions
    metric: Callable[[str, list[str], str], float]

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Score every response against the references in a worker thread."""
        metric = type(self).metric

        def score_all() -> dict[str, float]:
            return {r.label: metric(r.text, view.references, view.language) for r in view.responses}

        scores = await asyncio.to_thread(score_all)
        yield Judgement(scores=scores, details={"language": view.language, "n_references": len(view.references)})


class BleuJudge(_LexicalJudge):
    """Ranks responses by sentence BLEU (sacrebleu) against the references."""

    name = "bleu"
    reproduces = ("calf:bleu",)
    summary = "Sentence BLEU against the references (sacrebleu); no LLM"
    metric = staticmethod(bleu_score)


class RougeLJudge(_LexicalJudge):
    """Ranks responses by ROUGE-L F1 (rouge-score) against the references."""

    name = "rouge-l"
    reproduces = ("calf:rouge-l",)
    summary = "ROUGE-L F-measure against the best reference (rouge-score, jieba for Chinese); no LLM"
    metric = staticmethod(rouge_l_score)
    revision = 2
    """2 (2026-11-28): words are read in any script (`_WordTokenizer`), where rouge-score kept only a-z and 0-9, so
    an English answer with an accented letter ("café") scores otherwise than under revision 1."""
