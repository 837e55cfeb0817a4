"""Where a key of a TOML text is written: tomllib gives no positions, and every judge-file error names a line.

Best effort on purpose: the line of the table header `[a.b]` or `[[a.b]]`, or of `key =` inside
the table the path names (a dotted key `b.key =` in a parent table too), skipping the insides
of multi-line strings. Line 1 when nothing matches, so a message always has a line.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _plain(key: str) -> str:
    """A TOML key as written (`"a b"`, `a . b`) made a dotted path of bare names."""
    return ".".join(part.strip().strip("\"'") for part in key.split("."))


def key_line(text: str, path: tuple[str | int, ...]) -> int:
    """The 1-based line where `path` (keys, list indices ignored) is set or its table starts, else where its
    nearest parent is (a missing key: its table); 1 when none is found."""
    keys = [str(p) for p in path if isinstance(p, str)]
    while keys:
        if (found := _line_of(text, ".".join(keys))) is not None:
            return found
        keys.pop()
    return 1


def line_of_text(text: str, start: int, needle: str) -> int:
    """The first line from line `start` on that holds `needle` (a placeholder inside a template); `start` if none."""
    for number, line in enumerate(text.splitlines()[start - 1:], start):
        if needle in line:
            return number
    return start


def _line_of(text: str, wanted: str) -> int | None:
    table = ""
    in_string: str | None = None
    best: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        if header := _HEADER.match(line):
            table = _plain(header[1])
            if table == wanted and best is None:
                best = number
            continue
        if found := _KEY.match(line):
            full = ".".join(filter(None, (table, _plain(found[1]))))
            if full == wanted:
                return number
            if best is None and wanted.startswith(full + "."):
                best = number  # an inline table or a parent key: the nearest place we can name
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
                break
    return best
