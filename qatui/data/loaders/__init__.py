"""Dataset loaders: every supported file format becomes one `Dataset` of `Item`s.

Each format is a small module with `load(path) -> list[Item]` and `sniff(path, head)`;
`load_dataset` picks one by name or by sniffing the file's content, and stamps the result
with the file's name, absolute path and sha256, so a session can tell later whether its
dataset changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from qatui.data.loaders import (
    csvtable,
    jsonl,
    jsonlist,
    lfqa_e,
    lfqa_eval,
    linkage,
    linkage_webglm,
    minos,
    qags,
    summeval,
    topical_chat,
    wikieval,
)
from qatui.data.loaders._common import HEAD_CHARS, unique_items
from qatui.safe_read import Refused, check_regular, json_lines, loads_json, read_bytes, read_head, read_text, why_missing
from qatui.data.model import Dataset, Item
from qatui.errors import DatasetError
from qatui.text import did_you_mean

_MODULES: dict[str, ModuleType] = {
    "jsonl": jsonl,
    "json": jsonlist,
    "csv": csvtable,
    "minos": minos,
    "linkage": linkage,
    "linkage-webglm": linkage_webglm,
    "lfqa-e": lfqa_e,
    "lfqa-eval": lfqa_eval,
    "summeval": summeval,
    "topical-chat": topical_chat,
    "qags": qags,
    "wikieval": wikieval,
}

FORMATS: list[str] = list(_MODULES)
"""Every format name `load_dataset` accepts."""

_SNIFF_ORDER = [
    "minos",
    "lfqa-e",
    "lfqa-eval",
    "topical-chat",
    "qags",
    "linkage-webglm",
    "linkage",
    "summeval",
    "wikieval",
    "jsonl",
    "json",
    "csv",
]
"""Specific shapes first; the native formats and CSV take what is left."""


def detect_format(path: str | Path) -> str:
    """The format of a file (or of an LFQA-Eval folder), from its extension and first record."""
    path = _regular(path)
    if not path.exists():
        raise DatasetError(f"{path}: {why_missing(path)}")
    if path.is_dir():
        first = lfqa_eval.files(path)[0]
        if lfqa_eval.sniff(first, _head(first)):
            return "lfqa-eval"
        raise DatasetError(f"{path}: is a folder, and only the lfqa-eval format reads a folder (its .json files "
                           f"are not of that format); pass one dataset file instead, e.g. {first}")
    head = _head(path)
    for name in _SNIFF_ORDER:
        if _MODULES[name].sniff(path, head):
            return name
    if path.stat().st_size > HEAD_CHARS:  # a first record may be longer than the head: look at the whole file once
        whole = _text(path, errors="replace")
        for name in _SNIFF_ORDER:
            if _MODULES[name].sniff(path, whole):
                return name
    raise _unrecognised(path, head)


def _unrecognised(path: Path, head: str) -> DatasetError:
    """Why no format fits: a JSON syntax error where the file is JSON (with its line and column), else the shapes known."""
    from qatui.data.loaders._common import load_json

    start = head.lstrip()[:1]
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson") or (start == "{" and suffix != ".json"):
        for number, line in enumerate(json_lines(_text(path, errors="replace")), 1):
            if not line.strip():
                continue
            try:
                loads_json(line)
            except Refused as exc:
                return DatasetError(exc.message(f"{path.name} line {number}", one_line_text=True))
            except json.JSONDecodeError as exc:
                return DatasetError(f"{path.name} line {number} column {exc.colno}: invalid JSON: {exc.msg}")
        return DatasetError(f"{path.name}: JSON lines, but not records qatui reads: each line must be an object with "
                            "'id', 'question' and 'candidates' (see docs/FORMATS.md), or name one with --format")
    if suffix == ".json" or start in ("[", "{"):
        load_json(path)  # raises with the line and column when the JSON itself is broken
        return DatasetError(f"{path.name}: valid JSON, but not a shape qatui knows; name its format with --format "
                            f"({', '.join(FORMATS)}; docs/FORMATS.md describes each)")
    return DatasetError(f"{path.name}: cannot tell its format from its content or its extension; name one with "
                        f"--format ({', '.join(FORMATS)})")


def load_dataset(path: str | Path, format: str | None = None, csv_mapping: dict[str, str] | None = None) -> Dataset:
    """The dataset in `path` read as `format` (detected when None); any problem is a DatasetError."""
    path, format = _checked(path, format, csv_mapping)
    items = csvtable.load(path, csv_mapping) if format == "csv" else _MODULES[format].load(path)
    return Dataset(
        name=path.name if path.is_dir() else path.stem,
        path=str(path.resolve()),
        format=format,
        content_hash=content_hash(path),
        items=items,
    )


def iter_items(path: str | Path, format: str) -> Iterator[Item]:
    """The items `load_dataset(path, format)` gives, one at a time, its errors raised where they are reached.

    The formats whose loader has `labelled` (jsonl, json, minos, lfqa-e) validate an item only
    when it is asked for, so a viewer of a big dataset gets its first items at once; the others
    load the whole file at the first item.
    """
    path, format = _checked(path, format, None)
    labelled = getattr(_MODULES[format], "labelled", None)
    if labelled is None:
        yield from _MODULES[format].load(path)
    else:
        yield from unique_items(labelled(path), path.name)


def _checked(path: str | Path, format: str | None, csv_mapping: dict[str, str] | None) -> tuple[Path, str]:
    """The path, expanded, and its format (detected when None), once both are known to be readable together.

    `demo` names the bundled demo set wherever a dataset is asked for, unless a file or folder
    of that name is in the working directory (a user's own file always wins).
    """
    if str(path) == DEMO_NAME and not Path(DEMO_NAME).exists():
        path = demo_path()
    path = _regular(path)
    if format is None:
        format = detect_format(path)
    elif not path.exists():
        raise DatasetError(f"{path}: {why_missing(path)}")
    if format not in _MODULES:
        raise DatasetError(f"unknown dataset format {format!r}{did_you_mean(format, FORMATS)}; formats are: "
                           f"{', '.join(FORMATS)}")
    if csv_mapping and format != "csv":
        raise DatasetError(f"a CSV column mapping applies only to the csv format, not to {format!r}")
    if path.is_dir() and format != "lfqa-eval":
        raise DatasetError(f"{path}: is a folder; only the lfqa-eval format reads a folder")
    return path, format


def _regular(path: str | Path) -> Path:
    """The path, expanded; a DatasetError, before anything opens it, when it is a FIFO, a device or a socket, or
    when its name is not UTF-8 (a session records where its data came from as text, and could not)."""
    path = Path(path).expanduser()
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise DatasetError(f"{shown}: the file name is not valid UTF-8; rename the file (or folder) to read it") from None
    try:
        check_regular(path)
    except Refused as exc:
        raise DatasetError(f"{path}: {exc}") from None
    return path


def _head(path: Path) -> str:
    """The start of the file, decoded leniently, for the sniffers."""
    try:
        head = read_head(path, HEAD_CHARS)
    except Refused as exc:
        raise DatasetError(f"{path}: {exc}") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror})") from None
    if not head.strip():
        raise DatasetError(f"{path.name}: the file is empty")
    return head


def _text(path: Path, errors: str) -> str:
    """The whole file, decoded with `errors`, its refusals and read errors as a DatasetError."""
    try:
        return read_text(path, errors=errors)
    except Refused as exc:
        raise DatasetError(f"{path}: {exc}") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror})") from None


def content_hash(path: str | Path) -> str:
    """sha256 of the file's bytes; for a folder, of its data files' bytes in name order (OSError if unreadable,
    DatasetError for a special or oversized file)."""
    path = Path(path).expanduser()
    digest = hashlib.sha256()
    for file in lfqa_eval.files(path) if path.is_dir() else [path]:
        try:
            digest.update(read_bytes(file))
        except Refused as exc:
            raise DatasetError(f"{file}: {exc}") from None
    return digest.hexdigest()


DEMO_NAME = "demo"
"""What names the bundled demo set where a dataset path is asked for (`run demo`, `datasets inspect demo` …)."""


def demo_path() -> Path:
    """The bundled demo dataset (shipped inside the package)."""
    from importlib.resources import files

    return Path(str(files("qatui.data") / "demo" / "demo.jsonl"))


def demo_dataset() -> Dataset:
    """The bundled demo dataset, loaded as native JSONL."""
    return load_dataset(demo_path(), "jsonl")
