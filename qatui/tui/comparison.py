"""Sessions side by side, as the compare screen draws them: runs lettered A, B, … and each disagreement's pair.

`compare_sessions` names the two judges of a disagreement but not their sessions; `load_comparison`
finds the pair of runs again (the first pair, in the report's order, whose rankings of the item
give the reported tau), so the screen can open both verdicts. Blocking: it reads every session's
results, so screens call it from a thread worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from string import ascii_uppercase
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qatui.store.session import SessionStore


@dataclass
class Run:
    """One (session, judge) of the comparison."""

    letter: str
    session: str
    label: str
    """The session's name, or its id when unnamed."""
    judge: str
    metrics: dict[str, float]
    n_done: int
    n_failed: int


@dataclass
class Disagreement:
    """An item two runs rank most differently, and which two."""

    item_id: str
    tau: float
    a: Run
    b: Run
    rankings: list[str] = field(default_factory=list)


@dataclass
class ChecklistAgreement:
    """CheckEval runs on one checklist: Krippendorff's alpha and Fleiss' kappa over their answers."""

    checklist: str
    runs: list[Run]
    per_dimension: dict[str, dict[str, float | int | None]]
    """Dimension (and "all") -> alpha, kappa, n_units, n_complete."""


@dataclass
class Comparison:
    """What the compare screen shows."""

    dataset: str
    runs: list[Run]
    agreement: list[tuple[Run, Run, dict[str, float], dict[str, int]]]
    disagreements: list[Disagreement]
    checklists: list[ChecklistAgreement] = field(default_factory=list)


def letter(index: int) -> str:
    """A, B, …, Z, AA, AB, …"""
    return ascii_uppercase[index] if index < 26 else letter(index // 26 - 1) + ascii_uppercase[index % 26]


def load_comparison(store: SessionStore, session_ids: list[str]) -> Comparison:
    """Compare sessions (SessionError when their datasets differ, or fewer than two)."""
    from qatui.metrics.agreement import ranking_tau
    from qatui.report.compare import compare_sessions

    sessions = [store.open(sid) for sid in session_ids]
    data: dict[str, Any] = compare_sessions(sessions)
    names = {s.id: (s.meta.get("name") or s.id) for s in sessions}
    runs = [Run(letter(i), r["session"], names[r["session"]], r["judge"], r["metrics"], r["n_done"], r["n_failed"])
            for i, r in enumerate(data["runs"])]
    by_key = {f"{r.session}/{r.judge}": r for r in runs}
    agreement = [(by_key[a["a"]], by_key[a["b"]], a["stats"], a["n"]) for a in data["agreement"]]
    verdicts = {(s.id, judge): s.verdicts(judge) for s in sessions for judge in s.meta["judges"]}
    disagreements = []
    for d in data["disagreements"]:
        for a, b in combinations(runs, 2):
            if [a.judge, b.judge] != d["between"]:
                continue
            va, vb = verdicts[(a.session, a.judge)].get(d["item_id"]), verdicts[(b.session, b.judge)].get(d["item_id"])
            if va is not None and vb is not None and ranking_tau(va, vb) == d["tau"]:
                disagreements.append(Disagreement(d["item_id"], d["tau"], a, b, list(d["rankings"])))
                break
    checklists = [ChecklistAgreement(c["checklist"], [by_key[key] for key in c["runs"]], c["per_dimension"])
                  for c in data["checklist_agreement"]]
    return Comparison(data["dataset"], runs, agreement, disagreements, checklists)
