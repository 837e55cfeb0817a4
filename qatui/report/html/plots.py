"""The report's plots: matplotlib figures rendered to SVG that sits inline in the HTML.

Text stays text (`svg.fonttype = none`: no glyph outlines, no font file), `$` is never read
as mathematics (dataset dimension names reach titles), ids are salted with a constant so a
report is reproducible, and the XML prolog, namespaces and metadata are dropped so the SVG
names no URL at all. No pyplot: a bare `Figure` draws through the SVG backend without a GUI
backend or global state, so a thread of the TUI can draw too.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from qatui.text import plain

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLOURS = ("#2b6cb0", "#dd6b20", "#2f855a", "#b83280", "#718096", "#c53030", "#6b46c1", "#b7791f")
"""One colour per judge or run, in order; readable in print and by most colour-blind readers."""
STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "qatui-report",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "Liberation Sans"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "legend.frameon": False,
}
"""rcParams every figure is drawn and saved under."""
WIDTH = 7.0
"""Figure width in inches: the report's column at 100% zoom."""
MAX_PANELS = 4
"""Panels side by side (rating dimensions, confusion matrices) before the figure gets too narrow to read."""


def _figure(height: float, width: float = WIDTH) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_svg(fig: Figure, label: str) -> str:
    """The figure as an inline `<svg>` element: no prolog, namespace, metadata or URL; `label` for screen readers."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buffer, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)
    return text.replace("<svg", f'<svg role="img" aria-label="{html.escape(label)}"', 1)


def _draw(draw):
    """Run a drawing function under the report's style (rcParams apply when artists are made)."""
    import matplotlib

    def wrapped(*args, **kwargs) -> str:
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    wrapped.__doc__ = draw.__doc__
    return wrapped


@_draw
def agreement_histogram(values: dict[str, list[float]]) -> str:
    """How many items each judge agrees with people on, by how much: one bar group per bin of [-1, 1]."""
    names = [name for name, found in values.items() if found]
    fig = _figure(2.6)
    ax = fig.add_subplot()
    bins = np.linspace(-1.0, 1.0, 11)
    ax.hist([values[name] for name in names], bins=bins, label=names, color=list(COLOURS[:len(names)]),
            edgecolor="white", linewidth=0.5)
    ax.set_xlim(-1.0, 1.0)
    ax.set_xlabel("agreement with people on one item (Kendall tau; a pair: +1 same side, 0 a tie on one side, −1 opposite)")
    ax.set_ylabel("items")
    ax.yaxis.get_major_locator().set_params(integer=True)
    if len(names) > 1:
        ax.legend(loc="upper left")
    return to_svg(fig, "histogram of per-item agreement with people")


def as_label(text: str) -> str:
    """A dataset's words (a ratings dimension) as a plot's text: control characters as their escapes (`plain`:
    matplotlib wrote them into the SVG raw, and its warning about each missing glyph to the terminal). Mathtext is
    off (`STYLE`), so a `$` is itself."""
    return plain(text)


@_draw
def ratings_scatter(judge: str, ratings: dict[str, tuple[list[float], list[float]]], r: dict[str, float]) -> str:
    """A judge's score against the human rating, one panel per dimension (the first four), with Pearson r."""
    dims = [dim for dim, (human, _) in ratings.items() if human][:MAX_PANELS]
    fig = _figure(2.4)
    axes = fig.subplots(1, len(dims), squeeze=False)[0]
    jitter = np.random.default_rng(0)
    for i, (ax, dim) in enumerate(zip(axes, dims, strict=True)):
        human, score = (np.asarray(v, dtype=float) for v in ratings[dim])
        spread = 0.08 * (np.ptp(human) or 1.0)
        ax.scatter(human + jitter.uniform(-spread, spread, len(human)), score, s=8, alpha=0.5,
                   color=COLOURS[0], linewidths=0)
        ax.set_title(as_label(dim), loc="left", fontsize=9)
        if dim in r:
            ax.text(0.02, 0.98, f"r = {r[dim]:+.2f}", transform=ax.transAxes, va="top", fontsize=8,
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
        ax.set_xlabel("human rating")
        if i == 0:
            ax.set_ylabel(f"{judge} score")
    return to_svg(fig, f"{judge} score against the human rating")


@_draw
def confusion_matrices(counts: dict[str, np.ndarray], labels: Sequence[str]) -> str:
    """For each judge (the first four), people's A / B / tie against the judge's, with the count in each cell."""
    names = list(counts)[:MAX_PANELS]
    fig = _figure(2.5, min(WIDTH, 2.3 * len(names) + 0.6))
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    for ax, name in zip(axes, names, strict=True):
        table = counts[name]
        # pcolormesh, not imshow: vector cells (imshow would embed a PNG, which the report's policy blocks)
        ax.pcolormesh(table, cmap="Blues", vmin=0, vmax=max(1, int(table.max())), edgecolors="white", linewidth=1)
        for (row, col), n in np.ndenumerate(table):
            ax.text(col + 0.5, row + 0.5, str(n), ha="center", va="center",
                    color="white" if n > table.max() / 2 else "black", fontsize=10)
        ticks = np.arange(len(labels)) + 0.5
        ax.set_xticks(ticks, labels)
        ax.set_yticks(ticks, labels)
        ax.invert_yaxis()
        ax.set_aspect("equal")
        ax.tick_params(length=0)
        ax.set_xlabel(f"{name} says")
        ax.set_ylabel("people say")
        hits = int(np.trace(table))
        ax.set_title(f"{name}: {hits} of {int(table.sum())} labels", loc="left")
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
    return to_svg(fig, "confusion matrices of A, B and tie: people against each judge")


@_draw
def bias_bars(rows: list[dict]) -> str:
    """Position consistency (share of pairs whose two orders agree) and how often judge / people prefer the longer."""
    position = [(row["label"], row["bias"]["position_consistency"]) for row in rows
                if row["bias"].get("position_consistency") is not None]
    length = [(row["label"], row["bias"]["judge_longer"], row["bias"]["people_longer"],
               f"{row['bias']['pairs']} pairs" + (f", {ties} tied" if (ties := row["bias"].get("judge_ties")) else ""))
              for row in rows if "pairs" in row["bias"]]
    heights = [0.35 * len(p) + 0.9 for p in (position, length) if p]
    fig = _figure(sum(heights))
    axes = list(fig.subplots(len(heights), 1, squeeze=False, height_ratios=heights)[:, 0])
    if position:
        ax = axes.pop(0)
        names = [name for name, _ in position]
        ax.barh(names, [value for _, value in position], color=COLOURS[0], height=0.5)
        ax.set_xlim(0, 1)
        ax.invert_yaxis()
        ax.set_title("position consistency", loc="left")
        ax.set_xlabel("share of pairs whose two orders agree (1 = no position bias)")
    if length:
        ax = axes.pop(0)
        y = np.arange(len(length))
        ax.barh(y - 0.18, [j for _, j, _, _ in length], height=0.36, color=COLOURS[1], label="judge")
        ax.barh(y + 0.18, [p for _, _, p, _ in length], height=0.36, color=COLOURS[4], label="people")
        ax.set_yticks(y, [f"{name} ({pairs})" for name, _, _, pairs in length])
        ax.axvline(0.5, color="#999999", linewidth=0.8, linestyle=":")
        ax.set_xlim(0, 1)
        ax.invert_yaxis()
        ax.set_title("prefers the longer response", loc="left")
        ax.set_xlabel("share of the pairs people told apart where the longer one is preferred")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return to_svg(fig, "position and length bias of each judge")


@_draw
def metric_intervals(labels: list[str], values: list[float | None], cis: list[list[float] | None], key: str) -> str:
    """One metric of every row with its 95% CI: a dot and a bar per judge or run, so overlaps show at a glance."""
    shown = [(name, value, ci) for name, value, ci in zip(labels, values, cis, strict=True) if value is not None]
    fig = _figure(0.8 + 0.32 * len(shown))
    ax = fig.add_subplot()
    for i, (_, value, ci) in enumerate(shown):
        colour = COLOURS[i % len(COLOURS)]
        if ci:
            ax.plot(ci, [i, i], color=colour, linewidth=2.5, alpha=0.6, solid_capstyle="butt")
        ax.plot([value], [i], "o", color=colour, markersize=6)
    ax.set_yticks(range(len(shown)), [name for name, _, _ in shown])
    ax.invert_yaxis()
    low = min([0.0] + [v for _, v, _ in shown] + [c[0] for _, _, c in shown if c])
    ax.set_xlim(-1.0 if low < 0 else 0.0, 1.0)
    ax.axvline(0.0, color="#999999", linewidth=0.8)
    ax.set_xlabel(f"{key} with 95% bootstrap CI")
    return to_svg(fig, f"{key} of each row with its confidence interval")
