"""Small HTML builders for the report; every text is escaped unless it is marked `Raw` (markup we built)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape


class Raw(str):
    """A string of markup the report built itself (escaped parts only), inserted as is."""


def cell(value: object) -> str:
    """A cell's content: `Raw` markup as is, anything else as escaped text."""
    return value if isinstance(value, Raw) else escape(str(value))


def table(header: Sequence[object], rows: Iterable[Sequence[object]], *, classes: str = "",
          caption: str | None = None) -> Raw:
    """A `<table>` with a header row; cells are escaped unless `Raw`; numbers right-aligned by CSS class."""
    head = "".join(f"<th>{cell(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td{_align(c)}>{cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return Raw(f'<table class="{escape(classes)}">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def _align(value: object) -> str:
    """Right-align cells that read as numbers ('0.512', '+3.1 [1.2, 4.0]', '12/20', '–')."""
    text = str(value).strip()
    numeric = bool(text) and not isinstance(value, Raw) and (text[0].isdigit() or text[0] in "+-–−.[")
    return ' class="num"' if numeric else ""


def badge(text: str, kind: str) -> Raw:
    """A small coloured label (kind: good, mid, bad)."""
    return Raw(f'<span class="badge {escape(kind)}">{escape(text)}</span>')


def section(title: str, body: str, anchor: str, level: int = 2) -> Raw:
    """A titled `<section>` with an id the contents list links to (a fragment, never a URL)."""
    return Raw(f'<section id="{escape(anchor)}"><h{level}>{escape(title)}</h{level}>{body}</section>')


def figure(svg: str, caption: str) -> Raw:
    """An inline SVG plot with its caption."""
    return Raw(f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>")


def paragraph(text: str, classes: str = "") -> Raw:
    """An escaped paragraph."""
    return Raw(f'<p class="{escape(classes)}">{escape(text)}</p>')
