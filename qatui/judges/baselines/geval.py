"""G-Eval (Liu et al.): evaluation steps per dimension, then a 1-5 form per response.

It rates each response alone, so it is neither CALF's G-Eval (a pairwise choice, five samples,
a majority vote) nor CheckEval's (G-Eval's own prompts on its own dimensions); the fidelity
ledger says what each paper's row did and which parts this judge shares.

1. **Steps** (auto chain of thought): one call per dimension writes the evaluation steps
   from the task and the dimension's criterion alone, at the backbone's temperature (0).
   The request is the same for every item, so after the first item it is answered by the
   call cache (it is still counted per item, like every call before the cache); items
   running at once wait for the first one's call. Each is a `StepsWritten` event.
2. **Rating**: per response and dimension, the form shows the task, the criterion, the
   steps, the question, the reference answer(s) and the context (a source text, retrieved
   passages) when the item has them, and the response,
   and asks for the score as `[[3]]` (1-5; a schema enum constrains decoding), read
   strictly (`qatui.judges.brackets`; one re-ask when unreadable, then the item fails).
   `method`:
   - `auto` (default): the first call asks for the top 5 log-probabilities per token
     (where the backbone's provider takes `logprobs`: never the embedded models). If they
     came back, the score is G-Eval's probability-weighted mean over the digits 1-5
     (`qatui.judges.baselines.geval_scoring`), one call; else that answer is the first of `samples`
     answers (seed + k for the k-th, at the judge's `temperature`, default 1.0) and the
     score is their mean.
   - `logprobs`: the weighted mean only (an item fails if the backbone gives none);
   - `samples`: always the mean of `samples` answers.
   Each (response, dimension) is a `DimensionRated` event: the raw answers, their readings,
   the digit probabilities, the method and the score.

Score of a response = mean over the dimensions. `details["dimension_scores"]` maps label ->
dimension -> score, so on rating data each gold dimension with a G-Eval dimension of the
same name is correlated with it. Default dimensions: CALF's G-Eval criteria for long-form
QA (accuracy, completeness, clarity and structure); `dimensions` picks others among those
`prompts/geval.*.toml` defines (relevance, fluency, coherence).
Calls per item: d (steps) + n·d (log-probabilities) to n·d·samples (sampled), n responses, d dimensions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, field_validator

from qatui.errors import JudgeError
from qatui.events import DimensionRated, Event, Judgement, StepsWritten
from qatui.judges.base import Judge, JudgeOptions, as_they_finish
from qatui.judges.baselines.geval_scoring import digit_probabilities, sample_mean, weighted_score
from qatui.judges.brackets import ask_bracketed, bracket_enum, read_whole
from qatui.judges.prompts import context_line, guarded, load_prompts, reference_line
from qatui.judges.schemas import one_of
from qatui.llm.fence import Fence

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView, Response

TOP_LOGPROBS = 5
STEPS_TOKENS = 300
RATING_TOKENS = 24


class Rating(BaseModel):
    """The form's answer: the score as [[1]]..[[5]] (schema: an enum constrains decoding; any string validates)."""

    score: Annotated[str, one_of(bracket_enum(range(1, 6)))]


def _names(value: Any) -> Any:
    return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else value


class GEvalOptions(JudgeOptions):
    """G-Eval settings."""

    dimensions: Annotated[str, BeforeValidator(_names)] = "accuracy,completeness,clarity"
    """Comma-separated, from prompts/geval.*.toml: accuracy, completeness, clarity, relevance, fluency, coherence."""
    method: Literal["auto", "logprobs", "samples"] = "auto"
    """auto: log-probability weighting where the backbone gives them, else the mean of samples."""
    samples: int = Field(default=5, ge=1, le=20)
    """Answers averaged per rating when there are no log-probabilities."""
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    """Temperature of the rating calls (the steps use the backbone's, 0)."""

    @field_validator("dimensions")
    @classmethod
    def _known_dimensions(cls, value: str) -> str:
        names = [n.strip().lower() for n in value.split(",") if n.strip()]
        known = list(load_prompts("geval", "en")["dimensions"])
        if not names:
            raise ValueError(f"name at least one dimension ({', '.join(known)})")
        if unknown := [n for n in names if n not in known]:
            raise ValueError(f"unknown dimension(s) {', '.join(unknown)}; known: {', '.join(known)}")
        if len(set(names)) < len(names):
            raise ValueError("a dimension is named twice")
        return ",".join(names)

    @property
    def names(self) -> list[str]:
        """The dimensions, in the order given."""
        return self.dimensions.split(",")


def display_name(criterion: str) -> str:
    """The criterion's own name, the words before its "(1-5)"."""
    return criterion.split("(")[0].split("（")[0].strip()


class GEvalJudge(Judge):
    """G-Eval: chain-of-thought steps per dimension, then 1-5 per response weighted by log-probabilities or sampled."""

    name = "geval"
    summary = "G-Eval: steps per dimension, then 1-5 per response (log-probability weighted, else mean of samples)"
    Options = GEvalOptions
    uses_llm = True
    prompt_methods = ("geval", "fence")
    answer_schemas = (Rating,)

    def __init__(self, options: GEvalOptions | None = None, resources: Any = None) -> None:
        super().__init__(options, resources)
        self._steps_locks: dict[tuple[str, str], asyncio.Lock] = {}

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """d steps calls, then per response and dimension 1 call (log-probabilities) to `samples` (sampled)."""
        d, ratings = len(self.options.names), len(item.candidates) * len(self.options.names)
        sampled = self.options.method == "samples" or self.options.method == "auto" and self._embedded_backbone()
        few = self.options.samples if sampled else 1
        most = 1 if self.options.method == "logprobs" else self.options.samples
        return d + ratings * few, d + ratings * most

    def _embedded_backbone(self) -> bool:
        """Whether the run's backbone is an embedded `local/` model, which never gives log-probabilities."""
        if self._resources is None:
            return False
        name = self._resources.backbone
        table = self._resources.config.backbones.get(name)
        return (table.model if table is not None else name).startswith("local/")

    async def _steps(self, dimension: str, prompts: dict, language: str) -> StepsWritten:
        section = prompts["steps"]
        user = section["user"].format(task=prompts["task"], criterion=prompts["dimensions"][dimension])
        lock = self._steps_locks.setdefault((language, dimension), asyncio.Lock())
        async with lock:  # items at once: one real call, the others answered by the cache
            result = await self.resources.llm.complete(
                [{"role": "system", "content": section["system"]}, {"role": "user", "content": user}],
                purpose="geval:steps", max_tokens=STEPS_TOKENS, cut_text_ok=True)  # steps, not a verdict
        return StepsWritten(dimension=dimension, steps=result.text.strip())

    async def _rate(self, view: ItemView, response: Response, steps: StepsWritten, prompts: dict) -> DimensionRated:
        section, criterion = prompts["rate"], prompts["dimensions"][steps.dimension]
        fence = Fence(view.question, response.text, *view.references, *view.context)
        user = section["user"].format(task=prompts["task"], criterion=criterion, steps=steps.steps,
                                      question=view.question, reference=reference_line(section, view.references, fence),
                                      context=context_line(section, view.context, fence),
                                      answer=fence("Answer", response.text), name=display_name(criterion))
        messages = guarded([{"role": "system", "content": section["system"]}, {"role": "user", "content": user}],
                           view.language)
        method = self.options.method

        async def ask(k: int, logprobs: int | None = None) -> Any:
            return await ask_bracketed(self.resources.llm, messages, lambda text: read_whole(text, 1, 5),
                                       purpose="geval:rate", schema=Rating, reask=section["reask"],
                                       temperature=self.options.temperature, max_tokens=RATING_TOKENS,
                                       logprobs=logprobs, sample=k)

        first = await ask(0, TOP_LOGPROBS if method != "samples" else None)
        found = getattr(first.result, "logprobs", None) if method != "samples" else None
        if (probabilities := digit_probabilities(found, verdict=first.value, field="score")) is not None:
            return DimensionRated(response=response.label, dimension=steps.dimension, method="logprobs",
                                  raw=[first.raw], ratings=[first.value], probabilities=probabilities,
                                  score=weighted_score(probabilities))
        if method == "logprobs":
            raise JudgeError(f"geval: method = logprobs, but {getattr(self.resources.llm, 'model', 'the backbone')} "
                             "gave no log-probabilities for the score; use method = auto or samples")
        rest = await asyncio.gather(*(ask(k) for k in range(1, self.options.samples)))
        answers = [first, *rest]
        ratings = [a.value for a in answers]
        return DimensionRated(response=response.label, dimension=steps.dimension, method="samples",
                              raw=[a.raw for a in answers], ratings=ratings, score=sample_mean(ratings))

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Write (or reuse) the evaluation steps, then rate every response on every dimension."""
        prompts = load_prompts("geval", view.language)
        written = await asyncio.gather(*(self._steps(d, prompts, view.language) for d in self.options.names))
        for event in written:
            yield event
        scores: dict[str, dict[str, float]] = {r.label: {} for r in view.responses}
        methods: dict[str, int] = {"logprobs": 0, "samples": 0}
        async for event in as_they_finish(self._rate(view, r, steps, prompts)
                                          for r in view.responses for steps in written):
            scores[event.response][event.dimension] = event.score
            methods[event.method] += 1
            yield event
        yield Judgement(scores={label: sum(per.values()) / len(per) for label, per in scores.items()},
                        details={"dimension_scores": scores, "dimensions": self.options.names, "methods": methods})
