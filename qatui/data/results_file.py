"""Reading a file of results another tool produced (`qatui sessions import`): rows, each with where it is.

Three kinds, each a fixed set of columns (CSV) or fields (JSONL, one object a line):

    score     item_id, candidate_id, score      a finite number, higher is better
    ranking   item_id, candidate_id, rank       a whole number from 1 (best); equal ranks are ties
    pairwise  item_id, a, b, verdict            A, B or tie: which of candidates a and b is better

and the ragas result table (`EvaluationResult.to_pandas()` written as CSV or JSONL): its
`user_input` and `response` columns say which item and candidate a row scores, a metric
column (`faithfulness`, `answer_relevancy`, ...) the score. Every value is checked here, row by
row; whether the ids exist is checked against the dataset (`data.imported`). Nothing here
writes anything.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qatui.safe_read import Refused, check_regular, csv_reader, json_lines, loads_json, read_text
from qatui.errors import ResultsFileError
from qatui.text import clip, plain

KINDS = ("score", "ranking", "pairwise")
FORMATS = ("csv", "jsonl", "ragas")
COLUMNS = {
    "score": ("item_id", "candidate_id", "score"),
    "ranking": ("item_id", "candidate_id", "rank"),
    "pairwise": ("item_id", "a", "b", "verdict"),
}
"""The columns (CSV) or fields (JSONL) of each kind, all required, no others."""
VERDICTS = {"a": "A", "b": "B", "tie": "tie"}
"""Accepted pairwise verdicts, any case, and how they are stored."""
RAGAS_SAMPLE_COLUMNS = ("user_input", "retrieved_contexts", "reference_contexts", "response", "multi_responses",
                        "reference", "rubric", "rubrics")
"""The columns of a ragas result that describe the sample (ragas' SingleTurnSample); the others are metrics."""


@dataclass(frozen=True)
class Row:
    """One record of the file: its values (checked for their type) and where it is, for messages."""

    number: int
    line: int
    values: dict[str, Any]

    @property
    def where(self) -> str:
        """'row 3 (line 4)': the 1-based record number and the line it starts on."""
        return f"row {self.number} (line {self.line})"


@dataclass(frozen=True)
class ResultsFile:
    """The rows of a results file, read and type-checked; `metric` is the ragas column read as the score."""

    path: Path
    format: str
    kind: str
    rows: list[Row]
    metric: str | None = None


def detect_format(path: Path) -> str:
    """csv or jsonl from the file's suffix; anything else must be named with --format."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise ResultsFileError(f"{path}: cannot tell the format from the suffix {suffix or '(none)'!r}; "
                           f"pass --format ({', '.join(FORMATS)})")


def read_results(path: str | Path, kind: str, fmt: str | None = None, metric: str | None = None) -> ResultsFile:
    """Every row of the results file at `path` as `kind`, each value checked; the first problems raise, with rows."""
    path = Path(path).expanduser()
    if kind not in KINDS:
        raise ResultsFileError(f"unknown kind {kind!r}; kinds are: {', '.join(KINDS)}")
    if fmt is not None and fmt not in FORMATS:
        raise ResultsFileError(f"unknown results format {fmt!r}; formats are: {', '.join(FORMATS)}")
    try:
        check_regular(path, folder=False)
    except Refused as e:
        raise ResultsFileError(f"{path}: {e}") from None
    if not path.is_file():
        raise ResultsFileError(f"{path}: no such file")
    fmt = fmt or detect_format(path)
    if fmt == "ragas":
        if kind != "score":
            raise ResultsFileError(f"{path}: a ragas result holds scores; --kind {kind} does not apply to it")
        records, columns = _records(path, "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else "csv")
        metric = _ragas_metric(path, columns, metric)
        expected: tuple[str, ...] = ("user_input", "response", metric)
    else:
        if metric is not None:
            raise ResultsFileError("--metric picks a column of a ragas result; it does not apply to --format " + fmt)
        records, columns = _records(path, fmt)
        expected = COLUMNS[kind]
    rows, problems = [], []
    for number, (line, record) in enumerate(records, start=1):
        row_problems = _check_fields(record, expected, strict=fmt != "ragas")
        if not row_problems:
            values, row_problems = _typed(record, kind, fmt, metric)
        if row_problems:
            problems += [f"row {number} (line {line}): {p}" for p in row_problems]
        else:
            rows.append(Row(number, line, values))
    if problems:
        raise_problems(path, problems)
    if not rows:
        raise ResultsFileError(f"{path}: no rows; a {kind} file has the columns {', '.join(expected)}")
    return ResultsFile(path, fmt, kind, rows, metric if fmt == "ragas" else None)


def raise_problems(path: Path, problems: list[str]) -> None:
    """Refuse with the first problem, and how many more there are (one line)."""
    more = len(problems) - 1
    raise ResultsFileError(f"{path}: {problems[0]}" + (f" (and {more} more problem{'s' if more > 1 else ''})"
                                                        if more else ""))


def _records(path: Path, fmt: str) -> tuple[Iterator[tuple[int, dict[str, Any]]], list[str]]:
    """(line, record) pairs of a CSV or JSONL file and its columns (CSV header; JSONL: none up front)."""
    try:
        text = read_text(path)
    except Refused as e:
        raise ResultsFileError(f"{path}: {e}") from None
    except OSError as e:
        raise ResultsFileError(f"{path}: cannot be read: {e.strerror}") from None
    if fmt == "jsonl":
        return _jsonl(path, text), []
    return _csv(path, text)


def _csv(path: Path, text: str) -> tuple[Iterator[tuple[int, dict[str, Any]]], list[str]]:
    """CSV records with the line each starts on; the header must name each column once."""
    lines = text.splitlines(keepends=True)
    reader = csv_reader(lines)
    try:
        header = next(reader)
    except StopIteration:
        raise ResultsFileError(f"{path}: empty file; the first line names the columns") from None
    except csv.Error as e:
        raise ResultsFileError(f"{path}: line 1: not CSV: {e}") from None
    header = [h.strip() for h in header]
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise ResultsFileError(f"{path}: line 1: column {repeated[0]!r} appears twice")

    def records() -> Iterator[tuple[int, dict[str, Any]]]:
        start = reader.line_num + 1
        try:
            for cells in reader:
                if any(c.strip() for c in cells):
                    if len(cells) != len(header):
                        yield start, {"__cells__": len(cells)}
                    else:
                        yield start, dict(zip(header, cells))
                start = reader.line_num + 1
        except csv.Error as e:
            raise ResultsFileError(f"{path}: line {reader.line_num}: not CSV: {e}") from None

    return records(), header


def _jsonl(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """JSONL records with their line; a line that is not a JSON object is refused with its number."""
    for line, raw in enumerate(json_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            record = loads_json(raw)
        except Refused as e:
            raise ResultsFileError(e.message(f"{path}: line {line}", one_line_text=True)) from None
        except json.JSONDecodeError as e:
            raise ResultsFileError(f"{path}: line {line}: not JSON: {e.msg} (column {e.colno})") from None
        if not isinstance(record, dict):
            raise ResultsFileError(f"{path}: line {line}: a row is a JSON object, not {type(record).__name__}")
        yield line, record


def _check_fields(record: dict[str, Any], expected: tuple[str, ...], *, strict: bool) -> list[str]:
    """Missing fields, and (strict) fields the kind does not have."""
    if "__cells__" in record:
        return [f"{record['__cells__']} cells where the header names {len(expected)} columns"]
    problems = [f"field {name!r} is missing" for name in expected if name not in record]
    if strict:
        problems += [f"field {name!r} is not one of {', '.join(expected)}" for name in record if name not in expected]
    return problems


def _typed(record: dict[str, Any], kind: str, fmt: str, metric: str | None) -> tuple[dict[str, Any], list[str]]:
    """The row's values with their types (ids as text, numbers as numbers), and what is wrong with them."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    id_fields = ("user_input", "response") if fmt == "ragas" else tuple(c for c in COLUMNS[kind] if c not in
                                                                           ("score", "rank", "verdict"))
    for name in id_fields:
        value = record[name]
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"field {name!r}: {'empty' if value in ('', None) else f'{value!r} is not text'}")
        else:
            values[name] = value.strip()
    if fmt == "ragas":
        values["score"], problem = _number(record[metric], allow_nan=True)
        problems += [f"field {metric!r}: {problem}"] if problem else []
    elif kind == "score":
        values["score"], problem = _number(record["score"])
        problems += [f"field 'score': {problem}"] if problem else []
    elif kind == "ranking":
        rank, problem = _number(record["rank"])
        if problem is None and (rank != int(rank) or rank < 1):
            problem = f"{record['rank']!r} is not a whole number of 1 or more"
        values["rank"] = None if problem else int(rank)
        problems += [f"field 'rank': {problem}"] if problem else []
    else:
        verdict = record["verdict"]
        values["verdict"] = VERDICTS.get(verdict.strip().lower()) if isinstance(verdict, str) else None
        if values["verdict"] is None:
            problems.append(f"field 'verdict': {verdict!r} is not A, B or tie")
    return values, problems


def _number(value: Any, *, allow_nan: bool = False) -> tuple[float | None, str | None]:
    """A finite number from a JSON number or CSV text; NaN or null (ragas' failed sample) only when allowed, as None."""
    if allow_nan and (value is None or (isinstance(value, str) and not value.strip())):  # pandas writes NaN as
        return None, None  # null in JSON lines and as an empty cell in CSV (`to_csv`'s na_rep)
    if isinstance(value, str):  # quoted, cut: a 5,000-digit cell was echoed whole in the error line
        shown = repr(clip(plain(value), 40))
    elif isinstance(value, int) and abs(value) >= 10**40:  # repr of an int past 4,300 digits fails
        shown = f"a number of about {value.bit_length() * 0.30103:,.0f} digits"
    else:
        shown = clip(plain(repr(value)), 40)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, f"{shown} is not a number"
    try:
        number = float(value)
    except (ValueError, OverflowError):  # OverflowError: an integer past a double's range
        return None, f"{shown} is not a number"
    if math.isnan(number) and allow_nan:
        return None, None
    if not math.isfinite(number):
        return None, f"{shown} is not a finite number"
    return number, None


def _ragas_metric(path: Path, columns: list[str], metric: str | None) -> str:
    """The metric column of a ragas result: `metric` when given, else the only one."""
    if not columns:  # JSONL: read the first record's keys
        first = next(_jsonl(path, read_text(path)), None)
        columns = list(first[1]) if first else []
    metrics = [c for c in columns if c not in RAGAS_SAMPLE_COLUMNS]
    if metric is not None:
        if metric not in columns:
            raise ResultsFileError(f"{path}: --metric {metric!r} is not a column; metric columns: "
                                   f"{', '.join(metrics) or 'none'}")
        return metric
    if len(metrics) != 1:
        found = ", ".join(metrics) if metrics else "none"
        raise ResultsFileError(f"{path}: a ragas result needs one metric column to import, or --metric NAME; "
                               f"metric columns found: {found}")
    return metrics[0]
