"""A run's live lines on stderr: the bar with its counts, and under it the limits line on a row of its own.

Beside the bar, the limits line (spend against the cap, each backbone's pace, batches in flight:
`engine.live.limits_line`) took the row's width from the counts: at 80 columns a batch run read
"━╺ 2… 0 failed 0:… 0… batch validating 0/20, 2 batches done". Now the first row keeps the items
done, failed, elapsed and remaining whole at any width (the session id and the bar give way), and the
limits line has the row below, cut with an ellipsis when even that is too narrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Column
from rich.text import Text

from qatui.text import plain

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console, RenderableType

LIMITS = "limits"
"""The task field holding the limits line (`Progress.update(task, limits=...)`)."""


class RunProgress(Progress):
    """The bar of a run's tasks; each task's `limits` field, when not empty, drawn as plain text on the row below."""

    def get_renderables(self) -> Iterable[RenderableType]:
        """The tasks' table, then each task's limits line (plain text, cut with an ellipsis at the row's end)."""
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            if line := str(task.fields.get(LIMITS) or ""):
                yield Text(plain(line), no_wrap=True, overflow="ellipsis")  # quotes model strings from the config


def run_progress(console: Console, *, transient: bool) -> RunProgress:
    """The progress of `qatui run` (and resume, table): session id, bar, done/total, failed, elapsed, remaining."""
    return RunProgress(  # counts and times are never cut (no_wrap): they are what the line is for
        TextColumn("{task.description}", style="bold", markup=False, table_column=Column(no_wrap=True, overflow="ellipsis", min_width=8)),
        BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=5)),
        MofNCompleteColumn(table_column=Column(no_wrap=True)),
        TextColumn("{task.fields[failed]} failed", table_column=Column(no_wrap=True)),
        TimeElapsedColumn(table_column=Column(no_wrap=True)), TimeRemainingColumn(table_column=Column(no_wrap=True)),
        console=console, transient=transient, disable=False,
    )
