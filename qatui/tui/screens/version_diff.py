"""The prompt diff of compared sessions: what changed between two versions of a judge, in a pane that scrolls.

    Header
    #diff-pane   the unified diff (`report.versions.diff_text`, as `qatui sessions diff` prints it): per
                 judge both sessions ran, "same version" or its definition files' hunks; long prompt
                 lines are kept whole, so the pane scrolls across as well as down
    Footer

The Compare screen opens it with `v` where two runs of one judge used different versions.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer
from textual.widgets import Footer, Header, Static

from qatui.text import plain
from qatui.tui.screens.base import QatuiScreen


class DiffView(Static):
    """A unified diff drawn in the theme's colours: added lines, removed lines, hunks and headings."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"diff-view--added", "diff-view--removed", "diff-view--hunk",
                                             "diff-view--heading"}
    """
    | Class | Description |
    | :- | :- |
    | `diff-view--added` | A line the second version adds. |
    | `diff-view--removed` | A line the second version removes. |
    | `diff-view--hunk` | A hunk's `@@` line. |
    | `diff-view--heading` | A judge's or a file's heading. |
    """

    DEFAULT_CSS = """
    DiffView {
        width: auto;
        padding: 0 1;
        & > .diff-view--added { color: $success; }
        & > .diff-view--removed { color: $error; }
        & > .diff-view--hunk { color: $accent; }
        & > .diff-view--heading { text-style: bold; }
    }
    """

    def __init__(self, text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = text
        """The diff as plain text (`report.versions.diff_text`): shown as data, never as markup."""

    def on_mount(self) -> None:
        self.update(self.styled())

    def styled(self) -> Text:
        """The diff line by line, each styled by its first characters; styles on plain text, no markup."""
        out = Text(no_wrap=True)
        for line in plain(self.text).splitlines():
            kind = ("heading" if line.startswith(("==", "+++", "---")) else "added" if line.startswith("+")
                    else "removed" if line.startswith("-") else "hunk" if line.startswith("@@") else "")
            style = self.get_component_rich_style(f"diff-view--{kind}", partial=True) if kind else ""
            out.append(line + "\n", style=style)
        return out


class VersionDiffScreen(QatuiScreen):
    """The prompt diff of the compared sessions' judges, in a pane that scrolls both ways; escape goes back."""

    HELP_TITLE = "prompt diff"
    DEFAULT_CSS = """
    VersionDiffScreen {
        & #diff-pane { height: 1fr; border: round $panel-border; border-title-color: $accent; }
        & #diff-pane:focus { border: round $primary; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with ScrollableContainer(id="diff-pane"):
            yield DiffView(self.text, id="diff")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "prompt diff"
        pane = self.query_one("#diff-pane")
        pane.border_title = "Judge versions: what changed (arrows, pgup/pgdn scroll; escape: back)"
        pane.focus()
