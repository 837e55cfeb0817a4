"""The fidelity ledger (docs/FIDELITY.md) stays true: what it names exists, and judges claim only its reproduced rows.

The ledger's format is described in its "How to read it" section; this test is its reader.
"""

from __future__ import annotations

import argparse
import ast
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from qatui.cli.parser import build_parser
from qatui.judges.registry import JUDGES, judge_class

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "docs" / "FIDELITY.md"
STEPS_HEADER = ("step", "the paper", "in qatui", "verdict")
ROWS_HEADER = ("row", "the paper's row", "judge", "status")
VERDICTS = ("same", "differs because", "qatui's option")
SPAN = re.compile(r"`([^`]+)`")
CELL_SPLIT = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class Table:
    """One Markdown table of the ledger: its header cells and rows of cells, with the line each starts on."""

    header: tuple[str, ...]
    rows: list[tuple[int, list[str]]]


def read_tables(text: str) -> list[Table]:
    """Every pipe table of `text` (a header, a |---| line, rows); escaped pipes stay in their cell."""
    tables: list[Table] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(\s*-+\s*\|)+", lines[i + 1].strip()):
            header = tuple(_cells(lines[i]))
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append((i + 1, _cells(lines[i])))
                i += 1
            tables.append(Table(header, rows))
        else:
            i += 1
    return tables


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in CELL_SPLIT.split(line.strip())[1:-1]]


def _defined(path: Path, dotted: str) -> bool:
    """Whether `dotted` (Name or Class.method) is defined in the Python file: a def, a class or an assignment."""
    body: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    for part in dotted.split("."):
        found = None
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == part:
                found = node
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == part for t in node.targets):
                found = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == part:
                found = node
        if found is None:
            return False
        body = getattr(found, "body", [])
    return True


def _flags(parser: argparse.ArgumentParser, words: list[str]) -> set[str]:
    """The option strings of the (sub)command `words` names."""
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return {s for action in parser._actions for s in action.option_strings}


def check_reference(ref: str) -> str | None:
    """Why `ref` names nothing that exists (None when it does); see the ledger's "How to read it"."""
    if ref.startswith("qatui "):
        *words, flag = ref.split()[1:]
        try:
            flags = _flags(build_parser(), words)
        except (KeyError, StopIteration):
            return f"no command `qatui {' '.join(words)}`"
        return None if flag in flags else f"`qatui {' '.join(words)}` has no flag {flag}"
    if m := re.fullmatch(r"([a-z][a-z-]*):([a-z_]+)", ref):
        judge, option = m.groups()
        if judge not in JUDGES:
            return f"no judge {judge!r}"
        return None if option in judge_class(judge).Options.model_fields else f"judge {judge!r} has no option {option!r}"
    if m := re.fullmatch(r"(qatui/[\w/.-]+\.toml) \[([\w.]+)\]", ref):
        path, section = ROOT / m.group(1), m.group(2)
        if not path.is_file():
            return f"no file {m.group(1)}"
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        for key in section.split("."):
            if not isinstance(table, dict) or key not in table:
                return f"{m.group(1)} has no [{section}]"
            table = table[key]
        return None
    if m := re.fullmatch(r"(qatui/[\w/.-]+)(?:::([\w.]+))?", ref):
        path, name = ROOT / m.group(1), m.group(2)
        if not path.exists():
            return f"no file {m.group(1)}"
        if name is None:
            return None
        if path.suffix != ".py":
            return f"{m.group(1)} is not a Python file"
        return None if _defined(path, name) else f"{m.group(1)} defines no {name}"
    return "not a reference (a path, path::name, prompt [section], judge:option or `qatui ... --flag`)"


def _looks_like_reference(span: str) -> bool:
    return span.startswith(("qatui/", "qatui ")) or re.fullmatch(r"[a-z][a-z-]*:[a-z_]+", span) is not None


def ledger_problems(text: str) -> list[str]:
    """Everything in the ledger that names what does not exist, or breaks its format."""
    problems: list[str] = []
    tables = read_tables(text)
    steps = [t for t in tables if t.header == STEPS_HEADER]
    rows = [t for t in tables if t.header == ROWS_HEADER]
    if not steps or not rows:
        problems.append("the ledger has no steps table or no rows table")
    for table in tables:
        if table.header not in (STEPS_HEADER, ROWS_HEADER):
            problems.append(f"a table with an unknown header {table.header}")
    for table in steps:
        for line, cells in table.rows:
            if len(cells) != 4:
                problems.append(f"line {line}: {len(cells)} cells, not 4")
                continue
            spans = SPAN.findall(cells[2])
            if not spans:
                problems.append(f"line {line}: 'in qatui' names nothing")
            checked = spans + [s for s in SPAN.findall(cells[3]) if _looks_like_reference(s)]
            problems += [f"line {line}: `{ref}`: {why}" for ref in checked if (why := check_reference(ref))]
            if not cells[3].startswith(VERDICTS):
                problems.append(f"line {line}: the verdict must start with one of {VERDICTS}")
    for table in rows:
        for line, cells in table.rows:
            if len(cells) != 4 or not re.fullmatch(r"`[a-z-]+:[a-z-]+`", cells[0]):
                problems.append(f"line {line}: a row needs an id `paper:row` and 4 cells")
                continue
            judges = SPAN.findall(cells[2])
            problems += [f"line {line}: no judge {j!r}" for j in judges if j not in JUDGES]
            if not cells[3].startswith(("reproduced", "not reproduced: ")):
                problems.append(f"line {line}: the status must be 'reproduced' or 'not reproduced: <reason>'")
    return problems


def reproduced_rows(text: str) -> dict[str, set[str]]:
    """Row id -> the judges the ledger names for it, for each row it marks reproduced."""
    return {cells[0].strip("`"): set(SPAN.findall(cells[2]))
            for table in read_tables(text) if table.header == ROWS_HEADER
            for _, cells in table.rows if len(cells) == 4 and cells[3] == "reproduced"}


def all_row_ids(text: str) -> list[str]:
    return [cells[0].strip("`") for t in read_tables(text) if t.header == ROWS_HEADER for _, cells in t.rows]


def claim_problems(text: str) -> list[str]:
    """Claims of `reproduces` the ledger does not back, and reproduced rows no judge claims."""
    marked = reproduced_rows(text)
    claims = {name: set(judge_class(name).reproduces) for name in JUDGES}
    problems = [f"judge {name!r} claims {row!r}, which the ledger does not mark reproduced"
                + ("" if row not in marked else f" for {name!r}")
                for name, rows in claims.items() for row in sorted(rows)
                if row not in marked or name not in marked[row]]
    problems += [f"the ledger marks {row!r} reproduced by {name!r}, which does not claim it"
                 for row, names in marked.items() for name in sorted(names) if row not in claims.get(name, set())]
    return problems


def test_every_reference_of_the_ledger_exists_and_every_row_has_its_form() -> None:
    text = LEDGER.read_text(encoding="utf-8")
    assert ledger_problems(text) == []
    ids = all_row_ids(text)
    assert len(ids) == len(set(ids)), "a row id appears twice"


def test_judges_claim_exactly_the_rows_the_ledger_marks_reproduced() -> None:
    assert claim_problems(LEDGER.read_text(encoding="utf-8")) == []


def test_qatui_judges_prints_each_judges_claims(capsys) -> None:
    from qatui.cli import main

    assert main(["judges"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "reproduces" in out and "minoseval:nli-ra" in out and "calf:g-eval" not in out


@pytest.mark.parametrize(("broken", "why"), [
    ("`qatui/judges/minos/judge.py::MinosJudge._classify`", "defines no MinosJudge._gone"),
    ("`qatui/judges/minos/prompts/minos.en.toml [classify]`", "has no [gone]"),
    ("`minos:route`", "has no option 'gone'"),
    ("`qatui checklist generate --elaborate`", "has no flag --gone"),
])
def test_the_reader_catches_a_name_that_no_longer_exists(broken: str, why: str) -> None:
    """The ledger's own references, each renamed to something that does not exist, are caught with the reason."""
    text = LEDGER.read_text(encoding="utf-8")
    assert broken in text
    gone = {"`qatui/judges/minos/judge.py::MinosJudge._classify`": "`qatui/judges/minos/judge.py::MinosJudge._gone`",
            "`qatui/judges/minos/prompts/minos.en.toml [classify]`": "`qatui/judges/minos/prompts/minos.en.toml [gone]`",
            "`minos:route`": "`minos:gone`",
            "`qatui checklist generate --elaborate`": "`qatui checklist generate --gone`"}[broken]
    assert any(why in p for p in ledger_problems(text.replace(broken, gone)))


def test_a_claim_the_ledger_does_not_back_is_caught() -> None:
    """Marking a claimed row not reproduced (as the G-Eval rows are) makes its judge's claim an error."""
    text = LEDGER.read_text(encoding="utf-8")
    row = "| `minoseval:listwise` | Tables 2-3 \"Listwise\" | `listwise` | reproduced |"
    assert row in text
    problems = claim_problems(text.replace(row, row.replace("| reproduced |", "| not reproduced: test |")))
    assert problems == ["judge 'listwise' claims 'minoseval:listwise', which the ledger does not mark reproduced"]
