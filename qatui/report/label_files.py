"""Label files: `qatui labels export` writes people's labels as JSONL or CSV, `qatui labels import` merges them.

One row per (annotator, item), the same fields in both formats (docs/LABELS.md, "Label files"):
`annotator`, `dataset` (the content hash), `dataset_name`, `dataset_path`, `format`,
`item_id`, `kind`, `label` (`r2>r4=r1>r3`, `A` / `B` / `tie`, or ratings as JSON), `a`, `b`
(a pair's responses, A then B) and `updated`. In CSV a cell a spreadsheet would run as a formula (an item id
`=HYPERLINK(...)`) starts with `'`, as does one that starts with `'`; an import takes that one mark off
(`report.cells`), so ids come back as they were. An import checks every row against its
dataset before it writes anything, so a bad row leaves every label file as it was; a file that
cannot be written (another writer holds it, a full disk) puts back every file the import touched.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

from qatui.data.labels import LabelRules, check_annotator, label_text, parse_label
from qatui.report.cells import sheet_cell, sheet_value
from qatui.safe_read import Refused, csv_dict_reader, json_lines, loads_json, read_text
from qatui.errors import DatasetError, LabelError
from qatui.text import plain

if TYPE_CHECKING:
    from qatui.data.labels import Label
    from qatui.data.model import Dataset
    from qatui.store.labels import LabelStore

FIELDS = ("annotator", "dataset", "dataset_name", "dataset_path", "format", "item_id", "kind", "label", "a", "b",
          "updated")
REQUIRED = ("annotator", "dataset", "item_id", "kind", "label")


def _suffix(path: Path) -> str:
    """`jsonl` or `csv` from a file name; LabelError otherwise."""
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in ("jsonl", "csv"):
        raise LabelError(f"{path}: a label file ends in .jsonl or .csv")
    return suffix


def export_rows(store: LabelStore, annotators: list[str]) -> list[dict[str, str]]:
    """Every label of these annotators, over every dataset, as rows (annotator, dataset, item order kept)."""
    rows = []
    for annotator in annotators:
        passes = store.passes(annotator)
        if not passes:
            known = ", ".join(store.annotators()) or "nobody has labelled anything yet"
            raise LabelError(f"annotator {annotator!r} has no labels in {store.root}; annotators: {known}")
        for labels in passes:
            ds = labels.dataset
            for label in labels.labels().values():
                rows.append({"annotator": annotator, "dataset": ds["content_hash"], "dataset_name": ds["name"],
                             "dataset_path": ds["path"], "format": ds["format"], "item_id": label.item_id,
                             "kind": label.kind, "label": label_text(label), "a": label.a or "", "b": label.b or "",
                             "updated": label.updated})
            labels.close()
    return rows


def write_rows(rows: list[dict[str, str]], path: Path) -> None:
    """The rows as JSONL or CSV, by the file's suffix."""
    if _suffix(path) == "jsonl":
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: sheet_cell(v) for k, v in row.items()} for row in rows)
        text = buffer.getvalue()
    from qatui.store.output_file import write_output

    write_output(path, text)


def read_rows(path: Path) -> list[tuple[str, dict[str, str]]]:
    """The rows of a label file, each with where it is ('line 3'); LabelError naming the line of a broken one."""
    try:
        text = read_text(path)
    except Refused as e:
        raise LabelError(f"{path}: {e}") from None
    except OSError as e:
        raise LabelError(f"{path}: cannot read it ({e})") from None
    rows: list[tuple[str, dict[str, str]]] = []
    if _suffix(path) == "jsonl":
        for number, line in enumerate(json_lines(text), 1):
            if not line.strip():
                continue
            try:
                row = loads_json(line)
            except Refused as e:
                raise LabelError(e.message(f"{path}, line {number}", one_line_text=True)) from None
            except ValueError as e:
                raise LabelError(f"{path}, line {number}: not JSON ({e})") from None
            if not isinstance(row, dict):
                raise LabelError(f"{path}, line {number}: a row is a JSON object")
            _check_fields(path, f"line {number}", row)
            rows.append((f"line {number}", {k: "" if v is None else json.dumps(v) if k == "label" and isinstance(
                v, dict) else v for k, v in row.items()}))  # ratings as an object, or as its JSON text
    else:
        reader = csv_dict_reader(io.StringIO(text))
        if unknown := [name for name in reader.fieldnames or () if name not in FIELDS]:
            raise LabelError(f"{path}, line 1: unknown column {unknown[0]!r}; a label file's columns are "
                             f"{', '.join(FIELDS)}")
        for row in reader:
            columns = len(reader.fieldnames or ())
            cells = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None) or ())
            if cells != columns:  # DictReader drops the cells past the header and fills a short row with None
                raise LabelError(f"{path}, line {reader.line_num}: {cells} cells where the header names {columns} "
                                 "columns (a label holding a comma is quoted)")
            rows.append((f"line {reader.line_num}", {k: sheet_value(v or "") for k, v in row.items()}))
    if not rows:
        raise LabelError(f"{path}: no label rows")
    return rows


def _check_fields(path: Path, where: str, row: dict) -> None:
    """A JSONL row's fields: those an export writes, each a string (or null), and a ratings `label` also as the
    object itself: a number was made into text before (an annotator 5 became "5", a field `foo` was dropped
    unseen); LabelError naming the first bad one."""
    for key, value in row.items():
        if key not in FIELDS:
            raise LabelError(f"{path}, {where}: unknown field {plain(key)!r}; a label row's fields are "
                             f"{', '.join(FIELDS)}")
        if value is not None and not isinstance(value, str) and not (key == "label" and isinstance(value, dict)):
            kind = ("true or false" if isinstance(value, bool) else "a number" if isinstance(value, int | float)
                    else "a list" if isinstance(value, list) else "an object")
            raise LabelError(f"{path}, {where}: field {key!r} must be a string in quotes, not {kind}")


def check_rows(path: Path, rows: list[tuple[str, dict[str, str]]], dataset: Dataset | None = None,
               scale: tuple[float, float] | None = None) -> dict[tuple[str, str], tuple[dict, list[Label]]]:
    """Every row parsed and checked against its dataset: (annotator, content hash) -> (dataset meta, labels).

    A row's dataset is loaded from its `dataset_path` and `format` (or is `dataset`, given
    when the labels were made elsewhere) and must still have the row's content hash; its label follows the
    dataset's `LabelRules` (the item's kind, its responses and dimensions, ratings on `scale` or the dataset's).
    LabelError names the file, the line and the field of the first bad row.
    """
    from qatui.data.loaders import load_dataset

    loaded: dict[tuple[str, str], Dataset] = {}
    rules: dict[str, LabelRules] = {}
    groups: dict[tuple[str, str], tuple[dict, list[Label]]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    for where, row in rows:
        def bad(message: str, where: str = where) -> LabelError:
            return LabelError(f"{path}, {where}: {message}")

        missing = [name for name in REQUIRED if not row.get(name, "").strip()]
        if missing:
            raise bad(f"missing {', '.join(missing)}")
        try:
            annotator = check_annotator(row["annotator"])
        except LabelError as e:
            raise bad(str(e)) from None
        source = dataset
        if source is None:
            key = (row.get("dataset_path", ""), row.get("format", ""))
            if not key[0]:
                raise bad("no dataset_path: pass --dataset PATH to say which dataset these labels are of")
            if key not in loaded:
                try:
                    loaded[key] = load_dataset(key[0], key[1] or None)
                except DatasetError as e:
                    raise bad(f"its dataset cannot be loaded ({e}); pass --dataset PATH") from None
            source = loaded[key]
        if row["dataset"] != source.content_hash:
            raise bad(f"dataset {row['dataset'][:16]}… is not {source.name} as it is now ({source.content_hash[:16]}…): "
                      "the file changed since these labels were made")
        item = next((i for i in source.items if i.id == row["item_id"]), None)
        if item is None:
            raise bad(f"item_id {row['item_id']!r} is not an item of {source.name}")
        try:
            if source.content_hash not in rules:
                rules[source.content_hash] = LabelRules.of(source, scale)
            label = parse_label(item, row["kind"], row["label"], rules[source.content_hash], row.get("updated", ""))
        except ValueError as e:
            raise bad(f"label of item {item.id}: {e}") from None
        if (earlier := seen.get((annotator, source.content_hash, item.id))) is not None:
            raise bad(f"{annotator}'s label of item {item.id} is given twice ({earlier} and {where})")
        seen[(annotator, source.content_hash, item.id)] = where
        meta = {"name": source.name, "path": source.path, "format": source.format,
                "content_hash": source.content_hash}
        groups.setdefault((annotator, source.content_hash), (meta, []))[1].append(label)
    return groups


def import_labels(store: LabelStore, path: Path, dataset: Dataset | None = None,
                  scale: tuple[float, float] | None = None) -> dict[str, int]:
    """Merge a label file into the store, all or nothing: every row checked, every lock taken, then each
    (annotator, dataset) file written; a failure on any file puts every file back as it was.

    Ratings are on `scale` (`--scale`), else each dataset's (`data.labels.rating_scale`). An imported label replaces
    that annotator's earlier label of the item. Returns counts:
    `rows`, `new`, `replaced`, `files`.
    """
    groups = check_rows(path, read_rows(path), dataset, scale)
    counts = {"rows": 0, "new": 0, "replaced": 0, "files": len(groups)}
    try:
        with store.writing([(annotator, meta) for (annotator, _), (meta, _) in groups.items()]) as passes:
            for labels, (_, new) in zip(passes, groups.values(), strict=True):
                before = labels.labels()
                labels.put_many(new)
                counts["rows"] += len(new)
                counts["replaced"] += sum(label.item_id in before for label in new)
                counts["new"] += sum(label.item_id not in before for label in new)
    except OSError as e:
        where = e.filename or store.root
        raise LabelError(f"cannot write the labels in {where}: {e.strerror or e}; nothing was imported") from None
    except LabelError as e:
        raise LabelError(f"{e}; nothing was imported") from None
    return counts
