"""The native format as one JSON list of records (format name `json`); see `jsonl` for the fields."""

from __future__ import annotations

from pathlib import Path

from qatui.data.loaders._common import first_list_element, json_records, unique_ids
from qatui.data.loaders.jsonl import record_to_item
from qatui.data.model import Item


def load(path: Path) -> list[Item]:
    """Every element of the list as an item."""
    return unique_ids(((where, record_to_item(record, where)) for where, record in json_records(path)), path.name)


def sniff(path: Path, head: str) -> bool:
    """A JSON list of objects, in a .json file or holding candidates."""
    first = first_list_element(head)
    return isinstance(first, dict) and (path.suffix.lower() == ".json" or "candidates" in first)
