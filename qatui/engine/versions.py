"""Judges' versions in a run: what a session stores of each judge, and the check that keeps a resume to one version.

A session's `meta["judges"][name]` holds the judge's options as stored, its `version` and the
`definition` texts that version names (`Judge.version`, `Judge.definition`); every verdict
carries the version it was given under (the engine stamps it). A resume rebuilds each judge and
is refused when its version is no longer the stored one: the session would mix two versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qatui.judges.registry import make_judge, stored_options
from qatui.store.judge_versions import entry_options, entry_version

if TYPE_CHECKING:
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources


def judge_entry(judge: Judge) -> dict[str, Any]:
    """What a session stores of a judge (`meta["judges"][name]`): its options as stored, its `version`, and the
    `definition` texts that version names, so a later resume or `sessions diff` can tell what changed."""
    return {**judge.describe_options(), "version": judge.version, "definition": judge.definition()}


def current_entries(meta: dict, resources: Resources) -> dict[str, dict[str, Any]]:
    """A saved session's judges as they are now (stored options, on `resources`: the session's models): what
    `judge_entry` would store for each today, so `sessions diff ID` shows what changed since the run. A judge
    file is the file at the path the session stored now, whether it was given by its path or found in the config
    folder (a `JudgeFileError` naming it when it is gone or broken)."""
    from qatui.judges.files.spec import load_judge_file

    entries = {}
    files = meta.get("judge_files") or {}
    for name, entry in (meta.get("judges") or {}).items():
        if (meta.get("imported") or {}).get("judge") == name:
            continue  # a judge qatui cannot run has no definition now
        stored = files.get(name) if isinstance(files.get(name), dict) else {}
        path = stored.get("path")
        file = load_judge_file(path) if isinstance(path, str) and path.endswith(".toml") else None
        entries[name] = judge_entry(make_judge(name, stored_options(name, entry_options(entry)), resources, file=file))
    return entries


def changed_judge(session_id: str, judge: Judge, entry: dict) -> str | None:
    """Why resuming `session_id` with `judge` would mix two versions of it (None when the stored version is the
    judge's now, or when the session is older than versions and recorded none)."""
    stored = entry_version(entry)
    if stored is None or stored == judge.version or stored in judge.earlier_versions():
        return None
    return (f"session {session_id}: judge {judge.name} changed since the run (stored version {stored}, now "
            f"{judge.version}): resuming would mix two versions in one session; start a new run, or see what "
            f"changed with `qatui sessions diff {session_id}`")
