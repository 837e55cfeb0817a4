"""`qatui sessions import`: another tool's scores, rankings or A/B/tie verdicts as a normal session.

The file is read and every row checked against the dataset first (`data.results_file`,
`data.imported`); only then is a session created, through the same store calls a run makes
(`SessionStore.create`, `Session.record_verdict`, `store_summary`), so the table, Compare,
the TUI and the exports read it like any other. Each verdict is built by the engine's own rules:
candidates in the seeded presentation order, a strict ranking with equal scores broken by that
order, the A / B / tie preference on two-candidate items. Should writing fail midway, the new
session folder is removed: an import is whole or absent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qatui import __version__
from qatui.data.imported import ItemResult, match_rows
from qatui.data.presentation import permutation
from qatui.data.results_file import read_results
from qatui.engine.jobs import now_iso, store_summary
from qatui.errors import JudgeError, QatuiError, ResultsFileError, SessionError
from qatui.events import Verdict
from qatui.judges.ranking import pair_preference, strict_ranking, tied_groups
from qatui.judges.registry import JUDGES
from qatui.store.files import unwritable_reason
from qatui.text import plural

if TYPE_CHECKING:
    from qatui.data.model import Dataset, Item
    from qatui.store.session import Session, SessionStore

TIE_DIGITS = 4
"""Imported scores are equal when equal to 4 decimals, qatui's default tie rule."""
JUDGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+@-]{0,63}")
"""What an imported judge may be called: letters, digits and . _ : + @ -, at most 64 characters."""
_FLIP = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True)
class ImportRequest:
    """What to import: the file, how to read it, the judge it becomes and what to do with items it lacks."""

    path: str
    judge: str
    kind: str = "score"
    format: str | None = None
    metric: str | None = None
    partial: bool = False
    name: str | None = None


def check_judge_name(name: str) -> None:
    """Refuse a name qatui's own judges use (the two would be confused) or one that is not a plain word."""
    if not JUDGE_NAME.fullmatch(name):
        raise JudgeError(f"--judge-name {name!r}: use letters, digits and . _ : + @ - (at most 64 characters, "
                         "starting with a letter or digit)")
    if name in JUDGES:
        raise JudgeError(f"--judge-name {name!r} is one of qatui's own judges; name the imported one differently "
                         f"(e.g. ext-{name})")


def import_results(store: SessionStore, dataset: Dataset, request: ImportRequest, seed: int) -> Session:
    """Check the whole file against `dataset`, then write it as a completed session; returns the session.

    Refused (nothing written) on any bad row, and on items without a row unless `request.partial`:
    those are then left not judged and counted in the session's coverage.
    """
    check_judge_name(request.judge)
    store.check_writable()  # a read-only, full or missing sessions folder in one line, as `run` refuses it
    store.check_new_name(request.name)
    results = read_results(request.path, request.kind, request.format, request.metric)
    matched = match_rows(results, dataset)
    if matched.not_judged and not request.partial:
        shown = ", ".join(matched.not_judged[:3]) + (" ..." if len(matched.not_judged) > 3 else "")
        raise ResultsFileError(
            f"{results.path}: {plural(len(matched.not_judged), 'item')} of {len(dataset.items)} in {dataset.name} "
            f"{'has' if len(matched.not_judged) == 1 else 'have'} no row ({shown}); pass --partial to import the "
            "others and leave these not judged")
    source = results.path.name
    verdicts = [(item, result, None if result.failure else _verdict(item, result, request.kind, request.judge,
                                                                     seed, source))
                for item in dataset.items if (result := matched.results.get(item.id)) is not None]
    options: dict[str, Any] = {"imported_from": source, "kind": request.kind, "format": results.format,
                               "tie_digits": TIE_DIGITS}
    if results.metric:
        options["metric"] = results.metric
    meta = _meta(dataset, request, seed, options, rows=len(results.rows), not_judged=matched.not_judged,
                 path=results.path)
    session = store.create(meta, name=request.name)
    try:
        for item, result, verdict in verdicts:
            if verdict is None:
                session.record_failure(item.id, request.judge, result.failure or "", "ImportedFailure", [])
            else:
                session.record_verdict(verdict, [])
        store_summary(session, dataset, "completed")
        session.close()
    except BaseException as e:
        session.close()
        try:
            store.delete(session.id)
            left = "nothing was imported"
        except (QatuiError, OSError):
            left = f"the part written is in session {session.id}: delete it with qatui sessions delete {session.id}"
        if isinstance(e, OSError):  # the disk filled, or the folder became read-only, mid-import
            raise SessionError(f"cannot import into {store.root}: {unwritable_reason(e)}; {left}") from None
        raise
    return store.open(session.id)


def _meta(dataset: Dataset, request: ImportRequest, seed: int, options: dict[str, Any], *, rows: int,
          not_judged: list[str], path: Path) -> dict[str, Any]:
    """The session metadata a run would write, with the judge marked as imported from its file."""
    return {
        "created": now_iso(), "updated": now_iso(), "status": "running", "pid": None,
        "dataset": {"path": dataset.path, "name": dataset.name, "format": dataset.format,
                    "content_hash": dataset.content_hash, "n_items": len(dataset.items), "limit": None},
        "seed": seed, "concurrency": 1, "convention": "strict",
        "judges": {request.judge: options},
        "backbones": [], "models": {}, "qatui_version": __version__,
        "imported": {"judge": request.judge, "source": path.name, "path": str(path), "format": options["format"],
                     "kind": request.kind, "metric": options.get("metric"), "rows": rows,
                     "not_judged": len(not_judged)},
    }


def _verdict(item: Item, result: ItemResult, kind: str, judge: str, seed: int, source: str) -> Verdict:
    """The verdict a judge giving these scores (ranks, verdict) would have produced, by the engine's rules."""
    order = permutation(item, seed)
    pair = item.pair
    details: dict[str, Any] = {"imported": {"source": source, "rows": result.rows, "kind": kind}}
    if result.pair is not None:
        a, b, said = result.pair
        assert pair is not None  # a pairwise row is accepted only on a two-candidate item
        preference = said if (a, b) == pair else _FLIP[said]
        points = {"A": (1.0, 0.0), "B": (0.0, 1.0), "tie": (0.5, 0.5)}[preference]
        scores = dict(zip(pair, points))
        details["imported"]["verdict"] = {"a": a, "b": b, "verdict": said}
    else:
        n = len(item.candidates)
        scores = dict(result.values) if kind == "score" else {c: float(n + 1 - r) for c, r in result.values.items()}
        if kind == "ranking":
            details["imported"]["ranks"] = {c: int(r) for c, r in result.values.items()}
        preference = pair_preference(scores[pair[0]], scores[pair[1]], TIE_DIGITS) if pair else None
    return Verdict(item_id=item.id, judge=judge, scores=scores, ranking=strict_ranking(scores, order, TIE_DIGITS),
                   order=order, pair=pair, preference=preference, tiers=tied_groups(scores, order, TIE_DIGITS),
                   details=details)
