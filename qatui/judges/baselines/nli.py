"""MinosEval's NLI baselines without key points: the whole reference against the whole response.

Named as MinosEval writes them (R = the responses, A = the reference answers, NLI(premise,
hypothesis), the response first as in its Formula 3): `nli-ra` is NLI(R,A), each response the
premise and the reference the hypothesis (does the response say what the reference says?);
`nli-ar` is NLI(A,R), the reference the premise (is the response supported by it?). The
`premise` option states the direction and is stored with the session; sessions saved before
the names followed the paper ran the other way round and stored no `premise`:
`qatui.judges.registry.stored_options` gives them back the premise they ran with.
A response scores P(entail) − P(contradict), the best over the references.
Each pair is an `EntailmentScored` event (`key_point` holds the reference). The NLI model is
chosen per language (`Resources.nli_name_for`): the English-only bundled model never judges a
Chinese item, which gets `[models] nli_zh` or the backbone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Literal

from qatui.data.language import item_language
from qatui.events import EntailmentScored, Event, Judgement
from qatui.judges.base import Judge, JudgeOptions, Needs

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView

Premise = Literal["response", "reference"]


class ResponsePremiseOptions(JudgeOptions):
    """`nli-ra`: NLI(R,A), the response as premise."""

    premise: Premise = "response"
    """Which text is the NLI premise (the other is the hypothesis): `response` is MinosEval's NLI(R,A)."""


class ReferencePremiseOptions(JudgeOptions):
    """`nli-ar`: NLI(A,R), the reference as premise."""

    premise: Premise = "reference"
    """Which text is the NLI premise (the other is the hypothesis): `reference` is MinosEval's NLI(A,R)."""


class _DirectionalNLIJudge(Judge):
    """Ranks responses by P(entail) − P(contradict) between the response and a reference, in one direction."""

    needs = Needs(reference=True)
    uses_nli = True

    @property
    def reference_is_premise(self) -> bool:
        """Whether the reference is the premise (NLI(A,R)) rather than the response (NLI(R,A))."""
        return self.options.premise == "reference"  # type: ignore[attr-defined]

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """No backbone call, unless the NLI is the backbone (`--nli llm`): one call per premise."""
        if self.resources.nli_name_for(item_language(item)) != "llm":
            return 0, 0
        n = len(item.references) if self.reference_is_premise else len(item.candidates)
        return n, n

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """P(entail) − P(contradict) of every (reference, response) pair in this judge's direction."""
        pairs, keys = [], []
        for index, reference in enumerate(view.references):
            for response in view.responses:
                pairs.append((reference, response.text) if self.reference_is_premise else (response.text, reference))
                keys.append((index, reference, response.label))
        probs = await self.resources.nli_for(view.language).apredict(pairs)
        scores: dict[str, float] = {}
        for (index, reference, label), p in zip(keys, probs, strict=True):
            yield EntailmentScored(response=label, key_point=reference, reference_index=index,
                                   p_entail=p.entail, p_neutral=p.neutral, p_contradict=p.contradict)
            scores[label] = max(scores.get(label, -1.0), p.entail - p.contradict)
        yield Judgement(scores=scores, details={
            "direction": "reference ⇒ response" if self.reference_is_premise else "response ⇒ reference",
            "nli": self.resources.nli_name_for(view.language)})


class NLIResponsePremiseJudge(_DirectionalNLIJudge):
    """`nli-ra`: MinosEval's NLI(R,A) (its Table B2): each response the premise, the reference the hypothesis."""

    name = "nli-ra"
    summary = "NLI(R,A): response ⇒ reference, P(entail) − P(contradict), best reference (MinosEval Table B2); no LLM"
    Options = ResponsePremiseOptions
    reproduces = ("minoseval:nli-ra",)


class NLIReferencePremiseJudge(_DirectionalNLIJudge):
    """`nli-ar`: MinosEval's NLI(A,R) (its Table B2): the reference the premise, each response the hypothesis."""

    name = "nli-ar"
    summary = "NLI(A,R): reference ⇒ response, P(entail) − P(contradict), best reference (MinosEval Table B2); no LLM"
    Options = ReferencePremiseOptions
    reproduces = ("minoseval:nli-ar",)
