"""The selected artifact as plain text, for `y` (copy) on every screen that shows an item's panels.

What is copied follows the focus: a focused panel (key points, ranking, instances, routing, the
question) gives its own content; the transcript pane gives the whole raw transcript; anything
else (the item list, a column of panels) gives every panel shown for the selected item, each
under its title. The app puts it on the terminal's clipboard with OSC 52
(`App.copy_to_clipboard`), which works over SSH in terminals that allow it.
"""

from __future__ import annotations

import io

from rich.console import Console
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget

from qatui.tui.widgets.panel import TaskPanel
from qatui.tui.widgets.transcript_panel import TranscriptPanel

COPY_WIDTH = 100
"""Columns tables are laid out in when copied (at least the panel's own width)."""


def panel_text(panel: TaskPanel) -> str:
    """What `panel` shows, without colours, trailing spaces or blank edges."""
    drawn = panel.render()
    if isinstance(drawn, Content):
        text = drawn.plain
    elif isinstance(drawn, str):
        text = drawn
    else:
        out = io.StringIO()
        width = max(COPY_WIDTH, panel.content_size.width)
        Console(file=out, width=width, color_system=None, force_terminal=False, legacy_windows=False).print(drawn)
        text = out.getvalue()
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def panel_title(panel: TaskPanel) -> str:
    """A panel's title as shown: its markup read, so an item id `[bold red]q1[/]` (set in escaped) is copied as the
    id, not as `\\[bold red]q1\\[/]`."""
    title = panel.border_title
    if isinstance(title, Content):
        return title.plain
    return Content.from_markup(str(title or "")).plain


def titled(panel: TaskPanel) -> str:
    """A panel's title and its text, as copied to the clipboard."""
    return f"{panel_title(panel)}\n{panel_text(panel)}"


def artifact(screen: Screen) -> tuple[str, str] | None:
    """(what, text) for the focused artifact of `screen`; None when there is nothing to copy."""
    focused: Widget | None = screen.focused
    if isinstance(focused, TaskPanel) and focused.task is not None:
        return panel_title(focused) or "panel", panel_text(focused)
    if isinstance(focused, TranscriptPanel) and focused.task is not None:
        text = "".join(focused.task.transcript)
        return ("the LLM transcript", text) if text else None
    root: Widget = focused if focused is not None and focused.query(TaskPanel) else screen
    panels = [p for p in root.query(TaskPanel) if p.display and p.task is not None]
    if not panels:
        return None
    return f"{len(panels)} panels of {panels[0].task.item_id}", "\n\n".join(titled(p) for p in panels)


def copy_artifact(screen: Screen) -> None:
    """Put the focused artifact on the clipboard and say what was copied."""
    found = artifact(screen)
    if found is None:
        screen.notify("Nothing to copy here yet.", severity="warning")
        return
    what, text = found
    screen.app.copy_to_clipboard(text)
    lines = text.count("\n") + 1
    screen.notify(f"{what} ({lines} line{'s' * (lines > 1)}); paste it anywhere", title="Copied", timeout=3)
