"""Lexical baselines with no LLM: sentence BLEU (sacrebleu) and ROUGE-L (rouge-score).

Each response is scored against every reference; the best reference counts (sacrebleu
takes all references at once, as BLEU defines; ROUGE-L keeps the maximum F-measure).
Chinese text is segmented with jieba before ROUGE-L and tokenised with sacrebleu's `zh`
tokenizer for BLEU. Ranking and pairwise preference follow `qatui.judges.ranking`.
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

    return BLEU(effective_order=True, tokenize="zh" if language == "zh" else "13a")


class _JiebaTokenizer:
    """rouge-score tokenizer for Chinese: jieba words, punctuation and spaces dropped."""

    def tokenize(self, text: str) -> list[str]:
        """Chinese text segmented into words by jieba."""
        import jieba

        jieba.setLogLevel(logging.WARNING)
        return [w.lower() for w in jieba.lcut(text) if _WORDLIKE.search(w)]


@cache
def _rouge(language: str):
    """One ROUGE-L scorer per language; rouge-score's default tokenizer drops CJK text."""
    from rouge_score import rouge_scorer

    if language == "zh":
        return rouge_scorer.RougeScorer(["rougeL"], tokenizer=_JiebaTokenizer())
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


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
