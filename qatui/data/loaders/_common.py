"""Shared plumbing of the loaders: reading, JSON parsing, sniffing and error messages.

Every error a user can cause becomes a `DatasetError` whose message starts with
"<file> <record>: field '<name>': ...", so the CLI can print it without a traceback.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from qatui.data.language import language_by_script
from qatui.data.model import Item, RankingGold
from qatui.safe_read import Refused, check_value, json_lines, loads_json, raw_decode_json
from qatui.safe_read import read_text as read_file_text
from qatui.text import as_shown
from qatui.errors import DatasetError

HEAD_CHARS = 1 << 20
"""How much of a file `detect_format` hands to the sniffers first: enough for the first record of most files (a
longer one is sniffed in the whole file)."""

_EXPECTED = {
    "id": "must be a non-empty string",
    "question": "must be a non-empty string",
    "references": "must be a list of strings",
    "context": "must be a list of strings",
    "candidates": "must be a non-empty object of id -> text",
    "question_type": "must be 'factoid', 'non-factoid' or null",
    "language": "must be a string or null",
    "meta": "must be an object",
}


GOLD_KINDS = "ranking, pairwise or ratings"
"""The values of gold's `kind`, for a message that says what to write."""


def field_error(where: str, field: str, message: str) -> DatasetError:
    """The one shape of a record-level error: file and record, field, what is wrong."""
    return DatasetError(f"{where}: field {field!r}: {message}")


def short(text: str, width: int = 60) -> str:
    """A long key (a question used as a JSON key) cut down for an error message."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def read_text(path: Path) -> str:
    """The file's text (BOM dropped); a missing, undecodable, empty or special file (`safe_read`) is a DatasetError."""
    try:
        text = read_file_text(path)
    except Refused as exc:
        raise DatasetError(f"{path}: {exc}") from None
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror})") from None
    if not text.strip():
        raise DatasetError(f"{path.name}: the file is empty")
    return text


def load_json(path: Path) -> Any:
    """The file parsed as one JSON document; a syntax error names line and column."""
    return parse_json(read_text(path), path.name)


def parse_json(text: str, name: str) -> Any:
    """A whole file's text parsed as one JSON document (`safe_read.loads_json`); errors name line and column."""
    try:
        return loads_json(text)
    except Refused as exc:
        raise DatasetError(exc.message(name)) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{name} line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None


def json_records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """A JSON list of objects, each with its record label ("item 3 (id '7')") for messages."""
    data = load_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{path.name}: must hold a JSON list of records, not a JSON {_json_type(data)}")
    if not data:
        raise DatasetError(f"{path.name}: the list of records is empty")
    records = []
    for index, record in enumerate(data, 1):
        where = f"{path.name} item {index}"
        if not isinstance(record, dict):
            raise DatasetError(f"{where}: must be a JSON object, not a JSON {_json_type(record)}")
        raw_id = record.get("id")
        if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool):
            where += f" (id {str(raw_id)!r})"
        records.append((where, record))
    return records


def json_object(path: Path) -> dict[str, Any]:
    """A JSON object keyed by question text; a non-object or empty object is a DatasetError."""
    data = load_json(path)
    if not isinstance(data, dict):
        raise DatasetError(f"{path.name}: must hold a JSON object keyed by question, not a JSON {_json_type(data)}")
    if not data:
        raise DatasetError(f"{path.name}: the JSON object is empty")
    return data


def jsonl_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """One JSON object per non-blank line, each with its label ("line 7", 1-based)."""
    lines = json_lines(read_text(path))
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            record = loads_json(line)
        except Refused as exc:
            raise DatasetError(exc.message(where, one_line_text=True)) from None
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where} column {exc.colno}: invalid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{where}: must be a JSON object, not a JSON {_json_type(record)}")
        yield where, record


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def required(record: Mapping[str, Any], key: str, where: str) -> Any:
    """`record[key]`, or a DatasetError naming the missing field."""
    if key not in record or record[key] is None:
        raise field_error(where, key, "is required")
    return record[key]


def item_id(record: Mapping[str, Any], where: str) -> str:
    """A required id given as a string or an integer, as a string."""
    value = required(record, "id", where)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise field_error(where, "id", f"must be a string or an integer, not {value!r}")
    return str(value)


def text_field(record: Mapping[str, Any], key: str, where: str) -> str:
    """A required string field."""
    value = required(record, key, where)
    if not isinstance(value, str):
        raise field_error(where, key, f"must be a string, not a JSON {_json_type(value)}")
    return value


def texts(value: Any, where: str, field: str) -> list[str]:
    """A string or a list of strings as a list (references, contexts)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise field_error(where, field, "must be a string or a list of strings")


def grade(value: Any, where: str, field: str) -> float:
    """A numeric quality label (int or float, not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise field_error(where, field, f"must be a number, not {value!r}")
    return value


def python_literal(value: Any, where: str, field: str) -> Any:
    """A string that holds a Python list or dict literal, parsed safely; any other value as is."""
    if not (isinstance(value, str) and value.lstrip()[:1] in ("[", "{")):
        return value
    try:
        tree = ast.parse(value.strip(), mode="eval")
        if twice := _repeated_key(tree):  # literal_eval keeps the last of a repeated key: an answer lost unseen
            raise field_error(where, field, f"holds the key {short(twice, 24)!r} twice (one value would be lost)")
        parsed = ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise field_error(where, field, f"is not a valid list/dict literal ({type(exc).__name__})") from None
    try:
        check_value(parsed)
    except Refused as exc:
        inner = Refused(exc.reason, path=(field, *exc.path))
        raise DatasetError(inner.message(where)) from None
    return parsed


def _repeated_key(tree: ast.AST) -> str | None:
    """A key written twice in any dict literal of `tree` (a constant key, as `ast.literal_eval` reads one), or None."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            seen: set[object] = set()
            for key in node.keys:
                if isinstance(key, ast.Constant):
                    if key.value in seen:
                        return str(key.value)
                    seen.add(key.value)
    return None


def ranking_by_grade(grades: Mapping[str, float]) -> RankingGold:
    """Candidates ranked by grade, higher first; equal grades share a tier."""
    tiers: dict[float, list[str]] = {}
    for cid, value in grades.items():
        tiers.setdefault(value, []).append(cid)
    return RankingGold(tiers=[tiers[g] for g in sorted(tiers, reverse=True)])


def chinese_or_none(text: str) -> str | None:
    """'zh' when the text is Chinese; None lets `item_language` decide later."""
    return "zh" if language_by_script(text) == "zh" else None


def build_item(data: dict[str, Any], where: str, raw_names: Mapping[str, str] | None = None) -> Item:
    """An `Item` from `data`; a validation error names the record and the field as the file spells it."""
    try:
        return Item.model_validate(data)
    except ValidationError as exc:
        raise _explain(exc, where, raw_names or {}) from None


def _explain(exc: ValidationError, where: str, raw_names: Mapping[str, str]) -> DatasetError:
    error = exc.errors(include_url=False)[0]
    loc = [str(part) for part in error["loc"]]
    if loc[:1] == ["gold"] and len(loc) > 1:
        del loc[1]  # the discriminator tag pydantic adds: 'gold.ranking.tiers' -> 'gold.tiers'
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "union_tag_not_found":  # pydantic's words name its discriminator, not what to write
        message = f"needs a kind: {GOLD_KINDS}"
    if not loc:  # an item-level check; today only the one that gold names known candidates
        if message.startswith("gold "):
            return field_error(where, raw_names.get("gold", "gold"), message)
        return DatasetError(f"{where}: {message}")
    if error["type"] == "missing":
        message = "is required"
    elif error["type"] == "extra_forbidden":
        message = "is not a field of an item"
    elif len(loc) == 1 and loc[0] in _EXPECTED and error["type"] != "value_error":  # a check's own words stay
        message = _EXPECTED[loc[0]]
    loc[0] = raw_names.get(loc[0], loc[0])
    return field_error(where, ".".join(loc), message)


def question_keyed_items(path: Path, make: Callable[[str, str, Any, str], Item]) -> list[Item]:
    """Items of a JSON object keyed by question text: `make(item_id, question, value, where)` per key, ids q1.."""
    labelled = []
    for index, (question, value) in enumerate(json_object(path).items(), 1):
        where = f"{path.name} key {short(question)!r}"
        labelled.append((where, make(f"q{index}", question, value, where)))
    return unique_ids(labelled, path.name)


def unique_ids(labelled: Iterable[tuple[str, Item]], source: str) -> list[Item]:
    """The items of `source`, after checking there is one and no id occurs twice (naming both records)."""
    return list(unique_items(labelled, source))


def unique_items(labelled: Iterable[tuple[str, Item]], source: str) -> Iterator[Item]:
    """The items of `source` as they come, with `unique_ids`' checks raised where they fail (a duplicate, no item)."""
    seen: dict[str, str] = {}
    shown: dict[str, str] = {}  # an id's NFC form -> the id: two ids of one form show as one
    for where, item in labelled:
        if item.id in seen:
            raise field_error(where, "id", f"duplicate item id {item.id!r} (first used at {seen[item.id]})")
        other = shown.setdefault(as_shown(item.id), item.id)
        if other != item.id:
            raise field_error(where, "id", f"item id {ascii(item.id)} differs from {ascii(other)} (at {seen[other]}) "
                                           "only in how its Unicode is composed or in invisible characters, so they "
                                           "show as the same id; rename one")
        seen[item.id] = where
        yield item
    if not seen:
        raise DatasetError(f"{source}: holds no items")


def first_list_element(head: str) -> Any:
    """The first element of a JSON list that starts in `head`, or None."""
    text = head.lstrip()
    decoded = _decode_at(text, 1) if text.startswith("[") else None
    return decoded[0] if decoded else None


def first_dict_entry(head: str) -> tuple[str, Any] | None:
    """The first key and value of a JSON object that starts in `head`, or None."""
    text = head.lstrip()
    key = _decode_at(text, 1) if text.startswith("{") else None
    if key is None or not isinstance(key[0], str):
        return None
    colon = text.find(":", key[1])
    value = _decode_at(text, colon + 1) if colon >= 0 else None
    return (key[0], value[0]) if value else None


def first_jsonl_record(head: str) -> dict[str, Any] | None:
    """The first non-blank line of `head` parsed as a JSON object, or None."""
    line = next((line for line in json_lines(head) if line.strip()), "")
    try:
        record = loads_json(line)
    except ValueError:  # not JSON, or refused: the loader says why when the file is read as JSON lines
        return None
    return record if isinstance(record, dict) else None


def _decode_at(text: str, start: int) -> tuple[Any, int] | None:
    index = start
    while index < len(text) and text[index].isspace():
        index += 1
    try:
        return raw_decode_json(text, index)
    except ValueError:  # not JSON, or refused (`safe_read`): the loader says why
        return None
