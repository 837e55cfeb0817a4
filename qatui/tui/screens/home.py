"""Home: the saved sessions, sortable and filterable, and what to do with them.

    Header
    [filter input, shown by /]
    SessionsTable   one row per session; only the columns that fit the width
    SessionInfo     everything session.json says about the highlighted one
    Footer

Reads only session.json files (`SessionStore.list()`), in a thread, whenever Home shows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import DataTable, Footer, Header, Input, Static

from qatui.errors import QatuiError, SessionError
from qatui.paths import tilde
from qatui.report import session_status
from qatui.store.atomic import atomic_write_text
from qatui.text import plain
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.screens.confirm import ConfirmScreen
from qatui.tui.widgets.session_info import SessionInfo
from qatui.tui.widgets.sessions_table import SORTS, SessionsTable

if TYPE_CHECKING:
    from qatui.store.session import SessionStore

EXPORT_FORMATS = ("jsonl", "csv", "md")


def export_beside(store: SessionStore, session_id: str) -> list[Path]:
    """Write the session as jsonl, csv and md next to its folder; the paths written."""
    from qatui.report.export import export_session

    session = store.open(session_id)
    paths = []
    for fmt in EXPORT_FORMATS:
        path = store.root / f"{session_id}.{fmt}"
        atomic_write_text(path, export_session(session, fmt))
        paths.append(path)
    return paths


def resumable(meta: dict | None) -> bool:
    """Whether a session has work left that no live process is doing: cancelled, interrupted, or with failures."""
    if meta is None or meta.get("status") == "damaged":
        return False
    status = session_status(meta)
    failed = any(d.get("n_failed") for d in meta.get("summary", {}).values())
    return status in ("cancelled", "interrupted", "failed", "capped", "stopped") or (status == "completed" and failed)


class HomeScreen(QatuiScreen):
    """The sessions in the store; enter opens one."""

    HELP_TITLE = "Home"
    CSS_PATH = Path(__file__).with_name("home.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_run", "New run"),
        Binding("l", "lab", "Lab", tooltip="The Judge Lab: edit a judge file and run it on labelled items"),
        Binding("p", "spot_check", "Spot check", show=False),
        Binding("r", "resume", "Resume"),
        Binding("space", "toggle_mark", "Mark", key_display="␣"),
        Binding("c", "compare", "Compare"),
        Binding("a", "label", "Label items", show=False),
        Binding("e", "export", "Export", show=False),
        Binding("d", "delete", "Delete", show=False),
        Binding("slash", "filter", "Filter", key_display="/", show=False),  # the help lists it; the footer keeps Lab and Help at 80 columns
        Binding("s", "cycle_sort", "Sort", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("f5", "reload", "Reload", show=False),
    ]

    def __init__(self, store: SessionStore) -> None:
        super().__init__()
        self.store = store

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Input(placeholder="filter: words in id, name, dataset, judges, backbone, status", id="filter")
        yield SessionsTable(id="sessions")
        yield Static(id="empty")
        yield SessionInfo()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = plain(tilde(self.store.root))  # whole (~ for home): the same folder from any directory
        self.query_one(SessionsTable).focus()

    def on_screen_resume(self) -> None:
        self.reload()
        box = self.query_one("#filter", Input)
        if self.focused is None or (self.focused is box and not box.display):
            # A screen pushed before Home was laid out (`qatui lab`, a run given on the command line) took the focus
            # away from a hidden filter box, and Home gave it back: a typed l then went into the box, not to the Lab.
            self.query_one(SessionsTable).focus()
        # the terminal may have changed size while another screen (or the palette) was on top
        self.call_after_refresh(self.query_one(SessionsTable).relayout)

    @work(group="list", exclusive=True, exit_on_error=False, description="listing sessions")
    async def reload(self) -> None:
        """Read every session.json again."""
        sessions = await asyncio.to_thread(self.store.list)
        table = self.query_one(SessionsTable)
        table.sessions = sessions
        if (ran := self.qatui.just_ran) is not None and table.highlight(ran):
            self.qatui.just_ran = None  # back from a run: its session, not the row highlighted before it
        self._update_title()
        self.refresh_bindings()
        empty = self.query_one("#empty", Static)
        empty.display = not sessions
        table.display = bool(sessions)
        table.call_after_refresh(table.relayout)  # filled while hidden, it measured a stale width
        empty.update(Content.from_markup(
            "[b]No sessions yet[/] in $root\n\nPress [b $accent]n[/] for a new run, or open the palette "
            "([b $accent]ctrl+p[/]) and run the demo.", root=plain(tilde(self.store.root))))
        self._show_info()

    @on(DataTable.RowHighlighted, "#sessions")
    def _show_info(self) -> None:
        self.query_one(SessionInfo).meta = self._highlighted()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "resume":
            return resumable(self._highlighted())
        if action in ("export", "delete", "filter", "cycle_sort", "toggle_mark", "compare"):
            return bool(self.query_one(SessionsTable).sessions)
        return True

    @on(DataTable.RowSelected, "#sessions")
    def _selected(self) -> None:
        self.action_open()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_one(SessionsTable).query = event.value
        self._update_title()
        self._show_info()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one(SessionsTable).focus()

    def _highlighted(self) -> dict | None:
        table = self.query_one(SessionsTable)
        key = table.row_key_at_cursor()
        return next((m for m in table.sessions if m["id"] == key), None)

    def _update_title(self) -> None:
        table = self.query_one(SessionsTable)
        order = dict(SORTS)[table.sort]
        query = f" · filter “{table.query}”" if table.query else ""
        hidden = len(table.marked) - sum(1 for m in table.shown if m["id"] in table.marked)
        marked = (f" · {len(table.marked)} marked" + (f" ({hidden} hidden)" if hidden else "")
                  if table.marked else "")
        table.border_title = Content(plain(f"Sessions {len(table.shown)} of {len(table.sessions)} · by {order}{query}{marked}"))

    def _usable(self, action: str) -> dict | None:
        """The highlighted session, or None after telling the user why `action` cannot run on it."""
        meta = self._highlighted()
        if meta is None:
            self.notify("No session is highlighted.", severity="warning")
        elif meta.get("status") == "damaged" and action != "delete":
            self.notify(meta.get("error", "damaged"), title=f"Cannot {action} a damaged session", severity="error")
            return None
        return meta

    def action_open(self) -> None:
        """Open the highlighted session."""
        if meta := self._usable("open"):
            self.qatui.open_session(meta["id"])

    def action_toggle_mark(self) -> None:
        """Mark or unmark the highlighted session for comparing (c compares the marked ones)."""
        if meta := self._usable("mark"):
            table = self.query_one(SessionsTable)
            table.marked ^= {meta["id"]}
            table.rebuild()
            self._update_title()
            self.refresh_bindings()

    def action_compare(self) -> None:
        """Compare the marked sessions (they must share a dataset), those the filter hides too: the title counts
        them all."""
        if len(ids := self.marked_ids()) < 2:
            self.notify("Mark two or more sessions with space first.", title="Nothing to compare", severity="warning")
            return
        self.qatui.compare_sessions(ids)

    def marked_ids(self) -> list[str]:
        """Every marked session that still exists: those shown in the table's order, then those the filter hides."""
        table = self.query_one(SessionsTable)
        shown = [m["id"] for m in table.shown if m["id"] in table.marked]
        return shown + [m["id"] for m in table.sessions if m["id"] in table.marked and m["id"] not in shown]

    def action_label(self) -> None:
        """Label the highlighted session's dataset yourself (asks for your name; any dataset can be typed)."""
        meta = self._highlighted()
        self.qatui.ask_labels(meta["id"] if meta and meta.get("status") != "damaged" else "demo")

    def action_lab(self) -> None:
        """Edit a judge file's prompt, run it on labelled items beside the saved version, keep it if people agree more."""
        self.qatui.open_lab()

    def action_spot_check(self) -> None:
        """Judge one typed or loaded item with one judge."""
        self.qatui.open_spot_check()

    def action_new_run(self) -> None:
        """Pick a dataset and judges, and start a run."""
        self.qatui.open_new_run()

    def action_resume(self) -> None:
        """Finish the highlighted session: skips what is done, retries failures."""
        if meta := self._usable("resume"):
            self.qatui.resume_session(meta["id"])

    @work(group="export", exclusive=True, exit_on_error=False, description="exporting a session")
    async def action_export(self) -> None:
        """Write jsonl, csv and md files next to the session's folder."""
        if meta := self._usable("export"):
            try:
                paths = await asyncio.to_thread(export_beside, self.store, meta["id"])
            except (QatuiError, OSError) as e:
                self.notify(str(e), title="Export failed", severity="error")
                return
            self.notify("\n".join(str(p) for p in paths), title="Exported", timeout=8)

    def action_delete(self) -> None:
        """Delete the highlighted session after asking."""
        if (meta := self._usable("delete")) is None:
            return
        try:
            self.store.check_deletable(meta["id"])  # a live run's session: refused before asking
        except SessionError as e:
            self.notify(str(e), title="Not deleted", severity="error")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                try:
                    self.store.delete(meta["id"])
                except SessionError as e:
                    self.notify(str(e), title="Not deleted", severity="error")
                    return
                self.notify(f"deleted {meta['id']}")
                self.reload()

        self.app.push_screen(ConfirmScreen(f"Delete session {meta['id']} and all its results? This cannot be "
                                           "undone.", yes="Delete"), answered)

    def action_filter(self) -> None:
        """Show the filter box and type into it."""
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        """Empty and hide the filter box."""
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.query_one(SessionsTable).focus()

    def action_cycle_sort(self) -> None:
        """Order rows by the next column: newest, name, dataset, metric, status."""
        table = self.query_one(SessionsTable)
        keys = [key for key, _ in SORTS]
        table.sort = keys[(keys.index(table.sort) + 1) % len(keys)]
        self._update_title()

    def action_reload(self) -> None:
        """Read the sessions folder again."""
        self.reload()
