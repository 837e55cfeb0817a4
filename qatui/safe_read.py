"""Reading a user's file without letting its content hang, exhaust or crash qatui: the one place of these checks.

Every loader of a file a user hands qatui (datasets, results files, label files, checklists)
reads and parses through here, so each hostile shape is refused the same way, with where it is:

- **Not a regular file.** A FIFO blocks its reader until someone writes, `/dev/zero` never
  ends, a socket cannot be read as a file: such a path is refused before a byte is read (it is
  opened non-blocking, looked at with `fstat`, and closed).
- **Too big.** At most `MAX_FILE_BYTES` (1 GiB) are read from one file: a dataset that size
  already needs several times that in memory once parsed. There is no limit on one line or
  one field below that (a 10 MB JSONL field or a 200 KB CSV cell loads).
- **Numbers that are not numbers.** Python's JSON reader takes `NaN`, `Infinity` and
  `-Infinity` (JSON has none of them), reads `1e400` as infinity, and fails with its own
  error on an integer of more than 4,300 digits. A non-finite value in a gold rating drops
  items from a summary and moves a correlation without a sign, so each is refused, as are
  numbers written with more than `MAX_NUMBER_CHARS` characters. TOML's `nan` and `inf` too.
- **Absurd nesting.** Arrays and objects nested deeper than `MAX_DEPTH` (64) levels: no
  dataset needs them, and the parser (at about 1,000) and every later copy of the data (a
  session's JSON, a report) would fail on Python's recursion limit.
- **A key given twice.** Python's JSON reader keeps the last of an object's duplicate keys and
  drops the other value without a word (`"candidates": {"a": "x", "a": "y"}` loses an answer),
  so a JSON object naming a key twice is refused at the second. (TOML refuses it itself.)

A refusal is a `Refused` (a `ValueError`) holding the reason and, where known, the 1-based
line and column and the field's path; each caller turns it into its own error type with the
file's name, so messages read "data.json line 3 column 18: field 'gold.ratings.c1': ...".
"""

from __future__ import annotations

import csv
import errno
import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

MAX_FILE_BYTES = 1 << 30
"""The most bytes read from one user file (1 GiB)."""
READ_CHUNK_BYTES = 1 << 16
"""What is read at a time past the size a file's status gave (a file that grew, or one that says 0, as /proc's do)."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects (tables) accepted in a JSON or TOML file."""
MAX_NUMBER_CHARS = 50
"""The longest number, in characters as written, accepted in a JSON or TOML file (an id or a score needs 20)."""


class Refused(ValueError):
    """Why a user's file or text is refused, and where in it: 1-based line and column, the field's path."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None,
                 path: tuple[str | int, ...] = ()) -> None:
        self.reason, self.line, self.column, self.path = reason, line, column, path
        super().__init__(self.message("").lstrip(": "))

    @property
    def field(self) -> str | None:
        """The path as a field name: `meta.a.b`, `gold.tiers[2]`; the first levels only when it is long."""
        parts = list(self.path[1:] if self.path and isinstance(self.path[0], int) else self.path)
        if not parts:
            return None
        text = ""
        for part in parts[:6]:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        return text + ("…" if len(parts) > 6 else "")

    @property
    def record(self) -> int | None:
        """The 1-based position in a top-level list (a dataset's record), when the path starts in one."""
        return self.path[0] + 1 if self.path and isinstance(self.path[0], int) else None

    def message(self, where: str, *, one_line_text: bool = False) -> str:
        """`where` then `line 3 column 18: item 2: field 'x': reason`; `one_line_text` (a JSONL line whose number
        `where` already says) leaves the line out and keeps the column."""
        if self.line is not None and not one_line_text:
            where += f" line {self.line}"
        if self.column is not None and (one_line_text or self.line is not None):
            where += f" column {self.column}"
        parts = [f"item {self.record}"] if self.record is not None else []
        parts += [f"field {self.field!r}"] if self.field is not None else []
        return f"{where}: " + ": ".join([*parts, self.reason])


# -- files -----------------------------------------------------------------------------------------


def read_bytes(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, at most `limit`; `Refused` for anything but a regular file, or a bigger one; OSError as is.

    Read by the size its status gives, then on a chunk at a time to the end: never one buffer of `limit` (Python
    allocates a read's whole size at once, 1 GiB for every file, which an address-space limit refused with a
    MemoryError on any read)."""
    with _open_regular(path) as file:
        size = os.fstat(file.fileno()).st_size
        if size > limit:
            raise Refused(_too_big(size, limit))
        parts, total = [], 0
        want = size + 1  # one byte past its size: a file that grew, or one that says 0, reads on
        while chunk := file.read(min(want, limit + 1 - total)):
            parts.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while read
                raise Refused(_too_big(total, limit))
            want = READ_CHUNK_BYTES
    return b"".join(parts)


def read_text(path: str | Path, limit: int = MAX_FILE_BYTES, errors: str = "strict") -> str:
    """The file as UTF-8 text, a BOM dropped (`read_bytes`' refusals; `decode_text`'s unless `errors` says)."""
    data = read_bytes(path, limit)
    return decode_text(data) if errors == "strict" else data.decode("utf-8-sig", errors=errors)


def decode_text(data: bytes) -> str:
    """A file's bytes as UTF-8 text, a BOM dropped; `Refused` with the line and column of the first byte that is
    not UTF-8 (a file saved as Latin-1 or UTF-16 says where, as every other refusal does)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        body, start = data.removeprefix(b"\xef\xbb\xbf"), e.start  # utf-8-sig counts from after the BOM
        line_start = body.rfind(b"\n", 0, start) + 1
        column = len(body[line_start:start].decode("utf-8", errors="replace")) + 1
        raise Refused(f"not UTF-8 text (byte 0x{body[start]:02x}): save the file as UTF-8",
                      body.count(b"\n", 0, start) + 1, column) from None


def read_head(path: str | Path, size: int) -> str:
    """The first `size` bytes of a regular file, decoded leniently (a sniffer's look); `read_bytes`' refusals."""
    with _open_regular(path) as file:
        return file.read(size).decode("utf-8-sig", errors="replace")


def check_regular(path: str | Path, *, folder: bool = True) -> None:
    """`Refused` unless `path` (links followed) is a regular file, or a folder where `folder` allows one; a missing
    path passes (the caller says)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not (folder and stat.S_ISDIR(mode)):
        _refuse_special(mode)


def _open_regular(path: str | Path) -> BinaryIO:
    """`path` opened for reading, once `fstat` shows a regular file: opened non-blocking, so a FIFO never waits."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse_special(os.fstat(fd).st_mode)  # before fdopen, which refuses a folder as "Is a directory: 3"
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def _refuse_special(mode: int) -> None:
    """`Refused` unless `mode` is a regular file's."""
    if not stat.S_ISREG(mode):
        raise Refused(f"is {file_kind(mode)}, not a regular file; qatui reads only regular files")


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, from its `st_mode`, as a refusal says it: "a named pipe (FIFO)"."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def why_missing(path: Path) -> str:
    """Why `path`, which does not exist as far as `exists()` says, is not there: "no such file or folder", or what
    a link in its place is ("a symbolic link that loops", "a symbolic link to nowhere"): a loop read as no file sent
    a user looking for a typo."""
    if not path.is_symlink():
        return "no such file or folder"
    try:
        path.stat()
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symbolic link that loops (too many levels of symbolic links)"
    return f"a symbolic link to nowhere (to {os.readlink(path)})"


def _too_big(size: int, limit: int) -> str:
    return f"is {size / 2**20:,.0f} MiB; qatui reads files of at most {limit / 2**20:,.0f} MiB"


def csv_reader(lines: Iterable[str], **options: Any) -> Any:
    """`csv.reader(lines)` that takes a cell of any size up to `MAX_FILE_BYTES`: the csv module's own limit
    (128 KiB a cell, process-wide) refuses a long answer in a valid file."""
    if csv.field_size_limit() < MAX_FILE_BYTES:
        csv.field_size_limit(MAX_FILE_BYTES)
    return csv.reader(lines, **options)


def csv_dict_reader(lines: Iterable[str], **options: Any) -> csv.DictReader:
    """`csv.DictReader(lines)` under `csv_reader`'s cell limit."""
    csv_reader(())
    return csv.DictReader(lines, **options)


# -- JSON ------------------------------------------------------------------------------------------


class _Hostile(Exception):
    """Raised inside the JSON parser's hooks; `_locate` then finds where and says why."""


def _parse_constant(name: str) -> float:
    raise _Hostile(name)


def _parse_float(text: str) -> float:
    value = float(text)
    if len(text) > MAX_NUMBER_CHARS or not math.isfinite(value):
        raise _Hostile(text)
    return value


def _parse_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Hostile(text)
    return int(text)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members as a dict; `_Hostile` when a key comes twice (Python keeps the last, dropping a value)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Hostile("duplicate key")
    return found


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_float=_parse_float, parse_int=_parse_int,
                            parse_constant=_parse_constant)


def loads_json(text: str) -> Any:
    """`text` parsed as one JSON value; `Refused` for NaN, Infinity, numbers too big or long, nesting past
    `MAX_DEPTH`, a key given twice in one object (with line, column and field); `json.JSONDecodeError` for what is
    not JSON at all."""
    return _checked(text, 0, lambda: _DECODER.decode(text))


def load_json_file(path: str | Path) -> Any:
    """A whole file parsed as one JSON value (`read_text`, then `loads_json`): whatever is wrong with its content a
    `Refused` with line and column, text that is not JSON at all included ("invalid JSON: ..."); OSError as is."""
    text = read_text(path)
    try:
        return loads_json(text)
    except json.JSONDecodeError as e:
        raise Refused(f"invalid JSON: {e.msg}", e.lineno, e.colno) from None


def raw_decode_json(text: str, index: int) -> tuple[Any, int]:
    """The JSON value starting at `index` of `text` and where it ends (a sniffer's look); `loads_json`'s refusals."""
    return _checked(text, index, lambda: _DECODER.raw_decode(text, index), lambda found: found[0])


def _checked(text: str, start: int, parse: Any, value_of: Any = lambda found: found) -> Any:
    try:
        found = parse()
    except json.JSONDecodeError:
        raise
    except (_Hostile, RecursionError, ValueError, MemoryError):
        raise _locate(text, start) from None
    if deeper_than(value_of(found), MAX_DEPTH):
        raise _locate(text, start)
    return found


def deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and dicts nest in `value` more than `limit` levels (level by level: no recursion to overflow)."""
    level, depth = [value], 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node if type(node) is list else ()
            below.extend(child for child in children if type(child) in _CONTAINERS)
        level = below
    return False


_CONTAINERS = (dict, list)


_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]|-?(?:NaN|Infinity)|-?[0-9][0-9.eE+-]*')


def _locate(text: str, start: int) -> Refused:
    """The first hostile thing in the JSON at `start`, as a `Refused` with its line, column and field path.

    Run only once a parse has failed: it walks every token in Python, which a good file never pays.
    """
    frames: list[list[Any]] = []  # per open container: its bracket, the key or index now being read, keys seen
    last_string, last_at = None, 0
    for match in _TOKEN.finditer(text, start):
        token = match.group()
        where = match.start()
        if token in "[{":
            frames.append([token, 0 if token == "[" else None, set()])
            if len(frames) > MAX_DEPTH:
                return _at(text, where, f"nested deeper than {MAX_DEPTH} levels (qatui's limit)", frames[:-1])
        elif token in "]}":
            if not frames:
                break
            frames.pop()
        elif token == ",":
            if frames and frames[-1][0] == "[":
                frames[-1][1] += 1
        elif token == ":":
            if frames and last_string is not None:
                frames[-1][1] = last_string
                if last_string in frames[-1][2]:
                    return _at(text, last_at, "the key comes twice in one object (the first value would be "
                                              "lost); keep one", frames)
                frames[-1][2].add(last_string)
        elif token.startswith('"'):
            last_string, last_at = _string(token), where
            continue
        else:
            problem = _number_problem(token)
            if problem:
                return _at(text, where, problem, frames)
        last_string = None
    return Refused("holds a value qatui cannot read (NaN, Infinity, a number too big, nesting too deep, "
                   "or a key given twice)")


def _string(token: str) -> str:
    try:
        return json.loads(token)
    except ValueError:
        return token[1:-1]


def _number_problem(token: str) -> str | None:
    """Why a JSON number token is refused, or None."""
    if token.lstrip("-") in ("NaN", "Infinity"):
        return f"{token} is not a number (JSON has no NaN or Infinity); give a finite number or leave the field out"
    if len(token) > MAX_NUMBER_CHARS:
        digits = sum(c.isdigit() for c in token)
        return f"a number of {digits:,} digits; qatui reads numbers of at most {MAX_NUMBER_CHARS} characters"
    try:
        infinite = not math.isfinite(float(token))
    except ValueError:
        return None
    return f"{token} is too big for a number (it would read as infinity)" if infinite else None


def _at(text: str, offset: int, reason: str, frames: list[list[Any]]) -> Refused:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Refused(reason, line, column, tuple(frame[1] for frame in frames if frame[1] is not None))


# -- TOML ------------------------------------------------------------------------------------------


def loads_toml(text: str) -> dict[str, Any]:
    """`text` parsed as TOML; `Refused` for nan / inf, numbers too big or long, nesting past `MAX_DEPTH` (with line
    and key where found); `tomllib.TOMLDecodeError` for what is not TOML."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except (RecursionError, MemoryError):
        raise Refused(f"nested deeper than {MAX_DEPTH} levels (qatui's limit)", _deep_toml_line(text)) from None
    except ValueError:  # an integer past Python's 4,300-digit limit
        long = re.search(r"\d{%d,}" % MAX_NUMBER_CHARS, text)
        line = text.count("\n", 0, long.start()) + 1 if long else None
        raise Refused(f"a number of more than {MAX_NUMBER_CHARS} characters", line) from None
    try:
        check_value(data)
    except Refused as exc:
        raise Refused(exc.reason, _toml_key_line(text, exc.path), path=exc.path) from None
    return data


def check_value(value: Any) -> None:
    """`Refused`, with the path, for the first number in `value` that is nan, infinite or too long, or for
    lists and dicts nested past `MAX_DEPTH`: the checks of a parsed value whose parser has no hooks (TOML,
    a Python literal). Iterative: a deep value cannot overflow it."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        node, where = stack.pop()
        if len(where) > MAX_DEPTH:
            raise Refused(f"nested deeper than {MAX_DEPTH} levels (qatui's limit)", path=where[:MAX_DEPTH])
        if isinstance(node, float) and not math.isfinite(node):
            raise Refused(f"{node} is not a finite number; give a number", path=where)
        if isinstance(node, int) and not isinstance(node, bool) and node.bit_length() > _MAX_INT_BITS:
            raise Refused(f"a number of more than {MAX_NUMBER_CHARS} digits", path=where)
        if isinstance(node, dict):
            stack.extend((child, (*where, key)) for key, child in reversed(node.items()))
        elif isinstance(node, (list, tuple)):
            stack.extend((child, (*where, index)) for index, child in reversed(list(enumerate(node))))



def json_lines(text: str) -> list[str]:
    """The lines of JSON Lines text, split at "\\n" only (a "\\r" before it dropped), numbered as an editor numbers
    them. `str.splitlines` also splits at U+2028, U+2029, U+0085 and other separators JSON allows unescaped inside
    a string (`json.dumps(..., ensure_ascii=False)` writes U+2028 as it is): a valid file was refused as
    "Unterminated string", at a line and column no editor showed."""
    return [line.removesuffix("\r") for line in text.split("\n")]

_MAX_INT_BITS = (10**MAX_NUMBER_CHARS).bit_length()


def _toml_key_line(text: str, path: tuple[str | int, ...]) -> int | None:
    """The line where the last key of `path` is set to a value (best effort: the first such line)."""
    keys = [key for key in path if isinstance(key, str)]
    if not keys:
        return None
    pattern = re.compile(r"^\s*(?:[\w.\"' -]*\.)?[\"']?%s[\"']?\s*=" % re.escape(keys[-1]), re.MULTILINE)
    found = pattern.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _deep_toml_line(text: str) -> int | None:
    """The line where inline arrays and tables first nest past `MAX_DEPTH` (quotes not followed: best effort)."""
    depth = 0
    for number, line in enumerate(text.splitlines(), 1):
        for char in line:
            depth += (char in "[{") - (char in "]}")
            if depth > MAX_DEPTH:
                return number
    return None
