"""The baselines' steps: pointwise scores, LINKAGE places, G-Eval ratings and steps (A / B choices are `PairJudged`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from qatui.events.base import Event

class PointScored(Event):
    """One response scored on its own: `score` on 0 to `top` (the pointwise baseline's 0.00-10.00, a judge file's
    scale), or a judge file's label `label` (its index the score); `raw` is the answer the score was read from."""

    type: Literal["point_scored"] = "point_scored"
    response: str
    score: float
    raw: str = ""
    reasked: bool = False
    top: float = 10.0
    """The scale's highest score (a judge file's `scale.max`), so a step reads `4.00 / 5`, never `/ 10`."""
    label: str = ""
    """The label a label judge chose (`score` is its index): shown instead of a number out of ten."""


class ReferenceListBuilt(Event):
    """LINKAGE: the references of falling quality (best first) a candidate is placed among, and where they came from."""

    type: Literal["reference_list_built"] = "reference_list_built"
    references: list[str]
    source: Literal["dataset", "llm"]


class CandidatePlaced(Event):
    """LINKAGE: the 1-based position the backbone gave one response in the reference list (score = -position)."""

    type: Literal["candidate_placed"] = "candidate_placed"
    response: str
    position: int
    raw: str = ""
    reasked: bool = False


class StepsWritten(Event):
    """G-Eval: the evaluation steps the backbone wrote for one dimension (its chain of thought)."""

    type: Literal["steps_written"] = "steps_written"
    dimension: str
    steps: str


class DimensionRated(Event):
    """G-Eval: one response rated 1-5 on one dimension, by log-probabilities or as the mean of samples.

    `raw` holds each answer read, `ratings` their readings; `probabilities` the digit weights when
    `method` is "logprobs"; `score` the probability-weighted or sample mean.
    """

    type: Literal["dimension_rated"] = "dimension_rated"
    response: str
    dimension: str
    method: Literal["logprobs", "samples"]
    raw: list[str] = Field(default_factory=list)
    ratings: list[int] = Field(default_factory=list)
    probabilities: dict[str, float] = Field(default_factory=dict)
    score: float
