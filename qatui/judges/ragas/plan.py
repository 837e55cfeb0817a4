"""Which RAGAS metric ranks an item and which ones are computed for it, decided before any call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qatui.data.model import PairwiseGold
from qatui.errors import JudgeError

if TYPE_CHECKING:
    from qatui.data.model import Item


EMPTY_ANSWER = "the answer is empty: it states nothing to check (no call made)"
"""Why an empty answer has no faithfulness (its answer relevance is 0, as RAGAS scores a noncommittal answer)."""
ANSWER_METRICS = ("faithfulness", "answer_relevance")
"""The metrics that read the answer, and so make no call for an empty one."""


@dataclass(frozen=True)
class Plan:
    """What to compute on one item: `compute` per candidate, ranked by `metric`."""

    metric: str
    compute: tuple[str, ...]
    item_context: bool
    """Also score the item's own context relevance (details only)."""
    chosen_by: str
    """Why this metric: "metric option", "pair type", "candidates are contexts" or "default"."""


def plan_problem(choice: str, *, compares_context: bool, has_context: bool) -> str | None:
    """Why `choice` cannot rank this item's candidates (a short key), or None."""
    if compares_context:
        return "contexts" if choice in ("faithfulness", "answer_relevance") else None
    if choice == "faithfulness" and not has_context:
        return "no_context"
    if choice == "context_relevance":
        return "answers" if has_context else "no_context"
    return None


def make_plan(choice: str, *, compares_context: bool, pair_type: str | None, has_context: bool) -> Plan:
    """The metric that ranks this item and the metrics computed for it (JudgeError if none fits)."""
    problem = plan_problem(choice, compares_context=compares_context, has_context=has_context)
    if problem == "contexts":
        raise JudgeError(f"metric {choice} scores answers, but this item's candidates are contexts "
                         "(meta compares = context): use metric auto or context_relevance")
    if problem == "no_context":
        raise JudgeError(f"metric {choice} needs the item's retrieved context, and this item has none")
    if problem == "answers":
        raise JudgeError("metric context_relevance ranks candidate contexts, but this item's candidates are "
                         "answers sharing one context: use metric auto, mean, faithfulness or answer_relevance")
    if compares_context:
        how = "metric option" if choice == "context_relevance" else "candidates are contexts"
        return Plan("context_relevance", ("context_relevance",), False, how)
    if choice in ("faithfulness", "answer_relevance"):
        return Plan(choice, (choice,), False, "metric option")
    if choice == "auto":
        if pair_type == "faithfulness" and has_context:
            return Plan("faithfulness", ("faithfulness",), False, "pair type")
        if pair_type == "answer_relevance":
            return Plan("answer_relevance", ("answer_relevance",), False, "pair type")
    computed = ("faithfulness", "answer_relevance") if has_context else ("answer_relevance",)
    return Plan("mean", computed, has_context, "metric option" if choice == "mean" else "default")


def item_facts(item: Item) -> dict[str, Any]:
    """What planning needs to know of an item: `make_plan`'s keyword arguments."""
    return {"compares_context": item.meta.get("compares") == "context",
            "pair_type": item.gold.pair_type if isinstance(item.gold, PairwiseGold) else None,
            "has_context": bool(item.context)}
