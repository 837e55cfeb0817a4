"""Text from a dataset, a model or a name written into a file another program reads: a spreadsheet, Markdown, LaTeX.

Each format has characters that make its reader do something with a text instead of showing it: a
spreadsheet runs a cell that starts with `=` as a formula (`=HYPERLINK(...)` sends what the sheet holds
away when clicked; some run commands); Markdown turns `![x](https://...)` into an image fetched from
that address when the file is viewed, `<img ...>` into HTML, `|` into a new table cell (a figure moved
into another column), `@name` into a mention; LaTeX reads `\\`, `&`, `~` and `^` as commands. So every
writer of these formats sets data in through the one function of its format here, and what the reader
shows is what the data says.
"""

from __future__ import annotations

import re

from qatui.text import plain

SHEET_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's list): a text cell starting so is marked."""
SHEET_MARK = "'"
"""The mark a spreadsheet reads as "this cell is text"; one before a text that starts with a formula start or with
the mark itself, so that `sheet_value` can take it off again and every text comes back as it was written."""


def sheet_cell(text: str) -> str:
    """`text` as a CSV cell a spreadsheet shows as text and never runs: a formula start (or the mark) gets `'`."""
    return SHEET_MARK + text if text.startswith((*SHEET_FORMULA_START, SHEET_MARK)) else text


def sheet_value(cell: str) -> str:
    """The text `sheet_cell` wrote: its one leading `'` taken off (a cell without one is the text itself)."""
    return cell[1:] if cell.startswith(SHEET_MARK) else cell


_MARKDOWN_ACTIVE = re.compile(r"[\\`*_~\[\]()!<>&|$@#{}]")
"""The characters Markdown (CommonMark with GitHub's tables, strikethrough, math and mentions) may read as
markup inside a line: escapes, code spans, emphasis, strikethrough, links and images, HTML and entities,
table cells, math, mentions and issue references. CommonMark reads each with a backslash before it as itself."""
_LINE_BREAKS = re.compile(r"[\n\t\u2028\u2029]+")


def _one_line(text: object) -> str:
    """`plain(text)` (control characters as their escapes) with every run of line breaks and tabs one space."""
    return _LINE_BREAKS.sub(" ", plain(text))


def markdown_cell(text: object) -> str:
    """`text` as Markdown that renders as its characters: no link, image, HTML, emphasis, code, math or mention, and
    one line (a table row or a list item stays one). Control characters are shown as their escapes (`plain`), so a
    terminal the file is printed on obeys none; every line break and tab becomes one space."""
    return _MARKDOWN_ACTIVE.sub(lambda m: "\\" + m[0], _one_line(text))


LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 "Δ": r"$\Delta$", "κ": r"$\kappa$", "τ": r"$\tau$"}
"""Characters LaTeX would read as commands (or, for the Greek letters qatui's columns use, cannot set in text with
its default fonts), and how to write each."""
_LATEX_ACTIVE = re.compile("[" + re.escape("".join(LATEX_ESCAPES)) + "]")


def latex_cell(text: object) -> str:
    """`text` as LaTeX that typesets its characters: every command character written as its command, one line,
    control characters as their escapes (`plain`)."""
    return _LATEX_ACTIVE.sub(lambda m: LATEX_ESCAPES[m[0]], _one_line(text))


def latex_comment(text: object) -> str:
    """`text` as one LaTeX comment line: a line break in it would end the comment and set the rest as LaTeX."""
    return "% " + _one_line(text)
