"""session.json, a session's small file: its metadata (one doc), its summary per judge, and the statuses it may show."""

from __future__ import annotations

from pathlib import Path

from qatui.errors import SessionError
from qatui.safe_read import MAX_DEPTH, deeper_than
from qatui.store.atomic import AtomicJSONStorage
from qatui.store.files import check_schema
from qatui.ties import TIE_RULE

STATUSES = ("running", "completed", "cancelled", "interrupted", "failed", "capped", "stopped")
""""capped": the run stopped at its cost cap (`--max-cost`); a resume with a higher cap finishes it. "stopped": a
backbone failed the live check put off to the run's first call the cache could not answer (`llm.preflight`; the
reason is the session's `stopped`); a resume once it answers finishes it."""
UNENDED = ("running", "interrupted")
"""Statuses of a run that has not ended (its writer lives, or died): its stored summary may predate its shards."""
INTERVAL_RULE = 2
"""The version of how a stored summary's intervals were made (its `interval_rule`). Before 2 (2026-11-28) a figure
every item gave alike was stored with the point interval [v, v], a certainty its items cannot give; now it has the
exact binomial interval or none (`metrics.bootstrap`). Such a point read from a summary without the rule is shown as
no interval (`_without_point_intervals`)."""


def check_status(status: object) -> None:
    """Refuse a status the TUI and CLI would not know how to show."""
    if status not in STATUSES:
        raise ValueError(f"session status must be one of {', '.join(STATUSES)}, not {status!r}")


def parse_session_data(path: Path, data: dict | None) -> tuple[dict, dict[str, dict]]:
    """Meta and per-judge summaries of a session.json's content; SessionError naming the file if malformed."""
    metas = list((data or {}).get("meta", {}).values())
    if len(metas) != 1 or not isinstance(metas[0], dict):
        raise SessionError(f"{path}: damaged: table 'meta' must hold exactly one document")
    check_schema(path, metas[0].get("schema"))
    _check_fields(path, "meta", metas[0], META_FIELDS)
    if isinstance(dataset := metas[0].get("dataset"), dict):
        _check_fields(path, "meta.dataset", dataset, DATASET_FIELDS)
    for key in ("judges", "progress"):  # one object per judge
        if any(not isinstance(v, dict) for v in (metas[0].get(key) or {}).values()):
            raise SessionError(f"{path}: damaged: meta.{key} holds a value that is not an object")
    summary: dict[str, dict] = {}
    for doc in (data or {}).get("summary", {}).values():
        if not isinstance(doc, dict) or not isinstance(doc.get("judge"), str):
            raise SessionError(f"{path}: damaged: a summary document names no judge")
        _check_fields(path, f"summary of {doc['judge']!r}", doc, SUMMARY_FIELDS)
        kept = {k: v for k, v in doc.items() if k != "judge"}
        summary[doc["judge"]] = kept if kept.get("interval_rule") == INTERVAL_RULE else _without_point_intervals(kept)
    return metas[0], summary


META_FIELDS: dict[str, tuple[type, ...]] = {
    "status": (str,), "dataset": (dict,), "judges": (dict,), "progress": (dict,), "models": (dict,), "llm": (dict,),
    "backbones": (list,), "name": (str, type(None)), "id": (str,), "seed": (int,),
    "concurrency": (int,), "convention": (str,), "created": (str,), "updated": (str,), "shards": (int,),
}
"""The types of the meta fields every view reads (a field may be absent: older sessions lack some)."""
DATASET_FIELDS: dict[str, tuple[type, ...]] = {
    "path": (str,), "name": (str,), "format": (str,), "content_hash": (str,), "n_items": (int,),
    "limit": (int, type(None)), "item_ids": (list, type(None)),
}
SUMMARY_FIELDS: dict[str, tuple[type, ...]] = {
    "metrics": (dict,), "ci": (dict,), "n": (dict,), "no_decision": (dict,), "left_out": (dict,),
    "by_convention": (dict,), "breakdown": (dict,), "breakdown_n": (dict,), "classes": (dict,),
    "n_items": (int,), "n_done": (int,), "n_failed": (int,), "n_not_applicable": (int,), "convention": (str,),
}


def _check_fields(path: Path, where: str, doc: dict, fields: dict[str, tuple[type, ...]]) -> None:
    """SessionError naming the file and the field when a field `doc` has is not of its type, or `doc` nests deeper
    than any file qatui writes: a hand-edited `"metrics": null` made `sessions list` (and Home) fail for every
    session, and a value nested 1,000 deep a RecursionError in every view. Booleans are no numbers here."""
    if deeper_than(doc, MAX_DEPTH):
        raise SessionError(f"{path}: damaged: {where} nests deeper than {MAX_DEPTH} levels")
    for key, kinds in fields.items():
        if key in doc and (not isinstance(doc[key], kinds) or (isinstance(doc[key], bool) and bool not in kinds)):
            names = " or ".join("null" if k is type(None) else {"str": "text", "dict": "an object", "list": "a list",
                                                                  "int": "a whole number"}[k.__name__] for k in kinds)
            raise SessionError(f"{path}: damaged: {where}.{key} is not {names}")


def _without_point_intervals(value: object, interval: bool = False) -> object:
    """A stored summary doc with each point interval [v, v] dropped (`INTERVAL_RULE`): under `ci` keys and those
    ending `_ci`, an interval is a list of two numbers, or a dict of them by metric."""
    if interval:
        if isinstance(value, list) and len(value) == 2 and value[0] == value[1]:
            return None
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if _without_point_intervals(v, interval=True) is not None}
        return value
    if isinstance(value, dict):
        return {k: _without_point_intervals(v, interval=k == "ci" or k.endswith("_ci")) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_point_intervals(v) for v in value]
    return value


def read_session_file(path: Path) -> tuple[dict, dict[str, dict]]:
    """Meta and summaries read from a session.json; SessionError naming the file if missing or damaged."""
    if not path.is_file():
        raise SessionError(f"{path}: missing; {path.parent} is not a session")
    return parse_session_data(path, AtomicJSONStorage(path).read())


def reconcile(meta: dict, stored: dict[str, dict], progress: dict[str, dict], where: Path | str = "session"
              ) -> dict[str, dict]:
    """Each judge's summary with the counts the shards hold (`progress`: judge -> n_done, n_failed,
    n_not_applicable). A summary whose counts differ was made at an earlier end: its counts are replaced and
    its metrics dropped (`unfinished`), since they measured other items; they are computed when the run ends.
    Results of more items than the session has (records of items not its own, edited in) are damage, SessionError
    naming `where`: they read "scored 12 of 10".
    """
    found: dict[str, dict] = {}
    n_items = (meta.get("dataset") or {}).get("n_items")
    for judge in meta.get("judges") or stored:
        counts = {key: int((progress.get(judge) or {}).get(key, 0))
                  for key in ("n_done", "n_failed", "n_not_applicable")}
        if isinstance(n_items, int) and sum(counts.values()) > n_items:
            raise SessionError(f"{where}: damaged: the results hold {sum(counts.values())} items of {judge}, more than "
                               f"the session's {n_items} (records of other items were written into it)")
        doc = stored.get(judge)
        if doc is not None and all(doc.get(key, 0) == value for key, value in counts.items()):
            found[judge] = doc
            continue
        found[judge] = {"n_items": (meta.get("dataset") or {}).get("n_items", 0), **counts,
                        "convention": meta.get("convention", "strict"), "metrics": {}, "ci": {}, "n": {},
                        "by_convention": {}, "breakdown": {}, "unfinished": True,
                        "tie_rule": TIE_RULE, "interval_rule": INTERVAL_RULE}  # no figure: none to recompute
    return found


def recorded_results(meta: dict) -> dict[str, int]:
    """Per judge, how many items session.json says its results files hold (`progress`, written by every flush after
    the shards it counts): what those files must hold at least, whoever reads them later."""
    found: dict[str, int] = {}
    for judge, counts in (meta.get("progress") or {}).items():
        found[judge] = sum(v for k in ("n_done", "n_failed", "n_not_applicable")
                           if isinstance(v := counts.get(k, 0), int) and not isinstance(v, bool))
    return found


def check_results_held(where: Path | str, meta: dict, held: dict[str, int]) -> None:
    """SessionError naming `where` when the results files hold fewer items of a judge (`held`) than session.json
    recorded them holding: a results file was removed, or put back from an older copy. Read past, a completed
    session showed its stored figures ("scored 20 of 20") beside no verdict, and `qatui table` reused it as 0 of 20.
    `meta` must be read before the results files: a flush writes them first, so they are never older than it."""
    for judge, recorded in recorded_results(meta).items():
        if held.get(judge, 0) < recorded:
            raise SessionError(f"{where}: damaged: session.json records {recorded} finished items of {judge}, the "
                               f"results files hold {held.get(judge, 0)}: a results file is missing or older than the "
                               "session; put it back from a copy of the session")


def check_shards_present(folder: Path, meta: dict) -> None:
    """SessionError naming the first results file missing of those session.json says were written (its `shards`;
    for a session saved before qatui recorded that, at least one when its `progress` counts any result), without
    reading any: `shard_numbers` alone finds a gap, never a missing last (or only) file."""
    from qatui.store.shards import shard_numbers, shard_path

    on_disk = len(shard_numbers(folder))
    recorded = meta.get("shards")
    if not isinstance(recorded, int) or isinstance(recorded, bool):
        recorded = 1 if any(recorded_results(meta).values()) else 0
    if on_disk < recorded:
        raise SessionError(f"{shard_path(folder, on_disk)}: damaged: this results file is missing, though session.json "
                           f"records {recorded} results file{'s' if recorded != 1 else ''}: the results it held are "
                           "gone; put it back from a copy of the session")


def shown_status(folder: Path, status: object) -> object:
    """A session's status in one word everywhere: "running" only while a live process holds its writer lock,
    else "interrupted" (the writer died, however)."""
    from qatui.store.writer_lock import holder

    if status == "running" and holder(folder) is None:
        return "interrupted"
    return status


def live_writer(meta: dict) -> int | None:
    """The pid of the process still writing a `running` session, None when none is (finished, or it died).

    A crash leaves no lock behind: a dead pid means the session was interrupted and may be resumed.
    """
    import os

    pid = meta.get("pid")
    if meta.get("status") != "running" or not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid  # alive, owned by another user
    return pid
