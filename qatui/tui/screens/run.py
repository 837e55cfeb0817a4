"""The live run: events of one job stream into the item list and the selected item's panels.

    Header
    RunHeader     progress, calls, tokens, cost, elapsed, ETA; running metrics per judge
    ItemBrowser   items with status and tau | question, routing, key points × responses,
                  silver instances, ranking vs gold | raw LLM transcript
    Footer

The job runs on the app's engine loop (`RunHandle`); a 20 Hz timer folds the events queued
since the last tick into the `RunState` and redraws what changed (docs/LIBRARIES.md#tui-batches). Metrics and
their bootstrap CIs are recomputed off the UI thread at most once a second (about 20 ms on the
20-item demo set, 90 ms on 100 items, the CIs a tenth of that); at the end the session's stored
summary replaces them. `p` pauses the engine (tasks in flight finish, no new one starts) and
resumes it. Only the selected task's calls stream their tokens, and only while the transcript
is shown (`t`): every other call is one plain request, a third of a streamed one's CPU, and its
answer reaches the transcript whole when it ends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header

from qatui.ties import judges_digits
from qatui.tui.background import RunEnded, RunHandle
from qatui.tui.saved import replay
from qatui.tui.clipboard import copy_artifact
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.screens.confirm import ConfirmScreen
from qatui.engine.live import limits_line
from qatui.tui.state import RunState
from qatui.tui.widgets.item_browser import ItemBrowser
from qatui.tui.widgets.run_header import RunHeader

if TYPE_CHECKING:
    from qatui.engine.jobs import RunJob


STOP_NOW_QUESTION = ("Stop now, without waiting for the model calls in flight? Their answers are lost: what "
                     "they cost is not recorded and a resume asks them again. Finished items stay saved.")
"""Asked by a second stop (x, esc or ctrl+q while the first waits for the calls in flight)."""


class RunScreen(QatuiScreen):
    """Watches `job` from its first event to its stored summary."""

    HELP_TITLE = "the live run"
    SHOWS_METRICS = True
    """The help screen explains the short metric names (tau, acc, route) shown here."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "pause", "Pause"),
        Binding("p", "resume", "Resume"),
        Binding("x", "cancel", "Cancel run"),
        Binding("x", "stop_now", "Stop now"),
        Binding("r", "retry", "Retry failed"),
        Binding("r", "resume_rest", "Resume rest"),
        Binding("t", "toggle_transcript", "Transcript"),
        Binding("y", "copy", "Copy"),
        Binding("z", "zoom", "Full texts", show=False),
        Binding("escape", "back", "Home"),
    ]

    def __init__(self, job: RunJob, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.job = job
        self.handle = RunHandle(job)
        self.clock = clock
        self.state: RunState | None = None
        self.ended: RunEnded | None = None
        self._scored = 0

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield RunHeader()
        yield ItemBrowser(transcript=any(j.uses_llm for j in self.job.engine.judges))
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"run {self.job.session.id} · {self.job.dataset.name}"
        self.start()

    @work(group="run", exclusive=True, exit_on_error=False, description="starting the run")
    async def start(self) -> None:
        """Fold what the session already holds (a resume), then start the engine and the redraw timers."""
        self.state = await asyncio.to_thread(self._initial_state)
        self.query_one(ItemBrowser).show(self.state)
        self.query_one(RunHeader).state = self.state
        self.handle.watching = self.query_one(ItemBrowser).watched()  # the first task on screen streams from its first call
        self.handle.start(self.qatui.engine_loop)
        self.set_interval(1 / 20, self._flush)
        self.set_interval(1.0, self._tick)
        self.query_one("#items").focus()
        self.refresh_bindings()

    def _initial_state(self) -> RunState:
        import qatui.metrics  # noqa: F401 - numpy and scipy load here, not in the first redraw

        job = self.job
        state = RunState(job.dataset.items, list(job.session.meta["judges"]), job.engine.seed, self.clock)
        if job.session.finished_keys() or job.session.failed_keys():
            replay(state, job.session.results(), judges_digits(job.session.meta), str(job.session.path))
        return state

    def _flush(self) -> None:
        """Apply the events queued since the last tick and redraw what they changed; say which task is watched."""
        self.handle.watching = self.query_one(ItemBrowser).watched()
        events = self.handle.take()
        if not events or self.state is None:
            return
        status = self.state.status
        for event in events:
            if isinstance(event, RunEnded):
                self._ended(event)
            else:
                self.state.fold(event)
        self.query_one(ItemBrowser).refresh_tasks(self.state.take_changed())
        self.query_one(RunHeader).state = self.state
        self.query_one(RunHeader).limits = limits_line(self.handle.job.engine)
        if self.state.status != status:  # running: p can pause it now
            self.refresh_bindings()

    def _tick(self) -> None:
        """Once a second: the clock in the header, and metrics if verdicts arrived."""
        if self.state is None or self.ended is not None:
            return
        self.query_one(RunHeader).state = self.state
        self.query_one(RunHeader).limits = limits_line(self.handle.job.engine)
        scored = sum(len(v) for v in self.state.verdicts.values())
        if scored != self._scored:
            self._scored = scored
            self._recompute_metrics()

    @work(group="metrics", exclusive=True, exit_on_error=False, description="running metrics")
    async def _recompute_metrics(self) -> None:
        """Metrics of the verdicts so far with their bootstrap CIs, computed off the UI thread."""
        from qatui.metrics import summarize
        from qatui.metrics.jury import member_names, members_agreement

        state = self.state
        verdicts = {judge: dict(v) for judge, v in state.verdicts.items()}

        def compute() -> dict[str, dict]:
            result = {}
            for judge, judged in verdicts.items():
                scored = summarize(state.items, judged, seed=state.seed, ci=True)
                result[judge] = {"metrics": scored.metrics, "ci": scored.ci, "n": scored.n,
                                 "no_decision": scored.no_decision, "left_out": scored.left_out}
                if names := member_names(judged):  # a jury: its members' agreement so far (CIs at the end)
                    result[judge]["members_agreement"] = members_agreement(judged, names, ci=False)
            return result

        result = await asyncio.to_thread(compute)
        if self.ended is None:
            self.query_one(RunHeader).metrics = result

    def _ended(self, ended: RunEnded) -> None:
        self.ended = ended
        self.state.end(ended.status)
        self.query_one(RunHeader).metrics = {
            j: {"metrics": d.get("metrics", {}), "ci": d.get("ci", {}), "n": d.get("n", {}),
                "no_decision": d.get("no_decision", {}), "left_out": d.get("left_out", {}),
                "members_agreement": d.get("members_agreement"),
                "self_agreement": d.get("self_agreement")}
            for j, d in ended.summary.items()}
        failed = self.state.count("failed")
        if ended.error:
            self.notify(ended.error, title="The run stopped on an error", severity="error", timeout=15)
        elif ended.status == "stopped":
            self.notify(f"{self.handle.job.session.meta.get('stopped', '')}. {self.state.count('done')} done are saved; "
                        "r resumes the session once it answers", title="Run stopped: a model is down",
                        severity="error", timeout=15, markup=False)
        else:
            hint = "; r resumes the session and retries them" if failed else ""
            self.notify(f"{self.state.count('done')} done, {failed} failed{hint}", title=f"Run {ended.status}",
                        severity="warning" if failed or ended.status != "completed" else "information")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        live = self.ended is None and self.handle.running and self.state is not None
        if action == "cancel":
            return live and not self.handle.stopping
        if action == "stop_now":  # the stop waits for the calls in flight; a second x does not
            return live and self.handle.stopping
        if action in ("pause", "resume"):
            wanted = "running" if action == "pause" else "paused"
            return live and self.state.status == wanted
        if action in ("retry", "resume_rest"):  # one r, named for what it does: failures first, else the rest
            if self.ended is None:
                return False
            failed = self.state.count("failed") > 0
            return failed if action == "retry" else not failed and self.state.count("queued") > 0
        return True

    def action_cancel(self) -> None:
        """Stop the run after asking; finished items stay saved and the session can be resumed. No new item or
        call starts and the calls in flight are waited for (`RunHandle.cancel`): what they cost is recorded and
        their answers are kept for the resume; x again (`action_stop_now`) stops without them."""
        def answered(yes: bool | None) -> None:
            if yes and self.handle.running:
                self.stop()

        self.app.push_screen(ConfirmScreen("Cancel the run? Finished items are saved; the model calls in flight "
                                           "are waited for and kept. Resume the session later to judge the rest.",
                                           yes="Cancel run", no="Keep running"), answered)

    def action_stop_now(self) -> None:
        """While a stop waits for the calls in flight: stop at once, after asking (their answers are lost)."""
        def answered(yes: bool | None) -> None:
            if yes and self.handle.running:
                self.stop()

        self.app.push_screen(ConfirmScreen(STOP_NOW_QUESTION, yes="Stop now", no="Keep waiting"), answered)

    async def _home_when_ended(self) -> None:
        """Home once the stopped run is summarised and closed. A worker: awaited in the dialog's callback, it held
        this screen's messages back (its live view froze, and a second esc's "Stop now" waited behind it)."""
        await self.handle.wait()
        if self.app.screen is self:
            self.app.pop_screen()

    def stop(self) -> None:
        """Stop the run: the first time waiting for the calls in flight, the second at once (`RunHandle.cancel`)."""
        waits = not self.handle.stopping and self.job.engine.batcher is None
        self.handle.cancel()
        self.state.status = "cancelling"
        self.query_one(RunHeader).state = self.state
        self.refresh_bindings()
        if waits:
            self.qatui.notify("No new item or model call starts; waiting for the calls in flight to return, so "
                              "that their answers are kept and their cost recorded. Press x to stop now.",
                              title="Stopping", severity="warning")

    def action_pause(self) -> None:
        """Finish the items being judged but start no new one; the clock and the ETA stop."""
        self.handle.pause()
        self.state.pause()
        self.query_one(RunHeader).state = self.state
        self.refresh_bindings()

    def action_resume(self) -> None:
        """Start judging new items again."""
        self.handle.resume()
        self.state.resume()
        self.query_one(RunHeader).state = self.state
        self.refresh_bindings()

    def action_retry(self) -> None:
        """Resume this session in a new run: finished items are skipped, failed and unjudged ones run."""
        self.app.pop_screen()
        self.qatui.resume_session(self.job.session.id)

    def action_resume_rest(self) -> None:
        """Resume a stopped run in a new one: the items not judged yet run, finished ones are skipped."""
        self.action_retry()

    def action_copy(self) -> None:
        """Copy the focused panel (or every panel of the selected item) to the clipboard as plain text."""
        copy_artifact(self)

    def action_zoom(self) -> None:
        """Every response of the selected item in full, in the judge's order (the panels clip them to a line)."""
        from qatui.tui.screens.full_text import FullTextScreen

        browser = self.query_one(ItemBrowser)
        if browser.state is not None and (key := browser.selected()) in browser.state.tasks:
            self.app.push_screen(FullTextScreen(browser.state.tasks[key]))

    def action_toggle_transcript(self) -> None:
        """Show or hide the LLM transcript pane."""
        self.query_one(ItemBrowser).toggle_transcript()

    async def action_back(self) -> None:
        """Home; a run in progress is cancelled first, after asking."""
        if not self.handle.running:
            self.app.pop_screen()
            return

        def answered(yes: bool | None) -> None:
            if yes and self.handle.running:
                self.stop()
                self.run_worker(self._home_when_ended(), group="leave", exclusive=True)

        if self.handle.stopping:  # esc while the stop waits for the calls in flight: the stop without them
            await self.app.push_screen(ConfirmScreen(STOP_NOW_QUESTION, yes="Stop now", no="Keep waiting"),
                                       answered)
            return
        await self.app.push_screen(ConfirmScreen("Cancel the run and go back to Home? Finished items are saved; "
                                                 "the model calls in flight are waited for and kept.",
                                                 yes="Cancel run", no="Keep running"), answered)
