"""WikiEval (RAGAS paper) as JSONL rows of `{question, context, answer, ungrounded_answer,
poor_answer, context_v1, context_v2}`, e.g. wikieval_by_construction.derived.jsonl.

Each row n (1-based) gives three pairwise items whose gold is WikiEval's by-construction
preference for side A: `n-faithfulness` (answer vs ungrounded_answer, given the context),
`n-answer_relevance` (answer vs poor_answer) and `n-context_relevance` (context_v1 vs
context_v2 as the two candidates; meta {"compares": "context"}). No references. The
original schema (no `context`, contexts as lists) works too: context_v1 is then the
faithfulness context. The literal two-character `\\n` and `\\'` of the CSV copies are
unescaped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qatui.data.loaders._common import build_item, first_jsonl_record, jsonl_records, required, texts, unique_ids
from qatui.data.model import Item

_PAIRS = (
    ("faithfulness", "answer", "ungrounded_answer"),
    ("answer_relevance", "answer", "poor_answer"),
    ("context_relevance", "context_v1", "context_v2"),
)
_SIDES = ("answer", "ungrounded_answer", "poor_answer", "context_v1", "context_v2")


def load(path: Path) -> list[Item]:
    """Three pairwise items per row."""
    labelled: list[tuple[str, Item]] = []
    for number, (where, record) in enumerate(jsonl_records(path), 1):
        labelled.extend((where, item) for item in _items(number, record, where))
    return unique_ids(labelled, path.name)


def sniff(path: Path, head: str) -> bool:
    """A JSONL file whose first record has ungrounded_answer."""
    record = first_jsonl_record(head)
    return record is not None and "ungrounded_answer" in record


def _items(number: int, record: dict[str, Any], where: str) -> list[Item]:
    fields = {key: _text(record, key, where) for key in _SIDES}
    context = _text(record, "context", where) if "context" in record else fields["context_v1"]
    items = []
    for pair_type, a, b in _PAIRS:
        compares_context = pair_type == "context_relevance"
        data = {
            "id": f"{number}-{pair_type}",
            "question": required(record, "question", where),
            "context": [] if compares_context else [context],
            "candidates": {a: fields[a], b: fields[b]},
            "gold": {"kind": "pairwise", "a": a, "b": b, "labels": ["A"], "pair_type": pair_type},
            "meta": {"compares": "context"} if compares_context else {},
        }
        items.append(build_item(data, where))
    return items


def _text(record: dict[str, Any], key: str, where: str) -> str:
    """A text field (a list of passages is joined by newlines), unescaped."""
    joined = "\n".join(texts(required(record, key, where), where, key))
    return joined.replace("\\n", "\n").replace("\\'", "'")
