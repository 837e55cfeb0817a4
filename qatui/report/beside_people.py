"""The human ceiling beside every judge, wherever its figures are shown (`sessions show`, the Session screen, `table`).

Where two or more people labelled the items a judge judged (`qatui annotate`, `labels import`),
the judge's agreement with people means little without theirs with each other: each person
against the majority of the others (leave one out, `metrics.ceiling.human_ceiling`), and the
judge against the very same references on the very same units. With three or more people the
alternative annotator test says plainly whether the judge could replace one of them
(`metrics.ceiling.alt_test`; it declines, saying why, below 30 items per person).
`labels agreement` shows the same figures with every person's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from qatui.data.labels import Label
    from qatui.data.model import Dataset
    from qatui.events import Verdict
    from qatui.metrics.people import Unit
    from qatui.store.session import Session

KEY = "human_ceiling"
"""The member of a judge's summary doc (and `--json` judge, and `table` row) that holds what `beside_people` gives."""


def people_decisions(dataset: Dataset, labels: dict[str, dict[str, Label]]) -> dict[str, dict[Unit, float]]:
    """Each person's decisions on the dataset's items (`metrics.people.gold_decisions` of their labels)."""
    from qatui.metrics.people import gold_decisions

    ids = {item.id for item in dataset.items}
    return {name: {unit: code for item_id, label in mine.items() if item_id in ids
                   for unit, code in gold_decisions(item_id, label.as_gold()).items()}
            for name, mine in labels.items()}


def beside_people(dataset: Dataset, verdicts: dict[str, dict[str, Verdict]], sessions_root: Path,
                  epsilon: float | None = None) -> dict[str, dict[str, Any]]:
    """For each judge (name -> its verdicts): the human ceiling and the judge on the same references; {} below two people.

    Each value: `people` (how many), `ceiling` {kappa, accuracy} (the mean over people, on the units the judge
    decided: a judge not applicable on some items is set beside people on the same units), `kappa`,
    `accuracy` (the judge's, None where it shares no unit with them), and `alt_test` with
    `alt_test_result` (one sentence) where three or more people labelled, else None.
    """
    from qatui.metrics.ceiling import EPSILON, MIN_PEOPLE, alt_test, alt_test_sentence, human_ceiling
    from qatui.metrics.people import verdict_decisions
    from qatui.store.labels import LabelStore

    labels = LabelStore(sessions_root).labels_for(dataset)
    if len(labels) < 2:
        return {}
    people = people_decisions(dataset, labels)
    by_id = {item.id: item for item in dataset.items}
    judged = {judge: {unit: code for item_id, verdict in mine.items() if item_id in by_id
                      for unit, code in verdict_decisions(by_id[item_id], verdict).items()}
              for judge, mine in verdicts.items()}
    found = human_ceiling(people, judged)
    if found is None:
        return {}
    out = {}
    for judge, decisions in judged.items():
        test = alt_test(people, decisions, epsilon=EPSILON if epsilon is None else epsilon) \
            if len(people) >= MIN_PEOPLE else None
        mine = found["judges"][judge]
        out[judge] = {"people": len(people), "ceiling": mine["ceiling"], "split": found["split"],  # on its units
                      "one_class": mine["one_class"], "units": mine["units"], "ceiling_units": mine["ceiling_units"],
                      "kappa": mine["kappa"],
                      "accuracy": mine["accuracy"], "alt_test": test,
                      "alt_test_result": alt_test_sentence(test) if test else None}
    return out


def session_beside_people(session: Session, sessions_root: Path) -> dict[str, dict[str, Any]]:
    """`beside_people` for every judge of a saved session, on its dataset reloaded; {} when fewer than two people
    labelled it, or its dataset is gone or changed (the labels could not be matched with its items)."""
    from qatui.report.session_view import unchanged_dataset
    from qatui.store.labels import LabelStore

    ds = session.meta.get("dataset") or {}
    if len(LabelStore(sessions_root).labels_of(ds.get("content_hash", ""))) < 2:
        return {}  # the usual case, answered without reloading the dataset
    dataset = unchanged_dataset(session)
    if dataset is None:
        return {}
    dataset = dataset.limited(ds.get("limit"))
    return beside_people(dataset, session.every_verdict(),
                         sessions_root)


def or_why_not(measure: Callable[[], dict[str, dict[str, Any]]]) -> tuple[dict[str, dict[str, Any]], str | None]:
    """`measure()` (the human ceiling beside each judge), or {} and a line saying why when a label file is refused
    (`LabelStore.labels_for`): the figures against the dataset's gold stay shown, with the sign that the ones against
    people are missing, never one refused label file keeping a session or a table from being read."""
    from qatui.errors import LabelError

    try:
        return measure(), None
    except LabelError as e:
        return {}, f"human ceiling not shown: {e}"


def with_ceiling(summary: dict[str, dict], beside: dict[str, dict[str, Any]]) -> dict[str, dict]:
    """`summary` with each judge's `beside_people` figures under `KEY` (docs copied, the stored ones untouched)."""
    return {judge: {**doc, KEY: beside[judge]} if judge in beside else doc for judge, doc in summary.items()}


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def ceiling_cell(found: dict[str, Any] | None) -> str:
    """`table`'s cell: the judge's kappa / the ceiling's, ×100, and the alt-test's verdict where it ran; '–' without."""
    if not found:
        return "–"

    def scaled(value: float | None) -> str:
        return "–" if value is None else f"{value * 100:.0f}"

    test = found.get("alt_test") or {}
    verdict = (" pass" if test.get("passed") else " fail") if test.get("ran") else ""
    return f"{scaled(found['kappa'])}/{scaled(found['ceiling']['kappa'])}{verdict}"


def ceiling_short(found: dict[str, Any] | None) -> str:
    """The TUI header's line, within 78 columns: '3 people: κ -0.077 acc 0.633 · ceiling κ -0.074 acc 0.600 ·
    alt-test pass' (the judge could replace one of them; `sessions show` says it in a sentence); where the others'
    majority is one class and no kappa is given, '3 people: acc 0.861 · ceiling acc 0.833 · κ none (one class) ·
    alt-test pass'; '' without two people."""
    if not found:
        return ""
    ceiling, test = found["ceiling"], found.get("alt_test") or {}
    verdict = ("" if not test else " · alt-test not run" if not test.get("ran")
               else " · alt-test pass" if test.get("passed") else " · alt-test fail")
    if found["kappa"] is None and ceiling["kappa"] is None and found.get("one_class"):  # say why, not two dashes
        return (f"{found['people']} people: acc {_figure(found['accuracy'])} · ceiling acc "
                f"{_figure(ceiling['accuracy'])} · κ none (one class){verdict}")
    return (f"{found['people']} people: κ {_figure(found['kappa'])} acc {_figure(found['accuracy'])} · ceiling "
            f"κ {_figure(ceiling['kappa'])} acc {_figure(ceiling['accuracy'])}{verdict}")
