"""Lines of parts that wrap only between parts: a figure never apart from its label or its interval.

A judge's headline (`tau +0.59 [+0.44,+0.76]  rho +0.66 ... kappa +0.62`) is one line that an 80-column
terminal cannot always hold. Wrapped as text, it broke where a space fell: `kappa` at the end of one line and
its `+0.62` at the start of the next, or a tau on one line and its interval on the next (`qatui table` never
splits a figure from its CI; the screens now keep the same rule). Each part here is laid whole: a part that
does not fit after the last one starts a new line, indented under its row's first part; only a part wider
than the whole line is wrapped inside.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

Part = Content | str


class Packed(Visual):
    """Rows of parts, each row starting a line; a row wraps between its parts, at the widget's own width."""

    def __init__(self, rows: Sequence[Sequence[Part]], *, gap: str = "  ", indent: str = "  ") -> None:
        self.rows = [[part if isinstance(part, Content) else Content(part) for part in row] for row in rows if row]
        self.gap, self.indent = gap, indent

    def laid_out(self, width: int) -> Content:
        """The rows as lines no wider than `width` where the parts allow."""
        lines: list[Content] = []
        for row in self.rows:
            line = row[0]
            for part in row[1:]:
                if line.cell_length + len(self.gap) + part.cell_length > width:
                    lines.append(line)
                    line = Content(self.indent) + part
                else:
                    line = line + self.gap + part
            lines.append(line)
        return Content("\n").join(lines)

    def __str__(self) -> str:
        """The rows as text, a line each, unwrapped (what a widget showing it holds, for copying and tests)."""
        return "\n".join(self.gap.join(part.plain for part in row) for row in self.rows)

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        """The lines laid out at `width`, drawn as Textual draws text."""
        return self.laid_out(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        """The width of the widest row on one line."""
        return self.laid_out(10**9).get_optimal_width(rules, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        """How many lines the rows take at `width`."""
        return self.laid_out(width).get_height(rules, width)
