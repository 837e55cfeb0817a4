"""MinosEval's NLI baselines without key points: the whole reference against the whole response.

`nli-ra`: reference ⇒ response (the reference is the premise: is the response supported by
it?). `nli-ar`: response ⇒ reference (the response is the premise: does it say what the
reference says?). A response scores P(entail) − P(contradict), the best over the references.
Each pair is an `EntailmentScored` event (`key_point` holds the reference). The NLI model is
chosen per language (`Resources.nli_name_for`): the English-only bundled model never judges a
Chinese item, which gets `[models] nli_zh` or the backbone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, ClassVar

from qatui.data.language import item_language
from qatui.events import EntailmentScored, Event, Judgement
from qatui.judges.base import Judge, Needs

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView

class _DirectionalNLIJudge(Judge):
    """Ranks responses by P(entail) − P(contradict) between the response and a reference, in one direction."""

    needs = Needs(reference=True)
    uses_nli = True
    reference_is_premise: ClassVar[bool]

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


class NLIReferenceToAnswerJudge(_DirectionalNLIJudge):
    """`nli-ra`: the reference as premise, each response as hypothesis (MinosEval's NLI_RA row)."""

    name = "nli-ra"
    summary = "NLI, reference ⇒ response: P(entail) − P(contradict), best reference (MinosEval baseline); no LLM"
    reference_is_premise = True


class NLIAnswerToReferenceJudge(_DirectionalNLIJudge):
    """`nli-ar`: each response as premise, the reference as hypothesis (MinosEval's NLI_AR row)."""

    name = "nli-ar"
    summary = "NLI, response ⇒ reference: P(entail) − P(contradict), best reference (MinosEval baseline); no LLM"
    reference_is_premise = False
