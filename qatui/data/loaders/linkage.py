"""LINKAGE listwise data: `{question: [{"doc_id" or "docid", "passage", "label"}]}`.

The passages are graded answers (higher label = better) with no separate reference, so:
the passage(s) with the top label become the item's references, and the rest are its
candidates, with ranking gold by label (equal labels share a tier). When every passage has
the top label there is nothing to set apart: all become candidates in one tier and the item
has no reference. An item with fewer than 2 candidates has no gold, and says so in
`meta["note"]`. Items are numbered `q1`, `q2`, ... in file order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qatui.data.loaders._common import (
    build_item,
    field_error,
    first_dict_entry,
    grade,
    question_keyed_items,
    ranking_by_grade,
    text_field,
)
from qatui.data.model import Item
from qatui.errors import DatasetError


def load(path: Path) -> list[Item]:
    """One item per question key."""
    return question_keyed_items(path, _item)


def sniff(path: Path, head: str) -> bool:
    """A JSON object whose first value is a list of passages with labels."""
    entry = first_dict_entry(head)
    if entry is None or not isinstance(entry[1], list) or not entry[1]:
        return False
    first = entry[1][0]
    return isinstance(first, dict) and {"passage", "label"} <= first.keys()


def _item(item_id: str, question: str, passages: Any, where: str) -> Item:
    if not isinstance(passages, list) or not passages:
        raise DatasetError(f"{where}: must be a non-empty list of passages {{doc_id, passage, label}}")
    texts: dict[str, str] = {}
    grades: dict[str, float] = {}
    for position, passage in enumerate(passages, 1):
        at = f"{where} passage {position}"
        if not isinstance(passage, dict):
            raise field_error(at, "passage", "must be an object with doc_id, passage and label")
        doc_id = str(passage.get("doc_id", passage.get("docid", "")))
        if not doc_id:
            raise field_error(at, "doc_id", "is required (or 'docid')")
        if doc_id in texts:
            raise field_error(at, "doc_id", f"{doc_id!r} appears twice in this question")
        texts[doc_id] = text_field(passage, "passage", at)
        grades[doc_id] = grade(passage.get("label"), at, "label")
    top = max(grades.values())
    references = [doc_id for doc_id, g in grades.items() if g == top]
    if len(references) == len(grades):
        references = []
    candidates = {doc_id: text for doc_id, text in texts.items() if doc_id not in references}
    meta: dict[str, Any] = {"reference_ids": references, "labels": grades}
    gold = None
    if len(candidates) >= 2:
        gold = ranking_by_grade({doc_id: grades[doc_id] for doc_id in candidates})
    else:
        meta["note"] = "only 1 candidate once the top-graded reference(s) are set apart: no gold"
    data = {
        "id": item_id,
        "question": question,
        "references": [texts[doc_id] for doc_id in references],
        "candidates": candidates,
        "gold": gold,
        "meta": meta,
    }
    return build_item(data, where)
