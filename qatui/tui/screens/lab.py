"""The Judge Lab: edit a judge file's prompt and rubric, run it on labelled items, keep it only if people agree more.

    Header                       judge lab · NAME · the file it saves to
    #status                      the loader's one-line error, or what the figures say, or what to do next
    ┌ Prompt ┬ Run ┬ History ┐   (F2 / F3 / F4, or the tab bar)
    │ judge file or built-in to open · the TOML text in a TextArea                            │
    │ dataset · which items (all, a seeded sample, the N most disagreeing) · figures · flips  │
    │ every saved version of this judge with the figures it had when saved                    │
    Footer

"Before" is always the version saved in the file, "after" the text in the editor: a run
evaluates both on the same labelled items (`qatui.tui.lab.run_lab`, through the shared
evaluation core, so each is a real session whose transcripts can be opened), and shows each
one's agreement with people with its CI, the paired difference with its CI, and the items
that flipped. Enter on a flipped item opens the edited version's session at that item with
its LLM transcript. Ctrl+S saves the text (refused while the loader refuses it), never over
a file changed outside meanwhile without asking, and records the version and its figures
in the judge's history. Every text from the file, the data or a model is drawn as plain text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.content import Content
from textual.widgets import DataTable, Footer, Header, Input, Label, Select, Static, TabbedContent, TabPane, TextArea
from textual.worker import WorkerCancelled

from qatui.errors import QatuiError
from qatui.paths import tilde
from qatui.report import clip
from qatui.text import plain
from qatui.tui.lab import (HOWS, STOPPING_LINE, Evaluations, LabRequest, LabResult, Progress, figures_of, flips_of,
                           parse_request)
from qatui.tui.lab_file import ChangedOutside, LabFile
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.screens.confirm import ConfirmScreen
from qatui.tui.widgets.backbone_input import BackboneInput, backbone_problem

if TYPE_CHECKING:
    from concurrent.futures import Future

    from qatui.data.model import Dataset

TABS = Binding.Group("Tabs")
"""F2 / F3 / F4 share one footer hint, so the footer fits 80 columns."""


class JudgeLabScreen(QatuiScreen):
    """The lab over `judge` (a judge file's path or a built-in's name, or "" to pick one) and `data` (a dataset)."""

    HELP_TITLE = "judge lab"
    WIDE = 120
    """From this width the Prompt tab shows the last run's figures and flipped items beside the text."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run", "Run", priority=True),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("f2", "tab('prompt')", "Prompt", group=TABS),
        Binding("f3", "tab('run')", "Run", group=TABS),
        Binding("f4", "tab('history')", "History", group=TABS),
        Binding("escape", "back", "Back"),
    ]
    DEFAULT_CSS = """
    JudgeLabScreen {
        & #status { height: auto; max-height: 3; padding: 0 1; background: $panel; }
        & #status.-error { color: $text-error; background: $error-muted; text-style: bold; }
        & TabbedContent { height: 1fr; }
        & TabPane { padding: 0; }
        & .row { height: auto; padding: 0 1; }
        & .row > Label { width: auto; padding: 0 1 0 0; color: $text-muted; }
        & #data-info { padding: 0; }
        & .row > Input { width: 1fr; }
        & Input, & Select { background: $foreground 6%; }
        & Input:focus, & Select:focus { background: $foreground 12%; }
        & #how { width: 1fr; }
        & #n, & #seed { width: 8; }
        & #editor { height: 1fr; border: round $panel-border; border-title-color: $accent; }
        & #editor:focus { border: round $primary; }
        & DataTable { height: auto; border: round $panel-border; border-title-color: $accent; }
        & DataTable:focus { border: round $primary; }
        & #figures { min-height: 5; }
        & #prompt-body { height: 1fr; }
        & #editor { width: 1fr; }
        & #beside { width: 46; display: none; }
        &.-wide #beside { display: block; }
        & #side-flips { height: 1fr; }
        & #flips, & #versions { height: 1fr; min-height: 5; }
    }
    """

    def __init__(self, judge: str = "", data: str = "") -> None:
        super().__init__()
        self.judge_spec = judge
        self.data_spec = data
        self.opened: LabFile | None = None
        """The file being edited and what it held when opened or last saved."""
        self.judge_name = ""
        """The judge's name as its file states it (the history is kept under it)."""
        self.dataset: Dataset | None = None
        """The labelled items runs use: only ever those of the dataset the Data field names (None until loaded)."""
        self.dataset_spec = ""
        """What the Data field held when `dataset` was loaded from it."""
        self.data_refused: tuple[str, str] | None = None
        """(what the Data field held, why that dataset cannot be used) for the last load refused."""
        self.result: LabResult | None = None
        self.problem = ""
        """The loader's one-line error about the editor's text ("" when it loads)."""
        self._checked = ""
        """The text `problem` was found for."""
        self._run_future: Future[LabResult] | None = None
        self._progress: Progress | None = None
        """What the run in progress has done, and how it is stopped (`action_back`)."""
        self._stop_asked = False
        """Whether esc asked the run in progress to stop (a second esc cancels it at once)."""
        """The run in progress on the engine's loop."""
        self.evaluations: dict[str, Evaluations] = {}
        """Backbone -> what this lab evaluated with it: running again after an edit evaluates only the edit."""

    # -- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(id="status")
        with TabbedContent(initial="prompt"):
            with TabPane("Prompt", id="prompt"):
                with Horizontal(classes="row"):
                    yield Label("Judge")
                    yield Input(self.judge_spec, id="judge", compact=True,
                                placeholder="a judge file (.toml), or a built-in to copy: pointwise, pairwise-ab…")
                with Horizontal(id="prompt-body"):
                    yield TextArea.code_editor("", language="toml", id="editor", soft_wrap=True,
                                               show_line_numbers=True,
                                               tab_behavior="focus")  # esc is the screen's: back, or cancel a run
                    with Vertical(id="beside"):  # wide terminals: the last run's figures beside the text
                        yield DataTable(id="side-figures", cursor_type="none")
                        yield DataTable(id="side-flips", cursor_type="row", zebra_stripes=True)
            with TabPane("Run", id="run"):
                with Horizontal(classes="row"):
                    yield Label("Data")
                    yield Input(self.data_spec, id="data", compact=True, placeholder="a dataset with people's labels")
                    yield Label("", id="data-info")
                with Horizontal(classes="row"):
                    yield Select(HOWS, value="sample", allow_blank=False, id="how", compact=True)
                    yield Label(" N")
                    yield Input("20", id="n", compact=True, type="integer")
                    yield Label(" seed")
                    yield Input("0", id="seed", compact=True, type="integer")
                with Horizontal(classes="row"):
                    yield Label("Backbone")
                    yield BackboneInput(self.qatui.config, self.qatui.config.models.default_backbone, id="backbone")
                yield DataTable(id="figures", cursor_type="none", zebra_stripes=True)
                yield DataTable(id="flips", cursor_type="row", zebra_stripes=True)
            with TabPane("History", id="history"):
                yield DataTable(id="versions", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "judge lab"
        editor = self.query_one("#editor", TextArea)
        editor.border_title = "no judge open"
        editor.read_only = True
        figures = self.query_one("#figures", DataTable)
        figures.border_title = "Agreement with people (95% CIs)"
        for name in ("", "version", "metric", "value", "95% CI", "items", "failed"):
            figures.add_column(name)
        flips = self.query_one("#flips", DataTable)
        flips.border_title = "Items that flipped (enter: transcript)"
        for name in ("item", "now", "question"):
            flips.add_column(name)
        side = self.query_one("#side-figures", DataTable)
        side.border_title = "Last run"
        for name in ("", "value", "95% CI", "items"):
            side.add_column(name)
        side_flips = self.query_one("#side-flips", DataTable)
        side_flips.border_title = "Flipped"
        for name in ("item", "now"):
            side_flips.add_column(name)
        versions = self.query_one("#versions", DataTable)
        versions.border_title = "Saved versions"
        for name in ("version", "saved", "figures", "note"):
            versions.add_column(name)
        self._show_status()
        if self.judge_spec:
            self.open_judge(self.judge_spec)
        else:
            self.query_one("#judge").focus()
        if self.data_spec:
            self.load_data(self.data_spec)

    # -- opening ----------------------------------------------------------------------------------

    @on(Input.Submitted, "#judge")
    def _judge_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.leave(lambda: self.open_judge(event.value.strip()))

    @work(group="open", exclusive=True, exit_on_error=False, description="opening a judge")
    async def open_judge(self, spec: str) -> None:
        """Open a judge file, or a copy of a built-in single-prompt judge (saved to the user's judges folder)."""
        from qatui.tui.lab import open_judge

        try:
            opened = await asyncio.to_thread(open_judge, spec, self.qatui.roots, self.qatui.config)
        except QatuiError as e:
            self.notify(str(e), title="Cannot open the judge", severity="error", timeout=10)
            return
        self.opened, self.result = opened, None
        editor = self.query_one("#editor", TextArea)
        editor.read_only = False
        editor.load_text(opened.text)
        editor.border_title = Content(plain(tilde(opened.path)))
        self.query_one("#judge", Input).value = spec
        self._draw_result()
        self.check_now()
        editor.focus()

    @on(Input.Submitted, "#data")
    def _data_submitted(self, event: Input.Submitted) -> None:
        self.load_data(event.value.strip())

    @on(Input.Changed, "#data")
    def _data_changed(self, event: Input.Changed) -> None:
        """Once the field names another dataset, drop the one loaded and what was shown of it (its count of
        labelled items, the last run's figures): a run, and what the screen shows, belong to the named one."""
        if self.dataset is not None and event.value.strip() != self.dataset_spec:
            self._use_dataset(None, "")
        else:
            self._show_status()

    @work(group="data", exclusive=True, exit_on_error=False, description="loading a dataset")
    async def load_data(self, spec: str) -> None:
        """Load the dataset whose labelled items the runs use."""
        from qatui.tui.lab import load_labelled

        try:
            dataset = await asyncio.to_thread(load_labelled, spec, self.qatui.roots)
        except QatuiError as e:
            self.data_refused = (spec, plain(str(e)))
            self._use_dataset(None, "")
            self.notify(str(e), title="Cannot use the dataset", severity="error", timeout=10)
            return
        if self._data_field() != spec:  # edited while it loaded: the field names another one now
            self._use_dataset(None, "")
            return
        self._use_dataset(dataset, spec)
        if self.query_one("#data").has_focus:
            self.query_one("#how").focus()

    def _data_field(self) -> str:
        """The dataset the Data field names."""
        return self.query_one("#data", Input).value.strip()

    def _use_dataset(self, dataset: Dataset | None, spec: str) -> None:
        """Make `dataset` (loaded from `spec`; None: none) the one runs use, and show its count of labelled items;
        the last run's figures and what was evaluated belong to the items before, so they go."""
        self.dataset, self.dataset_spec = dataset, spec
        info = ""
        if dataset is not None:
            labelled = sum(1 for item in dataset.items if item.gold is not None)
            info = f" {labelled} of {len(dataset.items)} items labelled"
        self.query_one("#data-info", Label).update(Content(plain(info)))
        self.result = None
        self.evaluations.clear()  # evaluated on other items
        self._draw_result()
        self._show_status()

    # -- checking ---------------------------------------------------------------------------------

    @on(TextArea.Changed, "#editor")
    def _edited(self) -> None:
        self._show_status()
        self.check_later()

    def check_later(self) -> None:
        """Check the text once typing pauses (a keystroke restarts the wait)."""
        if getattr(self, "_check_timer", None) is not None:
            self._check_timer.stop()
        self._check_timer = self.set_timer(0.3, self.check_now)

    @work(group="check", exclusive=True, exit_on_error=False, description="checking the judge file")
    async def check_now(self) -> None:
        """Load the editor's text as a judge file would be loaded; show the loader's one-line error, if any."""
        from qatui.tui.lab import check_text

        if self.opened is None:
            return
        text = self.query_one("#editor", TextArea).text
        try:
            judge_file = await asyncio.to_thread(check_text, text, self.opened.source)
        except QatuiError as e:
            self.problem = plain(str(e))
        else:
            self.problem = ""
            if judge_file.name != self.judge_name:
                self.judge_name = judge_file.name
                self.load_history()
        self._checked = text
        self._show_status()

    # -- the status line --------------------------------------------------------------------------

    def modified(self) -> bool:
        """Whether the editor holds edits not saved to the file."""
        return self.opened is not None and self.query_one("#editor", TextArea).text != self.opened.text

    def _show_status(self) -> None:
        status = self.query_one("#status", Static)
        current = self.opened is not None and self._checked == self.query_one("#editor", TextArea).text
        status.set_class(bool(self.problem) and current, "-error")
        if self.opened is None:
            line = "Open a judge file (.toml) or a built-in to copy: type it in the Judge field and press enter."
        elif self.problem and current:
            line = self.problem
        elif self.result is not None and self.result.text == self.query_one("#editor", TextArea).text:
            line = self.result.summary()
        elif not self.opened.digest and not self.modified() and not (self.problem and current):
            line = f"A copy of a built-in, not saved yet: ctrl+s saves it as {tilde(self.opened.path)}" + (
                "; give a dataset with people's labels in the Run tab (F3) to run it." if self.dataset is None
                else "; ctrl+r runs it.")
        elif self.dataset is None and self.data_refused and self.data_refused[0] == self._data_field():
            line = f"Cannot use the dataset: {self.data_refused[1]}"
        elif self.dataset is None and self._data_field():
            line = "The dataset (F3) is not loaded yet: enter loads it; ctrl+r loads it and runs."
        elif self.dataset is None:
            line = "Give a dataset with people's labels in the Run tab (F3), then ctrl+r runs the judge on it."
        else:
            line = ("edited: ctrl+r runs it beside the saved version (the one before), ctrl+s saves" if self.modified()
                    else "ctrl+r runs the saved version on the labelled items")
        # the judge's name (else its file's): the whole path is on the editor's border
        shown = self.judge_name or (self.opened.path.name if self.opened else "no judge")
        self.sub_title = f"judge lab · {shown}" + (" · modified" if self.modified() else "")
        status.update(Content(plain(line)))

    # -- running ----------------------------------------------------------------------------------

    def action_run(self) -> None:
        """Run the editor's text (and the saved version, to compare) on the chosen labelled items."""
        if self.opened is None:
            self.notify("Open a judge first.", severity="warning")
            return
        text = self.query_one("#editor", TextArea).text
        if self._checked != text or self.problem:
            self._refuse_then_check(text)
            return
        if self.dataset is None and self._data_field():
            self._load_then_run(self._data_field())
            return
        if self.dataset is None:
            self.notify("Give a dataset with people's labels first.", title="No data", severity="warning")
            self.action_tab("run")
            self.query_one("#data").focus()
            return
        try:
            request = parse_request(self.query_one("#how", Select).value, self.query_one("#n", Input).value,
                                    self.query_one("#seed", Input).value)
        except QatuiError as e:
            self.notify(str(e), title="Cannot run", severity="error", timeout=8)
            return
        backbone = self.query_one("#backbone", BackboneInput).backbone
        if problem := backbone_problem(self.qatui.config, backbone):
            self.notify(problem, title="No such backbone", severity="error", timeout=10)
            return
        self.run_lab(text, request, backbone)

    @work(group="check-then-run", exclusive=True, exit_on_error=False, description="checking the judge file")
    async def _refuse_then_check(self, text: str) -> None:
        """Check a text not checked yet; run it only when it loads (else the error stays on the status line)."""
        await self.check_now().wait()
        if self.problem:
            self.notify(self.problem, title="Not run: the judge file does not load", severity="error", timeout=10)
            self.action_tab("prompt")
        else:
            self.call_later(self.action_run)

    @work(group="load-then-run", exclusive=True, exit_on_error=False, description="loading a dataset")
    async def _load_then_run(self, spec: str) -> None:
        """Load the dataset the Data field names (edited, enter not pressed), then run on it; a dataset that
        cannot be used is said by the load, and nothing runs."""
        try:
            await self.load_data(spec).wait()
        except WorkerCancelled:  # enter loaded the field again meanwhile: that load counts, this run waits for ^r
            return
        if self.dataset is not None:
            self.call_later(self.action_run)
        else:  # refused (the load said why): to the field, to fix it
            self.action_tab("run")
            self.query_one("#data").focus()

    @work(group="run", exclusive=True, exit_on_error=False, description="running the judge")
    async def run_lab(self, text: str, request: LabRequest, backbone: str) -> None:
        """Both versions on the chosen items, on the engine's loop; then the figures and the flipped items."""
        from qatui.tui.lab import Progress, run_lab

        status = self.query_one("#status", Static)
        status.set_class(False, "-error")
        progress = self._progress = Progress()
        self._stop_asked = False
        app = self.qatui
        known = self.evaluations.setdefault(backbone, {})
        dataset, spec = self.dataset, self.dataset_spec
        self._run_future = app.engine_loop.submit(run_lab(self.opened, text, dataset, request, app.config,
                                                       app.store, app._resources(backbone), progress, known))
        timer = self.set_interval(0.2, lambda: status.update(Content(plain(progress.line()))))
        status.update(Content(plain(progress.line())))
        try:
            result = await asyncio.wrap_future(self._run_future)
        except asyncio.CancelledError:
            self.notify("The run was cancelled; its sessions are kept as cancelled.", severity="warning")
            return
        except QatuiError as e:
            self.notify(str(e), title="The run failed", severity="error", timeout=10)
            return
        finally:
            timer.stop()
            self._run_future = None
            self._show_status()
        if self.dataset is not dataset:  # the Data field was edited meanwhile: these figures are another dataset's
            self.notify(f"The run finished on {spec}, which the Data field no "
                        "longer names; its sessions are kept. ctrl+r runs on the one it names.",
                        title="Figures not shown", severity="warning", timeout=10)
            return
        self.result = result
        self._draw_result()
        self._show_status()
        if not (self.has_class("-wide") and self.query_one(TabbedContent).active == "prompt"):
            self.action_tab("run")  # wide, the figures are beside the text already: the editor keeps the focus

    def running(self) -> bool:
        """Whether a run is in progress."""
        return self._run_future is not None

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width >= self.WIDE, "-wide")

    def _draw_result(self) -> None:
        tables = [self.query_one(f"#{name}", DataTable) for name in ("figures", "flips", "side-figures", "side-flips")]
        for table in tables:
            table.clear()
        figures, flips, side, side_flips = tables
        if self.result is None:
            flips.border_title = "Items that flipped (enter: transcript)"
            side.border_title, side_flips.border_title = "Last run", "Flipped"
            return
        for row in figures_of(self.result):
            figures.add_row(*(Text(plain(cell)) for cell in row))
            side.add_row(*(Text(plain(cell)) for cell in (row[0].replace(" paired", ""), *row[3:6])))
        for item_id, now, question in flips_of(self.result):
            style = "bold green" if now == "right" else "bold red"
            flips.add_row(Text(plain(item_id)), Text(f"now {now}", style=style),
                          Text(clip(plain(question), 60), no_wrap=True, overflow="ellipsis"), key=item_id)
            side_flips.add_row(Text(clip(plain(item_id), 24)), Text(f"now {now}", style=style), key=item_id)
        flips.border_title = (f"Items that flipped: {flips.row_count} (enter: transcript)" if flips.row_count
                              else "No item flipped" if self.result.comparison is not None
                              else "Items that flipped: edit the prompt and run again to compare")
        side.border_title = Content(plain(f"Last run · {self.result.edited.metric}"))
        side_flips.border_title = f"Flipped: {flips.row_count} (enter)" if flips.row_count else "Flipped: none"

    @on(DataTable.RowSelected, "#flips, #side-flips")
    def _flip_selected(self, event: DataTable.RowSelected) -> None:
        if self.result is not None and event.row_key.value is not None:
            self.qatui.open_session(self.result.edited.session_id, item=event.row_key.value)

    # -- saving -----------------------------------------------------------------------------------

    def action_save(self) -> None:
        """Save the editor's text to the file (refused while it does not load) and record the version."""
        if self.opened is None:  # nothing to save into: said, as ^r says it
            self.notify("Open a judge first.", severity="warning")
            return
        text = self.query_one("#editor", TextArea).text
        self.save(text, overwrite=False)

    @work(group="save", exclusive=True, exit_on_error=False, description="saving the judge file")
    async def save(self, text: str, *, overwrite: bool) -> None:
        """Write the file atomically and keep the version with its figures; ask before overwriting outside edits."""
        from qatui.tui.lab import check_text, save_version

        try:
            await asyncio.to_thread(check_text, text, self.opened.source)
        except QatuiError as e:
            self.problem, self._checked = plain(str(e)), text
            self._show_status()
            self.notify(str(e), title="Not saved: the judge file does not load", severity="error", timeout=10)
            return
        try:
            saved, version = await asyncio.to_thread(save_version, self.opened, text, self.result, self.qatui.config,
                                                     overwrite=overwrite)
        except ChangedOutside as e:
            def answered(yes: bool | None) -> None:
                if yes:
                    self.save(text, overwrite=True)

            self.app.push_screen(ConfirmScreen(f"{e}. Overwrite it with the lab's text? Its own edits would be "
                                               "lost.", yes="Overwrite"), answered)
            return
        except (QatuiError, OSError) as e:
            self.notify(str(e), title="Not saved", severity="error", timeout=10)
            return
        self.opened = saved
        self.notify(f"{tilde(saved.path)} · version {version}", title="Saved", timeout=4)
        self._show_status()
        self.load_history()

    # -- history ----------------------------------------------------------------------------------

    @work(group="history", exclusive=True, exit_on_error=False, description="reading the judge's history")
    async def load_history(self) -> None:
        """The saved versions of this judge, newest first, with the figures each had."""
        from qatui.tui.lab import history_rows

        rows = await asyncio.to_thread(history_rows, self.judge_name) if self.judge_name else []
        table = self.query_one("#versions", DataTable)
        table.clear()
        for row in rows:
            table.add_row(*(Text(plain(cell), no_wrap=True, overflow="ellipsis") for cell in row))
        table.border_title = Content(plain(f"Saved versions of {self.judge_name}: {len(rows)}" if self.judge_name
                                           else "Saved versions"))

    # -- moving -----------------------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        """Show the Prompt, Run or History tab, focused where it is used first."""
        self.query_one(TabbedContent).active = tab
        self._focus_tab(tab)

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        self._focus_tab(event.pane.id or "")

    def _focus_tab(self, tab: str) -> None:
        """Focus what the tab is used for first, so typed keys never go to a hidden widget."""
        target = {"prompt": "#editor" if self.opened is not None else "#judge",
                  "run": "#data" if self.dataset is None else "#flips" if self.result is not None else "#how",
                  "history": "#versions"}.get(tab)
        if target is not None:
            self.set_focus(self.query_one(target))  # at once: keys typed right after land there

    def leave(self, then: Callable[[], object]) -> None:
        """Call `then` now, or after the user agrees to drop the edits not saved (another judge opened, the lab
        left by esc, the palette's Home or Compare, or ctrl+q)."""
        if not self.modified():
            then()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                then()

        self.app.push_screen(ConfirmScreen("The judge has edits not saved. Drop them?", yes="Drop edits"), answered)

    def action_back(self) -> None:
        """Stop the run in progress (`Progress.stop`: the calls in flight are waited for, their answers kept; esc
        again cancels it without them); else back to the screen below, after asking when edits are not saved."""
        if self._run_future is not None:
            if self._progress is not None and not self._stop_asked:
                self._stop_asked = True
                self.qatui.engine_loop.call_soon(self._progress.stop)
                self.query_one("#status", Static).update(Content(STOPPING_LINE))  # before the timer redraws it
            else:
                self._run_future.cancel()
            return
        self.leave(self.app.pop_screen)
