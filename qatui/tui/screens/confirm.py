"""A yes / no question over the current screen; dismisses with the answer."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from qatui.text import plain


class ConfirmScreen(ModalScreen[bool]):
    """Asks `question`; y / enter on Yes answers True, n / escape False."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "dismiss(False)", "No"),
        Binding("y", "dismiss(True)", "Yes"),
        Binding("left,h", "app.focus_previous", "Previous button", show=False),
        Binding("right,l", "app.focus_next", "Next button", show=False),
    ]

    DEFAULT_CSS = """
    ConfirmScreen {
        align: center middle;
        & > Vertical {
            width: 60; max-width: 90%; height: auto;
            border: thick $warning 60%; background: $surface; padding: 1 2;
        }
        & Label { width: 1fr; margin-bottom: 1; }
        & Horizontal { height: auto; align-horizontal: right; }
        & Button { margin-left: 2; min-width: 10; }
    }
    """

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.labels = (yes, no)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Content(plain(self.question)))
            with Horizontal():
                yield Button(f"{self.labels[1]} (n)", id="no")
                yield Button(f"{self.labels[0]} (y)", id="yes", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
