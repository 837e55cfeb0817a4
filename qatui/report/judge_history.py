"""`qatui judges versions NAME` and `qatui judges show NAME [--version V]`: a judge's stored versions and texts.

The versions are those the history store keeps (`qatui.store.judge_versions.JudgeHistory`: the
Judge Lab and `judges align` save them with their figures). `show` without `--version` prints the
judge's definition as it is now, with its version; for a name that is neither a built-in nor a file in the judges
folder (a judge file aligned or edited from another folder), its newest stored version. Every stored text is data:
printed plain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from qatui.store.judge_versions import JudgeHistory, VersionRecord, check_name
from qatui.text import plain

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.config import Config


def figures_text(figures: dict) -> str:
    """'kappa 0.512 · accuracy 0.700': a version's figures, numbers with three decimals, '-' when none."""
    parts = []
    for key, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        parts.append(f"{key} {shown}")
    return " · ".join(parts) or "-"


def print_versions(console: Console, name: str, history: JudgeHistory | None = None) -> None:
    """Every stored version of judge `name`, oldest first: version, when saved, figures, note."""
    history = history or JudgeHistory()
    records = history.records(check_name(name))
    if not records:
        console.print(Text(plain(f"no stored version of judge {name} in {history.root} (the Judge Lab and "
                                 "`qatui judges align` keep them)")), soft_wrap=True)
        return
    table = Table("version", "saved", "figures", "note", box=None, padding=(0, 1, 0, 0),
                  title=Text(plain(f"judge {name}: {len(records)} stored version{'s' * (len(records) > 1)}")),
                  title_justify="left")
    for record in records:
        table.add_row(record.version, Text(plain(record.saved_at)), Text(plain(figures_text(record.figures))),
                      Text(plain(record.note)))
    console.print(table)
    console.print(Text(plain(f"a version's text: qatui judges show {name} --version VERSION")), style="dim")


def _newest_stored(name: str, history: JudgeHistory | None) -> tuple[VersionRecord, str] | None:
    """The newest stored version of `name` and its text (a judge file aligned or saved from anywhere, kept by the
    history store); None when the name cannot name a history folder or none is kept."""
    from qatui.errors import JudgeError

    history = history or JudgeHistory()
    try:
        records = history.records(check_name(name))
    except JudgeError:
        return None
    return (records[-1], history.text(name, records[-1].version)) if records else None


def print_definition(console: Console, name: str, version: str | None, config: Config,
                     history: JudgeHistory | None = None) -> None:
    """A stored version's text (`version`), else the judge's definition now: each file under a heading."""
    if version is not None:
        text = (history or JudgeHistory()).text(check_name(name), version)
        console.print(Text(plain(text.rstrip("\n"))), soft_wrap=True)
        return
    from qatui.errors import JudgeError
    from qatui.judges.registry import make_judge

    try:
        judge = make_judge(name, config.judge_options(name))
    except JudgeError:
        if (newest := _newest_stored(name, history)) is None:
            raise
        record, text = newest
        console.print(Text(plain(f"judge {name} is not a built-in judge nor a file in the judges folder: its newest "
                                 f"stored version, {record.version}, saved {record.saved_at}")), style="bold",
                      soft_wrap=True)
        console.print(Text(plain(text.rstrip("\n"))), soft_wrap=True)
        console.print(Text(plain(f"every stored version: qatui judges versions {name}; to run this one: qatui judges show "
                                 f"{name} --version {record.version} > FILE.toml, then --judge FILE.toml")), style="dim", soft_wrap=True)
        return
    shown = judge.name if judge.name == name else f"{judge.name} ({name})"  # a file given: its judge's own name
    console.print(Text(plain(f"judge {shown}, version {judge.version}")), style="bold")
    definition = judge.definition()
    if not definition:
        console.print(Text("no prompt file: its version covers its options, its models and its code's revision"))
    for file, text in definition.items():
        console.print(Text(plain(f"== {file}")), style="bold")
        console.print(Text(plain(text.rstrip("\n"))), soft_wrap=True)
