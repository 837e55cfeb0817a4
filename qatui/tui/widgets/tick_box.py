"""A checkbox whose state reads as text: `X` when ticked, a blank when not.

Textual's Checkbox draws `X` either way and tells the states apart only by colour, which a
monochrome terminal, a screen reader's text or a colour-blind user does not see. The judge
list already shows `[x]` and `[ ]`; this does the same for the form's yes/no fields.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox


class TickBox(Checkbox):
    """A Checkbox drawn `▐X▌` when ticked and `▐ ▌` when not."""

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = "X" if self.value else " "  # the drawn button keeps its style either way
        return super()._button
