"""The CLI's consoles print data as characters, never as commands to the terminal.

Every string a console is given is made plain before Rich parses or lays it out (`PlainConsole`), and every
renderable a command prints (a view's tables and lines, an error, progress) is wrapped so
that the text of each segment passes through `qatui.text.plain` once Rich has laid it out: an
escape sequence, a bell, an 8-bit CSI or a bidi override in a dataset, a session name or a model's
answer reaches the terminal as its visible escape (`\\x1b`). Rich's own colours are not in the
text (they come from each segment's style) and its cursor moves are control segments, kept as
they are. Markup is the views' own concern (their data is escaped or built as `Text`).

Rich measures a control character as no width at all, so a line laid out with one is wider once its escape is
shown: the console would then crop the line's end, and the characters after it would silently go missing (a
warning naming a hostile item id lost "ck's bound"). Such a line is folded at the width instead: every
character reaches the reader. Views make their data plain before they lay it out (`qatui.text.plain`), so this
is the net under them, never the rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from rich.console import Console, RenderHook
from rich.segment import Segment

from qatui.text import plain

if TYPE_CHECKING:
    from rich.console import ConsoleOptions, ConsoleRenderable, RenderResult
    from rich.text import Text


class _Shown:
    """A renderable whose segments' text is made plain; control segments (cursor moves) pass."""

    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown, changed = [], False
        for segment in console.render(self.renderable, options):
            if not segment.control and (text := plain(segment.text)) != segment.text:
                segment, changed = Segment(text, segment.style), True
            shown.append(segment)
        yield from _folded(shown, options.max_width) if changed else shown


def _folded(segments: Iterable[Segment], width: int) -> Iterator[Segment]:
    """`segments` with each line wider than `width` cells broken onto the next line, so that nothing is cropped."""
    column = 0
    for segment in segments:
        if segment.control:
            yield segment
            continue
        for k, part in enumerate(segment.text.split("\n")):
            if k:
                yield Segment.line()
                column = 0
            piece = Segment(part, segment.style)
            while column + piece.cell_length > width:
                head, piece = piece.split_cells(width - column)
                if head.text:
                    yield head
                yield Segment.line()
                column = 0
            if piece.text:
                yield piece
                column += piece.cell_length


class PlainConsole(Console):
    """A Rich console that makes every string it is given plain before it parses or lays it out (`render_str`: what
    `print` does with a str, a table's str cells, a title): its escapes are measured at the width they are shown at,
    and the characters Rich itself would drop unseen (BEL, backspace, form feed, carriage return) are shown too."""

    def render_str(self, text: str, **options: Any) -> Text:
        """`Console.render_str` of `plain(text)`."""
        return super().render_str(plain(text), **options)


class PlainText(RenderHook):
    """A render hook (`Console.push_render_hook`) that wraps every printed renderable in `_Shown`."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        """Each renderable of a `print`, wrapped so its text reaches the terminal plain."""
        return [_Shown(renderable) for renderable in renderables]
