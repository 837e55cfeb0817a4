"""`qatui report`: one self-contained HTML file about one or more sessions, for people who never open a terminal.

Inline CSS and inline SVG plots (matplotlib), no script, no font, no image and no URL (a
Content-Security-Policy forbids loading anything, should a later change try), readable
offline and printable. Every dataset or model text is escaped. The layout is Jinja2 templates
beside this module (`template.html` the page, `session.html`, `comparison.html`, `item.html`,
`macros.html`) with autoescape on (`markup.render`), and `report.css`.
"""

from __future__ import annotations

import os
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from qatui import __version__
from qatui.errors import SessionError
from qatui.report.html.gather import ITEMS_SHOWN, session_content
from qatui.report.html.markup import Markup, macros, render_template
from qatui.report.html.render import comparison_section, session_section
from qatui.store.output_file import OutputPathError
from qatui.store.output_file import check_output as check_output_file
from qatui.store.output_file import write_output

if TYPE_CHECKING:
    from qatui.store.session import Session

__all__ = ["ITEMS_SHOWN", "ReportPathError", "build_report", "check_output", "write_report"]


ReportPathError = OutputPathError
"""The report cannot be written where asked (`store.output_file`, shared by every `-o FILE`)."""


def check_output(path: str | os.PathLike[str]) -> Path:
    """The output file, refused before any work when it is a folder or its folder is missing or read-only."""
    return check_output_file(path, "report.html")


def build_report(sessions: list[Session], items_shown: int = ITEMS_SHOWN, gold: str = "dataset",
                 sessions_root: Path | None = None) -> str:
    """The report of `sessions` as one HTML document; with two or more, a comparison (as `sessions compare`) first.

    Every figure measures the judges against `gold` (`report.gold`: the dataset's, an annotator's
    labels or their majority, read from `sessions_root`); the subtitle and each session's settings name it.
    """
    from qatui.report.compare import compare_sessions
    from qatui.report.gold import gold_name, parse_gold

    if not sessions:
        raise SessionError("a report needs at least one session")
    if len({s.id for s in sessions}) < len(sessions):
        raise SessionError("a session is named twice: name each session once")
    gold = parse_gold(gold)
    contents = [session_content(session, items_shown, gold, sessions_root) for session in sessions]
    sections: list[Markup] = []
    links: list[tuple[str, str]] = []
    if len(sessions) > 1:
        try:
            sections.append(comparison_section(compare_sessions(sessions, gold, sessions_root), "comparison"))
            links.append(("comparison", "Comparison"))
        except SessionError as e:  # different datasets: each session is still reported
            sections.append(macros().paragraph(f"No comparison: {e}", "note"))
    for i, content in enumerate(contents, 1):
        anchor = f"session-{i}"
        sections.append(session_section(content, anchor))
        links.append((anchor, f"Session {content.title}"))
    datasets = sorted({s.meta["dataset"]["name"] for s in sessions})
    title = (f"{contents[0].title} on {datasets[0]}" if len(sessions) == 1
             else f"{len(sessions)} sessions on {', '.join(datasets)}")
    judges = sorted({judge for s in sessions for judge in s.meta["judges"]})
    return str(render_template(
        "template.html", title=title, links=links, sections=sections, version=__version__,
        subtitle=(f"judges: {', '.join(judges)} · sessions: {', '.join(s.id for s in sessions)} · "
                  f"measured against {gold_name(gold)}"),
        css=Markup(files(__package__).joinpath("report.css").read_text(encoding="utf-8")),
        written=datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
    )) + "\n"  # Jinja drops a template's last newline; the file keeps one


def write_report(path: Path, text: str) -> Path:
    """Write the report by the rule of every `-o` (`output_file.write_output`: atomic, a link written through, a
    pipe or a device written into, a failure one line); the absolute path written."""
    return write_output(path, text)
