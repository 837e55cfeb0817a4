"""New run's list of judges: a tick box that reads ticked or not without colour, and options that stay put.

Textual's SelectionList draws every box as the same `X`, ticked and unticked told apart by
colour alone; here a ticked judge reads `[x]` and an unticked one `[ ]`. The options are made
once, from the registry's names, so keys pressed while the judges load or the dataset changes
land on the rows they were meant for: later changes only rewrite a row's prompt (`describe`).
"""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.widgets import SelectionList
from textual.widgets.option_list import OptionDoesNotExist
from textual.widgets.selection_list import Selection


def judge_prompt(name: str, problems: list[str]) -> Content:
    """A judge's row: its name, struck through with a short ✗ when the dataset cannot feed it (still pickable:
    its options may be what stops it); the reason is listed beside the list."""
    if not problems:
        return Content(name)
    return Content.assemble((name, "dim strike"), " ", ("✗", "dim"))


class JudgeList(SelectionList[str]):
    """The registered judges, `ticked` ones first ticked; `describe` marks the ones the dataset cannot feed."""

    def __init__(self, names: list[str], ticked: list[str], *, id: str | None = None) -> None:
        super().__init__(*(Selection(judge_prompt(name, []), name, name in ticked, name) for name in names),
                         id=id, compact=True)

    def action_select(self) -> None:
        """Tick or untick the highlighted judge now (space, a click).

        Textual's SelectionList toggles whatever is highlighted when its own message about the key arrives, after
        any key typed behind it: a space then an arrow, typed quickly (a paste, a slow SSH link), ticked the row the
        arrow moved to, and left the one the user saw unticked."""
        if self.highlighted is not None and not self.get_option_at_index(self.highlighted).disabled:
            self.toggle(self.get_option_at_index(self.highlighted))

    def describe(self, unmet: dict[str, list[str]]) -> None:
        """Rewrite each row for what stops its judge on this dataset (ticks and the highlight stay)."""
        for index in range(self.option_count):
            name = self.get_option_at_index(index).value
            self.replace_option_prompt_at_index(index, judge_prompt(name, unmet.get(name, [])))

    def render_line(self, y: int) -> Strip:
        """Textual's row, its box drawn as `[x]` or `[ ]` in the box's own colours."""
        strip = super().render_line(y)
        try:
            selection = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        segments = list(strip)
        if len(segments) < 3:
            return strip
        mark = "x" if selection.value in self.selected else " "
        boxed = [Segment(text, segment.style) for text, segment in zip(("[", mark, "]"), segments, strict=False)]
        return Strip([*boxed, *segments[3:]])
