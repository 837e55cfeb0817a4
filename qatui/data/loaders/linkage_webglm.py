"""LINKAGE's WebGLM subset (WEBGLM_50.json): `{question: {"doc_list": [...], "ground0".."ground4"}}`.

Each `doc_list` entry `{answer, model, label}` is a candidate keyed by its model name, and
the labels (1-3, 3 best, ties possible) give ranking gold. `ground3` is the original
WebGLM-QA human reference and the only reference; the other `ground*` texts were written
by an LLM for the LINKAGE method and are kept in `meta["llm_references"]`. LINKAGE's own
list of references of falling quality, `ground3`, `ground2`, `ground1`, `ground0` (its code
reads no other), is `meta["graded_references"]`, best first; `ground4` (13 questions, a
near copy of `ground3`) is left out of it.
Items are numbered `q1`, `q2`, ... in file order.
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

REFERENCE_KEY = "ground3"
GRADED_BELOW = ("ground2", "ground1", "ground0")
"""The LLM-written references below `ground3`, best first: LINKAGE's graded list."""


def load(path: Path) -> list[Item]:
    """One item per question key."""
    return question_keyed_items(path, _item)


def sniff(path: Path, head: str) -> bool:
    """A JSON object whose first value is an object with a doc_list."""
    entry = first_dict_entry(head)
    return entry is not None and isinstance(entry[1], dict) and "doc_list" in entry[1]


def _item(item_id: str, question: str, entry: Any, where: str) -> Item:
    if not isinstance(entry, dict):
        raise DatasetError(f"{where}: must be an object with doc_list and ground0..ground3")
    docs = entry.get("doc_list")
    if not isinstance(docs, list) or not docs:
        raise field_error(where, "doc_list", "must be a non-empty list of {answer, model, label}")
    candidates: dict[str, str] = {}
    grades: dict[str, float] = {}
    for position, doc in enumerate(docs, 1):
        at = f"{where} doc_list {position}"
        if not isinstance(doc, dict):
            raise field_error(at, "doc_list", "must be an object {answer, model, label}")
        model = text_field(doc, "model", at)
        if model in candidates:
            raise field_error(at, "model", f"{model!r} appears twice in this question")
        candidates[model] = text_field(doc, "answer", at)
        grades[model] = grade(doc.get("label"), at, "label")
    reference = text_field(entry, REFERENCE_KEY, where)
    others = {key: text_field(entry, key, where) for key in entry if key.startswith("ground") and key != REFERENCE_KEY}
    data = {
        "id": item_id,
        "question": question,
        "references": [reference],
        "candidates": candidates,
        "gold": ranking_by_grade(grades),
        "meta": {"labels": grades, "llm_references": others,
                 "graded_references": [reference, *(others[k] for k in GRADED_BELOW if k in others)]},
    }
    return build_item(data, where)
