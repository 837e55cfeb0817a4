"""QAGS factual consistency (UniEval form: qags_cnndm.json, qags_xsum.json): a JSON list of
`{doc_id, system_id, source, reference, system_output, scores}`.

One item per record, id `<file stem>-<n>` (n-th record, 1-based): the article is the
context, the summary is the only candidate ("system"), and its scores (consistency) are
ratings gold. `reference` repeats the article, so the item has no reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qatui.data.loaders._common import build_item, first_list_element, json_records, required, unique_ids
from qatui.data.loaders.topical_chat import sniff as _is_topical_chat
from qatui.data.model import Item

TASK = "Summarize the news article."


def load(path: Path) -> list[Item]:
    """One item per record."""
    labelled = [
        (where, _item(f"{path.stem}-{n}", record, where)) for n, (where, record) in enumerate(json_records(path), 1)
    ]
    return unique_ids(labelled, path.name)


def sniff(path: Path, head: str) -> bool:
    """A JSON list of rated summaries (source, system_output, scores) that is not Topical-Chat."""
    first = first_list_element(head)
    return (
        isinstance(first, dict)
        and {"source", "system_output", "scores"} <= first.keys()
        and not _is_topical_chat(path, head)
    )


def _item(item_id: str, record: dict[str, Any], where: str) -> Item:
    data = {
        "id": item_id,
        "question": TASK,
        "context": [required(record, "source", where)],
        "candidates": {"system": required(record, "system_output", where)},
        "gold": {"kind": "ratings", "ratings": {"system": required(record, "scores", where)}},
        "meta": {"doc_id": record.get("doc_id"), "system_id": record.get("system_id")},
    }
    return build_item(data, where, {"context": "source", "candidates": "system_output"})
