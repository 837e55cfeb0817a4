"""What one CheckEval call asks: the checklist's questions grouped by the call granularity, and the chat.

The paper (Lee et al., §3.3 and its released code) asks many questions in one prompt,
"grouped by sub-dimensions": one call per (response, sub-dimension), the prompt naming the
dimension and its definition. That is the default, `granularity = "sub-dimension"`;
`"dimension"` asks all of a dimension's questions in one call per (response, dimension),
each sub-dimension's questions under its own heading (fewer, longer calls). Either way the
questions of a call are numbered Q1..Qn in checklist order, and each answer is mapped back
to its question's stable id (`dimension/sub-dimension/Qk`, k within the sub-dimension), so
answers align across runs of either granularity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from qatui.judges.checkeval.checklist import (
    Checklist,
    Dimension,
    Question,
    SubDimension,
    question_id,
)
from qatui.judges.prompts import guarded
from qatui.llm.fence import Fence, fence_many

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView, Response

Granularity = Literal["sub-dimension", "dimension"]


@dataclass(frozen=True)
class ChecklistCall:
    """The questions one call asks: some sub-dimensions of one dimension, their active questions in order."""

    dimension: Dimension
    groups: tuple[SubDimension, ...]

    @property
    def questions(self) -> list[tuple[SubDimension, str, Question]]:
        """(sub-dimension, question id, question) of each question asked, in the order numbered Q1..Qn."""
        return [(sub, question_id(self.dimension.name, sub.name, k), q)
                for sub in self.groups for k, q in enumerate(sub.active, 1)]


def checklist_calls(checklist: Checklist, granularity: Granularity) -> list[ChecklistCall]:
    """The calls made for one response, in checklist order; sub-dimensions with no active question are skipped."""
    calls = []
    for dimension in checklist.dimensions:
        asked = tuple(sub for sub in dimension.sub_dimensions if sub.active)
        if granularity == "dimension":
            calls.append(ChecklistCall(dimension, asked))
        else:
            calls += [ChecklistCall(dimension, (sub,)) for sub in asked]
    return calls


def item_inputs(checklist: Checklist, view: ItemView) -> list[tuple[str, list[str]]]:
    """(heading, texts) of each item part the checklist asks for and the item has, in the checklist's order."""
    parts = []
    for field, heading in checklist.inputs.items():
        if field == "question":
            texts = [view.question]
        elif field == "context":
            texts = view.context
        else:
            texts = view.references
        if texts:
            parts.append((heading, list(texts)))
    return parts


def render_inputs(checklist: Checklist, view: ItemView, block: str, fence: Fence) -> str:
    """The item parts the checklist asks for, each under its heading and fenced (absent parts left out)."""
    return "".join(block.format(heading=heading, text=fence_many(fence, heading, texts))
                   for heading, texts in item_inputs(checklist, view))


def render_questions(call: ChecklistCall, section: dict) -> str:
    """The call's questions numbered Q1..Qn, under the heading of their sub-dimension."""
    lines, k = [], 0
    for sub in call.groups:
        lines.append(section["group_line"].format(sub_dimension=sub.name))
        for question in sub.active:
            k += 1
            lines.append(section["question_line"].format(k=k, question=question.text))
    return "\n".join(lines)


def answer_messages(checklist: Checklist, view: ItemView, response: Response, call: ChecklistCall,
                    prompts: dict) -> list[dict[str, str]]:
    """The chat of one (response, call): system, few-shot turns if the prompt file has any, the question."""
    section = prompts["answer"]
    fence = Fence(view.question, response.text, *(t for _, texts in item_inputs(checklist, view) for t in texts))
    user = section["user"].format(
        task=checklist.task, inputs=render_inputs(checklist, view, section["input_block"], fence),
        target=checklist.target, target_lower=checklist.target.lower(), text=fence(checklist.target, response.text),
        dimension=call.dimension.name,
        definition=call.dimension.definition, questions=render_questions(call, section))
    messages = [{"role": "system", "content": section["system"].format()}]
    for example in section.get("examples", []):
        shown = {k: v for k, v in example.items() if k != "answer"}
        messages += [{"role": "user", "content": section["user"].format(**shown)},
                     {"role": "assistant", "content": example["answer"]}]
    return guarded(messages + [{"role": "user", "content": user}], view.language)
