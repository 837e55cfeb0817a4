"""Every key binding of the screen underneath, with what it does (? or F1)."""

from __future__ import annotations

import textwrap
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Label

from qatui.tui.format import METRIC_MEANINGS
from qatui.tui.widgets.vim_table import VimTable


def binding_rows(under: Screen) -> list[tuple[str, str, str]]:
    """(keys, action, where) for each described binding of `under`: its own first, Textual's last.

    The screen's bindings that do not apply at the moment (resume on a finished session) are listed
    too, marked "(not now)".
    """
    app = under.app
    builtin = {b.action for b in Screen.BINDINGS if isinstance(b, Binding)}
    rows: dict[tuple[str, str], list[str]] = {}
    rank: dict[tuple[str, str], tuple[int, bool]] = {}
    active = under.active_bindings
    idle = [(under, b) for b in Binding.make_bindings(type(under).BINDINGS) if b.key not in active]
    for node, binding in [(a.node, a.binding) for a in active.values()] + idle:
        if not binding.description:
            continue
        if node is app:
            where, order = "app", 2
        elif node is under:
            where, order = getattr(under, "HELP_TITLE", "screen"), 0
        else:
            where, order = getattr(node, "BINDING_GROUP_TITLE", None) or type(node).__name__, 1
        key = (binding.description + (" (not now)" if binding.key not in active else ""), where)
        rank[key] = (order, node is under and binding.action in builtin)
        keys = rows.setdefault(key, [])
        if (shown := app.get_key_display(binding)) not in keys:
            keys.append(shown)
    return [(" / ".join(keys), what, where) for (what, where), keys in sorted(rows.items(), key=lambda r: rank[r[0]])]


MEANING_WIDTH = 38
"""Characters per line of a figure's meaning, so the table fits its box at 80 columns (no sideways scrolling)."""


class HelpScreen(ModalScreen[None]):
    """A table of keys; escape, q, ? or F1 closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark,f1", "dismiss", "Close help")]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > Vertical {
            width: 76; max-width: 96%; height: 90%;
            border: thick $primary 60%; background: $surface; padding: 0 1;
        }
        & Label { width: 1fr; color: $text-muted; }
        & VimTable { height: 1fr; }
    }
    """

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.rows = binding_rows(under)
        self.figures = list(METRIC_MEANINGS.items()) if getattr(under, "SHOWS_METRICS", False) else []
        self.title_text = f"Keys of {getattr(under, 'HELP_TITLE', type(under).__name__)}"

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            yield VimTable(cursor_type="row", zebra_stripes=True)
            yield Label("Ctrl+P: command palette · j/k or arrows: scroll · escape: close")

    def on_mount(self) -> None:
        table = self.query_one(VimTable)
        table.add_columns("key", "action", "where")
        for keys, what, where in self.rows:
            table.add_row(Text(keys, style="bold"), what, where)
        for short, meaning in self.figures:  # wrapped here: a long cell would widen the column past the box
            table.add_row(Text(short, style="bold"), Text(textwrap.fill(meaning, MEANING_WIDTH)), "figure", height=None)
        table.focus()
