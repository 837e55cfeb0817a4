"""The report's Jinja2 environment: templates beside this module, every value escaped unless it is `Markup`.

Autoescape is on for every template, and every value a template prints is escaped the way
`html.escape` does (quotes too, in text and in attributes alike), so a dataset's or a model's
text (`<script>`, `</svg>`, `{{7*7}}`) is always text: Jinja renders a value once and never
reads it as a template. Its control characters (ESC, BEL, a right-to-left override) are
written as their escapes (`\\x1b`) by `qatui.text.plain`, as the terminal shows them
(docs/LIBRARIES.md#jinja2-report). `Markup` is for what the report built itself: the inline SVG plots
(matplotlib's), a judge's work as Rich exports it (escaped by Rich), and what a template or
macro rendered.
"""

from __future__ import annotations

import functools
import html
from importlib.resources import files
from typing import Any

from markupsafe import Markup

from qatui.text import plain

__all__ = ["Markup", "macros", "render_template"]


def _escaped(value: Any) -> Any:
    """A printed value as `html.escape` writes it, control characters as their escapes, unless it is markup
    already (`__html__`)."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(plain(value)))


def _align(value: object) -> Markup:
    """' class="num"' for a cell that reads as a number ('0.512', '+3.1 [1.2, 4.0]', '12/20', '–'), else ''."""
    text = str(value).strip()
    numeric = bool(text) and not hasattr(value, "__html__") and (text[0].isdigit() or text[0] in "+-–−.[")
    return Markup(' class="num"') if numeric else Markup("")


def _load(name: str) -> str:
    """A template's text, read from the package's data files (a wheel or a zip alike)."""
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


@functools.cache
def _environment() -> Any:
    """The one environment: autoescape on, an undefined name an error, values escaped by `_escaped`."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FunctionLoader(_load), autoescape=True, finalize=_escaped,
                             undefined=jinja2.StrictUndefined)
    env.filters["align"] = _align
    return env


def render_template(template: str, **context: Any) -> Markup:
    """The template `template` (a file beside this module) rendered with `context`, as markup."""
    return Markup(_environment().get_template(template).render(**context))


def macros() -> Any:
    """The macros of `macros.html` (table, paragraph, figure, badge, qatui_table), callable from Python; each gives markup."""
    return _environment().get_template("macros.html").module
