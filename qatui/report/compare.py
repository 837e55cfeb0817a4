"""Comparing sessions run on the same dataset: metrics with deltas, agreement, disagreements."""

from __future__ import annotations

from itertools import combinations
from string import ascii_uppercase
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from qatui.errors import LabelError, SessionError
from qatui.report.session_view import METRIC_ORDER, fmt, unchanged_dataset
from qatui.report.versions import definition_diff, diff_text, different_versions, version_text
from qatui.store.judge_versions import entry_version
from qatui.text import escaped, no_decision_note, plain, plural
from qatui.ties import tiers_text

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from qatui.data.model import Dataset
    from qatui.store.session import Session

TOP_DISAGREEMENTS = 10
UNDECIDED_AGAINST_DECIDED = 0.0
"""Where an item in which one run tied every response and the other did not sorts among the disagreements: tau is
undefined there (`metrics.agreement.ranking_tau`), yet they disagree, as much as a tau of 0 (between runs that order
the responses unrelatedly) says, half way to a reversal. Listed with no tau ("–")."""


def agreement_note(entry: dict[str, Any]) -> str:
    """What an agreement entry of `compare_sessions` left out or counted 0, in words, else '': 'kendall and top1:
    1/5 no decision' (items where one run tied every response and the other did not), '4 items where neither run
    told any response apart, left out of kendall and top1'."""
    said = [f"kendall and top1: {note}"] if (note := no_decision_note(entry, "kendall")) else []  # one count for both
    if neither := entry.get("neither_decided"):
        said.append(f"{plural(neither, 'item')} where neither run told any response apart, left out of kendall "
                    "and top1")
    return ", ".join(said)


def letter(index: int) -> str:
    """A, B, …, Z, AA, AB, …: how a comparison names its runs, in the CLI and the TUI alike."""
    return ascii_uppercase[index] if index < 26 else letter(index // 26 - 1) + ascii_uppercase[index % 26]


def compare_sessions(sessions: list[Session], gold: str = "dataset", sessions_root: Path | None = None) -> dict[str, Any]:
    """Every (session, judge) run side by side, lettered A, B, …; refused unless all share one dataset content.

    When the runs judged different items (one run limited to 3 items, another to 100), every
    figure is computed on the items all of them judged, and `common_items` / `note` say so.
    `gold` (`report.gold`) is what the metrics and table rows measure against; people's
    labels are read from `sessions_root`.
    """
    from qatui.ties import summary_is_current
    from qatui.metrics.agreement import judge_agreement, one_undecided, ranking_tau

    if len(sessions) < 2:
        raise SessionError("compare needs at least two sessions")
    if len({s.id for s in sessions}) < len(sessions):
        raise SessionError("a session is named twice: compare needs two different sessions")
    hashes = {s.meta["dataset"]["content_hash"] for s in sessions}
    if len(hashes) > 1:
        named = ", ".join(f"{s.id} ({s.meta['dataset']['name']})" for s in sessions)
        raise SessionError(f"these sessions were run on different datasets: {named}")
    runs = []
    for session in sessions:
        summary = session.summary()
        every = session.every_verdict()
        for judge in session.meta["judges"]:
            doc = summary.get(judge, {})
            runs.append({
                "letter": letter(len(runs)),
                "session": session.id,
                "convention": session.meta.get("convention", "strict"),
                "label": session.meta.get("name") or session.id,
                "judge": judge,
                "version": entry_version(session.meta["judges"][judge]),
                "metrics": doc.get("metrics", {}),
                "n": doc.get("n", {}),
                "no_decision": doc.get("no_decision", {}),
                **({"stale": True} if doc and not summary_is_current({judge: doc}) else {}),
                "n_done": doc.get("n_done", 0),
                "n_failed": doc.get("n_failed", 0),
                "verdicts": every[judge],
            })
    judged = [set(r["verdicts"]) for r in runs]
    common = set.intersection(*judged)
    dataset = unchanged_dataset(sessions[0])  # read once: the common metrics and the table rows use it
    note, gold_line = None, "gold: the dataset's gold"
    if gold != "dataset":
        from qatui.report.gold import with_gold

        if dataset is None:
            raise LabelError(f"{sessions[0].meta['dataset']['path']} is gone or changed, so its items cannot be "
                             "matched with people's labels")
        dataset, gold_line = with_gold(dataset, gold, sessions_root or sessions[0].path.parent)
    convention = runs[0]["convention"]
    mixed = len({r["convention"] for r in runs}) > 1
    if any(items != common for items in judged):
        note = _restrict_to_common(dataset, runs, common, convention)
    elif gold != "dataset" or mixed or (dataset is not None and any(r.get("stale") for r in runs)):
        _remeasure(dataset, runs, common, convention)  # another gold, one convention for all, or figures stored
        # before ties counted as ties
    if mixed:  # each run's stored figures are under its own convention: a difference would be the convention's
        ran = ", ".join(f"{r['letter']} {r['convention']}" for r in runs)
        said = (f"the runs were measured under different conventions ({ran}): every figure here is under "
                f"{convention}, run A's")
        if dataset is None:
            for run in runs:
                run["metrics"] = {}
            said += "; the metrics are left out: the dataset file cannot be reloaded to measure them so"
        note = f"{note}; {said}" if note else said
    agreement = []
    worst: dict[str, dict[str, Any]] = {}
    for a, b in combinations(runs, 2):
        stats = judge_agreement(a["verdicts"], b["verdicts"])
        agreement.append({"a": f"{a['session']}/{a['judge']}", "b": f"{b['session']}/{b['judge']}",
                          "pair": [a["letter"], b["letter"]], "stats": stats.metrics, "n": stats.n,
                          "no_decision": stats.no_decision, "neither_decided": stats.neither_decided})
        for item_id, va in a["verdicts"].items():
            if (vb := b["verdicts"].get(item_id)) is None:
                continue
            tau = ranking_tau(va, vb)
            severity = tau if tau is not None else UNDECIDED_AGAINST_DECIDED if one_undecided(va, vb) else None
            if severity is not None and (item_id not in worst or severity < worst[item_id]["severity"]):
                worst[item_id] = {"item_id": item_id, "tau": tau, "severity": severity,
                                  "pair": [a["letter"], b["letter"]],
                                  "rankings": [tiers_text(va.tiers), tiers_text(vb.tiers)],
                                  "between": [a["judge"], b["judge"]]}
    disagreements = sorted(worst.values(), key=lambda d: d["severity"])[:TOP_DISAGREEMENTS]
    return {
        "dataset": sessions[0].meta["dataset"]["name"],
        "gold": gold_line,
        "common_items": len(common),
        "note": note,
        "runs": [{k: v for k, v in r.items() if k != "verdicts"} for r in runs],
        "versions": different_versions({**r, "name": r["letter"]} for r in runs),
        "diffs": version_diffs(sessions),
        "agreement": agreement,
        "disagreements": [{k: v for k, v in d.items() if k != "severity"}
                          for d in disagreements if d["severity"] < 1.0],
        "checklist_agreement": _checklist_agreement(sessions, runs),
        "table": _table(sessions, runs, common, dataset, convention),
    }


def fmt_tau(tau: float | None) -> str:
    """A disagreement's tau, '+0.333', or '–' where one run made no decision (tau undefined)."""
    return "–" if tau is None else f"{tau:+.3f}"


def version_diffs(sessions: list[Session]) -> list[dict[str, Any]]:
    """Each later session against the first: the judges both ran in different versions (`changed`, with the diff of
    their definitions: `report.versions.definition_diff`) and the whole diff as text ("same version" where equal)."""
    first = sessions[0]
    out = []
    for other in sessions[1:]:
        names = (first.id, other.id)
        diffs = definition_diff(first.meta["judges"], other.meta["judges"], names)
        out.append({"sessions": list(names), "changed": [d for d in diffs if not d["same"] and all(d["versions"])],
                    "text": diff_text(diffs, names)})
    return out


def _table(sessions: list[Session], runs: list[dict[str, Any]], common: set[str],
           dataset: Dataset | None, convention: str) -> dict[str, Any] | None:
    """The runs as `qatui table` rows (on the common items, every one under `convention`, run A's), each compared
    with run A; None when the dataset is gone."""
    from qatui.report.table import KEYS, add_baseline_deltas, table_row

    if dataset is None:
        return None
    dataset = dataset.subset([item for item in dataset.items if item.id in common])
    by_id = {session.id: session for session in sessions}
    rows = []
    for run in runs:
        session = by_id[run["session"]]
        row = table_row(session, run["judge"], dataset, convention=convention,
                        seed=session.meta.get("seed", 0), reused=True, verdicts=run["verdicts"])
        row["label"] = f"{run['letter']} {run['judge']}"
        rows.append(row)
    kind = dataset.gold_kind
    if kind in ("ranking", "pairwise"):
        add_baseline_deltas(rows, [run["verdicts"] for run in runs], dataset, 0, KEYS[kind][0],
                            convention=convention, seed=sessions[0].meta.get("seed", 0))
    return {"dataset": dataset.name, "items": len(dataset.items), "gold": kind, "convention": convention,
            "baseline": rows[0]["label"] if rows and kind in ("ranking", "pairwise") else None, "rows": rows}


def _restrict_to_common(dataset: Dataset | None, runs: list[dict[str, Any]], common: set[str], convention: str) -> str:
    """Keep only the common items' verdicts and recompute each run's metrics on them; the note says so."""
    sizes = ", ".join(f"{r['letter']} {len(r['verdicts'])}" for r in runs)
    for run in runs:
        run["verdicts"] = {k: v for k, v in run["verdicts"].items() if k in common}
    if dataset is None:
        for run in runs:
            run["metrics"] = {}
        return (f"the runs judged different items ({sizes}); agreement is on the {len(common)} items all judged, "
                "and the metrics are left out: the dataset file cannot be reloaded to recompute them")
    _remeasure(dataset, runs, common, convention)
    return f"the runs judged different items ({sizes}): every figure is on the {len(common)} items all of them judged"


def _remeasure(dataset: Dataset | None, runs: list[dict[str, Any]], common: set[str], convention: str) -> None:
    """Each run's metrics computed again, on the common items, against `dataset`'s gold, under `convention` (the
    same for every run: run A's; nothing when the dataset is gone)."""
    from qatui.metrics import summarize

    if dataset is None:
        return
    items = [item for item in dataset.items if item.id in common]
    for run in runs:
        scored = summarize(items, run["verdicts"], ci=False, convention=convention)
        run.update(metrics=scored.metrics, n=scored.n, no_decision=scored.no_decision)
        run.pop("stale", None)


def _checklist_agreement(sessions: list[Session], runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """CheckEval runs grouped by checklist: with two or more in a group, alpha and kappa over their answers."""
    from qatui.metrics.agreement import checklist_agreement, checklist_answers

    meta = {s.id: s.meta for s in sessions}
    groups: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        if run["judge"] != "checkeval":
            continue
        options = meta[run["session"]]["judges"].get("checkeval") or {}
        groups.setdefault(str(options.get("checklist", "qa")), []).append(run)
    out = []
    for checklist, members in groups.items():
        if len(members) < 2:
            continue
        answers = [checklist_answers(r["verdicts"]) for r in members]
        out.append({
            "checklist": checklist,
            "runs": [f"{r['session']}/{r['judge']}" for r in members],
            "backbones": [(meta[r["session"]].get("models") or {}).get("backbone") for r in members],
            "per_dimension": checklist_agreement(answers),
        })
    return out


def print_comparison(console: Console, data: dict[str, Any]) -> None:
    """The `sessions compare` view: runs lettered A, B, … with deltas against A, agreement per pair, disagreements."""
    runs = data["runs"]
    metrics = [k for k in METRIC_ORDER if any(k in r["metrics"] for r in runs)]
    metrics += sorted({k for r in runs for k in r["metrics"]} - set(metrics))
    if data.get("note"):  # first, above every figure: what the figures are on changes how to read them all
        console.print(f"[bold yellow]note:[/] {escaped(data['note'])}")
    console.print(f"[bold]dataset[/] {escaped(data['dataset'])}  [dim]{escaped(data.get('gold') or '')}[/]")
    legend = Table("run", "session", "judge", "version", "done", "failed", box=None, padding=(0, 1, 0, 0))
    for r in runs:
        session = r["session"] if r["label"] == r["session"] else f"{r['label']} ({r['session']})"
        legend.add_row(f"[bold]{r['letter']}[/]", escaped(session), escaped(r["judge"]),
                       escaped(version_text(r.get("version"))), str(r["n_done"]), str(r["n_failed"]))
    console.print(legend)
    if data.get("versions"):  # under the runs it names: which figures are not of one judge
        for line in data["versions"]:
            console.print(Text.assemble(("versions: ", "bold yellow"), plain(line)), soft_wrap=True)
        ids = " ".join(dict.fromkeys(r["session"] for r in runs))
        console.print(Text(plain(f"their figures are not of one judge; what changed: qatui sessions diff {ids}")),
                      style="yellow", soft_wrap=True)
    if metrics:  # a row a metric, a column a run: a metric's name is never cut, whatever the width and the runs
        table = Table("metric", *(f"[bold]{r['letter']}[/]" for r in runs), box=None, padding=(0, 1, 0, 0),
                      title="metrics (delta against A)", title_justify="left")
        table.columns[0].no_wrap = True
        for column in table.columns[1:]:
            column.overflow = "fold"  # a narrow terminal folds a cell onto two lines, never cuts its figure
        base = runs[0]["metrics"]
        for k in metrics:
            cells = []
            for i, r in enumerate(runs):
                v = r["metrics"].get(k)
                first = k == metrics[0]  # the question-level keys share their units: one note a run
                cell = fmt(v) + (f" · {note}" if first and v is not None and (note := no_decision_note(r, k)) else "")
                if i and v is not None and k in base:
                    delta = v - base[k]
                    cell += f" [{'green' if delta > 0 else 'red' if delta < 0 else 'dim'}]({delta:+.3f})[/]"
                cells.append(cell)
            table.add_row(escaped(k), *cells)
        console.print(table)
    for a in data["agreement"]:
        shown = ", ".join(f"{k} {v:.3f}" for k, v in a["stats"].items() if isinstance(v, float))
        if note := agreement_note(a):
            shown = f"{shown} · {note}" if shown else note
        items = f" [dim]({plural(n, 'item')})[/]" if (n := max(a["n"].values(), default=0)) else ""
        console.print(f"[bold]agreement {a['pair'][0]}–{a['pair'][1]}[/]: "
                      f"{escaped(shown) or 'nothing in common'}{items}")
    for group in data.get("checklist_agreement", []):
        letters = {f"{r['session']}/{r['judge']}": r["letter"] for r in runs}
        members = ", ".join(f"{letters.get(r, r)} ({b})" for r, b in zip(group["runs"], group["backbones"], strict=True))
        table = Table("dimension", "Krippendorff alpha", "Fleiss kappa", "units", "all answered", box=None,
                      title=f"checklist agreement ({escaped(group['checklist'])}): {escaped(members)}", title_justify="left")
        for dim, stats in group["per_dimension"].items():
            table.add_row(escaped(dim), fmt(stats["alpha"]), fmt(stats["kappa"]),
                          str(stats["n_units"]), str(stats["n_complete"]))
        console.print(table)
    if data.get("table"):
        from qatui.report.table import print_terminal

        console.print("[bold]as `qatui table`[/] (×100, 95% CIs)")
        print_terminal(console, data["table"])
    if data["disagreements"]:
        table = Table("item", "pair", "tau", "rankings (first run | second run)", box=None, padding=(0, 1, 0, 0),
                      title="items where two runs disagree most", title_justify="left")
        for d in data["disagreements"]:
            table.add_row(escaped(d["item_id"]), f"{d['pair'][0]}–{d['pair'][1]}", fmt_tau(d["tau"]),
                          escaped(" | ".join(d["rankings"])))
        console.print(table)
