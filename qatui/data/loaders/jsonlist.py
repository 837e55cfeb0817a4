"""The native format as one JSON list of records (format name `json`); see `jsonl` for the fields."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from qatui.data.loaders._common import first_list_element, json_records, unique_ids
from qatui.data.loaders.jsonl import record_to_item
from qatui.data.model import Item


def load(path: Path) -> list[Item]:
    """Every element of the list as an item."""
    return unique_ids(labelled(path), path.name)


def labelled(path: Path) -> Iterator[tuple[str, Item]]:
    """Each element as an item with its label: the JSON is parsed at once, each item validated as it is reached."""
    return ((where, record_to_item(record, where)) for where, record in json_records(path))


def sniff(path: Path, head: str) -> bool:
    """A JSON list of objects, in a .json file or holding candidates."""
    first = first_list_element(head)
    return isinstance(first, dict) and (path.suffix.lower() == ".json" or "candidates" in first)
