"""The run's items, one row per (item, judge), with status and per-item Kendall tau against the gold."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from qatui.tui.state import RunState, TaskKey, TaskView
from qatui.tui.widgets.vim_table import VimTable


def row_key(key: TaskKey) -> str:
    """A task's row key in the table."""
    return f"{key[0]}\t{key[1]}"


class ItemList(VimTable):
    """Status, tau, judge (when several) and item id; posts `Picked` as the cursor moves."""

    BINDING_GROUP_TITLE = "item list"

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "item-list--queued", "item-list--running", "item-list--done", "item-list--failed",
    }
    """
    | Class | Description |
    | :- | :- |
    | `item-list--queued` | A task not started. |
    | `item-list--running` | A task being judged. |
    | `item-list--done` | A task with a verdict. |
    | `item-list--failed` | A task that failed (resume retries it). |
    """

    DEFAULT_CSS = """
    ItemList {
        width: 30%;
        min-width: 28;
        max-width: 44;
        height: 1fr;
        border: round $panel-border;
        border-title-color: $accent;
        &:focus { border: round $primary; }
        & > .item-list--queued { color: $foreground-muted; }
        & > .item-list--running { color: $accent; text-style: bold; }
        & > .item-list--done { color: $success; }
        & > .item-list--failed { color: $error; text-style: bold; }
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
            return self.item_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row")
        self._keys: dict[str, TaskKey] = {}
        self._drawn: dict[str, tuple[str, float | None]] = {}
        self._several_judges = False
        self._state: RunState | None = None

    def fill(self, state: RunState) -> None:
        """All tasks of the run, in dataset order."""
        self.clear(columns=True)
        self._state = state
        self._several_judges = len(state.judges) > 1
        # status and tau first: long item ids run off the right edge instead of pushing tau out of view
        self.add_column("status", key="status", width=7)
        self.add_column("tau", key="tau", width=5)
        if self._several_judges:
            self.add_column("judge", key="judge")
        self.add_column("item", key="item")
        self._keys, self._drawn = {}, {}
        for task in state.tasks.values():
            self._keys[row_key(task.key)] = task.key
            self._drawn[row_key(task.key)] = (task.status, task.tau)
            self.add_row(*self._cells(task), key=row_key(task.key))
        self.border_title = f"Items ({len(state.items)})"

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
            if self._drawn.get(key) == (task.status, task.tau):
                continue
            self._drawn[key] = (task.status, task.tau)
            if key not in self._keys:
                self._keys[key] = task.key
                self.add_row(*self._cells(task), key=key)
                continue
            status, tau, *_ = self._cells(task)
            self.update_cell(key, "status", status)
            self.update_cell(key, "tau", tau)

    def select(self, key: TaskKey) -> None:
        """Put the cursor on a task's row."""
        self.move_cursor(row=self.get_row_index(row_key(key)), scroll=True)

    def selected(self) -> TaskKey | None:
        """The task under the cursor."""
        key = self.row_key_at_cursor()
        return self._keys.get(key) if key else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key.value in self._keys:
            self.post_message(self.Picked(self, self._keys[event.row_key.value]))

    def _cells(self, task: TaskView) -> list[Text]:
        style = self.get_component_rich_style(f"item-list--{task.status}", partial=True)
        tau = f"{task.tau:+.2f}" if task.tau is not None else "–" if task.status == "done" else ""
        cells = [Text(task.status, style=style), Text(tau, justify="right")]
        if self._several_judges:
            cells.append(Text(task.judge, no_wrap=True))
        cells.append(Text(task.item_id, no_wrap=True, overflow="ellipsis"))
        return cells
