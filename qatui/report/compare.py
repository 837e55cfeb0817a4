"""Comparing sessions run on the same dataset: metrics with deltas, agreement, disagreements."""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Any

from qatui.errors import SessionError

if TYPE_CHECKING:
    from qatui.store.session import Session

TOP_DISAGREEMENTS = 10


def compare_sessions(sessions: list[Session]) -> dict[str, Any]:
    """Every (session, judge) run side by side; refused unless all share one dataset content."""
    from qatui.metrics.agreement import judge_agreement, ranking_tau

    if len(sessions) < 2:
        raise SessionError("compare needs at least two sessions")
    hashes = {s.meta["dataset"]["content_hash"] for s in sessions}
    if len(hashes) > 1:
        named = ", ".join(f"{s.id} ({s.meta['dataset']['name']})" for s in sessions)
        raise SessionError(f"these sessions were run on different datasets: {named}")
    runs = []
    for session in sessions:
        summary = session.summary()
        for judge in session.meta["judges"]:
            doc = summary.get(judge, {})
            runs.append({
                "session": session.id,
                "judge": judge,
                "metrics": doc.get("metrics", {}),
                "n_done": doc.get("n_done", 0),
                "n_failed": doc.get("n_failed", 0),
                "verdicts": session.verdicts(judge),
            })
    agreement = []
    worst: dict[str, dict[str, Any]] = {}
    for a, b in combinations(runs, 2):
        stats = judge_agreement(a["verdicts"], b["verdicts"])
        agreement.append({"a": f"{a['session']}/{a['judge']}", "b": f"{b['session']}/{b['judge']}",
                          "stats": stats.metrics, "n": stats.n})
        for item_id, va in a["verdicts"].items():
            vb = b["verdicts"].get(item_id)
            tau = ranking_tau(va, vb) if vb is not None else None
            if tau is not None and (item_id not in worst or tau < worst[item_id]["tau"]):
                worst[item_id] = {"item_id": item_id, "tau": tau,
                                  "rankings": [" > ".join(va.ranking), " > ".join(vb.ranking)],
                                  "between": [a["judge"], b["judge"]]}
    disagreements = sorted(worst.values(), key=lambda d: d["tau"])[:TOP_DISAGREEMENTS]
    return {
        "dataset": sessions[0].meta["dataset"]["name"],
        "runs": [{k: v for k, v in r.items() if k != "verdicts"} for r in runs],
        "agreement": agreement,
        "disagreements": [d for d in disagreements if d["tau"] < 1.0],
        "checklist_agreement": _checklist_agreement(sessions, runs),
    }


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
