"""A DataTable that also moves with vim keys, for every list in the app."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class VimTable(DataTable):
    """DataTable with j / k / g / G beside the arrow keys."""

    BINDING_GROUP_TITLE = "table"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "First row", show=False),
        Binding("G", "scroll_bottom", "Last row", show=False),
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | j / k | Move the cursor down / up. |
    | g / G | Jump to the first / last row. |
    """

    def row_key_at_cursor(self) -> str | None:
        """The key of the row under the cursor, None when the table is empty."""
        if not self.is_valid_row_index(self.cursor_row):
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def fill(self, header: Sequence[str], rows: Sequence[Sequence[str | Text]]) -> None:
        """Columns as wide as their widest cell, then the rows: a table filled at once draws whole.

        Left to grow as rows arrive, a column filled in the same refresh as its table was mounted was at times
        drawn at its header's width, cutting "0.861" to "0.8" and "length" to "lengt"."""
        for n, name in enumerate(header):
            widest = max((cell_len(str(row[n]) if not isinstance(row[n], Text) else row[n].plain) for row in rows),
                         default=0)
            self.add_column(name, width=max(cell_len(name), widest))
        for row in rows:
            self.add_row(*row)
