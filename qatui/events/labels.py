"""The one rule between a presentation order and the labels judges see: `order[i]` is shown as "Response i+1".

The engine shows an item's candidates in a seeded order (`qatui.data.presentation`) and stores
that order with every verdict; judges and their events speak in labels, stored verdicts in
candidate ids. Every translation between the two, in any layer, goes through these functions
(and the `Verdict` methods built on them), so the rule is written once.
"""

from __future__ import annotations

from collections.abc import Sequence

PREFIX = "Response "


def response_label(position: int) -> str:
    """The label of the candidate shown at 0-based `position`."""
    return f"{PREFIX}{position + 1}"


def response_labels(order: Sequence[str]) -> list[str]:
    """The labels of a presentation `order`, in that order ("Response 1", ...)."""
    return [response_label(i) for i in range(len(order))]


def candidates_by_label(order: Sequence[str]) -> dict[str, str]:
    """Label -> the candidate id shown under it."""
    return {response_label(i): cid for i, cid in enumerate(order)}


def label_of(order: Sequence[str], candidate: str) -> str | None:
    """The label `candidate` was shown under; None when it is not in `order`."""
    return response_label(list(order).index(candidate)) if candidate in order else None


def label_number(label: str) -> str | None:
    """The number of a label ("Response 3" -> "3"); None for anything else (a "tie", a member's name)."""
    return label.removeprefix(PREFIX) if label.startswith(PREFIX) else None
