"""The run's items, one row per (item, judge), with status and per-item Kendall tau against the gold."""

from __future__ import annotations

import itertools

from collections.abc import Iterable
from typing import ClassVar, NamedTuple

from rich.text import Text
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable

from qatui.text import plain
from qatui.tui.state import RunState, TaskKey, TaskView
from qatui.tui.widgets.vim_table import VimTable


STATUS_MARKS = {"queued": "·", "running": "●", "done": "✓", "failed": "✗", "n/a": "–", "reading": "…"}
"""The one-character status of a narrow list (its colour still says the same)."""
TAU_WIDTH = 5
STATUS_WIDTH = 7


def row_key(key: TaskKey) -> str:
    """A task's row key in the table."""
    return f"{key[0]}\t{key[1]}"


def clip_end(text: str, width: int) -> str:
    """`text` cut to `width` cells with an ellipsis at the end (judge names differ at their start)."""
    return text if len(text) <= width else text[:max(width - 1, 0)] + "…"


def clip_middle(text: str, width: int) -> str:
    """`text` cut to `width` cells with an ellipsis in the middle (item ids often differ only at their end)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def distinct_width(names: Iterable[str]) -> int:
    """The narrowest width (4 or more) at which `clip_end` keeps every name apart."""
    names = list(dict.fromkeys(names))
    longest = max((len(n) for n in names), default=0)
    for width in range(min(4, longest), longest):
        if len({clip_end(n, width) for n in names}) == len(names):
            return width
    return longest


class Columns(NamedTuple):
    """How the list is laid out at its current width."""

    marks: bool
    """Status as one coloured mark (✓ ✗ ● ·) rather than a word."""
    judge: int
    """Width of the judge column; 0 when the run has one judge."""
    item: int
    """Width of the item-id column, which is always shown."""


class ItemList(VimTable):
    """Status, tau, judge (when several) and item id; posts `Picked` as the cursor moves.

    The item id is always shown. When the full columns do not fit the width, the status
    becomes a mark first, then judge names are cut (never below the width that tells them
    apart), and only then an item id too long for what is left loses its middle.
    """

    BINDING_GROUP_TITLE = "item list"
    FIRST_ROWS = 200
    """Rows drawn at once by `fill`; the rest follow `ROWS_PER_STEP` a frame."""
    ROWS_PER_STEP = 500

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "item-list--queued", "item-list--running", "item-list--done", "item-list--failed", "item-list--reading",
    }
    """
    | Class | Description |
    | :- | :- |
    | `item-list--queued` | A task not started. |
    | `item-list--running` | A task being judged. |
    | `item-list--done` | A task with a verdict. |
    | `item-list--failed` | A task that failed (resume retries it). |
    | `item-list--reading` | A saved task whose result is still being read. |
    """

    DEFAULT_CSS = """
    ItemList {
        width: 30%;
        min-width: 30;
        max-width: 44;
        &.-one-judge { min-width: 24; }
        height: 1fr;
        border: round $panel-border;
        border-title-color: $accent;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
        &:focus { border: round $primary; }
        & > .item-list--queued { color: $foreground-muted; }
        & > .item-list--running { color: $accent; text-style: bold; }
        & > .item-list--done { color: $success; }
        & > .item-list--failed { color: $error; text-style: bold; }
        & > .item-list--reading { color: $foreground-muted; text-style: italic; }
    }
    """

    class Picked(Message):
        """The cursor moved to a task.

        Attributes:
            key: The (item_id, judge) of the task.
        """

        def __init__(self, item_list: ItemList, key: TaskKey) -> None:
            super().__init__()
            self.item_list = item_list
            self.key = key

        @property
        def control(self) -> ItemList:
            """The item list that posted the message."""
            return self.item_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row")
        self._keys: dict[str, TaskKey] = {}
        self._drawn: dict[str, tuple[str, float | None, bool]] = {}
        self._several_judges = False
        self._state: RunState | None = None
        self._columns = Columns(False, 0, 0)
        self._pending: dict[str, TaskView] = {}
        """Rows not drawn yet, by row key, in dataset order."""
        self._draining = False
        self._draining_allowed = True
        """False between a `fill(rest_later=True)` and `draw_rest`: a refill (on resize) holds the rows back too."""
        self._drain_scheduled = False
        self._n_items = 0
        """The run's item count given to `fill`, for the title while the state holds fewer."""

    def fill(self, state: RunState, *, rest_later: bool = False, n_items: int | None = None) -> None:
        """All tasks of the run, in dataset order, in the columns that fit the width.

        The first `FIRST_ROWS` rows are drawn now, the rest `ROWS_PER_STEP` at a time between
        frames (a 10,000-item run paints at once and stays responsive while it fills), or, with
        `rest_later`, once `draw_rest` is called: a table of few rows stays cheap to update while
        a saved session's results are still being folded in. `n_items` is the run's item count
        when `state` does not hold every item yet (their tasks come later, through `extend`).
        """
        if n_items is not None:
            self._n_items = n_items
        keep = self.selected() if self._state is state else None
        self.clear(columns=True)
        self._state = state
        self._several_judges = len(state.judges) > 1
        # one judge: no judge column, so the list can give 80 columns' detail pane 6 more (MinosEval's routing
        # on one line); several keep the width that tells their names and the item ids apart
        self.set_class(not self._several_judges, "-one-judge")
        self._columns = columns = self._fit(state)
        self.add_column("" if columns.marks else "status", key="status", width=1 if columns.marks else STATUS_WIDTH)
        self.add_column("tau", key="tau", width=TAU_WIDTH)
        if self._several_judges:
            self.add_column("judge", key="judge", width=columns.judge)
        self.add_column("item", key="item", width=columns.item)
        self._keys, self._drawn = {}, {}
        self._pending = {row_key(task.key): task for task in state.tasks.values()}
        if rest_later:
            self._draining_allowed = False
        self._draining = self._draining_allowed
        self._add_pending(self.FIRST_ROWS)
        self.border_title = f"Items ({max(len(state.items), self._n_items)})"
        if keep is not None:
            self.select(keep)

    def extend(self, tasks: Iterable[TaskView]) -> None:
        """Rows for tasks added to the state after `fill` (a saved session's later items): last, held back like the rest."""
        for task in tasks:
            self._pending[row_key(task.key)] = task
        if self._state is not None and self._fit(self._state) != self._columns:
            self.fill(self._state)  # a longer item id: the columns change
        else:
            self._add_pending(0)

    def _add_pending(self, n: int) -> None:
        """Draw the next `n` rows not drawn yet, in order; schedule the rest for the next frame."""
        for key in list(itertools.islice(self._pending, n)):
            task = self._pending.pop(key)
            self._keys[key] = task.key
            self._drawn[key] = (task.status, task.tau, task.undecided)
            self.add_row(*self._cells(task), key=key)
        if self._pending and self._draining and not self._drain_scheduled:
            self._drain_scheduled = True
            self.call_after_refresh(self._drain_step)

    def _drain_step(self) -> None:
        """One frame's worth of the rows not drawn yet."""
        self._drain_scheduled = False
        self._add_pending(self.ROWS_PER_STEP)

    def action_scroll_bottom(self) -> None:
        """The last row of the run, drawing the rows held back first (G / End)."""
        self._add_pending(len(self._pending))
        super().action_scroll_bottom()

    def draw_rest(self) -> None:
        """Draw the rows `fill(rest_later=True)` held back, a step per frame."""
        self._draining_allowed = True
        self._draining = True
        self._add_pending(self.ROWS_PER_STEP)

    def _fit(self, state: RunState) -> Columns:
        """The widest columns that fit: full status and names when they can, else marks and cut names."""
        pad = 2 * self.cell_padding
        judge = max((len(plain(j)) for j in state.judges), default=0) if self._several_judges else 0
        item = max([len("item"), *(len(plain(it.id)) for it in state.items)])
        room = self.size.width
        if room <= 0:  # not laid out yet: full columns, narrowed on the first resize
            return Columns(False, judge, item)
        if len(state.tasks) + 1 > self.size.height:  # the rows scroll: the scrollbar takes a column
            room -= self.styles.scrollbar_size_vertical
        judge_pad = pad if judge else 0
        if STATUS_WIDTH + TAU_WIDTH + judge + item + 3 * pad + judge_pad <= room:
            return Columns(False, judge, item)
        rest = room - (1 + pad) - (TAU_WIDTH + pad) - pad - judge_pad  # what the judge and item columns share
        if judge:
            judge = max(min(judge, rest - item), distinct_width(state.judges))
        return Columns(True, judge, max(rest - judge, 1))

    def on_resize(self, event: Resize) -> None:
        if self._state is not None and self._fit(self._state) != self._columns:
            self.fill(self._state)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    def _recolour(self, _theme: object) -> None:
        """Status colours come from the theme: draw every row again."""
        if self._state is not None:
            self._drawn.clear()
            self.update_tasks(self._state.tasks.values())

    def update_tasks(self, tasks: Iterable[TaskView]) -> None:
        """Redraw the status and tau of these tasks where they changed."""
        for task in tasks:
            key = row_key(task.key)
            if key in self._pending or self._drawn.get(key) == (task.status, task.tau, task.undecided):
                continue  # a row not drawn yet shows the task as it is when it is drawn
            self._drawn[key] = (task.status, task.tau, task.undecided)
            if key not in self._keys:
                self._keys[key] = task.key
                self.add_row(*self._cells(task), key=key)
                continue
            status, tau, *_ = self._cells(task)
            self.update_cell(key, "status", status)
            self.update_cell(key, "tau", tau)

    def select(self, key: TaskKey) -> None:
        """Put the cursor on a task's row (drawing the rows up to it if they are not yet)."""
        if (pending := list(self._pending)).count(row_key(key)):
            self._add_pending(pending.index(row_key(key)) + 1)
        self.move_cursor(row=self.get_row_index(row_key(key)), scroll=True)

    def selected(self) -> TaskKey | None:
        """The task under the cursor."""
        key = self.row_key_at_cursor()
        return self._keys.get(key) if key else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key is not None and event.row_key.value in self._keys:  # None: the rows were just redrawn
            self.post_message(self.Picked(self, self._keys[event.row_key.value]))

    def _cells(self, task: TaskView) -> list[Text]:
        style = self.get_component_rich_style(f"item-list--{task.status}", partial=True)
        tau = ("tie" if task.undecided else f"{task.tau:+.2f}") if task.tau is not None else \
            "–" if task.status == "done" else ""  # "tie": no decision, never a measured 0
        status = STATUS_MARKS.get(task.status, "?") if self._columns.marks else task.status
        cells = [Text(status, style=style), Text(tau, justify="right")]
        if self._several_judges:
            cells.append(Text(clip_end(plain(task.judge), self._columns.judge), no_wrap=True))
        cells.append(Text(clip_middle(plain(task.item_id), self._columns.item), no_wrap=True))
        return cells
