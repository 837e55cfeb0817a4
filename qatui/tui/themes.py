"""Themes: the bundled TOML files, the user's own, and remembering the one picked.

A theme is one TOML file whose keys are the fields of `textual.theme.Theme`. The bundled
ones live in `themes/` at the top of the source tree, which the wheel ships as
`qatui/themes`; the user's go in `themes` of the user's config folder (`qatui.paths.themes_dir`) and may replace a bundled
one by reusing its name. A theme picked in the app is written back to the config file as
`general.theme`, editing that one line so every other line and comment stays as it was.
"""

from __future__ import annotations

import re
from dataclasses import fields
from functools import cache
from importlib.resources import files
from pathlib import Path

from textual.theme import BUILTIN_THEMES, Theme

from qatui.errors import ConfigError
from qatui.paths import themes_dir
from qatui.store.output_file import write_output
from qatui.text import plain

DEFAULT_THEME = "qatui-dark"
_THEME_FIELDS = {f.name for f in fields(Theme)}
_TABLE = re.compile(r"^\s*\[")
_GENERAL = re.compile(r"^\s*\[\s*general\s*\]\s*(#.*)?$")
_THEME_LINE = re.compile(r"""^(\s*theme\s*=\s*)("(?:[^"\\]|\\.)*"|'[^']*')(.*)$""")


def bundled_themes_dir() -> Path:
    """`qatui/themes` in an installed wheel, else `themes/` beside the package in a source tree."""
    installed = Path(str(files("qatui") / "themes"))
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2] / "themes"


def user_themes_dir() -> Path:
    """The user's own themes (`qatui.paths.themes_dir`: `$XDG_CONFIG_HOME/qatui/themes` on Linux)."""
    return themes_dir()


def read_theme(path: Path) -> Theme:
    """One theme file; ConfigError naming the file when it is not a valid theme."""
    from qatui.safe_read import loads_toml, read_text

    try:
        data = loads_toml(read_text(path))
    except (OSError, ValueError) as e:  # ValueError: undecodable, not TOML, or refused (a FIFO, nan, nesting)
        raise ConfigError(f"{path}: not a readable TOML theme: {e}") from None
    unknown = sorted(set(data) - _THEME_FIELDS)
    if unknown or not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        problem = f"unknown key(s) {', '.join(unknown)}" if unknown else "needs a `name` and a `primary` colour"
        raise ConfigError(f"{path}: not a theme: {problem}")
    for key, value in data.items():
        if problem := _field_problem(key, value):
            raise ConfigError(f"{path}: not a theme: {key} {problem}")
    theme = Theme(**data)
    try:  # what the app does with it on first use: a colour or variable it cannot read fails here, not there
        theme.to_color_system().generate()
    except Exception as e:  # noqa: BLE001 - Textual's own parsing; any failure is this file's
        raise ConfigError(f"{path}: not a theme: {e}") from None
    for name, value in theme.variables.items():  # a colour variable given no colour broke the app's stylesheet
        if name in _colour_variables() and not _colour(value):
            raise ConfigError(f"{path}: not a theme: variables.{plain(name)} {plain(value)!r} is not a colour "
                              "(the stylesheet draws it as one)")
    return theme


VARIABLE_DEFAULTS = {"panel-border": "#808080"}
"""Variables qatui's CSS uses beyond Textual's, for themes that lack them (Textual's own themes, users')."""


@cache
def _colour_variables() -> frozenset[str]:
    """The variables the stylesheet draws as colours: those whose default (Textual's, or qatui's own) is one."""
    generated = {**VARIABLE_DEFAULTS, **Theme(name="-", primary="#0178D4").to_color_system().generate()}
    return frozenset(name for name, value in generated.items() if _colour(value))


def _colour(value: str) -> bool:
    """Whether Textual reads `value` as a colour."""
    from textual.color import Color, ColorParseError

    try:
        Color.parse(value)
    except ColorParseError:
        return False
    return True


_COLOURS = {"primary", "secondary", "warning", "error", "success", "accent", "foreground", "background", "surface",
            "panel", "boost"}
"""A theme's colour fields (Textual's `Theme`), each read by `Color.parse`."""


THEME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}")
"""What a theme's name may hold: Textual's theme command draws each name as markup (`[/]` in one crashed the
palette; `[@click=app.quit]` made its entry quit the app), so a name is letters, digits, spaces and . _ + -."""


def _field_problem(key: str, value: object) -> str | None:
    """What is wrong with one theme field's value (it crashed the app when the theme was first drawn), or None."""
    if key == "name" and isinstance(value, str) and not THEME_NAME.fullmatch(value):
        return (f"{plain(value)!r} may hold only letters, digits, spaces and . _ + - (1 to 64, starting with a letter "
                "or digit): Textual's theme list reads a name as markup")
    if key in _COLOURS:
        if not isinstance(value, str):
            return "must be a colour in quotes, e.g. \"#0178D4\""
        if not _colour(value):
            return f"{plain(value)!r} is not a colour (e.g. \"#0178D4\", \"rgb(1,120,212)\", \"blue\")"
    elif key in ("dark", "ansi") and not isinstance(value, bool):
        return "must be true or false"
    elif key in ("luminosity_spread", "text_alpha") and (
            isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1):
        return "must be a number from 0 to 1"
    elif key == "variables" and (not isinstance(value, dict)
                                 or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
        return "must be a table of names to values in quotes"
    return None


def discover_themes(folders: list[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """Themes from the bundled and user folders (later ones win by name), and the files that failed."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for folder in folders if folders is not None else [bundled_themes_dir(), user_themes_dir()]:
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                theme = read_theme(path)
            except ConfigError as e:
                problems.append(str(e))
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems


def check_theme(wanted: str, own: list[Theme], where: str, skipped: list[str] | None = None) -> None:
    """Refuse a `general.theme` that names no theme, listing the known ones (qatui's and the user's, then Textual's),
    and first why a theme file of that name was skipped (`skipped`: `discover_themes`' problems), if one was.

    Checked before the app opens: a misspelt name would otherwise quietly fall back to the default."""
    known = [t.name for t in own] + [name for name in BUILTIN_THEMES if name not in {t.name for t in own}]
    if wanted not in known:
        why = next((f"; {problem}" for problem in skipped or [] if Path(problem.split(": ")[0]).stem == wanted), "")
        raise ConfigError(f"{where}: general.theme {wanted!r} is no theme{why}; known: {', '.join(known)}")


def with_theme(text: str, name: str) -> str:
    """Config text with `general.theme` set to `name`, every other line kept."""
    lines = text.splitlines(keepends=True)
    value = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    start = next((i for i, line in enumerate(lines) if _GENERAL.match(line)), None)
    if start is None:
        sep = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{sep}{chr(10) if text else ''}[general]\ntheme = {value}\n"
    end = next((i for i in range(start + 1, len(lines)) if _TABLE.match(lines[i])), len(lines))
    for i in range(start + 1, end):
        if m := _THEME_LINE.match(lines[i].rstrip("\r\n")):
            newline = lines[i][len(lines[i].rstrip("\r\n")):]
            lines[i] = f"{m[1]}{value}{m[3]}{newline}"
            return "".join(lines)
    lines.insert(start + 1, f"theme = {value}\n")
    return "".join(lines)


def save_theme(config_path: Path, name: str) -> None:
    """Write `general.theme = name` into the config file (created if absent), checked before it replaces the file."""
    from qatui.config import parse_config
    from qatui.safe_read import read_text

    try:
        text = read_text(config_path) if config_path.exists() else ""  # as `load_config` reads it: a BOM dropped
    except ValueError as e:  # undecodable, or refused (not a regular file, too big) since qatui started
        raise ConfigError(f"{config_path}: cannot read the config: {e}") from None
    updated = with_theme(text, name)
    if parse_config(updated, str(config_path)).general.theme != name:
        raise ConfigError(f"{config_path}: could not set general.theme; add `theme = \"{name}\"` under [general]")
    config_path.parent.mkdir(parents=True, exist_ok=True)
    write_output(config_path, updated)  # a config kept as a link (dotfiles) is written through, not replaced
