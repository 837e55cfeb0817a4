"""The top of a saved session: what ran, how it agreed with people, and a sparkline of that per item."""

from __future__ import annotations

from statistics import mean

from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Label, Sparkline, Static

from qatui.report import session_status
from qatui.report.beside_people import KEY, ceiling_short
from qatui.report.classes_view import class_line
from qatui.text import deployments_line, plain, plural, thinking_note, spent
from qatui.tui.format import count, headline_parts, members_line, stopped_line
from qatui.tui.saved import SavedState
from qatui.tui.widgets.packed import Packed


class SessionHeader(Vertical):
    """Status, dataset, judges, LLM usage; per judge its metrics with CIs and per-item tau as a sparkline."""

    DEFAULT_CSS = """
    SessionHeader {
        height: auto;
        padding: 0 1;
        background: $panel;
        & Static { color: $text-muted; }
        & #about { color: $text; }
        & Horizontal { height: 1; }
        & Horizontal > Label { width: auto; color: $text-muted; margin-right: 1; }
        & Sparkline { width: 1fr; height: 1; }
        & Sparkline > .sparkline--min-color { color: $error; }
        & Sparkline > .sparkline--max-color { color: $success; }
        &.-compact .ranked, &.-compact .per-item { display: none; }
    }
    """

    COMPACT = 30
    """Below this many terminal rows the per-item sparkline, and the per-class line of a judge measured on rankings
    (its pairs' classes, beside the tau that is its figure), are left out (`sessions show` and taller screens have
    them), leaving the rows to the item's panels. A judge of pairs or labels keeps its class line."""

    def on_resize(self) -> None:
        self.set_class(self.app.size.height < self.COMPACT, "-compact")

    async def show(self, meta: dict, summary: dict[str, dict], state: SavedState, dataset_found: bool,
                   gold: str | None = None) -> None:
        """Draw a session from its metadata and a summary; `update` adds what its results say.

        Called once the session has loaded, and again with `gold` (the line saying which gold) when the
        judges are measured against another one.
        """
        self._meta, self._found = meta, dataset_found
        await self.remove_children()
        self.mount(Static(id="about"))
        if (why := stopped_line(meta)) is not None:
            self.mount(Static(why, id="stopped"))
        if gold is not None:
            self.mount(Static(Content.from_markup("[b $accent]$gold[/]", gold=plain(gold)), id="gold"))
        self.mount(Static(id="calls"))
        self._judge_lines: dict[str, Static] = {}  # the last line of each judge: its sparkline goes under it
        for judge in state.judges:
            doc = summary.get(judge, {})
            self._judge_lines[judge] = Static(Packed([[Content.from_markup("[b $accent]$judge[/]", judge=plain(judge)),
                                                        *headline_parts(doc, "no gold to compare with")]]))
            self.mount(self._judge_lines[judge])
            if classes := doc.get("classes"):
                ranked = "kendall" in doc.get("metrics", {})
                self._judge_lines[judge] = Static(Content(f"  {class_line(classes)}"),
                                                  classes="classes ranked" if ranked else "classes")
                self.mount(self._judge_lines[judge])
            if people := ceiling_short(doc.get(KEY)):
                self._judge_lines[judge] = Static(Content(f"  {people}"), classes="ceiling")
                self.mount(self._judge_lines[judge])
            if members := members_line(doc.get("members_agreement") or {}):
                self._judge_lines[judge] = Static(Content(f"  {members}"))  # the sparkline goes under this line
                self.mount(self._judge_lines[judge])
        self.update(state, read=0)

    def update(self, state: SavedState, read: int | None) -> None:
        """Counts and LLM usage from the `read` results folded so far; once all are (None), the sparklines."""
        ds = self._meta.get("dataset", {})
        missing = "" if self._found else " · dataset file not found"
        progress = (f"reading results… {read}/{state.n_tasks()}" if read is not None
                    else f"{state.count('done')}/{len(state.tasks)} done · {state.count('failed')} failed")
        self.query_one("#about", Static).update(Content.from_markup(
            "[b]$status[/] · $progress · dataset $ds ($n)$missing",
            status=session_status(self._meta), progress=progress, ds=plain(ds.get("name", "?")),
            n=plural(ds.get("n_items"), "item"), missing=missing))
        c = state.counts
        calls = self.query_one("#calls", Static)
        calls.display = bool(c.calls)
        routed = f"\ndeployments: {deployments_line(c.deployments)}" if c.deployments else ""
        calls.update(Content(plain(f"calls {c.calls} ({c.cached} cached) · tokens "
                             f"{count(c.prompt_tokens)}+{count(c.completion_tokens)}"
                             f"{thinking_note(c.reasoning_tokens, short=True)} · {spent(c.cost_usd, c.unpriced_calls, short=True)}{routed}")))
        if read is not None:
            return
        for judge, metrics in self._judge_lines.items():
            taus = [t.tau for t in state.tasks.values() if t.judge == judge and t.tau is not None]
            if taus:
                line = Sparkline(taus, summary_function=mean)
                line.styles.max_width = max(2 * len(taus), 16)  # a few items: short bars, not one wide block
                self.mount(Horizontal(Label("tau per item"), line, classes="per-item"), after=metrics)
