"""LINKAGE (Yang et al., EMNLP Findings 2024; MinosEval's "LINKAGE" row): place each response among graded references.

1. **The reference list**: m references of falling quality, best first. Where the dataset
   grades its references (`ItemView.graded_references`, from item meta
   `graded_references`: LINKAGE's WebGLM file gives `ground3` (the WebGLM-QA reference)
   then its LLM-written `ground2`, `ground1`, `ground0`) that list is used as it is, with no
   call. Otherwise one call per question writes three answers, each worse than the item's
   (first) reference, best first, as LINKAGE's generation prompt does; the list is the
   reference followed by them (m = 4). The call is cached like every call, so a rerun
   writes no new list. Either way the list is a `ReferenceListBuilt` event (`source`
   "dataset" or "llm"), stored with the verdict.
2. **Placement**: one call per response shows the question, the list and the response,
   and asks where it belongs, `[[k]]` for k = 1 (better than every reference) .. m + 1
   (worse than all), read strictly (`qatui.judges.brackets`: the last `[[...]]`, a whole
   number in range; one re-ask when it cannot be read), a `CandidatePlaced` event with
   the raw answer. A response whose place cannot be read fails the item.

Score = -k; responses placed alike keep presentation order (the engine's tie rule). An item
without a reference answer is not applicable (there is nothing to grade the list from).
Calls: n per item with a graded list, n + 1 without.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import cache, partial
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field, create_model, field_validator

from qatui.data.presentation import graded_references
from qatui.events import CandidatePlaced, Event, Judgement, ReferenceListBuilt
from qatui.judges.base import Judge, JudgeOptions, Needs, as_they_finish
from qatui.judges.brackets import ask_bracketed, bracket_enum, read_whole
from qatui.judges.prompts import guarded, load_prompts
from qatui.judges.schemas import capped_strings, one_of
from qatui.llm.fence import Fence

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView, Response

GENERATED = 3
"""Answers LINKAGE writes below the golden one (its ground2, ground1, ground0)."""
GENERATED_CHARS = 800
"""Advertised length cap of each written answer, so constrained decoding cannot run on."""


class WrittenReferences(BaseModel):
    """The backbone's three answers of falling quality, best first (schema; blank ones are refused)."""

    answers: Annotated[list[str], capped_strings(GENERATED, GENERATED_CHARS, min_items=GENERATED, min_length=1)]

    @field_validator("answers")
    @classmethod
    def _three_non_blank(cls, answers: list[str]) -> list[str]:
        kept = [" ".join(a.split()) for a in answers]
        if len(kept) != GENERATED or not all(kept):
            raise ValueError(f"expected {GENERATED} non-blank answers, got {sum(1 for a in kept if a)}")
        return kept


@cache
def placement_schema(m: int) -> type[BaseModel]:
    """`{"position": "[[k]]"}` with k from 1 to m + 1 (an enum for constrained decoding; any string validates)."""
    return create_model("Placement", position=(Annotated[str, one_of(bracket_enum(range(1, m + 2)))], ...))


class LinkageOptions(JudgeOptions):
    """LINKAGE settings."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""


def list_text(section: dict, references: list[str], fence: Fence) -> str:
    """The reference list as shown, one fenced block per reference, named "Reference k" (the prompt's `reference_item`)."""
    return "\n\n".join(fence(section["reference_item"].format(k=k), text) for k, text in enumerate(references, 1))


def place_messages(section: dict, view: ItemView, references: list[str], answer: str) -> list[dict[str, str]]:
    """The chat placing one response into the list (references and answer fenced)."""
    m = len(references)
    fence = Fence(view.question, answer, *references)
    system = section["system"].format(last=m + 1, count=m)
    user = section["user"].format(question=view.question, references=list_text(section, references, fence),
                                  answer=fence("Candidate", answer), last=m + 1)
    return guarded([{"role": "system", "content": system}, {"role": "user", "content": user}], view.language)


class LinkageJudge(Judge):
    """LINKAGE: each response placed into a list of references of falling quality; score = -place."""

    name = "linkage"
    summary = "LINKAGE: each response placed among references of falling quality, its place as [[2]]; score = -place"
    needs = Needs(reference=True)
    Options = LinkageOptions
    uses_llm = True
    prompt_methods = ("linkage", "fence")
    answer_schemas = (WrittenReferences, partial(placement_schema, 3))

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """One placement per response, plus one call writing the list when the dataset grades no references."""
        n = len(item.candidates) + (0 if len(graded_references(item)) >= 2 else 1)
        return n, n

    async def reference_list(self, view: ItemView) -> ReferenceListBuilt:
        """The dataset's graded list, or the reference and three weaker answers written by the backbone."""
        if len(view.graded_references) >= 2:
            return ReferenceListBuilt(references=list(view.graded_references), source="dataset")
        section = load_prompts("linkage", view.language)["references"]
        user = section["user"].format(question=view.question, reference=Fence(view.question, view.references[0])(
            "Golden answer", view.references[0]))
        result = await self.resources.llm.complete(
            guarded([{"role": "system", "content": section["system"].format()}, {"role": "user", "content": user}],
                    view.language),
            purpose="linkage:references", schema=WrittenReferences, temperature=self.options.temperature)
        return ReferenceListBuilt(references=[view.references[0], *result.data.answers], source="llm")

    async def _place(self, view: ItemView, response: Response, references: list[str], section: dict) -> CandidatePlaced:
        m = len(references)
        read = await ask_bracketed(self.resources.llm, place_messages(section, view, references, response.text),
                                   lambda text: read_whole(text, 1, m + 1), purpose="linkage:place",
                                   schema=placement_schema(m), reask=section["reask"].replace("{last}", str(m + 1)),
                                   temperature=self.options.temperature, max_tokens=32)
        return CandidatePlaced(response=response.label, position=read.value, raw=read.raw, reasked=read.reasked)

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Build (or read) the reference list, then place every response in it."""
        built = await self.reference_list(view)
        yield built
        section = load_prompts("linkage", view.language)["place"]
        placed: dict[str, int] = {}
        async for event in as_they_finish(self._place(view, r, built.references, section) for r in view.responses):
            placed[event.response] = event.position
            yield event
        yield Judgement(scores={label: -float(placed[label]) for label in view.labels},
                        details={"positions": {label: placed[label] for label in view.labels},
                                 "references": len(built.references), "reference_source": built.source})
