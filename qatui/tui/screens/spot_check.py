"""Spot check: type or paste one question, its reference and 2–6 responses (or load an item), run one judge.

    Header
    #form     load: path[#item-id] · question · reference · responses 1–6 · judge · backbone
    Footer

Focus starts in the load box, where most spot checks begin. The question, the reference and
the responses are text areas that grow with their text (up to a few lines, then scroll), so a
loaded or pasted answer keeps its line breaks and edits cleanly; tab moves between fields.
Ctrl+S starts the judge on the item as a real session (`qatui.tui.spot`) and shows it on the
run screen's panels (`SpotRunScreen`); escape comes back to the form to edit and run again.
The session is saved like any other; d on the run screen discards it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Header, Input, Label, Select, Static, TextArea

from qatui.errors import QatuiError
from qatui.text import plain
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.screens.confirm import ConfirmScreen
from qatui.tui.screens.run import RunScreen
from qatui.tui.widgets.backbone_input import BackboneInput, backbone_hint, backbone_problem
from qatui.tui.spot import MAX_RESPONSES, judges_for, pick_item, spot_item, start_spot_check

if TYPE_CHECKING:
    from qatui.data.model import Item


class SpotCheckScreen(QatuiScreen):
    """The form; the judges offered are those whose needs the typed item meets."""

    HELP_TITLE = "spot check"
    DEFAULT_CSS = """
    SpotCheckScreen {
        & #form { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
        & #form > Label { color: $text-muted; margin-top: 1; }
        & #form > Label.first { margin-top: 0; }
        & #form Input, & #form TextArea { background: $foreground 6%; }
        & #form Input:focus, & #form TextArea:focus { background: $foreground 12%; }
        & #form Input { margin-bottom: 0; }
        & #form TextArea { height: auto; min-height: 1; max-height: 6; }
        & #form #question { max-height: 4; }
        & #form .response { margin-bottom: 1; }
        & #run-row { height: auto; margin-top: 1; }
        & #run-row > Select { width: 1fr; }
        & #run-row > #backbone { width: 2fr; }
        & #backbone-hint { color: $text-muted; height: auto; }
        & #run-row > Label { width: auto; padding: 0 1; color: $text-muted; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "run", "Run judge", priority=True),
        Binding("escape", "app.pop_screen", "Home"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.judges: dict[str, object] = {}
        """Every registered judge, built once (name -> Judge), to check their needs."""
        self._offered: list[str] | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with VerticalScroll(id="form"):
            yield Label("Load an item (optional): a dataset file, or file#item-id; enter loads", classes="first")
            yield Input(placeholder="path/to/data.jsonl#item-id", id="load", compact=True)
            yield Label("Question")
            yield TextArea(id="question", compact=True, placeholder="the question")
            yield Label("Reference answer (optional for judges that need none)")
            yield TextArea(id="reference", compact=True, placeholder="the reference answer")
            yield Label(f"Responses (2 to {MAX_RESPONSES}; blank ones are left out)")
            for i in range(1, MAX_RESPONSES + 1):
                yield TextArea(id=f"response-{i}", classes="response", compact=True, placeholder=f"response {i}")
            with Horizontal(id="run-row"):
                yield Label("Judge")
                yield Select([], prompt="type an item first", id="judge", compact=True)
                yield Label("Backbone")
                yield BackboneInput(self.qatui.config, self.qatui.config.models.default_backbone, id="backbone")
            yield Static(backbone_hint(self.qatui.config), id="backbone-hint")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "spot check: one item, one judge"
        self.query_one("#load").focus()  # a path typed or pasted first lands where it is read
        self.build_judges()

    @work(group="judges", exclusive=True, exit_on_error=False, description="listing judges")
    async def build_judges(self) -> None:
        """Every registered judge (imports their modules, so off the UI thread)."""
        from qatui.judges.registry import available_judges, make_judge

        config = self.qatui.config

        def build() -> dict[str, object]:
            found = {}
            for name in available_judges(config):
                try:
                    found[name] = make_judge(name, config.judge_options(name), config=config)
                except QatuiError:
                    continue
            return found

        self.judges = await asyncio.to_thread(build)
        self._refresh_judges()

    def fields(self) -> tuple[str, str, list[str]]:
        """(question, reference, responses) as typed."""
        responses = [self.query_one(f"#response-{i}", TextArea).text for i in range(1, MAX_RESPONSES + 1)]
        return self.query_one("#question", TextArea).text, self.query_one("#reference", TextArea).text, responses

    def item(self) -> Item:
        """The item the form describes (DatasetError when it is not one yet)."""
        return spot_item(*self.fields())

    @on(TextArea.Changed)
    def _changed(self) -> None:
        self._refresh_judges()

    def _refresh_judges(self) -> None:
        """Offer the judges whose needs the item meets, keeping the one picked when it still applies."""
        try:
            offered = judges_for(self.item(), self.judges) if self.judges else []
        except (QatuiError, ValueError):
            offered = []
        if offered == self._offered:
            return
        self._offered = offered
        select = self.query_one("#judge", Select)
        picked = select.value
        select.set_options((name, name) for name in offered)
        select.prompt = "pick a judge" if offered else "type an item first"
        if picked in offered:
            select.value = picked
        elif offered:
            select.value = "minos" if "minos" in offered else offered[0]

    @on(Input.Submitted, "#load")
    def _load_submitted(self) -> None:
        self.load()

    @work(group="load", exclusive=True, exit_on_error=False, description="loading an item")
    async def load(self) -> None:
        """Fill the form from the item at the path typed in the load box."""
        spec = self.query_one("#load", Input).value
        try:
            item = await asyncio.to_thread(pick_item, spec, self.qatui.roots)
        except QatuiError as e:
            self.notify(str(e), title="Cannot load the item", severity="error", timeout=8)
            return
        self.fill(item)
        self.notify(f"{item.id}: {len(item.candidates)} responses", title="Loaded", timeout=3)

    def fill(self, item: Item) -> None:
        """Put an item's question, first reference and first responses into the form, line breaks kept.

        A text area draws what it holds as is, so control characters come in as their visible escapes
        (`qatui.text.plain`): the form is what the judge then sees.
        """
        self.query_one("#question", TextArea).text = plain(item.question)
        self.query_one("#reference", TextArea).text = plain(item.references[0]) if item.references else ""
        texts = [plain(text) for text in list(item.candidates.values())[:MAX_RESPONSES]]
        for i in range(1, MAX_RESPONSES + 1):
            self.query_one(f"#response-{i}", TextArea).text = texts[i - 1] if i <= len(texts) else ""
        self._refresh_judges()

    def action_run(self) -> None:
        """Judge the item: a new session, shown live on the run screen."""
        try:
            item = self.item()
        except (QatuiError, ValueError) as e:
            self.notify(str(e), title="Not an item yet", severity="warning")
            return
        judge = self.query_one("#judge", Select).value
        if not isinstance(judge, str):
            self.notify("Pick a judge first.", title="No judge", severity="warning")
            return
        backbone = self.query_one("#backbone", BackboneInput).backbone
        if self._calls_backbone(judge, backbone) and (problem := backbone_problem(self.qatui.config, backbone)):
            self.notify(problem, title="No such backbone", severity="error", timeout=10)  # as --backbone is refused
            return
        self.start(item, judge, backbone)

    def _calls_backbone(self, judge: str, backbone: str) -> bool:
        """Whether `judge` would ask the backbone on this item (a lexical judge runs whatever is typed there)."""
        from qatui.engine.backbones import calls_backbone
        from qatui.judges.resources import Resources

        built = self.judges.get(judge)
        return built is None or calls_backbone(built, Resources(self.qatui.config, backbone or None), None)

    @work(group="start", exclusive=True, exit_on_error=False, description="starting the spot check")
    async def start(self, item: Item, judge: str, backbone: str) -> None:
        """Start the spot check off the UI thread (its backbone is checked first), then show it live."""
        app = self.qatui
        job = await asyncio.to_thread(start_spot_check, app.store, item, judge, app.config, app._resources(backbone))
        self.app.push_screen(SpotRunScreen(job))


class SpotRunScreen(RunScreen):
    """The run screen for a spot check; the session is kept unless d discards it."""

    HELP_TITLE = "a spot check run"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "discard", "Discard"),
        Binding("escape", "back", "Edit"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "discard":
            return self.ended is not None
        return super().check_action(action, parameters)

    def action_discard(self) -> None:
        """Delete this spot check's session and go back to the form."""
        session_id = self.job.session.id

        def answered(yes: bool | None) -> None:
            if yes:
                try:
                    self.qatui.store.delete(session_id)
                except QatuiError as e:  # another process resumed it meanwhile
                    self.notify(str(e), title="Not discarded", severity="error")
                    return
                self.notify(f"discarded session {session_id}")
                self.app.pop_screen()

        self.app.push_screen(ConfirmScreen(f"Discard this spot check (session {session_id})?", yes="Discard"),
                             answered)
