"""CSV tables: one item per row, columns mapped onto item fields.

Convention (default column names; `csv_mapping` {field: column} renames any of them):
- `question` (required); `id` (default "row<n>", n = 1-based data row); `reference` and
  `context` (one text each); `question_type` ("factoid" / "non-factoid"); `language`.
- Every column named `candidate:<id>` or `response:<id>` holds candidate <id>; a mapping
  key `candidate:<id>` names any other column for candidate <id>. An empty cell means the
  row has no such candidate.
- `gold_ranking`: candidate ids best first, `>` between tiers and `=` within a tier of
  ties, e.g. `c2>c1=c3`; an empty cell means no gold.
A column that the mapping names must exist, as must `question` and one candidate column;
the other default columns are optional. Line numbers in messages are 1-based, header = 1.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from qatui.data.loaders._common import build_item, field_error, read_text, short, unique_ids
from qatui.safe_read import csv_reader
from qatui.data.model import Item
from qatui.errors import DatasetError

FIELDS = ("id", "question", "reference", "context", "question_type", "language", "gold_ranking")
CANDIDATE_PREFIXES = ("candidate:", "response:")


def load(path: Path, mapping: dict[str, str] | None = None) -> list[Item]:
    """Every non-blank data row as an item."""
    mapping = dict(mapping or {})
    unknown = [key for key in mapping if key not in FIELDS and not key.startswith("candidate:")]
    if unknown:
        raise DatasetError(f"csv mapping: unknown field(s) {unknown}; known are {list(FIELDS)} and candidate:<id>")
    reader = csv_reader(io.StringIO(read_text(path), newline=""))
    try:
        header = [name.strip() for name in next(reader)]
        if header and header[0][:1] in ("{", "["):
            raise DatasetError(f"{path.name} line 1: is JSON, not a CSV header; read it with --format jsonl "
                               "(one object a line) or --format json (a list)")
        columns = _columns(path, header, mapping)
        candidates = _candidate_columns(path, header, mapping)
        labelled: list[tuple[str, Item]] = []
        start = reader.line_num + 1
        for row in reader:
            where = f"{path.name} line {start}"
            start = reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise DatasetError(f"{where}: has {len(row)} cells, the header has {len(header)} columns")
            labelled.append((where, _row_item(row, where, len(labelled) + 1, columns, candidates)))
    except csv.Error as exc:
        raise DatasetError(f"{path.name} line {reader.line_num}: malformed CSV: {exc}") from None
    return unique_ids(labelled, path.name)


def _columns(path: Path, header: list[str], mapping: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Field -> (column name, index) for the fields present; a required one missing is an error."""
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if duplicated:
        raise DatasetError(f"{path.name} line 1: column(s) {duplicated} appear more than once")
    found = {}
    for field in FIELDS:
        name = mapping.get(field, field)
        if name in header:
            found[field] = (name, header.index(name))
        elif field in mapping or field == "question":
            raise DatasetError(f"{path.name}: missing column {name!r} (for field {field!r}); columns are {_listed(header)}")
    return found


def _listed(header: list[str], most: int = 8) -> str:
    """The header's column names for a message: the first few, each clipped, and how many more."""
    names = ", ".join(repr(short(name, 24)) for name in header[:most])
    return names + (f" and {len(header) - most} more" if len(header) > most else "")


def _candidate_columns(path: Path, header: list[str], mapping: dict[str, str]) -> dict[str, int]:
    """Candidate id -> column index, from the column prefixes and the mapping."""
    candidates: dict[str, int] = {}

    def add(candidate: str, index: int) -> None:
        if candidate in candidates and candidates[candidate] != index:  # one answer would silently replace the other
            raise DatasetError(f"{path.name} line 1: columns {short(header[candidates[candidate]], 24)!r} and "
                               f"{short(header[index], 24)!r} both name candidate {short(candidate, 24)!r}; "
                               "rename one")
        candidates[candidate] = index

    for index, name in enumerate(header):
        for prefix in CANDIDATE_PREFIXES:  # any case: a `Candidate:c` column was ignored, its answers dropped unsaid
            if name.casefold().startswith(prefix) and name[len(prefix) :].strip():
                add(name[len(prefix) :].strip(), index)
    for key, name in mapping.items():
        if key.startswith("candidate:"):
            if name not in header:
                raise DatasetError(f"{path.name}: missing column {name!r} (for field {key!r}); columns are {_listed(header)}")
            add(key.removeprefix("candidate:"), header.index(name))
    if not candidates:
        raise DatasetError(f"{path.name}: no candidate column; name them 'candidate:<id>' or 'response:<id>'")
    return candidates


def _row_item(
    row: list[str], where: str, number: int, columns: dict[str, tuple[str, int]], candidates: dict[str, int]
) -> Item:
    """One data row as an item; errors name the CSV column, not our field."""
    names = {field: name for field, (name, _) in columns.items()}
    names["references"] = names.get("reference", "reference")
    names["gold"] = names.get("gold_ranking", "gold_ranking")

    def cell(field: str) -> str:
        return row[columns[field][1]].strip() if field in columns else ""

    data = {
        "id": cell("id") if "id" in columns else f"row{number}",
        "question": cell("question"),
        "references": [cell("reference")],
        "context": [cell("context")],
        "candidates": {cid: row[index] for cid, index in candidates.items() if row[index].strip()},
        "question_type": cell("question_type") or None,
        "language": cell("language") or None,
        "gold": _ranking(cell("gold_ranking"), where, names["gold"]),
    }
    return build_item(data, where, names)


def _ranking(cell: str, where: str, column: str) -> dict[str, object] | None:
    """`c2>c1=c3` as ranking gold; an empty cell as None."""
    if not cell:
        return None
    tiers = [[cid.strip() for cid in tier.split("=")] for tier in cell.split(">")]
    if any(not cid for tier in tiers for cid in tier):
        raise field_error(where, column, f"must list candidate ids best first like 'c2>c1=c3', not {cell!r}")
    return {"kind": "ranking", "tiers": tiers}


def sniff(path: Path, head: str) -> bool:
    """A .csv file (any table: the columns are checked on loading)."""
    return path.suffix.lower() == ".csv"
