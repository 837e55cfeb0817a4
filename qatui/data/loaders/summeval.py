"""SummEval in the CTC/Explainaboard JSONL form: one source document per line,
`{src, ref_summs, ref_summ, sys_summs: {system: {sys_summ, scores}}}`.

One item per document, id `doc<n>` (n-th record, 1-based): the article is the context,
the 11 reference summaries are the references, each system's summary is a candidate, and
the averaged expert scores (coherence, consistency, fluency, relevance) are ratings gold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qatui.data.loaders._common import (
    build_item,
    field_error,
    first_jsonl_record,
    jsonl_records,
    required,
    texts,
    unique_ids,
)
from qatui.data.model import Item

TASK = "Summarize the news article."


def load(path: Path) -> list[Item]:
    """One item per line (document)."""
    labelled = [(where, _item(f"doc{n}", record, where)) for n, (where, record) in enumerate(jsonl_records(path), 1)]
    return unique_ids(labelled, path.name)


def sniff(path: Path, head: str) -> bool:
    """A JSONL file whose first record has sys_summs."""
    record = first_jsonl_record(head)
    return record is not None and "sys_summs" in record


def _item(item_id: str, record: dict[str, Any], where: str) -> Item:
    systems = required(record, "sys_summs", where)
    if not isinstance(systems, dict) or not systems:
        raise field_error(where, "sys_summs", "must be a non-empty object of system -> {sys_summ, scores}")
    candidates: dict[str, Any] = {}
    ratings: dict[str, Any] = {}
    for system, entry in systems.items():
        if not isinstance(entry, dict):
            raise field_error(where, f"sys_summs.{system}", "must be an object {sys_summ, scores}")
        candidates[system] = required(entry, "sys_summ", f"{where} system {system!r}")
        ratings[system] = required(entry, "scores", f"{where} system {system!r}")
    references = record["ref_summs"] if "ref_summs" in record else record.get("ref_summ")
    data = {
        "id": item_id,
        "question": TASK,
        "references": texts(references, where, "ref_summs"),
        "context": [required(record, "src", where)],
        "candidates": candidates,
        "gold": {"kind": "ratings", "ratings": ratings},
    }
    return build_item(data, where, {"context": "src", "candidates": "sys_summs"})
