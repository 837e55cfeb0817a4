"""The live run's top bar: progress, LLM usage, time, and the running meta-evaluation."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import ProgressBar, Static

from qatui.text import deployments_line, plain, thinking_note, spent
from qatui.tui.format import count, duration, headline_parts, members_line, metrics_glossary
from qatui.tui.state import RunState
from qatui.tui.widgets.packed import Packed

STATUS_STYLE = {"running": "$accent", "completed": "$success", "cancelled": "$warning",
                "interrupted": "$error", "failed": "$error", "starting": "$foreground-muted", "cancelling": "$warning",
                "paused": "$warning", "capped": "$warning", "stopped": "$warning"}


class RunHeader(Vertical):
    """Three lines: bar and tally; calls, tokens, cost, elapsed, ETA (and what each deployment did); metrics per judge."""

    DEFAULT_CSS = """
    RunHeader {
        height: auto;
        padding: 0 1;
        background: $panel;
        & > Horizontal { height: 1; }
        & ProgressBar { width: auto; margin-right: 1; }
        & ProgressBar Bar { width: 24; }
        & #tally { width: 1fr; }
        & #usage, & #limits, & #metrics { height: auto; color: $text-muted; }
    }
    """

    state: reactive[RunState | None] = reactive(None, always_update=True)
    """The run drawn; re-assign it to redraw."""
    limits: reactive[str] = reactive("")
    """Spend against the cost cap and each backbone's pace (`engine.live.limits_line`); hidden when empty."""
    metrics: reactive[dict[str, dict]] = reactive(dict, always_update=True)
    """Per judge: {"metrics", "ci", "n", "no_decision"} from `summarize` or the stored summary."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ProgressBar(total=None, show_eta=False, id="bar")
            yield Static(id="tally")
        yield Static(id="usage")
        yield Static(id="limits")
        metrics = Static(id="metrics")
        metrics.tooltip = metrics_glossary()
        yield metrics

    def watch_state(self, state: RunState | None) -> None:
        if state is None:
            return
        if state.status == "starting":
            self.query_one(ProgressBar).update(total=None)
        else:  # a resume with nothing left plans no task: full once it has ended
            nothing_left = not state.n_planned and state.finished_at is not None
            self.query_one(ProgressBar).update(total=max(state.n_planned, 1),
                                               progress=1 if nothing_left else state.n_finished)
        done, failed = state.count("done"), state.count("failed")
        self.query_one("#tally", Static).update(Content.from_markup(
            f"$done/$total done · $failed failed · [b {STATUS_STYLE.get(state.status, '$text')}]$status[/]",
            done=done, total=len(state.tasks), failed=failed, status=state.status,
        ))
        c = state.counts
        routed = f"\ndeployments: {deployments_line(c.deployments)}" if c.deployments else ""
        self.query_one("#usage", Static).update(Content(
            f"calls {c.calls} ({c.cached} cached) · tokens {count(c.prompt_tokens)}+{count(c.completion_tokens)}"
            f"{thinking_note(c.reasoning_tokens, short=True)}"
            f" · {spent(c.cost_usd, c.unpriced_calls, short=True, counted=False)}"
            f" · elapsed {duration(state.elapsed())} · ETA {duration(state.eta())}{routed}"
        ))

        if not self.metrics:  # the line drawn before the run's items were known said "no gold" of a set with gold
            self.watch_metrics(self.metrics)

    def watch_limits(self, limits: str) -> None:
        line = self.query_one("#limits", Static)
        line.display = bool(limits)
        line.update(Content(plain(limits)))  # it quotes each backbone's model string, as the config gives it

    def watch_metrics(self, metrics: dict[str, dict]) -> None:
        rows = []
        for judge, doc in metrics.items():
            rows.append([plain(judge), *headline_parts(doc, self._no_figure())])
            if members := members_line(doc.get("members_agreement") or {}):
                rows.append([plain(f"  {members}")])
        self.query_one("#metrics", Static).update(Packed(rows or [[self._no_figure(started=False)]]))

    def _no_figure(self, *, started: bool = True) -> str:
        """Why a judge has no agreement figure: the items carry no gold at all, or none with gold is judged yet."""
        if self.state is None:  # the items are not known yet: nothing can be said of their gold
            return "metrics appear as items finish"
        if not any(item.gold is not None for item in self.state.items):
            return "no gold in these items: nothing to measure agreement against"
        if started:
            return "agreement with the gold appears as items with gold are judged"
        return "metrics appear as items finish"
