"""RAGAS's options: one model per judge variant, so each variant accepts only the settings it uses."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from qatui.judges.base import JudgeOptions

METRICS = ("faithfulness", "answer_relevance", "context_relevance")
Choice = Literal["auto", "faithfulness", "answer_relevance", "context_relevance", "mean"]


class RagasMetricOptions(JudgeOptions):
    """Settings of the fixed-metric variants without generated questions."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""


class RagasAnswerRelevanceOptions(RagasMetricOptions):
    """Settings of answer relevance alone: the fixed-metric ones plus the questions asked per answer."""

    n_questions: int = Field(3, ge=1, le=10)
    """Answer relevance: questions generated from each answer (the paper's n)."""


class RagasOptions(RagasAnswerRelevanceOptions):
    """RAGAS settings (see the package docstring)."""

    metric: Choice = "auto"
    """Which metric ranks: auto (pair type / contexts / mean), faithfulness, answer_relevance, context_relevance, mean."""
