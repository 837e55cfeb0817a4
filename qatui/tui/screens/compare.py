"""Two or more sessions on one dataset, side by side.

    Header
    #note           when the runs judged different item sets: every figure below is on the
                    items all of them judged (shown before any figure, never only a toast)
    #panels         a scrolling column; each table keeps a minimum height, so at 80×24 none
                    is squeezed to nothing and the screen scrolls instead
    #runs           one row per (session, judge), lettered A, B, …: headline metrics, each
                    with its delta against run A (green better, red worse)
    #agreement      each pair of runs: mean Kendall tau, top-1 agreement, preference agreement
    #disagreements  the items two runs rank most differently; enter opens both verdicts
    Footer

Where two runs of one judge used different versions, `#note` says so, naming both, and `v` opens
the unified diff of their definitions (`VersionDiffScreen`, as `qatui sessions diff`).

Everything is read in a thread worker (`qatui.tui.comparison`); the disagreement view
replays both sessions into `RunState`s and shows the item with the session screen's panels.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.widgets import DataTable, Footer, Header, LoadingIndicator, Static

from qatui.errors import QatuiError
from qatui.tui.comparison import Comparison, Disagreement, load_comparison
from qatui.report import clip
from qatui.text import plain
from qatui.tui.format import SHORT_METRICS, signed2
from qatui.tui.clipboard import copy_artifact
from qatui.tui.report_file import export_report
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.screens.version_diff import VersionDiffScreen
from qatui.tui.widgets.checklist_panel import ChecklistPanel
from qatui.tui.widgets.entailment_panel import EntailmentPanel
from qatui.tui.widgets.instances_panel import InstancesPanel
from qatui.tui.widgets.panel import TaskPanel
from qatui.tui.widgets.question_panel import QuestionPanel
from qatui.tui.widgets.ranking_panel import RankingPanel
from qatui.tui.widgets.routing_panel import RoutingPanel
from qatui.tui.widgets.vim_table import VimTable

if TYPE_CHECKING:
    from textual.coordinate import Coordinate

    from qatui.store.session import SessionStore
    from qatui.tui.state import TaskView

LABEL_WIDTH = 20
"""Session names are clipped to this many characters in the runs table."""
AGREEMENT = (("kendall", "tau"), ("top1", "top-1"), ("preference", "pref"))
"""Agreement statistics between two runs, with their column labels."""


class DeltaTable(VimTable):
    """A table whose cells may be coloured better / worse / muted by the theme."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"delta-table--better", "delta-table--worse", "delta-table--muted"}
    """
    | Class | Description |
    | :- | :- |
    | `delta-table--better` | A delta above zero (run A is the baseline). |
    | `delta-table--worse` | A delta below zero. |
    | `delta-table--muted` | No delta, or a missing value. |
    """

    DEFAULT_CSS = """
    DeltaTable {
        height: auto;
        border: round $panel-border;
        border-title-color: $accent;
        &:focus { border: round $primary; }
        & > .delta-table--better { color: $success; text-style: bold; }
        & > .delta-table--worse { color: $error; text-style: bold; }
        & > .delta-table--muted { color: $foreground-muted; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def watch_cursor_coordinate(self, old_coordinate: Coordinate, new_coordinate: Coordinate) -> None:
        """Moving the cursor brings the whole table into the screen's scrolling column, so a table focused
        below the fold (the screen opens at its top) comes into view at the first key."""
        super().watch_cursor_coordinate(old_coordinate, new_coordinate)
        if self.has_focus and old_coordinate != new_coordinate:
            self.scroll_visible(animate=False)

    def style(self, kind: str):
        """The Rich style of a delta-table component (better, worse, same)."""
        return self.get_component_rich_style(f"delta-table--{kind}", partial=True)

    def value(self, value: float | None, delta: float | None = None) -> Text:
        """'+0.41' with, when given, its delta ' +0.05' in green / red."""
        if value is None:
            return Text("–", style=self.style("muted"), justify="right")
        text = Text(signed2(value))
        if delta is not None:
            kind = "better" if delta > 0.005 else "worse" if delta < -0.005 else "muted"
            text.append(f" {signed2(delta)}", style=self.style(kind))
        return text


class DisagreementsTable(DeltaTable):
    """The compare screen's list of disagreements; enter opens one."""

    BINDING_GROUP_TITLE = "disagreements"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "Both verdicts")]


class CompareScreen(QatuiScreen):
    """Compares sessions `session_ids` (at least two, one dataset)."""

    HELP_TITLE = "compare"
    SHOWS_METRICS = True
    """The help screen explains the short metric names (tau, acc, route) shown here."""
    CSS_PATH = None
    DEFAULT_CSS = """
    CompareScreen {
        & #note { height: auto; padding: 0 1; color: $text-warning; background: $warning-muted; text-style: bold; }
        & #panels { height: 1fr; scrollbar-size-vertical: 1; }
        & #runs { min-height: 5; }
        & #table { min-height: 6; }
        & #agreement { min-height: 5; }
        & #checklists { min-height: 5; }
        & #disagreements { height: 1fr; min-height: 8; }
    }
    """
    AGREEMENT_ROWS = 8
    """Pairs the agreement table shows before it scrolls itself (ten runs make 45 pairs)."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "app.focus_next", "Next table", show=False),
        Binding("g", "gold", "Gold", priority=True),  # before a focused table's g (first row), when labels exist
        Binding("e", "export_report", "Export report (HTML)", show=False),
        Binding("v", "versions", "Prompt diff"),
        Binding("escape", "app.pop_screen", "Home"),
    ]

    def __init__(self, store: SessionStore, session_ids: list[str], gold: str = "dataset") -> None:
        super().__init__()
        self.store = store
        self.session_ids = list(session_ids)
        self.gold = gold
        """What the metrics measure against (`report.gold`); `g` cycles it."""
        self.golds = [gold]
        self.comparison: Comparison | None = None
        self._shown_metrics = 0

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(id="note")
        yield LoadingIndicator()
        with VerticalScroll(id="panels", can_focus=False):
            yield DeltaTable(id="runs")
            yield DeltaTable(id="table")
            yield DeltaTable(id="agreement")
            yield DeltaTable(id="checklists")
            yield DisagreementsTable(id="disagreements")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"compare {len(self.session_ids)} sessions"
        self.query_one("#note").display = False
        for table in self.query(DeltaTable):
            table.display = False
        self.load()

    @work(group="load", exclusive=True, exit_on_error=False, description="comparing sessions")
    async def load(self) -> None:
        """Read the sessions and compare them off the UI thread, then fill the tables."""
        try:
            self.comparison = await asyncio.to_thread(load_comparison, self.store, self.session_ids, self.gold)
        except QatuiError as e:
            self.notify(str(e), title="Cannot compare", severity="error", timeout=10)
            self.app.pop_screen()
            return
        self.query_one(LoadingIndicator).remove()
        gold = f" · {self.comparison.gold}" if self.comparison.annotators or self.gold != "dataset" else ""
        self.sub_title = f"compare · dataset {self.comparison.dataset}{gold}"
        self.golds = ["dataset", *(f"annotator:{name}" for name in self.comparison.annotators), "majority"]
        notes = [f"Different item sets: {self.comparison.note}"] if self.comparison.note else []
        notes += [f"{line[0].upper()}{line[1:]} (v: what changed)" for line in self.comparison.versions]
        if notes:  # before any figure is shown: every figure is on the common items only, or not of one judge
            note = self.query_one("#note", Static)
            note.update(Content(plain("\n".join(notes))))
            note.display = True
        for table in self.query(DeltaTable):
            table.display = True  # shown before filling, so each table sizes itself to its rows
        self._fill_runs()
        self._fill_table()
        self._fill_agreement()
        self._fill_checklists()
        self._fill_disagreements()
        self.refresh(layout=True)
        # focused without scrolling to it: the screen opens at its top, the runs and their figures first
        self.query_one("#disagreements" if self.comparison.disagreements else "#runs").focus(scroll_visible=False)
        self.refresh_bindings()

    def on_resize(self, event: Resize) -> None:
        if self.comparison is not None and len(self._metric_keys()) != self._shown_metrics:
            self._fill_runs()

    def _metric_keys(self) -> list[str]:
        """The headline metrics of any run, as many as fit the width (tau first)."""
        runs = self.comparison.runs
        keys = [k for k in SHORT_METRICS if any(k in r.metrics for r in runs)]
        fixed = 4 + 2 + min(LABEL_WIDTH, max(len(plain(r.label)) for r in runs)) + 2 + max(len(plain(r.judge)) for r in runs) + 2 + 6
        fixed += max(13, *(len(r.no_decision) + 2 for r in runs)) if any(r.no_decision for r in runs) else 0
        room = (self.size.width or 10_000) - 4 - fixed
        return keys[:max(1, room // 13)]

    def _fill_runs(self) -> None:
        comparison, table = self.comparison, self.query_one("#runs", DeltaTable)
        keys = self._metric_keys()
        self._shown_metrics = len(keys)
        table.clear(columns=True)
        table.add_column("run", key="run")
        table.add_column("session", key="session")
        table.add_column("judge", key="judge")
        table.add_column("done", key="done")
        undecided = any(run.no_decision for run in comparison.runs)  # a figure of 0 that is no measure says so
        if undecided:
            table.add_column("no decision", key="no_decision")
        for key in keys:
            table.add_column(SHORT_METRICS[key], key=key)
        base = comparison.runs[0].metrics
        for i, run in enumerate(comparison.runs):
            done = f"{run.n_done}" + (f" ✗{run.n_failed}" if run.n_failed else "")
            cells = [Text(run.letter, style="bold"), Text(clip(plain(run.label), LABEL_WIDTH)), Text(plain(run.judge)), Text(done)]
            if undecided:
                cells.append(Text(run.no_decision or "–"))
            for key in keys:
                value = run.metrics.get(key)
                delta = value - base[key] if i and value is not None and key in base else None
                cells.append(table.value(value, delta))
            table.add_row(*cells, key=run.letter)
        hidden = len([k for k in SHORT_METRICS if any(k in r.metrics for r in comparison.runs)]) - len(keys)
        more = f" · {hidden} more metric{'s' * (hidden > 1)} when wider" if hidden else ""
        common = f" · on the {comparison.common_items} common items" if comparison.note else ""
        table.border_title = Content(plain(f"Runs (Δ against A) · dataset {comparison.dataset}{common}{more}"))

    def _fill_table(self) -> None:
        """The runs as `qatui table` rows: ×100 with CIs, Δ against A with a paired CI, coverage, cost, bias."""
        from qatui.report.table import flat_rows

        table = self.query_one("#table", DeltaTable)
        if self.comparison.table is None:
            table.display = False
            return
        header, lines = flat_rows(self.comparison.table)
        for name in header:
            table.add_column(Text(plain(name)))
        for line in lines:
            table.add_row(*(Text(plain(cell)) for cell in line))
        table.border_title = "As `qatui table` (×100, 95% CIs; Δ: paired bootstrap against A)"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "gold":
            return len(self.golds) > 2
        if action == "versions":  # offered where two runs of one judge differ: the diff says what changed
            return self.comparison is not None and bool(self.comparison.versions)
        return True

    def action_gold(self) -> None:
        """Measure the runs against the next gold: the dataset's, each annotator's labels, their majority."""
        following = self.golds[(self.golds.index(self.gold) + 1) % len(self.golds)] if self.gold in self.golds \
            else "dataset"
        self.app.switch_screen(CompareScreen(self.store, self.session_ids, following))

    def _fill_agreement(self) -> None:
        table = self.query_one("#agreement", DeltaTable)
        table.add_column("pair", key="pair")
        for key, label in AGREEMENT:
            table.add_column(label, key=key)
        table.add_column("items", key="n")
        pairs = self.comparison.agreement
        undecided = any(pair.no_decision for pair in pairs)  # a 0 that is no measure says so
        neither = any(pair.neither_decided for pair in pairs)  # and items no figure could count
        if undecided:
            table.add_column("no decision", key="no_decision")
        if neither:
            table.add_column("neither decided", key="neither_decided")
        for pair in pairs:
            values = [table.value(pair.stats.get(k)) for k, _ in AGREEMENT]
            table.add_row(Text(f"{pair.a.letter}–{pair.b.letter}", style="bold"), *values,
                          str(max(pair.n.values(), default=0)),
                          *([Text(pair.no_decision or "–")] if undecided else []),
                          *([Text(str(pair.neither_decided or "–"))] if neither else []),
                          key=f"{pair.a.letter}-{pair.b.letter}")
        table.border_title = "Agreement between runs"
        # an explicit height: left to `auto`, the table sometimes kept the zero height it had
        # before its rows arrived, beside the 1fr disagreements table
        table.styles.height = min(table.row_count, self.AGREEMENT_ROWS) + 3  # header and border

    def _fill_checklists(self) -> None:
        """CheckEval runs on one checklist: how far their yes/no answers agree, per dimension."""
        table = self.query_one("#checklists", DeltaTable)
        table.display = bool(self.comparison.checklists)
        if not self.comparison.checklists:
            return
        for key, label in (("checklist", "checklist"), ("runs", "runs"), ("dimension", "dimension"),
                           ("alpha", "alpha"), ("kappa", "kappa"), ("units", "answers")):
            table.add_column(label, key=key)
        for group in self.comparison.checklists:
            letters = "".join(run.letter for run in group.runs)
            for dim, stats in group.per_dimension.items():
                table.add_row(Text(plain(group.checklist)), letters, Text(plain(dim), style="bold" if dim == "all" else ""),
                              table.value(stats.get("alpha")), table.value(stats.get("kappa")),
                              str(stats.get("n_units", 0)), key=f"{group.checklist}/{letters}/{dim}")
        table.border_title = "CheckEval agreement (Krippendorff's alpha, Fleiss' kappa)"
        table.styles.height = min(table.row_count, 8) + 3

    def _fill_disagreements(self) -> None:
        table = self.query_one("#disagreements", DeltaTable)
        table.add_column("item", key="item")
        table.add_column("tau", key="tau")
        table.add_column("pair", key="pair")
        table.add_column("rankings", key="rankings")
        for i, d in enumerate(self.comparison.disagreements):
            table.add_row(Text(plain(d.item_id)), table.value(d.tau), f"{d.a.letter}–{d.b.letter}",
                          Text(plain(" | ".join(d.rankings)), no_wrap=True, overflow="ellipsis"), key=str(i))
        table.border_title = ("Where they disagree most (enter: both verdicts)" if self.comparison.disagreements
                              else "No item where they disagree")

    @on(DataTable.RowSelected, "#disagreements")
    def _selected(self) -> None:
        self.action_open_item()

    def action_versions(self) -> None:
        """The unified diff of the definitions of the judges the sessions share (as `qatui sessions diff`)."""
        if self.comparison is not None:
            self.app.push_screen(VersionDiffScreen(self.comparison.diff))

    def action_export_report(self) -> None:
        """Write the comparison and each session as one self-contained HTML file (as `qatui report ID ID …`)."""
        export_report(self, self.store, self.session_ids, self.gold)

    def action_open_item(self) -> None:
        """Open the highlighted disagreement: both runs' verdicts on the item, side by side."""
        table = self.query_one("#disagreements", DeltaTable)
        if self.comparison is None or (key := table.row_key_at_cursor()) is None:
            return
        self.app.push_screen(SideBySideScreen(self.store, self.comparison.disagreements[int(key)], self.gold))


class SideBySideScreen(QatuiScreen):
    """One item as two runs judged it: the question once, then each run's panels in a column."""

    HELP_TITLE = "two verdicts"
    DEFAULT_CSS = """
    SideBySideScreen {
        & #question { height: auto; max-height: 35%; }
        & #sides { height: 1fr; }
        & .side { width: 1fr; scrollbar-size-vertical: 1; border: round $panel-border; border-title-color: $accent; }
        & .side:focus { border: round $primary; }
        & #sides.-narrow { layout: vertical; overflow-y: auto; scrollbar-size-vertical: 1; }
        & #sides.-narrow > .side { height: auto; overflow-y: hidden; }
    }
    """
    NARROW = 100
    """Below this width the two verdicts stack, the key-point tables need the room."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left,h", "side(0)", "First verdict", show=False),
        Binding("right,l", "side(1)", "Second verdict", show=False),
        Binding("y", "copy", "Copy"),
        Binding("z", "zoom", "Full texts"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, store: SessionStore, disagreement: Disagreement, gold: str = "dataset") -> None:
        super().__init__()
        self.store = store
        self.disagreement = disagreement
        self.gold = gold
        """The gold the ranking panels show and measure tau against (the compare screen's)."""
        self.tasks: list[TaskView] = []

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield LoadingIndicator()
        with VerticalScroll(id="question"):
            yield QuestionPanel()
        with Horizontal(id="sides"):
            for side, run in enumerate((self.disagreement.a, self.disagreement.b)):
                with VerticalScroll(id=f"side-{side}", classes="side") as column:
                    column.border_title = Content(plain(f"{run.letter} {run.label} · {run.judge}"))
                    yield RoutingPanel()
                    yield EntailmentPanel()
                    yield InstancesPanel()
                    yield ChecklistPanel()
                    yield RankingPanel()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        d = self.disagreement
        self.sub_title = f"{d.item_id}: {d.a.letter} vs {d.b.letter}, tau {d.tau:+.2f}"
        self.load()

    @work(group="load", exclusive=True, exit_on_error=False, description="reading two verdicts")
    async def load(self) -> None:
        """Replay both sessions off the UI thread, then draw the item from each."""
        from qatui.report.gold import DATASET, session_gold_items
        from qatui.tui.saved import load_saved, remeasure

        d = self.disagreement

        def read() -> list[TaskView]:
            found = []
            for run in (d.a, d.b):
                session = self.store.open(run.session)
                state, _ = load_saved(session)
                if self.gold != DATASET:
                    remeasure(state, session_gold_items(session, self.gold, self.store.root)[0].items)
                found.append(state.tasks[(d.item_id, run.judge)])
            return found

        try:
            self.tasks = await asyncio.to_thread(read)
        except (QatuiError, KeyError) as e:
            self.notify(str(e), title="Cannot read the verdicts", severity="error", timeout=10)
            self.app.pop_screen()
            return
        self.query_one(LoadingIndicator).remove()
        question = self.query_one(QuestionPanel)
        question.show(self.tasks[0])
        question.border_title = Content(plain(d.item_id))
        for side, task in enumerate(self.tasks):
            for panel in self.query_one(f"#side-{side}").query(TaskPanel):
                panel.show(task)
        self.query_one("#side-0").focus()

    def on_resize(self, event: Resize) -> None:
        self.query_one("#sides").set_class(event.size.width < self.NARROW, "-narrow")

    def action_copy(self) -> None:
        """Copy the focused panel (or every panel of the selected item) to the clipboard as plain text."""
        copy_artifact(self)

    def action_zoom(self) -> None:
        """The item's responses in full, in the order the focused verdict (else the first) ranked them."""
        from qatui.tui.screens.full_text import FullTextScreen

        if not self.tasks:
            return
        side = 1 if self.query_one("#side-1").has_focus_within else 0
        self.app.push_screen(FullTextScreen(self.tasks[side]))

    def action_side(self, side: int) -> None:
        """Focus the first (left) or second (right) verdict, to scroll it; stacked, scroll to it."""
        column = self.query_one(f"#side-{side}")
        column.focus()
        if self.query_one("#sides").has_class("-narrow"):
            self.query_one("#sides").scroll_to_widget(column, top=True, animate=False)
