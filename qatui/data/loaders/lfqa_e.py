"""CALF's LFQA-E: a JSON list of `{id, question, context, reference, response_a, response_b,
compare_type, label}`.

Each record is one pairwise item: candidates `response_a` and `response_b`, and `label`
(`response_a`, `response_b` or `same`) becomes pairwise gold A / B / tie with
`compare_type` as its pair type. A record without `label` has no gold.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qatui.data.loaders._common import (
    build_item,
    chinese_or_none,
    field_error,
    first_list_element,
    item_id,
    json_records,
    required,
    texts,
    unique_ids,
)
from qatui.data.model import Item

_LABELS = {"response_a": "A", "response_b": "B", "same": "tie"}
_RAW_NAMES = {"references": "reference", "gold": "label"}


def load(path: Path) -> list[Item]:
    """Every record of the list as a pairwise item."""
    return unique_ids(labelled(path), path.name)


def labelled(path: Path) -> Iterator[tuple[str, Item]]:
    """Each record as an item with its label: the JSON is parsed at once, each item validated as it is reached."""
    return ((where, _item(record, where)) for where, record in json_records(path))


def sniff(path: Path, head: str) -> bool:
    """A JSON list whose first record has response_a and response_b."""
    first = first_list_element(head)
    return isinstance(first, dict) and {"question", "response_a", "response_b"} <= first.keys()


def _item(record: dict[str, Any], where: str) -> Item:
    label = record.get("label")
    if label is not None and (not isinstance(label, str) or label not in _LABELS):
        raise field_error(where, "label", f"must be one of {list(_LABELS)}, not {label!r}")
    question = required(record, "question", where)
    gold = None
    if label is not None:
        gold = {
            "kind": "pairwise",
            "a": "response_a",
            "b": "response_b",
            "labels": [_LABELS[label]],
            "pair_type": record.get("compare_type"),
        }
    data = {
        "id": item_id(record, where),
        "question": question,
        "references": texts(record.get("reference"), where, "reference"),
        "context": texts(record.get("context"), where, "context"),
        "candidates": {side: required(record, side, where) for side in ("response_a", "response_b")},
        "language": chinese_or_none(question) if isinstance(question, str) else None,
        "gold": gold,
    }
    return build_item(data, where, _RAW_NAMES)
