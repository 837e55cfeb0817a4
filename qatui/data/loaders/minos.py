"""The MinosEval release (GaoKao_Minos.json, Align_Minos.json): a JSON list of
`{id, question, answer, response, label, rank}`.

`answer` is the reference (a string or a list of them), `response` maps candidate ids to
texts, `label` is 1 for factoid and 0 for non-factoid questions, and `rank` (absent in the
early release) lists candidate ids best first; a nested list in `rank` is a tier of ties.
Any field may instead be a string holding a Python list/dict literal, as the release's own
scripts write them; those are parsed with `ast.literal_eval`, never executed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qatui.data.loaders._common import (
    build_item,
    chinese_or_none,
    field_error,
    first_list_element,
    item_id,
    json_records,
    python_literal,
    required,
    unique_ids,
)
from qatui.data.model import Item, QuestionType
from qatui.errors import DatasetError

_QUESTION_TYPES: dict[str, QuestionType] = {"1": "factoid", "0": "non-factoid"}
_RAW_NAMES = {"references": "answer", "candidates": "response", "gold": "rank", "question_type": "label"}


def load(path: Path) -> list[Item]:
    """Every record of the list as an item, with ranking gold when `rank` is present."""
    return unique_ids(labelled(path), path.name)


def labelled(path: Path) -> Iterator[tuple[str, Item]]:
    """Each record as an item with its label: the JSON is parsed at once, each item validated as it is reached."""
    return ((where, _item(record, where)) for where, record in json_records(path))


def sniff(path: Path, head: str) -> bool:
    """A JSON list whose first record has question, answer and response."""
    first = first_list_element(head)
    return isinstance(first, dict) and {"question", "answer", "response"} <= first.keys()


def _item(record: dict[str, Any], where: str) -> Item:
    question = required(record, "question", where)
    rank = python_literal(record.get("rank"), where, "rank")
    data = {
        "id": item_id(record, where),
        "question": question,
        "references": _references(required(record, "answer", where), where),
        "candidates": python_literal(required(record, "response", where), where, "response"),
        "question_type": _question_type(record.get("label"), where),
        "language": chinese_or_none(question) if isinstance(question, str) else None,
        "gold": None if rank is None else {"kind": "ranking", "tiers": _tiers(rank, where)},
    }
    return build_item(data, where, _RAW_NAMES)


def _question_type(label: Any, where: str) -> QuestionType | None:
    """1 or "1" -> factoid, 0 or "0" -> non-factoid, absent -> unknown."""
    if label is None:
        return None
    if type(label) in (int, str) and str(label) in _QUESTION_TYPES:
        return _QUESTION_TYPES[str(label)]
    raise field_error(where, "label", f"must be 1 (factoid) or 0 (non-factoid), not {label!r}")


def _references(answer: Any, where: str) -> Any:
    """The reference list; a text that merely starts with a bracket stays one reference."""
    if isinstance(answer, str):
        try:
            parsed = python_literal(answer, where, "answer")
        except DatasetError:
            return [answer]
        return parsed if isinstance(parsed, list) else [answer]
    return answer


def _tiers(rank: Any, where: str) -> list[list[str]]:
    """`rank` (ids best first, a nested list being a tier of ties) as tiers of ids."""
    if not isinstance(rank, list) or not rank:
        raise field_error(where, "rank", "must be a non-empty list of candidate ids, best first")
    return [[str(cid) for cid in entry] if isinstance(entry, list) else [str(entry)] for entry in rank]
