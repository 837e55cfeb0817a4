"""The report from the TUI: the same HTML file `qatui report` writes, put beside the sessions folder, and said where."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen

    from qatui.store.session import SessionStore


def report_path(store: SessionStore, session_ids: list[str]) -> Path:
    """`<sessions>/<id>.html` for one session (beside Home's exports), `<sessions>/compare-<id>-<id>….html` for several."""
    name = session_ids[0] if len(session_ids) == 1 else "compare-" + "-".join(session_ids)
    return store.root / f"{name}.html"


def write_report_file(store: SessionStore, session_ids: list[str], gold: str = "dataset") -> Path:
    """Build the report of these sessions against `gold` (the screen's) and write it atomically; the path written."""
    from qatui.report.html import build_report, write_report

    sessions = [store.open(key) for key in session_ids]  # an id, a name or a prefix: the file is named by ids
    return write_report(report_path(store, [session.id for session in sessions]), build_report(sessions, gold=gold, sessions_root=store.root))


def export_report(screen: Screen, store: SessionStore, session_ids: list[str], gold: str = "dataset") -> None:
    """Write the report in a thread worker, then a toast with its path (a failure: the screen's error toast)."""
    from qatui.tui.format import short_path

    def write() -> None:
        path = write_report_file(store, session_ids, gold)
        screen.app.call_from_thread(screen.notify, f"{short_path(str(path))}\nopen it in any browser; it works offline",
                                    title="Report written", timeout=10)

    screen.notify("writing the HTML report…", timeout=3)
    screen.run_worker(write, thread=True, group="report", exclusive=True, exit_on_error=False,
                      description="writing the report")
