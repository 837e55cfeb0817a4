"""Which class a judge gets wrong, as text: the confusion matrix with per-class recall and precision.

Reads the `classes` member of a judge's summary (`metrics.classes`); `sessions show` prints the
table, the TUI's Session screen the one-line form, the HTML report the same rows. Every cell is
plain text built here (class names come from qatui, counts and figures are numbers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console

HEADER = ("people \\ judge", "recall (95% CI)", "precision (95% CI)")
"""The matrix's corner cell and the two rate columns after the judge's classes."""


def _with_ci(figure: dict[str, Any], name: str) -> str:
    """'0.750 [0.333, 1.000]', '0.750' without a CI, '-' when undefined."""
    value, interval = figure.get(name), figure.get(f"{name}_ci")
    if value is None:
        return "-"
    return f"{value:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


def class_rows(classes: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the matrix: per people's class, the judge's counts, then recall and precision."""
    header = [HEADER[0], *classes["classes"], HEADER[1], HEADER[2]]
    rows = []
    for label, counts in zip(classes["classes"], classes["confusion"], strict=True):
        figure = classes["per_class"][label]
        rows.append([label, *(str(c) for c in counts), _with_ci(figure, "recall"), _with_ci(figure, "precision")])
    return header, rows


def caption(classes: dict[str, Any]) -> str:
    """What the matrix counts, in one line."""
    rates = "".join(f", {name.upper()} " + ("-" if classes[name] is None else f"{classes[name]:.3f}")
                    for name in ("tpr", "tnr") if name in classes)
    undefined = f"; {classes['kappa_undefined']}" if classes.get("kappa_undefined") else ""
    return (f"rows: people's labels, columns: the judge's ({classes['n']} labels on {classes['n_items']} items); "
            f"a judge's tie is its own class, never a hit on A or B{rates}{undefined}")


def print_classes(console: Console, classes: dict[str, Any]) -> None:
    """The confusion matrix with per-class recall and precision under a judge's metrics (`sessions show`)."""
    header, rows = class_rows(classes)
    table = Table(box=None, padding=(0, 1, 0, 0))
    for i, name in enumerate(header):
        table.add_column(Text(name), justify="left" if i == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)
    console.print(Text(caption(classes), style="dim"))


def class_line(classes: dict[str, Any]) -> str:
    """The per-class rates in one line: 'recall A 0.75 tie 0.50 B 0.50 · precision A 0.75 tie - B 0.50'."""
    def short(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    parts = []
    for name in ("recall", "precision"):
        figures = " ".join(f"{label} {short(classes['per_class'][label][name])}" for label in classes["classes"])
        parts.append(f"{name} {figures}")
    if classes.get("kappa_undefined"):
        parts.append("kappa none: people gave one class")
    return " · ".join(parts)
