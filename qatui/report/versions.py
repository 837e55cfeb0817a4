"""Judge versions in the views: which version each run used, where two runs of one judge differ, and the diff.

A session stores each judge's version and the texts that define it (`qatui.store.judge_versions`).
`sessions show` prints the version beside the judge; `sessions compare`, `qatui table` and the
HTML report add a note when two runs of the same judge used different versions, naming both;
`qatui sessions diff A B` (and the Compare screen's `v`) shows the unified diff of the definitions
of the judges two sessions share, or "same version". Everything here is plain text: what a
definition holds is data, shown through `qatui.text.plain`, never as markup.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

from qatui.store.judge_versions import (
    NOT_RECORDED,
    entry_definition,
    entry_options,
    entry_version,
)
from qatui.text import plain

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console

OPTIONS_FILE = "options"
"""The name the judge's options go under in a diff, beside its definition's files."""


def version_text(version: str | None) -> str:
    """A version as people read it: its 12 characters, or "version not recorded"."""
    return version or NOT_RECORDED


def different_versions(runs: Iterable[dict[str, Any]]) -> list[str]:
    """One line per judge that ran in more than one version among `runs` (each: `judge`, `version`, `name`: the run
    as the view names it), naming each run's version; [] when every run of each judge used one version. Each view
    adds where to see what changed (`sessions diff`, the Compare screen's `v`)."""
    by_judge: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_judge.setdefault(str(run["judge"]), []).append(run)
    lines = []
    for judge, group in by_judge.items():
        if len({run.get("version") for run in group}) < 2:
            continue
        shown = ", ".join(f"{run['name']} {version_text(run.get('version'))}" for run in group)
        lines.append(f"judge {judge} ran in different versions: {shown}")
    return lines


def _files(entry: dict | None) -> dict[str, str]:
    """What a diff compares of a judge entry: its definition's files and its options as JSON."""
    options = json.dumps(entry_options(entry), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return {**entry_definition(entry), OPTIONS_FILE: options}


def definition_diff(left: dict[str, dict], right: dict[str, dict], names: tuple[str, str]) -> list[dict[str, Any]]:
    """Per judge both sides hold (`meta["judges"]`-shaped entries): its two versions, whether they are the same,
    and the unified diff (difflib) of its definition files and options from `names[0]` to `names[1]`."""
    out = []
    for judge in [name for name in left if name in right]:
        a, b = left[judge], right[judge]
        va, vb = entry_version(a), entry_version(b)
        doc: dict[str, Any] = {"judge": judge, "versions": [va, vb], "same": va is not None and va == vb}
        if va is None or vb is None:
            doc["diff"] = ""
            doc["note"] = f"{NOT_RECORDED} in {names[0] if va is None else names[1]}: nothing to compare"
        elif doc["same"]:
            doc["diff"] = ""
        else:
            fa, fb = _files(a), _files(b)
            lines: list[str] = []
            for file in sorted(set(fa) | set(fb)):
                lines += difflib.unified_diff(fa.get(file, "").splitlines(keepends=True),
                                              fb.get(file, "").splitlines(keepends=True),
                                              fromfile=f"{names[0]}/{file}", tofile=f"{names[1]}/{file}")
            doc["diff"] = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
            if not doc["diff"]:
                doc["note"] = ("the prompt texts and options are the same: the versions differ by the answer "
                               "schemas, the NLI or embedding models, or the judge's code (its revision)")
        out.append(doc)
    return out


def diff_text(diffs: list[dict[str, Any]], names: tuple[str, str]) -> str:
    """The diff as plain text: per judge a heading with both versions, then "same version", a note, or the diff."""
    if not diffs:
        return f"{names[0]} and {names[1]} share no judge: nothing to compare\n"
    parts = []
    for doc in diffs:
        va, vb = (version_text(v) for v in doc["versions"])
        parts.append(f"== {doc['judge']}: {names[0]} {va} · {names[1]} {vb}\n")
        if doc["same"]:
            parts.append("same version\n")
        if doc.get("note"):
            parts.append(doc["note"] + "\n")
        parts.append(doc["diff"])
    return plain("".join(parts))


def print_diff(console: Console, diffs: list[dict[str, Any]], names: tuple[str, str]) -> None:
    """`qatui sessions diff`: the plain-text diff, never read as markup."""
    from rich.text import Text

    console.print(Text(plain(diff_text(diffs, names).rstrip("\n"))), soft_wrap=True, highlight=False)
