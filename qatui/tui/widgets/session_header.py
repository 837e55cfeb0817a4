"""The top of a saved session: what ran, how it agreed with people, and a sparkline of that per item."""

from __future__ import annotations

from statistics import mean

from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Label, Sparkline, Static

from qatui.report import session_status
from qatui.text import plural
from qatui.tui.format import count, metrics_line
from qatui.tui.state import RunState


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
    }
    """

    def show(self, meta: dict, summary: dict[str, dict], state: RunState, dataset_found: bool,
             gold: str | None = None) -> None:
        """Draw a session (called once it has loaded, and again when the gold changes: `gold` says which)."""
        self.remove_children()
        ds = meta.get("dataset", {})
        missing = "" if dataset_found else " · dataset file not found"
        self.mount(Static(Content.from_markup(
            "[b]$status[/] · $done/$total done · $failed failed · dataset $ds ($n)$missing",
            status=session_status(meta), done=state.count("done"), total=len(state.tasks),
            failed=state.count("failed"), ds=ds.get("name", "?"), n=plural(ds.get("n_items"), "item"), missing=missing),
            id="about"))
        if gold is not None:
            self.mount(Static(Content.from_markup("[b $accent]$gold[/] · g: another gold", gold=gold)))
        c = state.counts
        if c.calls:
            self.mount(Static(Content(f"calls {c.calls} ({c.cached} cached) · tokens "
                                      f"{count(c.prompt_tokens)}+{count(c.completion_tokens)} · ${c.cost_usd:.4f}")))
        for judge in state.judges:
            doc = summary.get(judge, {})
            line = metrics_line(doc.get("metrics", {}), doc.get("ci")) or "no gold to compare with"
            self.mount(Static(Content.from_markup("[b $accent]$judge[/]  $line", judge=judge, line=line)))
            taus = [t.tau for t in state.tasks.values() if t.judge == judge and t.tau is not None]
            if taus:
                line = Sparkline(taus, summary_function=mean)
                line.styles.max_width = max(2 * len(taus), 16)  # a few items: short bars, not one wide block
                self.mount(Horizontal(Label("tau per item"), line))

