"""Dataset fuzzing: whatever a file holds, every loader either loads it or raises qatui's own DatasetError.

Hypothesis writes random JSON structures (records with missing, extra and wrongly typed fields,
empty strings, duplicate ids, very long texts, many candidates, NaN and Infinity), raw bytes
(invalid UTF-8, BOMs), CSV text, and hostile values (NaN, Infinity, 1e400, numbers of thousands
of digits, nesting thousands deep) as files of each extension, and loads them by detection and
under every format name. A traceback of any other kind is a bug: the CLI would show it to a user.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qatui.data.loaders import FORMATS, load_dataset
from qatui.safe_read import MAX_DEPTH, MAX_NUMBER_CHARS
from qatui.errors import DatasetError

FIELDS = ["id", "question", "references", "candidates", "gold", "context", "question_type", "language", "meta",
          "answer", "response", "label", "rank", "response_a", "response_b", "reference", "compare_type"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**12), st.floats(allow_nan=True),
                    st.text(max_size=30), st.just(""), st.just("x" * 20_000))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=5)),
                      max_leaves=12)
records = st.dictionaries(st.sampled_from(FIELDS), values, max_size=8)
many_candidates = st.builds(lambda n: {"id": "big", "question": "q?", "references": ["r"],
                                       "candidates": {f"c{i}": "t" for i in range(n)}}, st.integers(0, 3_000))
documents = st.one_of(values, st.lists(st.one_of(records, many_candidates), max_size=6),
                      st.dictionaries(st.text(max_size=20), st.lists(records, max_size=3), max_size=3))


def _check(path: Path) -> None:
    for fmt in (None, *FORMATS):
        try:
            load_dataset(path, fmt)
        except DatasetError as e:
            assert str(e), "a DatasetError must say what is wrong"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents, suffix=st.sampled_from([".json", ".jsonl", ".csv", ".txt"]), as_lines=st.booleans())
def test_random_json_never_escapes_as_a_foreign_error(document, suffix, as_lines) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"data{suffix}"
        if as_lines and isinstance(document, list):
            path.write_text("".join(json.dumps(record) + "\n" for record in document), encoding="utf-8")
        else:
            path.write_text(json.dumps(document), encoding="utf-8")
        _check(path)


@settings(max_examples=120, deadline=None)
@given(raw=st.binary(max_size=400), bom=st.booleans(), suffix=st.sampled_from([".json", ".jsonl", ".csv"]))
def test_random_bytes_never_escape_as_a_foreign_error(raw, bom, suffix) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"data{suffix}"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + raw)
        _check(path)


@settings(max_examples=120, deadline=None)
@given(rows=st.lists(st.lists(st.text(max_size=12), max_size=6), max_size=6))
def test_random_csv_tables_never_escape_as_a_foreign_error(rows) -> None:
    import csv
    import io

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.csv"
        buffer = io.StringIO()
        csv.writer(buffer).writerows([["id", "question", "candidate:a", "gold_ranking"], *rows])
        path.write_text(buffer.getvalue(), encoding="utf-8")
        _check(path)


# -- hostile numbers and nesting: refused with the line and the field, whichever format reads them --------

def _nested(depth: int, as_lists: bool) -> str:
    """JSON text of `depth` lists or objects around a number (written out: json.dumps itself would overflow)."""
    return "[" * depth + "1" + "]" * depth if as_lists else '{"k": ' * depth + "1" + "}" * depth


hostile_values = st.one_of(
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e999"]),
    st.integers(MAX_NUMBER_CHARS + 1, 6_000).map(lambda digits: "9" * digits),
    st.builds(_nested, st.integers(MAX_DEPTH - 1, 3_000), st.booleans()),  # the record and meta are 2 more levels
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=hostile_values, position=st.integers(0, 3), as_list=st.booleans(), fmt=st.sampled_from([None, *FORMATS]))
def test_hostile_numbers_and_nesting_are_refused_naming_line_and_field(value, position, as_list, fmt) -> None:
    """NaN, Infinity, 1e400, numbers of 51 to 6,000 digits, nesting 64 to 3,000 deep inside `meta` of one
    record among good ones: refused with its line and field when read as qatui's own format, and by every
    other format with qatui's own error (never a RecursionError or Python's digit-limit ValueError)."""
    records = [json.dumps({"id": f"q{i}", "question": "q?", "candidates": {"a": "x"}, "meta": {"v": 1}})
               for i in range(4)]
    records[position] = records[position].replace('{"v": 1}', '{"v": ' + value + "}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("data.json" if as_list else "data.jsonl")
        path.write_text("[\n" + ",\n".join(records) + "\n]\n" if as_list else "\n".join(records) + "\n",
                        encoding="utf-8")
        try:
            load_dataset(path, fmt)
        except DatasetError as e:
            message = str(e)
        else:
            raise AssertionError(f"loaded a hostile value under format {fmt}")
        if fmt in (None, "json" if as_list else "jsonl"):
            assert f"data.json{'' if as_list else 'l'} line {position + 2 if as_list else position + 1} column" in message
            assert "field 'meta.v" in message, message
