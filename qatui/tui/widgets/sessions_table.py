"""The Home screen's table of saved sessions: filtered, sorted, and only the columns that fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.reactive import reactive

from qatui.report import items_done, key_figure, key_metric, session_status
from qatui.text import clip, plain
from qatui.tui.format import when
from qatui.tui.widgets.vim_table import VimTable

COLUMNS: list[tuple[str, str, int]] = [
    ("session", "session", 0),
    ("dataset", "dataset", 2),
    ("judges", "judges", 5),
    ("backbones", "backbones", 7),
    ("done", "items", 4),
    ("metric", "metric", 3),
    ("status", "status", 1),
    ("created", "created", 6),
]
"""(key, label, priority) in display order; lower priority numbers stay when space runs out."""
SHRINKS = {"judges": 7}
"""Columns that, rather than vanish, take the room left, clipped with an ellipsis, down to this width."""

SORTS: list[tuple[str, str]] = [("created", "newest"), ("session", "name"), ("dataset", "dataset"),
                                ("metric", "metric"), ("status", "status")]
"""The orders `s` cycles through: (column, what the title calls it)."""


def row_cells(meta: dict) -> dict[str, str]:
    """The text of each column for one `SessionStore.list()` entry."""
    summary = meta.get("summary", {})
    damaged = meta.get("status") == "damaged"
    return {
        "session": (meta["id"] if not meta.get("name") or meta["name"] == meta["id"]
                    else f"{meta['name']} ({meta['id']})" if meta.get("name_shared") else meta["name"]),
        "dataset": "" if damaged else str(meta.get("dataset", {}).get("name", "")),
        "judges": ",".join(meta.get("judges", {})),
        "backbones": ",".join(meta.get("backbones", [])) or "–",
        "done": items_done(meta),
        "metric": key_metric(summary),
        "status": "damaged" if damaged else session_status(meta),
        "created": when(meta.get("created")),
    }


def _metric_value(meta: dict) -> float:
    """The headline figure's value (`key_figure`), read from the summary, never from the cell's text: a cell ending
    in "· 1/3 no decision" sorted below every session without that note; -inf where there is none."""
    figure = key_figure(meta.get("summary") or {})
    return float("-inf") if figure is None or figure[2] is None else figure[2]


SORT_KEYS: dict[str, Callable[[dict, dict[str, str]], object]] = {
    "created": lambda meta, cells: (meta.get("created") or "", meta["id"]),
    "session": lambda meta, cells: cells["session"].lower(),
    "dataset": lambda meta, cells: cells["dataset"].lower(),
    "metric": lambda meta, cells: _metric_value(meta),
    "status": lambda meta, cells: cells["status"],
}
DESCENDING = {"created", "metric"}


class SessionsTable(VimTable):
    """Sessions as rows keyed by session id; set `sessions`, `query` and `sort` from the screen."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "Open")]

    BINDING_GROUP_TITLE = "sessions table"

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "sessions-table--completed", "sessions-table--running", "sessions-table--stopped",
        "sessions-table--damaged",
    }
    """
    | Class | Description |
    | :- | :- |
    | `sessions-table--completed` | Status of a completed session. |
    | `sessions-table--running` | Status of a running session. |
    | `sessions-table--stopped` | Status of a cancelled or interrupted session. |
    | `sessions-table--damaged` | Status of a session whose files cannot be read. |
    """

    DEFAULT_CSS = """
    SessionsTable {
        height: 1fr;
        & > .sessions-table--completed { color: $success; }
        & > .sessions-table--running { color: $accent; }
        & > .sessions-table--stopped { color: $warning; }
        & > .sessions-table--damaged { color: $error; }
    }
    """

    sessions: reactive[list[dict]] = reactive(list, always_update=True, init=False)
    """Entries of `SessionStore.list()`."""
    query: reactive[str] = reactive("", init=False)
    """Words that every shown row must contain (case-insensitive)."""
    sort: reactive[str] = reactive("created", init=False)
    """The column rows are ordered by (see `SORTS`)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._widths: dict[str, int] = {}
        """The columns shown, in display order, each with its width in cells (its text's widest, or narrower for a
        column clipped to fit), padding left out."""
        self.marked: set[str] = set()
        """Ids of the sessions marked for comparing; drawn with a ● before their name."""

    @property
    def shown(self) -> list[dict]:
        """The entries that pass the filter, in the current order."""
        words = self.query.lower().split()
        rows = [(meta, row_cells(meta)) for meta in self.sessions]
        rows = [(m, c) for m, c in rows if all(w in " ".join([m["id"], *c.values()]).lower() for w in words)]
        rows.sort(key=lambda mc: SORT_KEYS[self.sort](*mc), reverse=self.sort in DESCENDING)
        return [m for m, _ in rows]

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _: self.rebuild())  # status colours come from it

    def watch_sessions(self) -> None:
        self.rebuild()

    def watch_query(self) -> None:
        self.rebuild()

    def watch_sort(self) -> None:
        self.rebuild()

    def on_resize(self, event: Resize) -> None:
        self.relayout()

    def relayout(self) -> None:
        """Refit the columns to the width the table has now, if they no longer fit it."""
        if self.size.width and self._fitting(self.shown) != self._widths:
            self.rebuild()  # a column added or dropped, or the clipped one narrower or wider

    def rebuild(self) -> None:
        """Refill the table, keeping the cursor on the same session when it is still shown."""
        keep = self.row_key_at_cursor()
        self.marked &= {meta["id"] for meta in self.sessions}
        shown = self.shown
        self.clear(columns=True)
        self._widths = self._fitting(shown)
        labels = {key: label for key, label, _ in COLUMNS}
        for key, width in self._widths.items():  # widths given, not measured by DataTable when it next idles:
            self.add_column(labels[key], key=key, width=width)  # a table refilled on a resize draws whole at once
        for meta in shown:
            cells = row_cells(meta)
            if meta["id"] in self.marked:
                cells["session"] = f"● {cells['session']}"
            for key in SHRINKS.keys() & self._widths.keys():  # a column narrowed to fit: its text clipped
                if cell_len(plain(cells[key])) > self._widths[key]:
                    cells[key] = clip(cells[key], self._widths[key])
            self.add_row(*(self._cell(key, cells[key]) for key in self._widths), key=meta["id"])
        ids = [m["id"] for m in shown]
        if keep in ids:
            self.move_cursor(row=ids.index(keep), animate=False)

    def highlight(self, session_id: str) -> bool:
        """Move the cursor to a session's row; False when it is not shown."""
        ids = [m["id"] for m in self.shown]
        if session_id not in ids:
            return False
        self.move_cursor(row=ids.index(session_id), animate=False)
        return True

    def _fitting(self, shown: list[dict]) -> dict[str, int]:
        """The columns that fit the table's width, by priority, in display order, each with its width."""
        cells = [row_cells(meta) for meta in shown]
        widths = {key: max([cell_len(label), *(cell_len(plain(c[key])) for c in cells)]) + 2 for key, label, _ in COLUMNS}
        widths["session"] += 2 if self.marked else 0
        room = self.scrollable_content_region.width if self.size.width else 10_000  # inside a scrollbar when shown
        kept: dict[str, int] = {}
        for key, _, _ in sorted(COLUMNS, key=lambda c: c[2]):
            if widths[key] <= room:
                kept[key] = widths[key] - 2
                room -= widths[key]
        for key, least in SHRINKS.items():  # a dropped column that fits clipped takes the room the others left
            if key not in kept and room >= least + 2:
                kept[key] = room - 2
                room = 0
        return {key: kept[key] for key, _, _ in COLUMNS if key in kept}

    def _cell(self, key: str, value: str) -> Text:
        value = plain(value)
        if key == "session" and value.startswith("● "):
            return Text.assemble(("● ", self.get_component_rich_style("sessions-table--running", partial=True)),
                                 value[2:], no_wrap=True)
        if key != "status":
            return Text(value, no_wrap=True)
        kind = {"completed": "completed", "running": "running", "damaged": "damaged"}.get(value, "stopped")
        return Text(value, style=self.get_component_rich_style(f"sessions-table--{kind}", partial=True), no_wrap=True)
