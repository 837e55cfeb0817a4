"""The native format: one JSON object per line with exactly the fields of `Item`.

Shorthands: `"reference": "text"` for `"references": ["text"]`, a string `context` for a
one-element list, and an integer `id`. Gold takes the model's form, e.g.
`{"kind": "ranking", "tiers": [["c1"], ["c2", "c3"]]}`. Blank lines are ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qatui.data.loaders._common import build_item, field_error, first_jsonl_record, jsonl_records, unique_ids
from qatui.data.model import Item


def load(path: Path) -> list[Item]:
    """Every line of the file as an item."""
    return unique_ids(labelled(path), path.name)


def labelled(path: Path) -> Iterator[tuple[str, Item]]:
    """Each line as an item with its label, validated as it is reached (a viewer reads a big file's first lines first)."""
    return ((where, record_to_item(record, where)) for where, record in jsonl_records(path))


def sniff(path: Path, head: str) -> bool:
    """A first line that is a JSON object, in a .jsonl file or holding candidates."""
    record = first_jsonl_record(head)
    return record is not None and (path.suffix.lower() in (".jsonl", ".ndjson") or "candidates" in record)


def record_to_item(record: dict[str, Any], where: str) -> Item:
    """One native record as an item, after expanding the shorthands (shared with the `json` format)."""
    data = dict(record)
    if "reference" in data:
        if "references" in data:
            raise field_error(where, "reference", "give either 'reference' or 'references', not both")
        reference = data.pop("reference")
        if not isinstance(reference, str):
            raise field_error(where, "reference", "must be a string")
        data["references"] = [reference]
    if isinstance(data.get("context"), str):
        data["context"] = [data["context"]]
    if isinstance(data.get("id"), int) and not isinstance(data["id"], bool):
        data["id"] = str(data["id"])
    return build_item(data, where)
