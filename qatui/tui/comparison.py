"""Sessions side by side, as the compare screen draws them: `compare_sessions`' runs as objects.

The report letters the runs A, B, … and names each disagreement's pair by letter; this module
turns its JSON-shaped answer into dataclasses the screen can hold. Blocking: it reads every
session's results, so screens call it from a thread worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    version: str | None = None
    """The judge's version in that session (None: stored before versions were kept)."""
    no_decision: str = ""
    """'15/15': of its figures' units, those the judge made no decision on (they count as agreeing with no one, so
    its 0 is no measure), named by figure where more than one kind has some ('tau 2/6 · acc 3/8'); '' when none
    ('old tie rule' for a summary stored before they were counted)."""


@dataclass
class PairAgreement:
    """How two runs agree (`metrics.agreement.judge_agreement`): figures by name and the items each counts."""

    a: Run
    b: Run
    stats: dict[str, float]
    n: dict[str, int]
    no_decision: str = ""
    """'1/5': of the items tau and top-1 count, those where one run tied every response and the other did not
    (each counted 0); '' when none."""
    neither_decided: int = 0
    """Items left out of tau and top-1 because neither run told any response apart."""


@dataclass
class Disagreement:
    """An item two runs rank most differently, and which two."""

    item_id: str
    tau: float | None
    """None where one run tied every response and the other did not (`metrics.agreement.one_undecided`)."""
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
    agreement: list[PairAgreement]
    disagreements: list[Disagreement]
    checklists: list[ChecklistAgreement] = field(default_factory=list)
    common_items: int = 0
    table: dict[str, Any] | None = None
    """The runs as `qatui table` rows (`report.table`), each against run A; None when the dataset is gone."""
    note: str | None = None
    """Set when the runs judged different items: every figure is on the common ones."""
    gold: str = "gold: the dataset's gold"
    """What the metrics measure against, in words (`report.gold`)."""
    annotators: list[str] = field(default_factory=list)
    """Who has labelled this dataset (the golds `g` offers)."""
    versions: list[str] = field(default_factory=list)
    """One line per judge that ran in different versions, naming each run's (`report.versions`)."""
    diff: str = ""
    """The unified diff of the definitions of those judges, each later session against the first ("" when none)."""


def _no_decision(run: dict[str, Any]) -> str:
    """`Run.no_decision` of one run of `report.compare.compare_sessions`: of each kind of headline figure
    (`format.undecided_cell`)."""
    from qatui.tui.format import SHORT_METRICS, undecided_cell

    return undecided_cell(run, [key for key in SHORT_METRICS if key in run["metrics"]])


def load_comparison(store: SessionStore, session_ids: list[str], gold: str = "dataset") -> Comparison:
    """Compare sessions against `gold` (SessionError when their datasets differ, or fewer than two)."""
    from qatui.report.compare import compare_sessions
    from qatui.store.labels import LabelStore
    from qatui.text import no_decision_note

    sessions = [store.open(sid) for sid in session_ids]
    data: dict[str, Any] = compare_sessions(sessions, gold, store.root)
    annotators = list(LabelStore(store.root).labels_of(sessions[0].meta["dataset"]["content_hash"]))
    runs = [Run(r["letter"], r["session"], r["label"], r["judge"], r["metrics"], r["n_done"], r["n_failed"],
                r.get("version"), _no_decision(r)) for r in data["runs"]]
    by_letter = {r.letter: r for r in runs}
    by_key = {f"{r.session}/{r.judge}": r for r in runs}
    agreement = [PairAgreement(by_letter[a["pair"][0]], by_letter[a["pair"][1]], a["stats"], a["n"],
                               no_decision_note(a, "kendall", short=True), a.get("neither_decided", 0))
                 for a in data["agreement"]]
    disagreements = [Disagreement(d["item_id"], d["tau"], by_letter[d["pair"][0]], by_letter[d["pair"][1]],
                                  list(d["rankings"])) for d in data["disagreements"]]
    checklists = [ChecklistAgreement(c["checklist"], [by_key[key] for key in c["runs"]], c["per_dimension"])
                  for c in data["checklist_agreement"]]
    return Comparison(data["dataset"], runs, agreement, disagreements, checklists,
                      common_items=data["common_items"], table=data.get("table"), note=data["note"],
                      gold=data["gold"], annotators=annotators, versions=data.get("versions", []),
                      diff="\n".join(d["text"] for d in data.get("diffs", [])))
