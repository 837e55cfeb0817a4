"""QAGS factual consistency (UniEval form: qags_cnndm.json, qags_xsum.json): a JSON list of
`{doc_id, system_id, source, reference, system_output, scores}`.

One item per record, id `<file stem>-<n>` (n-th record, 1-based): the article is the
context, the summary is the only candidate ("system"), and its scores (consistency) are
ratings gold. `reference` repeats the article, so the item has no reference; a file whose `reference` differs from
its `source` is another of UniEval's sets (summaries or data-to-text with a human reference) and is not read as
QAGS: its reference would be dropped and its ratings taken for QAGS consistency.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qatui.data.loaders._common import build_item, field_error, first_list_element, json_records, required, unique_ids
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
        and first.get("reference", first["source"]) == first["source"]  # UniEval's other sets have a real reference
        and not _is_topical_chat(path, head)
    )


def _item(item_id: str, record: dict[str, Any], where: str) -> Item:
    source = required(record, "source", where)
    if record.get("reference", source) != source:  # its reference would be dropped, its ratings read as QAGS's
        raise field_error(where, "reference", "differs from the source article: QAGS repeats the article there, so "
                                              "this is another set in UniEval's form (a summary or data-to-text set "
                                              "with a human reference), which qatui does not read as QAGS")
    data = {
        "id": item_id,
        "question": TASK,
        "context": [required(record, "source", where)],
        "candidates": {"system": required(record, "system_output", where)},
        "gold": {"kind": "ratings", "ratings": {"system": required(record, "scores", where)}},
        "meta": {"doc_id": record.get("doc_id"), "system_id": record.get("system_id")},
    }
    return build_item(data, where, {"context": "source", "candidates": "system_output"})
