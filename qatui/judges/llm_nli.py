"""NLI asked of the run's backbone (`--nli llm`): for languages the bundled model doesn't cover.

Pairs are grouped by premise, and each premise costs one call listing all its hypotheses;
the backbone's label becomes a one-hot probability. An answer with the wrong number of
labels is an error on the item, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, create_model

from qatui.data.language import detect_language
from qatui.judges.prompts import guarded, load_prompts, numbered_lines
from qatui.judges.schemas import exactly_n_of
from qatui.llm.fence import Fence
from qatui.nli import NLIError, NLIProbs, NLIScorer

if TYPE_CHECKING:
    from qatui.llm import LLMClient

LABELS = ("entail", "neutral", "contradict")
ONE_HOT = {
    "entail": NLIProbs(entail=1.0, neutral=0.0, contradict=0.0),
    "neutral": NLIProbs(entail=0.0, neutral=1.0, contradict=0.0),
    "contradict": NLIProbs(entail=0.0, neutral=0.0, contradict=1.0),
}


class EntailmentLabels(BaseModel):
    """The backbone's answer to an entailment question: one label per hypothesis."""

    labels: list[Literal["entail", "neutral", "contradict"]]


@cache
def labels_schema(n: int) -> type[EntailmentLabels]:
    """`EntailmentLabels` advertised with exactly `n` labels, so constrained decoding gives one per statement."""
    return create_model("EntailmentLabels", __base__=EntailmentLabels,
                        labels=(Annotated[list[Literal["entail", "neutral", "contradict"]], exactly_n_of(LABELS, n)], ...))


class LLMNLIScorer(NLIScorer):
    """Entailment labels from a backbone, one call per distinct premise."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm
        self.name = f"llm:{llm.model}"

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """Not available synchronously: the backbone is asked through `apredict`."""
        raise NLIError("the llm NLI backend is asynchronous: use apredict")

    async def apredict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """One backbone call per premise, labelling each of its hypotheses."""
        by_premise: dict[str, list[int]] = {}
        for index, (premise, _) in enumerate(pairs):
            by_premise.setdefault(premise, []).append(index)
        out: list[NLIProbs | None] = [None] * len(pairs)
        for premise, indexes in by_premise.items():
            language = detect_language(premise)
            section = load_prompts("nli", language)["entail"]
            statements = numbered_lines(section["statement_line"], [pairs[i][1] for i in indexes])
            result = await self.llm.complete(
                guarded([{"role": "system", "content": section["system"].format()},
                         {"role": "user", "content": section["user"].format(premise=Fence(premise, *(pairs[i][1] for i in indexes))(
                                                                                "Premise", premise),
                                                                            statements=statements)}], language),
                purpose="nli", schema=labels_schema(len(indexes)),
            )
            labels = result.data.labels
            if len(labels) != len(indexes):
                raise NLIError(f"the backbone gave {len(labels)} entailment labels for {len(indexes)} statements")
            for i, label in zip(indexes, labels):
                out[i] = ONE_HOT[label]
        return [p for p in out if p is not None]
