"""The CLI's consoles print data as characters, never as commands to the terminal.

Every renderable a command prints (a view's tables and lines, an error, progress) is wrapped so
that the text of each segment passes through `qatui.text.plain` once Rich has laid it out: an
escape sequence, a bell, an 8-bit CSI or a bidi override in a dataset, a session name or a model's
answer reaches the terminal as its visible escape (`\\x1b`). Rich's own colours are not in the
text (they come from each segment's style) and its cursor moves are control segments, kept as
they are. Markup is the views' own concern (their data is escaped or built as `Text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import RenderHook
from rich.segment import Segment

from qatui.text import plain

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderResult


class _Shown:
    """A renderable whose segments' text is made plain; control segments (cursor moves) pass."""

    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            yield segment if segment.control else Segment(plain(segment.text), segment.style)


class PlainText(RenderHook):
    """A render hook (`Console.push_render_hook`) that wraps every printed renderable in `_Shown`."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        """Each renderable of a `print`, wrapped so its text reaches the terminal plain."""
        return [_Shown(renderable) for renderable in renderables]
