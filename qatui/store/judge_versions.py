"""Judge versions: the short hash that names a judge's definition, how a session stores it, and the history store.

A version is 12 hex characters of a SHA-256 over a canonical JSON document (`version_of`); the
judges build that document (`qatui.judges.base.Judge.version`), this module only hashes it, so
the store layer never imports a judge.

A session keeps each judge's version in its meta beside the judge's options:
`meta["judges"][name]` holds the options as stored, plus `version` and `definition` (the texts
that define the judge's prompts, so two sessions can be diffed later even if a prompt file
changes). `entry_options`, `entry_version` and `entry_definition` split such an entry; a session
stored before versions existed has neither key, and reads as "version not recorded".

`JudgeHistory` keeps the versions of a judge someone edits (the Judge Lab, `judges align`): one
JSON file per version under `<root>/<name>/<version>.json`, written atomically, with when it was
saved, its figures (agreement with people...) and a note. A name that could leave the folder or
drive a terminal is refused.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from qatui.safe_read import loads_json, read_text
from qatui.errors import JudgeError
from qatui.store.atomic import atomic_write_text
from qatui.text import shown_alike

VERSION_CHARS = 12
"""Hex characters in a version: 48 bits, so two definitions of one judge never share one by chance."""
VERSION_KEYS = ("version", "definition")
"""What a session's judge entry holds beside the judge's options (no judge has an option of these names)."""
NOT_RECORDED = "version not recorded"
"""What is shown for a judge of a session stored before versions were kept."""
MAX_NAME_CHARS = 100
"""The longest judge name the history store accepts (a file name on every file system)."""
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")
"""A judge name the history store takes: letters, digits and `._@+-`, starting with a letter or digit
(so never `..`, a hidden file, a separator or a control character)."""
_VERSION = re.compile(rf"[0-9a-f]{{{VERSION_CHARS}}}")


def version_of(document: Any) -> str:
    """The version naming `document` (any JSON value): the first 12 hex characters of the SHA-256 of its
    canonical JSON (keys sorted, no spaces), so equal definitions always give equal versions."""
    canonical = json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:VERSION_CHARS]


def entry_options(entry: dict | None) -> dict[str, Any]:
    """A session's judge entry without its version keys: the judge's options, as `make_judge` takes them."""
    return {key: value for key, value in (entry or {}).items() if key not in VERSION_KEYS}


def entry_version(entry: dict | None) -> str | None:
    """The version a session's judge entry records; None for a session stored before versions were kept."""
    version = (entry or {}).get("version")
    return version if isinstance(version, str) and version else None


def entry_definition(entry: dict | None) -> dict[str, str]:
    """The definition texts a session's judge entry records (file name -> text); {} when it has none."""
    definition = (entry or {}).get("definition")
    if not isinstance(definition, dict):
        return {}
    return {str(name): text for name, text in definition.items() if isinstance(text, str)}


def shown_version(entry: dict | None) -> str:
    """The version as a person reads it: the 12 characters, or "version not recorded"."""
    return entry_version(entry) or NOT_RECORDED


def check_name(name: str) -> str:
    """`name` when the history store can use it as a folder name; else a JudgeError saying why."""
    if not isinstance(name, str) or not name:
        raise JudgeError("a judge name is needed to keep its versions")
    if len(name) > MAX_NAME_CHARS or not _SAFE_NAME.fullmatch(name):
        shown = name[:40].encode("unicode_escape").decode("ascii")
        raise JudgeError(f"judge name {shown!r} cannot name a history folder: use letters, digits and ._@+- "
                         f"(starting with a letter or digit, at most {MAX_NAME_CHARS} characters)")
    return name


def check_version(version: str) -> str:
    """`version` when it is 12 lower-case hex characters; else a JudgeError."""
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        shown = str(version)[:40].encode("unicode_escape").decode("ascii")
        raise JudgeError(f"{shown!r} is not a judge version: a version is {VERSION_CHARS} hex characters "
                         "(see `qatui judges versions NAME`)")
    return version


@dataclass(frozen=True)
class VersionRecord:
    """One stored version of a judge: its version, when it was saved, its figures and note, and its file."""

    version: str
    saved_at: str
    figures: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    path: Path | None = None


def _saved_order(record: VersionRecord) -> tuple[float, int, str]:
    """When a version was saved, for ordering: its `saved_at` as an instant (a string compare misorders two offsets,
    `+01:00` and `+00:00`), then its file's modification time in nanoseconds (two saves in one second, which
    `saved_at` cannot tell apart), then the version."""
    try:
        moment = datetime.fromisoformat(record.saved_at).timestamp()
    except (ValueError, OverflowError, OSError):
        moment = float("-inf")  # a hand-edited or damaged stamp: before every readable one
    try:
        written = record.path.stat().st_mtime_ns if record.path is not None else 0
    except OSError:
        written = 0
    return moment, written, record.version


class JudgeHistory:
    """The versions kept of each judge, one JSON file per version, under `root` (default: the data folder's `judges`)."""

    def __init__(self, root: Path | None = None) -> None:
        if root is None:
            from qatui.paths import data_dir

            root = data_dir() / "judges"
        self.root = Path(root)

    def save(self, name: str, text: str, figures: dict | None = None, note: str = "", *,
             version: str | None = None) -> str:
        """Keep `text` (the judge's definition, e.g. its file's TOML) as a version of judge `name`; returns the version.

        `version` is the judge's own (`Judge.version`) when the caller has it; else the hash of `text`.
        Saving a version again replaces its figures and note (the text is the same by construction). A name that
        differs from a kept judge's only in case (`MyJudge` beside `myjudge`) is refused: on a case-insensitive disk
        (macOS's, Windows') both would be one folder, each judge's versions listed as the other's.
        """
        check_name(name)
        if self.root.is_dir() and (clash := shown_alike(name, (p.name for p in self.root.iterdir() if p.is_dir()),
                                                        key=str.casefold)):
            raise JudgeError(f"judge {name!r} differs from {clash!r}, whose versions are kept, only in case: on a "
                             "case-insensitive disk they would share one history; rename the judge")
        if not isinstance(text, str):
            raise JudgeError(f"judge {name}: a version's text must be text")
        version = check_version(version) if version is not None else version_of(text)
        doc = {"name": name, "version": version, "saved_at": datetime.now().astimezone().isoformat(timespec="seconds"),
               "figures": dict(figures or {}), "note": str(note), "text": text}
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / f"{version}.json", json.dumps(doc, ensure_ascii=False, indent=1))
        return version

    def records(self, name: str) -> list[VersionRecord]:
        """Every stored version of judge `name`, oldest first; [] when none is kept."""
        folder = self.root / check_name(name)
        if not folder.is_dir():
            return []
        found = []
        for path in folder.glob("*.json"):
            if not _VERSION.fullmatch(path.stem):
                continue
            doc = self._read(path)
            found.append(VersionRecord(version=path.stem, saved_at=str(doc.get("saved_at") or ""),
                                       figures=doc.get("figures") if isinstance(doc.get("figures"), dict) else {},
                                       note=str(doc.get("note") or ""), path=path))
        return sorted(found, key=_saved_order)

    def text(self, name: str, version: str) -> str:
        """The text stored as `version` of judge `name`; a JudgeError naming the versions kept when there is none."""
        path = self.root / check_name(name) / f"{check_version(version)}.json"
        if not path.is_file():
            kept = ", ".join(r.version for r in self.records(name)) or "none"
            raise JudgeError(f"judge {name} has no stored version {version} (kept: {kept})")
        text = self._read(path).get("text")
        if not isinstance(text, str):
            raise JudgeError(f"{path}: damaged: no text")
        return text

    @staticmethod
    def _read(path: Path) -> dict[str, Any]:
        """A version file's JSON object, read with the user-file limits; a JudgeError naming a damaged one."""
        try:
            doc = loads_json(read_text(path))
        except (OSError, ValueError) as e:
            raise JudgeError(f"{path}: damaged version file: {e}") from None
        if not isinstance(doc, dict):
            raise JudgeError(f"{path}: damaged version file: not a JSON object")
        return doc
