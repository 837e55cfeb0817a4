"""What a judge sees of an item: candidates shuffled by a seeded RNG under opaque labels.

The MinosEval files list candidates in gold order and their ids encode the gold grade, so
judges never see candidate ids or the file's order: only "Response 1..n" in an order drawn
from (seed, item id). The permutation is stored with every verdict.
"""

from __future__ import annotations

import hashlib
import random

from pydantic import BaseModel, ConfigDict

from qatui.data.language import item_language
from qatui.data.model import Item, PairwiseGold, QuestionType
from qatui.events.labels import response_label


def permutation(item: Item, seed: int) -> list[str]:
    """Candidate ids in presentation order, stable for a (seed, item id) pair."""
    digest = hashlib.sha256(f"{seed}\x00{item.id}".encode()).digest()
    ids = list(item.candidates)
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(ids)
    return ids


class Response(BaseModel):
    """One candidate as a judge sees it."""

    model_config = ConfigDict(frozen=True)

    label: str
    text: str


class ItemView(BaseModel):
    """An item as handed to a judge: no candidate ids, no gold labels, no file order."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    question: str
    references: list[str]
    context: list[str]
    responses: list[Response]
    language: str
    question_type: QuestionType | None
    compares: str = "response"
    """What the candidates are: "response" (answers), or "context" when the item's meta says
    `compares: context` (WikiEval's context-relevance pairs: two retrieved passages)."""
    pair_type: str | None = None
    """What a pairwise item's two candidates were built to differ in (WikiEval: faithfulness,
    answer_relevance, context_relevance), like `question_type` a property of the item, never
    which candidate is better."""
    graded_references: list[str] = []
    """References of falling quality, best first, where the dataset grades them (item meta
    `graded_references`; LINKAGE's WebGLM file): the list LINKAGE places each candidate in."""

    @property
    def labels(self) -> list[str]:
        """The labels the judge sees, in presentation order ("Response 1", ...)."""
        return [r.label for r in self.responses]


def graded_references(item: Item) -> list[str]:
    """The item's `meta["graded_references"]` (best first), its non-blank texts; empty when it has none."""
    found = item.meta.get("graded_references")
    return [t for t in found if isinstance(t, str) and t.strip()] if isinstance(found, list) else []


def present(item: Item, seed: int) -> tuple[ItemView, list[str]]:
    """The judge's view of `item` under `seed`, and the candidate ids in that order.

    The engine keeps the order to map labels back to candidates; the judge never gets it.
    """
    order = permutation(item, seed)
    responses = [Response(label=response_label(i), text=item.candidates[cid]) for i, cid in enumerate(order)]
    return ItemView(
        item_id=item.id,
        question=item.question,
        references=list(item.references),
        context=list(item.context),
        responses=responses,
        language=item_language(item),
        question_type=item.question_type,
        compares=str(item.meta.get("compares") or "response"),
        pair_type=item.gold.pair_type if isinstance(item.gold, PairwiseGold) else None,
        graded_references=graded_references(item),
    ), order
