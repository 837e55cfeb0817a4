"""Which dataset to label, and as whom: the dialog before the Label screen (Home's `a`, the palette)."""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label

from qatui.data.labels import ANNOTATOR
from qatui.tui.widgets.tick_box import TickBox


@dataclass(frozen=True)
class LabelRequest:
    """A labelling pass to open: `source` a dataset path, `demo` or a session; `annotator` whose labels."""

    source: str
    annotator: str
    fmt: str | None = None
    limit: int | None = None
    blind: bool = True


class LabelPrompt(ModalScreen["LabelRequest | None"]):
    """Asks for the dataset (or session) and the annotator's name; enter opens, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]
    DEFAULT_CSS = """
    LabelPrompt {
        align: center middle;
        & > Vertical { width: 64; max-width: 96%; height: auto; border: thick $primary 60%;
                       background: $surface; padding: 0 1; }
        & Label { margin-top: 1; }
        & #prompt-error { color: $error; }
    }
    """

    def __init__(self, source: str = "") -> None:
        super().__init__()
        self.source = source

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Label items yourself"
            yield Label("Dataset file, 'demo', or a session id")
            yield Input(self.source or "demo", id="source", compact=True)
            yield Label("Your name (letters, digits, . _ -)")
            yield Input(_default_name(), id="annotator", compact=True)
            yield TickBox("Blind: hide the judges until I label an item", True, id="blind", compact=True)
            yield Label("", id="prompt-error")
            yield Button("Label", id="go", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#annotator", Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#go")
    def _go(self) -> None:
        source = self.query_one("#source", Input).value.strip()
        name = self.query_one("#annotator", Input).value.strip()
        if not source or not ANNOTATOR.fullmatch(name):
            self.query_one("#prompt-error", Label).update(
                "a dataset is needed" if not source else "a name is 1 to 64 letters, digits, '.', '_' or '-'")
            return
        self.dismiss(LabelRequest(source, name, blind=self.query_one("#blind", Checkbox).value))


def _default_name() -> str:
    """The login name when it may name an annotator, else empty."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        return ""
    return name if ANNOTATOR.fullmatch(name) else ""
