"""Each judge's agreement with each person's labels, and people's with each other, in a dialog (`g` on the Label screen).

The figures are `qatui labels agreement`'s (`report.label_agreement`), computed in a thread worker.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from qatui.errors import QatuiError
from qatui.report.session_view import fmt, split_note
from qatui.text import plain
from qatui.tui.widgets.vim_table import VimTable

if TYPE_CHECKING:
    from qatui.data.model import Dataset
    from qatui.store.session import SessionStore


class AgreementScreen(ModalScreen[None]):
    """Alpha, kappa and the headline metric of every (session, judge) against every annotator; escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,g", "dismiss", "Close")]

    DEFAULT_CSS = """
    AgreementScreen {
        align: center middle;
        & > Vertical {
            width: 110; max-width: 98%; height: 100%; max-height: 36;
            border: thick $primary 60%; background: $surface; padding: 0 1;
        }
        & Static { height: auto; }
        & VimTable { height: 1fr; min-height: 4; }
        & #beside-ceiling { height: auto; max-height: 8; margin-top: 1; }
        & Label { width: 1fr; color: $text-muted; }
    }
    """

    def __init__(self, dataset: Dataset, store: SessionStore) -> None:
        super().__init__()
        self.dataset = dataset
        self.store = store

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = Content(plain(f"Agreement with people: {self.dataset.name}"))  # a file's name: text
            yield Static("computing…", id="agreement-people")
            yield VimTable(cursor_type="row", zebra_stripes=True, id="per-person")
            yield VimTable(cursor_type="row", zebra_stripes=True, id="beside-ceiling")
            yield Label("units: each item's pairs of responses · alpha nominal · kappa: Cohen's for two raters, "
                        "Fleiss' for more · escape: close")

    def on_mount(self) -> None:
        self.load()

    @work(exclusive=True, exit_on_error=False, description="computing agreement")
    async def load(self) -> None:
        """Compute the figures off the UI thread, then fill the table."""
        from qatui.report.label_agreement import agreement_data
        from qatui.report.versions import version_text
        from qatui.text import kappa_name

        try:
            data = await asyncio.to_thread(agreement_data, self.dataset, self.store, self.store.root)
        except QatuiError as e:
            self.query_one("#agreement-people", Static).update(Content(plain(str(e))))  # it quotes the file's name
            return
        who = ", ".join(f"{name} ({n} labels)" for name, n in data["annotators"].items())
        people = data["people"]
        between = (f"people: alpha {fmt(people['alpha'])}, {kappa_name(people)} "
                   f"{'none*' if people.get('kappa_undefined') else fmt(people['kappa'])} ({people['n_units']} units, "
                   f"{people['n_complete']} decided by all)"
                   if people else "one annotator: no agreement between people yet")
        lines = [f"labelled by {who}", between]
        if people and people.get("kappa_undefined"):  # a name from the labels: shown as text below
            lines.append(f"  none*: {people['kappa_undefined']}, where kappa is 0 whatever the other says")
        if ceiling := data.get("ceiling"):  # as `labels agreement` heads its judges' lines (each judge's: there)
            lines.append(f"human ceiling: Cohen's kappa {fmt(ceiling['ceiling']['kappa'])}, accuracy "
                         f"{fmt(ceiling['ceiling']['accuracy'])} (each person against the others' majority"
                         f"{split_note(ceiling)}); each judge beside it on the units it decided: the lower table")
        self._fill_beside(data)
        table = self.query_one("#per-person", VimTable)
        rows = []
        for row in data["judges"]:
            metric = f"{row['metric']} {fmt(row['value'])} ({row['n_items']})" if row["metric"] else "-"
            kappa = "none*" if row.get("kappa_undefined") else fmt(row["kappa"])  # said below: 80 columns cut it
            rows.append([Text(plain(row["judge"]), style="bold"), Text(version_text(row.get("version"))),
                         Text(plain(row["annotator"])), metric, fmt(row["alpha"]), kappa, str(row["n_units"]),
                         Text(plain(row["session"]))])
        table.fill(["judge", "version", "annotator", "vs labels", "alpha", "kappa", "units", "session"], rows)
        lines += [f"versions: {line}" for line in data.get("versions") or ()]  # which rows are not of one judge
        if any(row.get("kappa_undefined") for row in data["judges"]):
            lines.append("kappa none*: the person gave one class on every unit the judge decided, where kappa is 0 "
                         "whatever the judge says")
        if not data["judges"]:  # the people's figures stand without one
            lines.append("no session has judged this dataset yet: run judges on it to compare them")
        self.query_one("#agreement-people", Static).update(Content(plain("\n".join(lines))))
        table.focus()

    def _fill_beside(self, data: dict) -> None:
        """Each judge against the very references the ceiling stands on, beside the people's ceiling on its units
        (`labels agreement`'s lines, a row each), with the alt-test's result where three or more people labelled.
        Its units: "all" the ceiling's, or "4 of 8" where the judge decided fewer (the ceiling is then on those)."""
        from qatui.report.session_view import units_note
        from qatui.report.versions import version_text

        table = self.query_one("#beside-ceiling", VimTable)
        rows = data.get("beside_people") or []
        table.display = bool(rows)
        if not rows:
            return
        table.border_title = "Beside the human ceiling: each judge against the same references"
        cells = []
        for row in rows:
            decided, all_units = row.get("units"), row.get("ceiling_units")
            units = f"{decided} of {all_units}" if units_note(row) else "-" if decided is None else "all"
            cells.append([Text(plain(row["judge"]), style="bold"), fmt(row["kappa"]), fmt(row["accuracy"]),
                          fmt(row["ceiling"]["kappa"]), fmt(row["ceiling"]["accuracy"]),
                          Text(alt_test_cell(row.get("alt_test"))), units, Text(version_text(row.get("version"))),
                          Text(plain(row["session"]))])
        table.fill(["judge", "kappa", "acc", "ceiling kappa", "ceiling acc", "alt-test", "units", "version",
                    "session"], cells)  # the figures first: at 80 columns the ids scroll


def alt_test_cell(result: dict | None) -> str:
    """The alt-test in a cell: 'can replace (0.67)', 'cannot (0.33)' (the winning rate), 'not run' (too few
    people or items: `labels agreement` says which), '-' below three people."""
    if result is None:
        return "-"
    if not result.get("ran"):
        return "not run"
    return f"{'can replace' if result['passed'] else 'cannot'} ({result['winning_rate']:.2f})"
