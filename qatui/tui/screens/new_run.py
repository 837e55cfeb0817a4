"""The new-run dialog: a dataset (a path, or the bundled demo), judges, a backbone, a limit.

It checks the dataset as it is typed (in a thread) and says how many items it has, what gold
it carries, and which picked judges it cannot feed, so a run is refused here rather than
after it starts.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, SelectionList, Static

from qatui.config import Config
from qatui.errors import QatuiError
from qatui.judges.registry import JUDGES


@dataclass(frozen=True)
class NewRun:
    """What the dialog returns: the app builds the run from it."""

    path: str
    """Dataset file or folder; '' for the bundled demo."""
    judges: list[str]
    backbone: str
    limit: int | None


def dataset_preview(path: str, judges: list[str]) -> str:
    """One paragraph about the dataset at `path` ('' = the demo) and the judges it cannot feed."""
    from qatui.data.loaders import demo_dataset, load_dataset
    from qatui.judges.registry import make_judge

    dataset = load_dataset(path) if path else demo_dataset()
    gold = ", ".join(f"{kind} {n}" for kind, n in dataset.gold_kinds.items()) or "none"
    refs = sum(1 for it in dataset.items if it.references)
    lines = [f"{dataset.name} ({dataset.format}): {len(dataset.items)} items · gold {gold} · "
             f"references {refs}/{len(dataset.items)}"]
    for name in judges:
        if problems := make_judge(name).unmet_needs(dataset):
            lines.append(f"{name} cannot run: {'; '.join(problems)}")
    return "\n".join(lines)


class NewRunScreen(ModalScreen[NewRun | None]):
    """Dismisses with a `NewRun`, or None when cancelled."""

    HELP_TITLE = "the new-run dialog"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("ctrl+s", "start", "Start run"),
    ]

    DEFAULT_CSS = """
    NewRunScreen {
        align: center middle;
        & > VerticalScroll {
            width: 84; max-width: 96%; height: auto; max-height: 96%;
            border: thick $primary 60%; background: $surface; padding: 0 1;
        }
        & Label { color: $text-muted; margin-top: 1; }
        & SelectionList { height: auto; max-height: 8; }
        & Input, & Select { background: $panel; }
        & #preview { height: auto; color: $text-muted; }
        & #preview.-error { color: $error; }
        & Horizontal { height: auto; }
        & Horizontal > Input { width: 12; margin-left: 1; }
        & Horizontal > Select { width: 1fr; }
        & #buttons { align-horizontal: right; margin-top: 1; }
        & Button { margin-left: 2; }
    }
    """

    def __init__(self, config: Config, last: NewRun | None = None) -> None:
        super().__init__()
        self.config = config
        self.last = last or NewRun("", ["minos"], config.models.default_backbone, None)

    def compose(self) -> ComposeResult:
        backbones = dict.fromkeys([self.config.models.default_backbone, *self.config.backbones])
        with VerticalScroll() as box:
            box.border_title = "New run"
            yield Label("Dataset file or folder (empty: the bundled demo set)")
            yield Input(self.last.path, placeholder="path/to/data.jsonl", id="path", compact=True)
            yield Static(id="preview")
            yield Label("Judges (space toggles)")
            yield SelectionList[str](*((f"{name}", name, name in self.last.judges) for name in JUDGES), id="judges",
                                     compact=True)
            yield Label("Backbone · limit (items)")
            with Horizontal():
                yield Select([(b, b) for b in backbones], value=self.last.backbone if self.last.backbone in backbones
                             else self.config.models.default_backbone, allow_blank=False, id="backbone", compact=True)
                yield Input("" if self.last.limit is None else str(self.last.limit), placeholder="all",
                            type="integer", id="limit", compact=True)
            with Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel", compact=True)
                yield Button("Start (ctrl+s)", id="start", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.check()

    @on(Input.Changed, "#path")
    @on(SelectionList.SelectedChanged)
    def _changed(self) -> None:
        self.check()

    @work(group="check", exclusive=True, exit_on_error=False, description="checking the dataset")
    async def check(self) -> None:
        """Load the dataset in a thread and say what it holds and which judges it cannot feed."""
        await asyncio.sleep(0.3)  # let typing settle
        preview = self.query_one("#preview", Static)
        try:
            text = await asyncio.to_thread(dataset_preview, self.query_one("#path", Input).value.strip(),
                                           list(self.query_one(SelectionList).selected))
        except QatuiError as e:
            preview.update(Content(str(e)))
            preview.add_class("-error")
            return
        preview.update(Content(text))
        preview.set_class("cannot run" in text, "-error")

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#start")
    def _start(self) -> None:
        self.action_start()

    def action_start(self) -> None:
        """Return the run to start; the app reports what is wrong with it, if anything."""
        judges = list(self.query_one(SelectionList).selected)
        if not judges:
            self.notify("Pick at least one judge.", severity="warning")
            return
        limit = self.query_one("#limit", Input).value.strip()
        self.dismiss(NewRun(self.query_one("#path", Input).value.strip(), judges,
                            str(self.query_one("#backbone", Select).value), int(limit) if limit else None))
