"""Figures with and without the items whose candidates copy a reference (`--without-leaks`).

On an item where a candidate is a copy of the reference, every reference-based judge ranks
the copy first for free, so agreement measured there flatters the judge. `run`, `sessions show`
and `table` measure the judges both ways whenever such an item exists: `--without-leaks`
makes the leak-free figures the ones shown, and says how many items were left out; `--json`
(and the HTML report) carry both sets of figures, so nobody has to rerun to see the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qatui.data.leaks import CopyCheck, not_compared_warning, without_leaks
from qatui.text import have, plural

if TYPE_CHECKING:
    from pathlib import Path

    from qatui.data.model import Dataset
    from qatui.store.session import Session

SHOWN_IDS = 5
"""How many left-out item ids a line names before '…'."""


@dataclass(frozen=True)
class LeakSplit:
    """A session's judges measured on every item and, when some item leaks, on the items that do not.

    `left_out`: ids of the items whose candidates copy a reference (empty: none does, and
    `without_leaks` is None). `chosen`: whether the user asked for the leak-free figures. `check`: the copy check
    itself, which says what it could not compare (`data.leaks.check_copies`); None where no check was made.
    """

    n_items: int
    left_out: list[str]
    all_items: dict[str, dict]
    without_leaks: dict[str, dict] | None
    chosen: bool
    check: CopyCheck | None = None

    @property
    def headline(self) -> dict[str, dict]:
        """The figures shown: leak-free ones when asked for and some item leaks, else every item's."""
        return self.without_leaks if self.chosen and self.without_leaks is not None else self.all_items

    def note(self) -> str | None:
        """One line for the terminal (`leak_note`)."""
        return leak_note(self.left_out, self.n_items, self.chosen,
                         not_compared=self.check is not None and bool(self.check.not_compared))

    def not_compared(self) -> str | None:
        """A warning for the terminal when the copy check could not compare some candidate (`not_compared_warning`)."""
        return None if self.check is None else not_compared_warning(self.check)

    def json(self, judges_json: Any) -> dict[str, Any] | None:
        """The `leaks` member of a `--json` object (`leaks_json`), both figures as `judges_json(summary)` writes each."""
        return leaks_json(self.left_out, self.n_items, self.check, {
            "left_out": self.chosen, "all_items": judges_json(self.all_items),
            "without_leaks": judges_json(self.without_leaks or {})})


def leaks_json(left_out: list[str], n_items: int, check: CopyCheck | None,
               figures: dict[str, Any]) -> dict[str, Any] | None:
    """The `leaks` member of `run`'s, `sessions show`'s and `table`'s `--json`: the items copying a reference with
    `figures` (whether they were left out, every item's figures, those without them), and `items_not_compared` where
    the copy check left some candidate uncompared; None when neither."""
    unchecked = ({"items_not_compared": check.items_not_compared()}
                 if check is not None and check.not_compared else {})
    if not left_out and not unchecked:
        return None
    return {"items_copying_a_reference": left_out, "n_items": n_items, **(figures if left_out else {}), **unchecked}


def shown_ids(ids: list[str]) -> str:
    """The first `SHOWN_IDS` ids, comma-separated, with '…' when there are more."""
    return ", ".join(ids[:SHOWN_IDS]) + (" …" if len(ids) > SHOWN_IDS else "")


def leak_note(left_out: list[str], n_items: int, chosen: bool, not_compared: bool = False) -> str | None:
    """What was left out (`chosen`), or that leaking items exist and how to leave them out; None when silent.

    `not_compared`: the copy check could not compare every candidate (`data.leaks.check_copies`), so "no copy" is
    said of the candidates it compared only."""
    if not left_out:
        if not chosen:
            return None
        if not_compared:
            return ("no candidate the copy check compared copies a reference (some could not be compared): nothing "
                    "to leave out")
        return "no item has a candidate copying a reference: nothing to leave out"
    ids = shown_ids(left_out)
    if chosen:
        return (f"left out {len(left_out)} of {plural(n_items, 'item')} whose candidates copy a reference "
                f"({ids}): the figures are on the other {n_items - len(left_out)}")
    return (f"{plural(len(left_out), 'item')} ({ids}) {have(len(left_out))} a candidate copying a reference; "
            "--without-leaks gives the figures without them")


def split_by_leaks(session: Session, dataset: Dataset, summary: dict[str, dict], chosen: bool) -> LeakSplit:
    """`summary` (the session measured on `dataset`'s items) beside the same on the items without leaks."""
    from qatui.engine.jobs import summarize_session

    if any(doc.get("unfinished") for doc in summary.values()):  # no figures yet (computed when the run ends)
        return no_leak_split(summary, len(dataset.items), chosen=False)
    kept, check = without_leaks(dataset)
    left_out = check.items_copying()
    free = summarize_session(session, kept.items) if left_out else None
    return LeakSplit(n_items=len(dataset.items), left_out=left_out, all_items=summary, without_leaks=free,
                     chosen=chosen, check=check)


def no_leak_split(summary: dict[str, dict], n_items: int, chosen: bool) -> LeakSplit:
    """The split where no item could be checked or none leaks: every item's figures only."""
    return LeakSplit(n_items=n_items, left_out=[], all_items=summary, without_leaks=None, chosen=chosen)


def session_leak_split(session: Session, gold_spec: str, sessions_root: Path, chosen: bool) -> tuple[LeakSplit, str]:
    """`sessions show`: the session measured against the gold `gold_spec` names, with and without leaking items,
    and the gold line.

    Leaks are found on the session's dataset reloaded; when it is gone or changed they cannot be,
    which refuses `chosen` (DatasetError) and otherwise shows every item's figures as stored.
    """
    from qatui.errors import DatasetError
    from qatui.report.gold import session_summary
    from qatui.report.session_view import unchanged_dataset

    summary, gold_line, dataset = session_summary(session, gold_spec, sessions_root)
    if dataset is None:
        found = unchanged_dataset(session)
        dataset = found.of_session(session.meta["dataset"]) if found is not None else None
    if dataset is None:
        if chosen:
            raise DatasetError(f"session {session.id}: its dataset {session.meta['dataset']['path']} is gone or changed, "
                               "so the items whose candidates copy a reference cannot be found (--without-leaks)")
        return no_leak_split(summary, session.meta["dataset"].get("n_items", 0), chosen), gold_line
    return split_by_leaks(session, dataset, summary, chosen), gold_line
