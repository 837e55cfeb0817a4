"""Topical-Chat with USR ratings (UniEval form): a JSON list of `{source, context, system_id,
system_output, scores}`, 60 dialogue contexts x 6 response systems.

Records are grouped by `source` (the dialogue history) in first-seen order into items
`dialog1`, `dialog2`, ...: the history is the question, the knowledge fact is the context,
each system's response is a candidate, and every score dimension goes into ratings gold.
There is no reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qatui.data.loaders._common import (
    build_item,
    field_error,
    first_list_element,
    json_records,
    required,
    text_field,
    unique_ids,
)
from qatui.data.model import Item


def load(path: Path) -> list[Item]:
    """One item per dialogue history."""
    dialogs: dict[str, dict[str, Any]] = {}
    for where, record in json_records(path):
        source = text_field(record, "source", where)
        knowledge = text_field(record, "context", where)
        system = text_field(record, "system_id", where)
        dialog = dialogs.setdefault(source, {"where": where, "context": knowledge, "candidates": {}, "ratings": {}})
        if dialog["context"] != knowledge:
            raise field_error(where, "context", f"differs from the one of the same dialogue at {dialog['where']}")
        if system in dialog["candidates"]:
            raise field_error(where, "system_id", f"{system!r} appears twice for the dialogue of {dialog['where']}")
        dialog["candidates"][system] = required(record, "system_output", where)
        dialog["ratings"][system] = required(record, "scores", where)
    labelled: list[tuple[str, Item]] = []
    for number, (source, dialog) in enumerate(dialogs.items(), 1):
        data = {
            "id": f"dialog{number}",
            "question": source.strip(),
            "context": [dialog["context"]],
            "candidates": dialog["candidates"],
            "gold": {"kind": "ratings", "ratings": dialog["ratings"]},
        }
        labelled.append((dialog["where"], build_item(data, dialog["where"], {"question": "source"})))
    return unique_ids(labelled, path.name)


def sniff(path: Path, head: str) -> bool:
    """A JSON list whose first record is a rated response with a string system_id and a knowledge context."""
    first = first_list_element(head)
    return (
        isinstance(first, dict)
        and {"source", "system_output", "scores", "context"} <= first.keys()
        and isinstance(first.get("system_id"), str)
    )
