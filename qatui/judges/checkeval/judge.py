"""CheckEval (Lee et al.): a boolean checklist answered by the backbone, scored as the share of yes.

For every response, one call per sub-dimension of the checklist (the paper's grouping; with
`granularity = "dimension"`, one call per dimension instead: `qatui.judges.checkeval.calls`)
shows the task, the parts of the item the checklist names (`[inputs]`: question, context,
reference), the response, the dimension with its definition, and the questions numbered
Q1..Qn under their sub-dimension; the backbone is asked for `{"Q1": "yes"|"no", ...}` (a
schema, so constrained decoding fills every key), and the answer is parsed strictly per
question by `qatui.judges.checkeval.checklist.parse_answers` (the JSON keys, or `Qk: yes|no` lines
when a backbone writes lines instead). One `ChecklistAnswered` event per question is
yielded as soon as its call returns.

Scores: per dimension, the share of yes among the answered questions of that dimension;
overall (the Judgement's score of a response), the same over all its answered questions.
Every question counts the same, as in the paper; a checklist file may weigh questions
(`weights`, a qatui extension). Unanswered questions are excluded, never counted as no. A
response with no answered question at all fails the item (it is never scored as 0.0); a
dimension with none answered has the score None, so its correlation leaves it out.

`details["dimension_scores"]` maps label -> dimension -> score; the metrics correlate each
dimension's score with the human rating of the dimension of the same name. `details` also
names the checklist, its `stage` (seed: the paper's "w/o augmentation" setting; augmented)
and the `granularity`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import partial
from typing import TYPE_CHECKING

from pydantic import Field

from qatui.events import ChecklistAnswered, Event, Judgement
from qatui.judges.base import Judge, JudgeOptions, Needs, as_they_finish
from qatui.judges.checkeval.calls import (
    ChecklistCall,
    Granularity,
    answer_messages,
    checklist_calls,
)
from qatui.judges.checkeval.checklist import (
    answers_schema,
    load_checklist,
    parse_answers,
    share_of_yes,
)
from qatui.judges.prompts import load_prompts
from qatui.llm.errors import ParseError

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView, Response


class CheckEvalOptions(JudgeOptions):
    """CheckEval settings."""

    checklist: str = "qa"
    """A bundled seed list (qa, summeval, topical_chat: the paper's w/o augmentation setting) or a checklist TOML path."""
    granularity: Granularity = "sub-dimension"
    """Questions per call: sub-dimension (the paper's: one call per response and sub-dimension) or dimension."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""
    max_tokens_per_question: int = Field(16, ge=4, le=512)
    """Answer budget: 24 + this many tokens per question of the call."""


class CheckEvalJudge(Judge):
    """CheckEval: yes/no checklist per sub-dimension (or dimension), score = share of yes."""

    name = "checkeval"
    summary = ("CheckEval: a yes/no checklist per quality dimension, score = share of yes (--checklist; "
               "the bundled qa, summeval, topical_chat are seed lists, the paper's w/o augmentation: "
               "augment one with `qatui checklist generate`)")
    needs = Needs()
    Options = CheckEvalOptions
    uses_llm = True
    prompt_methods = ("checkeval", "fence")
    answer_schemas = (partial(answers_schema, 3),)

    def __init__(self, options: CheckEvalOptions | None = None, resources=None) -> None:
        super().__init__(options, resources)
        self.checklist = load_checklist(self.options.checklist)
        self.calls = checklist_calls(self.checklist, self.options.granularity)

    def definition(self) -> dict[str, str]:
        """Its prompt files and its checklist (as read: a checklist file edited since gives another version)."""
        shown = self.checklist.model_dump(mode="json", exclude_defaults=False)
        return {**super().definition(),
                f"checklist {self.checklist.name}.json": json.dumps(shown, ensure_ascii=False, indent=1)}

    def item_problem(self, item: Item) -> str | None:
        """Also not applicable: a checklist that shows the reference, on an item without one."""
        if problem := super().item_problem(item):
            return problem
        if "reference" in self.checklist.inputs and not item.references:
            return f"checklist {self.checklist.name} shows the reference answer, and the item has none"
        return None

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """One call per (response, sub-dimension with active questions), or per (response, dimension)."""
        n = len(item.candidates) * len(self.calls)
        return n, n

    async def _ask(self, view: ItemView, response: Response, call: ChecklistCall,
                   prompts: dict) -> tuple[Response, ChecklistCall, list]:
        messages = answer_messages(self.checklist, view, response, call, prompts)
        n = len(call.questions)
        try:
            result = await self.resources.llm.complete(
                messages, purpose="checklist", schema=answers_schema(n), temperature=self.options.temperature,
                max_tokens=24 + self.options.max_tokens_per_question * n)
            text = result.text
        except ParseError as e:  # no JSON even after the client's re-ask: read its answer line by line
            text = e.text
        return response, call, parse_answers(text, n)

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Ask every response's checklist questions, one call per group, then score the share of yes."""
        prompts = load_prompts("checkeval", view.language)
        positions = {(d, s, qid): i for i, (d, s, qid, _) in enumerate(self.checklist.question_ids())}
        collected: dict[str, dict[str, list]] = {r.label: {d.name: [] for d in self.checklist.dimensions}
                                                 for r in view.responses}
        unanswered = {r.label: 0 for r in view.responses}
        async for response, call, answers in as_they_finish(self._ask(view, response, call, prompts)
                                                            for response in view.responses for call in self.calls):
            dimension = call.dimension.name
            for (sub, qid, question), answer in zip(call.questions, answers, strict=True):
                collected[response.label][dimension].append((answer, question.weight))
                unanswered[response.label] += answer is None
                yield ChecklistAnswered(dimension=dimension, sub_dimension=sub.name, question=question.text,
                                        question_id=qid, response=response.label, answer=answer,
                                        position=positions[(dimension, sub.name, qid)])
        dimension_scores = {label: {dim: share_of_yes(found) for dim, found in per_dim.items()}
                            for label, per_dim in collected.items()}
        overall = {label: share_of_yes([a for found in per_dim.values() for a in found])
                   for label, per_dim in collected.items()}
        if silent := [label for label, score in overall.items() if score is None]:
            asked = sum(len(call.questions) for call in self.calls)
            raise ParseError(f"{', '.join(silent)}: none of the {asked} checklist questions got a readable "
                             "yes or no, so the item is not scored")
        yield Judgement(
            scores={label: score for label, score in overall.items() if score is not None},
            details={"checklist": self.checklist.name, "stage": self.checklist.stage,
                     "granularity": self.options.granularity, "dimension_scores": dimension_scores,
                     "unanswered": unanswered},
        )
