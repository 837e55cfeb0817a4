"""CheckEval (Lee et al.): a boolean checklist answered by the backbone, scored as the share of yes.

For every response and every sub-dimension of the checklist, one call shows the task, the
parts of the item the checklist names (`[inputs]`: question, context, reference), the
response, and the sub-dimension's questions numbered Q1..Qn; the backbone is asked for
`{"Q1": "yes"|"no", ...}` (a schema, so constrained decoding fills every key), and the
answer is parsed strictly per question by `qatui.judges.checklist.parse_answers` (the JSON
keys, or `Qk: yes|no` lines when a backbone writes lines instead).
One `ChecklistAnswered` event per question is yielded as soon as its call returns.

Scores: per dimension, the (weighted) share of yes among the answered questions of that
dimension; overall (the Judgement's score of a response), the same over all its answered
questions. Unanswered questions are excluded, never counted as no. A response with no
answered question at all gets 0.0 and is listed in `details["no_answers"]`; its dimension
scores are None, so the per-dimension correlations leave it out.

`details["dimension_scores"]` maps label -> dimension -> score; the metrics correlate each
dimension's score with the human rating of the dimension of the same name.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pydantic import Field

from qatui.events import ChecklistAnswered, Event, Judgement
from qatui.judges.base import Judge, JudgeOptions, Needs
from qatui.judges.checklist import (
    Checklist,
    Dimension,
    SubDimension,
    answers_schema,
    load_checklist,
    parse_answers,
    question_id,
    share_of_yes,
)
from qatui.llm.errors import ParseError
from qatui.judges.prompts import load_prompts

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView, Response


class CheckEvalOptions(JudgeOptions):
    """CheckEval settings."""

    checklist: str = "qa"
    """A bundled checklist (qa, summeval, topical_chat) or the path of a checklist TOML file."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""
    max_tokens_per_question: int = Field(16, ge=4, le=512)
    """Answer budget: 24 + this many tokens per question of the call."""


def render_inputs(checklist: Checklist, view: ItemView, block: str) -> str:
    """The item parts the checklist asks for, each under its heading (absent parts left out)."""
    parts = []
    for field, heading in checklist.inputs.items():
        if field == "question":
            texts = [view.question]
        elif field == "context":
            texts = view.context
        else:
            texts = view.references
        if not texts:
            continue
        text = texts[0] if len(texts) == 1 else "\n".join(f"({i}) {t}" for i, t in enumerate(texts, 1))
        parts.append(block.format(heading=heading, text=text))
    return "".join(parts)


def answer_messages(checklist: Checklist, view: ItemView, response: Response, dimension: Dimension,
                    sub: SubDimension, prompts: dict) -> list[dict[str, str]]:
    """The chat of one (response, sub-dimension) call."""
    section = prompts["answer"]
    questions = "\n".join(section["question_line"].format(k=k, question=q.text) for k, q in enumerate(sub.active, 1))
    user = section["user"].format(
        task=checklist.task, inputs=render_inputs(checklist, view, section["input_block"]), target=checklist.target,
        target_lower=checklist.target.lower(), text=response.text, dimension=dimension.name,
        sub_dimension=sub.name, definition=dimension.definition, questions=questions)
    messages = [{"role": "system", "content": section["system"].format()}]
    for example in section.get("examples", []):
        shown = {k: v for k, v in example.items() if k != "answer"}
        messages += [{"role": "user", "content": section["user"].format(**shown)},
                     {"role": "assistant", "content": example["answer"]}]
    return messages + [{"role": "user", "content": user}]


class CheckEvalJudge(Judge):
    """CheckEval: yes/no checklist per sub-dimension, score = share of yes."""

    name = "checkeval"
    summary = "CheckEval: a yes/no checklist per quality dimension, score = share of yes (--checklist)"
    needs = Needs()
    Options = CheckEvalOptions
    uses_llm = True

    def __init__(self, options: CheckEvalOptions | None = None, resources=None) -> None:
        super().__init__(options, resources)
        self.checklist = load_checklist(self.options.checklist)

    def item_problem(self, item: Item) -> str | None:
        """Also not applicable: a checklist that shows the reference, on an item without one."""
        if problem := super().item_problem(item):
            return problem
        if "reference" in self.checklist.inputs and not item.references:
            return f"checklist {self.checklist.name} shows the reference answer, and the item has none"
        return None

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """One call per (response, sub-dimension with active questions)."""
        n = len(item.candidates) * sum(1 for d in self.checklist.dimensions for s in d.sub_dimensions if s.active)
        return n, n

    async def _ask(self, view: ItemView, response: Response, dimension: Dimension, sub: SubDimension,
                   prompts: dict) -> tuple[Response, Dimension, SubDimension, list]:
        messages = answer_messages(self.checklist, view, response, dimension, sub, prompts)
        n = len(sub.active)
        try:
            result = await self.resources.llm.complete(
                messages, purpose="checklist", schema=answers_schema(n), temperature=self.options.temperature,
                max_tokens=24 + self.options.max_tokens_per_question * n)
            text = result.text
        except ParseError as e:  # no JSON even after the client's re-ask: read its answer line by line
            text = e.text
        return response, dimension, sub, parse_answers(text, n)

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        prompts = load_prompts("checkeval", view.language)
        positions = {(d, s, qid): i for i, (d, s, qid, _) in enumerate(self.checklist.question_ids())}
        tasks = [
            asyncio.ensure_future(self._ask(view, response, dimension, sub, prompts))
            for response in view.responses for dimension in self.checklist.dimensions
            for sub in dimension.sub_dimensions if sub.active
        ]
        collected: dict[str, dict[str, list]] = {r.label: {d.name: [] for d in self.checklist.dimensions}
                                                 for r in view.responses}
        unanswered = {r.label: 0 for r in view.responses}
        try:
            for next_done in asyncio.as_completed(tasks):
                response, dimension, sub, answers = await next_done
                for k, (question, answer) in enumerate(zip(sub.active, answers, strict=True), 1):
                    collected[response.label][dimension.name].append((answer, question.weight))
                    unanswered[response.label] += answer is None
                    qid = question_id(dimension.name, sub.name, k)
                    yield ChecklistAnswered(dimension=dimension.name, sub_dimension=sub.name, question=question.text,
                                            question_id=qid, response=response.label, answer=answer,
                                            position=positions[(dimension.name, sub.name, qid)])
        finally:
            for task in tasks:
                task.cancel()
        dimension_scores = {label: {dim: share_of_yes(found) for dim, found in per_dim.items()}
                            for label, per_dim in collected.items()}
        overall = {label: share_of_yes([a for found in per_dim.values() for a in found])
                   for label, per_dim in collected.items()}
        yield Judgement(
            scores={label: 0.0 if score is None else score for label, score in overall.items()},
            details={"checklist": self.checklist.name, "dimension_scores": dimension_scores,
                     "unanswered": unanswered, "no_answers": [label for label, s in overall.items() if s is None]},
        )
