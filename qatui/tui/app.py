"""The qatui workbench: Home lists sessions, a run screen watches a judge work, a session screen reads one back.

The app owns what every screen shares: the config, the sessions store, the engine loop runs
execute on (`qatui.tui.background`), the themes, and the commands of the palette. Screens
ask it to open a session or start a run; building a run (loading a dataset, reading a
session) happens in a thread worker, so the screen never waits on the disk. The run and
session screens are imported when first opened: Home paints without numpy, scipy or torch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.worker import Worker, WorkerState

from qatui.config import Config, default_config_path
from qatui.errors import QatuiError
from qatui.store.session import SessionStore
from qatui.text import plain
from qatui.tui.background import EngineLoop
from qatui.tui.commands import QatuiCommands
from qatui.tui.roots import Roots
from qatui.tui.screens.base import QatuiScreen, report_failure
from qatui.tui.screens.confirm import ConfirmScreen
from qatui.tui.screens.help import HelpScreen
from qatui.tui.screens.home import HomeScreen
from qatui.tui.themes import VARIABLE_DEFAULTS, check_theme, discover_themes, save_theme

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.theme import Theme
    from textual.timer import Timer

    from qatui.engine.jobs import RunJob
    from qatui.judges.resources import Resources
    from qatui.tui.screens.label_prompt import LabelRequest
    from qatui.tui.screens.new_run import NewRun

ResourcesFactory = Callable[[], "Resources"]


class QatuiApp(App[None]):
    """Home first; `open_id` opens a session over it, `job` a live run."""

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "qatui"
    COMMANDS = App.COMMANDS | {QatuiCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark,f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, config: Config | None = None, store: SessionStore | None = None, *,
                 open_id: str | None = None, job: RunJob | None = None,
                 make_resources: ResourcesFactory | None = None, config_path: Path | None = None,
                 annotate: LabelRequest | None = None, roots: Roots | None = None,
                 lab: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.config = config or Config()
        self.store = store or SessionStore(self.config.sessions_dir())
        self.make_resources = make_resources
        """Models for runs started here; None: the config's (new runs) or the session's (resumes)."""
        self.config_path = config_path or Path(self.config.source or default_config_path())
        self._themes, self._theme_problems = discover_themes()
        check_theme(self.config.general.theme, self._themes, str(self.config_path), self._theme_problems)
        self.engine_loop = EngineLoop()
        self.last_new_run: NewRun | None = None
        self.own_themes: list[str] = []
        """qatui's bundled themes and the user's (the palette lists these; Textual's own are under "Theme")."""
        self.open_id = open_id
        """A session to show over Home at start."""
        self.initial_job = job
        """A run to show (and start) over Home at start."""
        self._save_timer: Timer | None = None
        self.initial_labels = annotate
        """A labelling pass to open over Home at start (`qatui annotate`)."""
        self.just_ran: str | None = None
        """The session of the run shown last: Home highlights it when it shows again."""
        self.roots = roots or Roots()
        """The folders file fields may read (`qatui serve` confines them; a terminal goes anywhere)."""
        self.initial_lab = lab
        """(judge, data) for a Judge Lab to open over Home at start (`qatui lab`)."""

    def on_mount(self) -> None:
        for theme in self._themes:
            self.register_theme(theme)
        self.own_themes = [theme.name for theme in self._themes]
        for problem in self._theme_problems:
            self.notify(problem, title="Theme skipped", severity="warning")
        self.theme = self.config.general.theme
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.push_screen(HomeScreen(self.store))
        if self.open_id:
            self.open_session(self.open_id)
        if self.initial_job:
            self.show_run(self.initial_job)
        if self.initial_labels:
            self.open_labels(self.initial_labels)
        if self.initial_lab:
            self.open_lab(*self.initial_lab)

    def on_unmount(self) -> None:
        self.engine_loop.close()

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's title as text: sub titles name sessions, datasets and items."""
        return super().format_title(plain(title), plain(sub_title))

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast as text, never markup: messages quote ids, names, paths and data (`markup` is ignored)."""
        super().notify(plain(message), title=plain(title), severity=severity, timeout=timeout, markup=False)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """The palette's Screenshot: into the downloads folder where there is one, else the working directory.

        Textual writes into the downloads folder only, and an SSH host rarely has one: the save failed without a
        reason. Served in a browser, the driver hands the file to the browser instead (`path` unused there).
        """
        if path is None:
            from qatui.paths import screenshots_dir

            path = str(screenshots_dir())
        return super().deliver_screenshot(filename, path, time_format)

    def on_delivery_complete(self, event: events.DeliveryComplete) -> None:
        """Where the screenshot went, as text (Textual's own toast is markup, which `notify` shows raw)."""
        if event.name == "screenshot":
            event.prevent_default()
            self.notify(f"Saved to {event.path}" if event.path else "Saved", title="Screenshot")

    def on_delivery_failed(self, event: events.DeliveryFailed) -> None:
        """Why the screenshot was not saved, and where it was to go."""
        if event.name == "screenshot":
            event.prevent_default()
            self.notify(f"Not saved: {event.exception}", title="Screenshot", severity="error")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Variables our CSS uses beyond Textual's, for themes that lack them (Textual's own, users')."""
        return dict(VARIABLE_DEFAULTS)

    # -- what screens and commands ask for -------------------------------------------------------

    def go_home(self, then: Callable[[], object] | None = None) -> None:
        """Back to Home, then `then`; unless a run is in progress (its screen cancels it first), or a screen above
        Home holds what closing it would lose and the user keeps it (`QatuiScreen.leave`)."""
        from qatui.tui.screens.run import RunScreen

        if any(isinstance(s, RunScreen) and s.handle.running for s in self.screen_stack):
            self.notify("A run is in progress: cancel it with x first.", severity="warning")
            return

        def close() -> None:
            while len(self.screen_stack) > 2:
                self.pop_screen()
            if then is not None:
                then()

        self.leave_screens(self.screen_stack[2:], close)

    def leave_screens(self, screens: list[Screen], then: Callable[[], object]) -> None:
        """Call `then` once each of `screens` agrees to be closed, the top one asked first (each asks what it must;
        a no stops here)."""
        asking = [s for s in screens if isinstance(s, QatuiScreen)]
        if not asking:
            then()
            return
        asking[-1].leave(lambda: self.leave_screens(asking[:-1], then))

    def open_new_run(self) -> None:
        """The screen that picks a dataset, judges and models; starts the run it returns."""
        from qatui.tui.screens.new_run import NewRunScreen

        def chosen(request: NewRun | None) -> None:
            if request is not None:
                self.start_new_run(request)

        self.push_screen(NewRunScreen(self.config, self.last_new_run), chosen)

    def open_spot_check(self) -> None:
        """The spot-check form: one item typed or loaded, one judge."""
        from qatui.tui.screens.spot_check import SpotCheckScreen

        self.push_screen(SpotCheckScreen())

    def open_session(self, session_id: str, item: str | None = None) -> None:
        """Push the read-only view of a saved session (at `item`, its transcript shown, when given)."""
        from qatui.tui.screens.session import SessionScreen

        self.push_screen(SessionScreen(self.store, session_id, item=item))

    def open_lab(self, judge: str = "", data: str = "") -> None:
        """The Judge Lab over a judge file (or a built-in to copy) and a labelled dataset; either may be picked there."""
        from qatui.tui.screens.lab import JudgeLabScreen

        self.push_screen(JudgeLabScreen(judge, data))

    def compare_sessions(self, session_ids: list[str]) -> None:
        """Push the side-by-side view of sessions run on one dataset (refused, with the reason, otherwise)."""
        from qatui.tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(self.store, session_ids))

    def compare_marked(self) -> None:
        """Compare the sessions marked on Home."""
        home = next((s for s in self.screen_stack if isinstance(s, HomeScreen)), None)
        if home is not None:
            def compare() -> None:
                if self.screen is home:
                    home.action_compare()

            self.go_home(compare)

    def ask_labels(self, source: str = "") -> None:
        """Ask for a dataset (or session) and an annotator name, then open the Label screen."""
        from qatui.tui.screens.label_prompt import LabelPrompt

        def chosen(request: LabelRequest | None) -> None:
            if request is not None:
                self.open_labels(request)

        self.push_screen(LabelPrompt(source), chosen)

    @work(group="labels", exclusive=True, exit_on_error=False, description="opening the labels")
    async def open_labels(self, request: LabelRequest) -> None:
        """Open a labelling pass off the UI thread (datasets load, sessions are read), then the Label screen."""
        from qatui.report.annotation import open_annotation
        from qatui.tui.screens.label import LabelScreen

        source = await asyncio.to_thread(self.roots.checked_source, request.source)
        annotation = await asyncio.to_thread(open_annotation, source, request.annotator, self.store,
                                             fmt=request.fmt, limit=request.limit)
        self.push_screen(LabelScreen(annotation, blind=request.blind, seed=self.config.general.seed))

    def show_run(self, job: RunJob) -> None:
        """Push the live view of a job and start it."""
        from qatui.tui.screens.run import RunScreen

        self.just_ran = job.session.id
        self.push_screen(RunScreen(job))

    def start_demo(self) -> None:
        """MinosEval on the bundled demo set with the configured (by default embedded) models."""
        from qatui.data.loaders import demo_dataset
        from qatui.engine.jobs import start_run

        self.build_run(lambda: start_run(self.store, demo_dataset(), ["minos"], self.config,
                                         resources=self._resources()), "demo")

    def start_new_run(self, request: NewRun) -> None:
        """A run of the judges a user picked in the new-run dialog."""
        from qatui.data.loaders import demo_dataset, load_dataset
        from qatui.engine.jobs import start_run

        self.last_new_run = request

        def make() -> RunJob:
            dataset = load_dataset(self.roots.checked(request.path)) if request.path else demo_dataset()
            return start_run(self.store, dataset, request.judges, self.config, limit=request.limit,
                             resources=self._resources(request.backbone, request.nli, request.embedder),
                             judge_options=request.options, max_cost=request.max_cost, batch=request.batch,
                             batch_retry=request.batch_retry)  # None unless batch: `NewRunScreen.batch_retry`

        self.build_run(make, "new run")

    def resume_session(self, session_id: str) -> None:
        """Finish a saved session: skip what is done, retry what failed."""
        from qatui.engine.jobs import resume_run

        resources = self._resources() if self.make_resources else None
        self.build_run(lambda: resume_run(self.store, session_id, self.config, resources=resources), "resume")

    @work(group="build", exclusive=True, exit_on_error=False, description="starting the run")
    async def build_run(self, make: Callable[[], RunJob], what: str) -> None:
        """Build a job off the UI thread (datasets load, sessions open), then show it."""
        self.notify(f"starting {what}…", timeout=2)
        self.show_run(await asyncio.to_thread(make))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            report_failure(self, event.worker)

    def _resources(self, backbone: str | None = None, nli: str | None = None, embedder: str | None = None) -> Resources:
        """The app's models if it was given a factory, else the config's with the models named."""
        from qatui.judges.resources import Resources

        if self.make_resources:
            return self.make_resources()
        return Resources(self.config, backbone_name=backbone, nli_spec=nli, embedder_spec=embedder)

    # -- actions --------------------------------------------------------------------------------

    def action_help(self) -> None:
        """The keys of the current screen."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    async def action_quit(self) -> None:
        """Quit, once each screen agrees to be closed (the Judge Lab asks before dropping edits not saved); a run in
        progress is cancelled first (after asking), so its session is saved and resumable."""
        self.leave_screens(self.screen_stack, self._quit_after_runs)

    def _quit_after_runs(self) -> None:
        """Quit; a run in progress is cancelled first (after asking)."""
        from qatui.tui.screens.run import STOP_NOW_QUESTION, RunScreen

        running = [s for s in self.screen_stack if isinstance(s, RunScreen) and s.handle.running]
        if not running:
            self.exit()
            return

        async def exit_when_ended() -> None:
            await asyncio.gather(*(s.handle.wait() for s in running))
            self.exit()

        def answered(yes: bool | None) -> None:
            if yes:
                for screen in running:
                    if screen.handle.running:
                        screen.stop()  # the first waits for the calls in flight; ctrl+q again stops at once
                self.run_worker(exit_when_ended(), group="quit", exclusive=True)  # a worker: the dialogs stay live

        if all(screen.handle.stopping for screen in running):
            self.push_screen(ConfirmScreen(STOP_NOW_QUESTION, yes="Stop now and quit", no="Keep waiting"), answered)
            return
        self.push_screen(ConfirmScreen("A run is in progress. Cancel it and quit? Finished items are saved and the "
                                       "model calls in flight are waited for (ctrl+q again stops without them); "
                                       "resume it later from Home.", yes="Cancel run and quit"), answered)

    # -- themes ---------------------------------------------------------------------------------

    def _theme_changed(self, theme: Theme) -> None:
        """Remember a theme the user picked, once the palette's previews settle."""
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(0.5, self._save_theme)

    def _save_theme(self) -> None:
        if self.theme == self.config.general.theme:
            return
        try:
            save_theme(self.config_path, self.theme)
        except (QatuiError, OSError) as e:
            self.notify(str(e), title="Theme not remembered", severity="warning")
            return
        self.config = self.config.model_copy(update={"general": self.config.general.model_copy(
            update={"theme": self.theme})})
