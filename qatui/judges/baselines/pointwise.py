"""Pointwise baseline (MinosEval's "Pointwise" row): the backbone scores each response on its own.

One call per response shows the question, the reference answer(s) when the item has any
(the prompt's "objectivity" is judged against them; without one the judge still runs) and
the response, and asks for one overall score from 0.00 to 10.00 with two decimals, weighing
fluency, accuracy, truthfulness, objectivity and redundancy, written `[[8.12]]` (MinosEval
asks for two decimals so that scores rarely tie). The answer is read strictly by
`qatui.judges.brackets` (the last `[[...]]`, a number 0-10 with at most two decimals; one
re-ask when it cannot be read); each read is a `PointScored` event with the raw answer.
A response whose score cannot be read fails the item: it is never scored on the others.

Ranking: by score, equal scores in presentation order (the engine's tie rule).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field, WithJsonSchema

from qatui.events import Event, Judgement, PointScored
from qatui.judges.base import Judge, JudgeOptions, Needs, as_they_finish
from qatui.judges.brackets import ask_bracketed, read_score, score_pattern
from qatui.judges.prompts import guarded, load_prompts, reference_line
from qatui.llm.fence import Fence

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView, Response

MAX_TOKENS = 64
"""Room for `{"score": "[[8.12]]"}` with some slack; the score is all that is asked for."""


class PointScore(BaseModel):
    """The backbone's answer: the score as `[[8.12]]` (schema: the pattern constrains decoding)."""

    score: Annotated[str, WithJsonSchema({"type": "string", "pattern": score_pattern()})]


class PointwiseOptions(JudgeOptions):
    """Pointwise baseline settings."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""


def score_messages(section: dict, view: ItemView, answer: str) -> list[dict[str, str]]:
    """The chat scoring one response (the reference line only when the item has one)."""
    fence = Fence(view.question, answer, *view.references)
    user = section["user"].format(question=view.question, reference=reference_line(section, view.references, fence),
                                  answer=fence("Answer", answer))
    return guarded([{"role": "system", "content": section["system"]}, {"role": "user", "content": user}], view.language)


class PointwiseJudge(Judge):
    """MinosEval's pointwise baseline: each response scored 0.00-10.00 on five qualities, ranked by score."""

    name = "pointwise"
    reproduces = ("minoseval:pointwise",)
    summary = "Pointwise (MinosEval baseline): each response scored 0.00-10.00 as [[8.12]]; ranked by score"
    needs = Needs()
    Options = PointwiseOptions
    uses_llm = True
    prompt_methods = ("pointwise", "fence")
    answer_schemas = (PointScore,)

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """One call per response (a re-ask of an unreadable answer is not counted)."""
        return len(item.candidates), len(item.candidates)

    async def _score(self, view: ItemView, response: Response, section: dict) -> PointScored:
        read = await ask_bracketed(self.resources.llm, score_messages(section, view, response.text), read_score,
                                   purpose="pointwise", schema=PointScore, reask=section["reask"],
                                   temperature=self.options.temperature, max_tokens=MAX_TOKENS)
        return PointScored(response=response.label, score=read.value, raw=read.raw, reasked=read.reasked)

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Score every response 0.00–10.00, one call each."""
        section = load_prompts("pointwise", view.language)["score"]
        scored: dict[str, float] = {}
        async for event in as_they_finish(self._score(view, r, section) for r in view.responses):
            scored[event.response] = event.score
            yield event
        yield Judgement(scores={label: scored[label] for label in view.labels})
