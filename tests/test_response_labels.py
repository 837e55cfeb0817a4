"""The label <-> candidate rule ("Response k" is `order[k-1]`) has one home, `qatui.events.labels`, used everywhere."""

from __future__ import annotations

import re
from pathlib import Path

from qatui.data.model import Item
from qatui.data.presentation import present
from qatui.events import Verdict
from qatui.events.labels import candidates_by_label, label_number, label_of, response_labels
from qatui.tui.state import TaskView

ROOT = Path(__file__).resolve().parent.parent
# Writing the label, or reading its number, by hand: what only qatui/events/labels.py may do.
BY_HAND = re.compile(r"""f["']Response \{|["']Response ["']\s*\+|removeprefix\(["']Response |Response \{i \+ 1\}""")


def _item() -> Item:
    return Item(id="q1", question="Why?", candidates={"a": "one", "b": "two", "c": "three"})


def test_the_judges_view_and_a_verdict_read_the_labels_the_same_way() -> None:
    view, order = present(_item(), seed=7)
    assert view.labels == response_labels(order)
    assert {r.label: r.text for r in view.responses} == {label: _item().candidates[cid]
                                                         for label, cid in candidates_by_label(order).items()}
    verdict = Verdict(item_id="q1", judge="j", scores=dict.fromkeys(order, 1.0), ranking=list(order), order=order)
    assert verdict.labels == view.labels
    assert [verdict.label_of(cid) for cid in order] == view.labels
    assert verdict.by_label == dict(zip(view.labels, order, strict=True))
    assert verdict.label_of("not-a-candidate") is None and label_of(order, "zzz") is None
    assert label_number("Response 12") == "12" and label_number("tie") is None


def test_a_label_outside_the_order_names_no_candidate_in_the_tui() -> None:
    """"Response 0" once read as order[-1] (the last candidate), "Response 9" raised nothing but ""; both are none."""
    task = TaskView(item_id="q1", judge="j", item=_item(), seed=7)
    order = task.order
    assert [task.candidate(label) for label in response_labels(order)] == order
    assert task.candidate("Response 0") == ""
    assert task.candidate("Response 9") == ""
    assert task.candidate("Candidate 1") == ""
    assert task.label(order[1]) == "Response 2" and task.label("other") == "other"


def test_no_module_but_the_home_writes_or_parses_a_response_label_by_hand() -> None:
    home = ROOT / "qatui" / "events" / "labels.py"
    offenders = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "qatui").rglob("*.py")) if path != home
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if BY_HAND.search(line)]
    assert not offenders, f"the label rule written again (use qatui.events.labels): {offenders}"
