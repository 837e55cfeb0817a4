"""What a report says about one session, read from the store through the views `sessions show` and `qatui table` use.

No HTML here: plain data (numbers, strings, the `item_detail` dicts) that `render` and
`plots` draw. The metrics are the stored summary (as `sessions show` prints it) and the
`qatui table` row (coverage, cost, position and length bias); the per-item figures are the
metrics package's own per-item functions, so nothing is computed a second way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from qatui.data.model import RatingsGold
from qatui.metrics.classes import PREFERENCE_CLASSES
from qatui.paths import tilde
from qatui.report.session_view import (
    coverage_text,
    metric_rows,
    no_metric_reason,
    self_agreement_line,
    session_status,
    unchanged_dataset,
)
from qatui.store.judge_versions import entry_options, shown_version
from qatui.text import have, left_out_caption, plural, thinking_note, spent

if TYPE_CHECKING:
    from pathlib import Path

    from qatui.data.model import Dataset, Item
    from qatui.events import Verdict
    from qatui.store.session import Session

ITEMS_SHOWN = 5
"""Items listed where the judges disagree most with people, by default."""
PREFERENCES = PREFERENCE_CLASSES
"""Rows (people) and columns (judge) of a pairwise confusion matrix (`metrics.classes`)."""


@dataclass
class JudgeContent:
    """One judge of a session: its stored metrics and coverage, and the per-item figures its plots draw."""

    name: str
    coverage: str
    metric_rows: list[tuple[str, str, str, str]]
    no_metric: str
    """Why `metric_rows` is empty, when it is."""
    breakdown: dict[str, dict[str, dict[str, float]]]
    breakdown_n: dict[str, dict[str, dict[str, int]]]
    """The units each of `breakdown`'s figures averaged (`metrics.summary.JudgeMetrics.breakdown_n`)."""
    agreement: dict[str, float] = field(default_factory=dict)
    """Item id -> agreement with people on that item, in [-1, 1] (`metrics.item.item_tau`; ratings: mean Kendall)."""
    undecided: int = 0
    """Items of `agreement` the judge made no decision on (`metrics.item.item_undecided`; a ratings document where it
    scored every candidate alike on a dimension, `pointwise.document_correlations`): their 0 is no measure."""
    confusion: np.ndarray | None = None
    """Counts of (human label, judge preference) over A / tie / B, one count per human label."""
    classes: dict[str, Any] | None = None
    """The judge's `metrics.classes` figures (the confusion matrix with per-class recall and precision)."""
    ratings: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    """Dimension -> (human ratings, judge scores) over every rated candidate."""
    rating_r: dict[str, float] = field(default_factory=dict)
    """Dimension -> the stored sample-level Pearson r shown beside its scatter."""
    leak_free_rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    """`metric_rows` without the items whose candidates copy a reference (empty when no item does)."""
    self_agreement: str = ""
    """The judge against itself over its repeats (`session_view.self_agreement_line`); '' when asked once."""
    left_out: str = ""
    """What 'n of m' in `metric_rows` means, when a figure left items out (`text.left_out_caption`); else ''."""


@dataclass
class SessionContent:
    """Everything the report shows about one session."""

    id: str
    title: str
    settings: list[tuple[str, str]]
    judges: list[JudgeContent]
    table: dict[str, Any] | None
    """The session's judges as `qatui table` rows (None when the dataset cannot be reloaded)."""
    worst: list[dict[str, Any]]
    """`item_detail` dicts of the items judges disagree most with people on, each with its `agreement` by judge."""
    note: str | None = None
    leak_note: str | None = None
    """How many items copy a reference and are left out of each judge's second table (None: no item does)."""
    hidden_note: str | None = None
    """Which texts hide text (tag characters, variation selectors) that the judges read and a reader does not see
    (`data.hidden`); None when none does."""


def session_content(session: Session, items_shown: int = ITEMS_SHOWN, gold: str = "dataset",
                    sessions_root: Path | None = None) -> SessionContent:
    """Read one session for the report: settings, each judge's metrics, per-item figures and the worst items.

    `gold` (`report.gold`) is what every figure measures against; people's labels are read from
    `sessions_root` (default: the session's own folder's parent).
    """
    from qatui.report.gold import session_summary

    meta = session.meta
    summary, gold_line, dataset = session_summary(session, gold, sessions_root or session.path.parent)
    if dataset is None and (dataset := unchanged_dataset(session)) is not None:
        dataset = dataset.of_session(meta["dataset"])
    verdicts = session.every_verdict()
    judges = []
    for name in meta["judges"]:
        doc = summary.get(name)
        judge = JudgeContent(
            name=name,
            coverage=coverage_text(doc) if doc else "not summarised yet (the run has not finished)",
            metric_rows=metric_rows(doc) if doc else [],
            no_metric=no_metric_reason(doc or {}),
            breakdown=(doc or {}).get("breakdown", {}),
            breakdown_n=(doc or {}).get("breakdown_n", {}),
            self_agreement=self_agreement_line((doc or {}).get("self_agreement")),
            left_out=left_out_caption(doc or {}),
        )
        if dataset is not None:
            _per_item(judge, dataset.items, verdicts[name], doc or {})
        judges.append(judge)
    leak_note = hidden_note = None
    if dataset is not None:
        from qatui.data.hidden import hidden_texts, hidden_warning
        from qatui.report.leak_figures import shown_ids, split_by_leaks

        hidden_note = hidden_warning(hidden_texts(dataset.items))
        split = split_by_leaks(session, dataset, summary, chosen=True)
        if split.without_leaks is not None:
            n = len(split.left_out)
            leak_note = (f"{plural(n, 'item')} of {split.n_items} ({shown_ids(split.left_out)}) {have(n)} a candidate "
                         "copying a reference, which reference-based judges rank first for free: each judge's "
                         "second table leaves them out")
            for judge in judges:
                if free := split.without_leaks.get(judge.name):
                    judge.leak_free_rows = metric_rows(free)
        if warning := split.not_compared():
            leak_note = f"{leak_note}; {warning}" if leak_note else warning
    note = None
    if dataset is None:
        note = (f"the dataset file {tilde(meta['dataset']['path'])} cannot be reloaded unchanged, so the plots and the "
                "items are left out; the metrics below are the ones stored with the session")
    return SessionContent(
        id=session.id,
        title=meta.get("name") or session.id,
        settings=[*settings(meta, verdicts), ("gold", gold_line.removeprefix("gold: "))],
        judges=judges,
        table=None if dataset is None else session_table(session, dataset, verdicts),
        worst=[] if dataset is None else worst_items(session, dataset, judges, items_shown),
        note=note,
        leak_note=leak_note,
        hidden_note=hidden_note,
    )


def settings(meta: dict, verdicts: dict[str, dict[str, Verdict]]) -> list[tuple[str, str]]:
    """The run's settings as (name, value) rows: dataset, judges with options, models used, convention, seed, limit.

    Only named fields of the metadata are shown (never the whole of it): the store keeps no
    key, and the report does not rely on that alone.
    """
    ds = meta["dataset"]
    models = meta.get("models") or {}
    used = {kind: sorted({str(v.details[kind]) for per_item in verdicts.values() for v in per_item.values()
                          if v.details.get(kind)}) for kind in ("nli", "embedder")}
    rows = [
        ("session", meta["id"] + (f" ({meta['name']})" if meta.get("name") and meta["name"] != meta["id"] else "")),
        ("status", session_status(meta)),
        ("dataset", f"{ds['name']} ({ds['format']}), {tilde(ds['path'])}"),  # a shared report names no home folder
        ("dataset content", f"sha256 {ds['content_hash'][:16]}…"),
        ("items", f"{ds['n_items']}" + (f" (--limit {ds['limit']})" if ds.get("limit") else " (no limit)")),
        ("judges", "; ".join(f"{name} {_options(entry_options(entry))}" for name, entry in meta["judges"].items())),
        ("judge versions", "; ".join(f"{name} {shown_version(entry)}" for name, entry in meta["judges"].items()
                                     if not entry.get("imported_from"))),
        ("backbone", ", ".join(meta.get("backbones") or []) or "none (no judge of this run calls one)"),
        ("NLI model", ", ".join(used["nli"]) or "not used"),
        ("embedder", ", ".join(used["embedder"]) or "not used"),
        ("LLM cache", "on" if models.get("cache", True) else "off"),
        ("convention", meta.get("convention", "strict")),
        ("seed", str(meta.get("seed", ""))),
        ("created", str(meta.get("created", ""))),
        ("qatui", str(meta.get("qatui_version", ""))),
    ]
    if llm := meta.get("llm"):
        rows.append(("LLM usage", f"{llm['calls']} calls ({llm['cached']} cached), "
                                  f"{llm['prompt_tokens']}+{llm['completion_tokens']} tokens"
                                  f"{thinking_note(llm.get('reasoning_tokens', 0))}, {spent(llm['cost_usd'], int(llm.get('unpriced_calls') or 0))}"))
    return rows


def _options(options: dict | None) -> str:
    """A judge's options as 'key=value, …' in parentheses, or nothing."""
    shown = ", ".join(f"{k}={v}" for k, v in (options or {}).items() if v is not None)
    return f"({shown})" if shown else ""


def _per_item(judge: JudgeContent, items: list[Item], verdicts: dict[str, Verdict], doc: dict) -> None:
    """Fill the judge's per-item agreement, pairwise confusion counts and (human, judge) rating pairs."""
    from qatui.metrics.item import item_tau, item_undecided
    from qatui.metrics.classes import preference_classes
    from qatui.metrics.pointwise import document_correlations, rating_pairs

    for item in items:
        verdict = verdicts.get(item.id)
        if verdict is None or item.gold is None:
            continue
        if isinstance(item.gold, RatingsGold):
            per_dim = [document_correlations(item.gold, verdict, dim) for dim in item.gold.dimensions]
            if found := [d["kendall"] for d in per_dim if d.get("kendall") is not None]:
                judge.agreement[item.id] = float(np.mean(found))
                judge.undecided += any(d.get("no_decision") for d in per_dim)  # a 0 in its mean that is no measure
            for dim in item.gold.dimensions:
                human, score = rating_pairs(item.gold, verdict, dim)
                pooled = judge.ratings.setdefault(dim, ([], []))
                pooled[0].extend(human)
                pooled[1].extend(score)
            continue
        if (tau := item_tau(item, verdict)) is not None:
            judge.agreement[item.id] = tau
            judge.undecided += item_undecided(item, verdict)
    scored = [(item, verdicts[item.id]) for item in items if item.id in verdicts]
    if classes := doc.get("classes") or preference_classes(scored, ci=False):  # a summary stored before it: counts
        judge.classes = classes
        judge.confusion = np.asarray(classes["confusion"], dtype=int)
    metrics = doc.get("metrics", {})
    for dim in judge.ratings:
        r = metrics.get(f"pearson_sample/{dim}", metrics.get("pearson_sample") if len(judge.ratings) == 1 else None)
        if r is not None:
            judge.rating_r[dim] = r


def session_table(session: Session, dataset: Dataset, verdicts: dict[str, dict[str, Verdict]]) -> dict[str, Any]:
    """The session's judges as a `qatui table` (rows from `report.table.table_row`, Δ against the first judge)."""
    from qatui.report.table import KEYS, add_baseline_deltas, table_row

    meta = session.meta
    convention, seed = meta.get("convention", "strict"), meta.get("seed", 0)
    rows = []
    for judge in meta["judges"]:
        row = table_row(session, judge, dataset, convention=convention, seed=seed, reused=True,
                        verdicts=verdicts[judge])
        row["label"] = judge  # one session, one backbone (in the settings); a lexical judge never used it
        rows.append(row)
    kind = dataset.gold_kind
    compared = kind in ("ranking", "pairwise") and len(rows) > 1
    if compared:
        add_baseline_deltas(rows, [verdicts[judge] for judge in meta["judges"]], dataset, 0, KEYS[kind][0],
                            convention=convention, seed=seed)
    return {"dataset": dataset.name, "items": len(dataset.items), "gold": kind, "convention": convention,
            "baseline": rows[0]["label"] if compared else None, "rows": rows}


def worst_items(session: Session, dataset: Dataset, judges: list[JudgeContent], shown: int) -> list[dict[str, Any]]:
    """The `shown` items whose worst judge agrees least with people (agreement below 1), worst first."""
    from qatui.report.item_view import stored_item
    from qatui.text import natural_key

    lowest: dict[str, float] = {}
    for judge in judges:
        for item_id, value in judge.agreement.items():
            lowest[item_id] = min(value, lowest.get(item_id, value))
    ranked = sorted((item_id for item_id, value in lowest.items() if value < 1.0),
                    key=lambda item_id: (lowest[item_id], natural_key(item_id)))[:shown]
    if not ranked:
        return []
    results = session.results()
    by_id = {item.id: item for item in dataset.items}
    worst = []
    for item_id in ranked:
        detail = stored_item(session.id, item_id, by_id.get(item_id), results)
        detail["agreement"] = {j.name: j.agreement[item_id] for j in judges if item_id in j.agreement}
        worst.append(detail)
    return worst
