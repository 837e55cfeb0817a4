"""Which class a judge gets wrong: Cohen's kappa, the confusion matrix, per-class precision and recall.

Accuracy alone hides it: a judge that never says tie can score well on a dataset where people
rarely do. For a verdict that is a choice among a few classes, against people's labels:

- `kappa`: Cohen's kappa, the classes nominal (unweighted): agreement beyond what each side's
  own class shares would give by chance.
- `kappa_linear`: Cohen's kappa with linear weights, for ordered classes. A pairwise preference
  is ordered A < tie < B (A better, equal, B better), so a tie where people said A is half the
  miss that B is. Linear rather than quadratic: with three classes quadratic weights would count
  an A / B swap four times a tie miss, and a judge's tie is a real answer, not a near miss.
- the confusion matrix: people's label (rows) by the judge's (columns), one count per human label.
- per class: precision (of the judge's calls of that class, the share people made too) and
  recall (of people's labels of that class, the share the judge made); for yes / no, TPR is the
  recall of yes and TNR the recall of no.

A judge's tie is its own class 'tie', never counted as agreeing with an A or a B. The values are
scikit-learn's (`cohen_kappa_score`, `confusion_matrix`, `precision_recall_fscore_support`).
CIs are 95% percentile bootstraps over items, each item's labels together, all from one set of
resamples of the per-item confusion counts (`bootstrap.resampled_sums`): precision and recall as
pooled ratios, kappa by `kappa_from_counts`, the formula scikit-learn uses (checked equal in the
tests), because a scikit-learn call per resample would cost about a second per judge. A resample where people
gave one class has no kappa (it is 0 there whatever the judge said), so it is left out as undefined, and past 5%
of them there is no CI (2 B labels of 12 leave 11% of resamples without one). A precision or recall of one trial
per item (one label each) is binomial and gets Clopper and Pearson's exact interval at every count
(`bootstrap.ratio_ci`): the bootstrap read 9 of 10 as [0.667, 1.000], tighter than 9 of 9's exact [0.664, 1].
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from qatui.data.model import PairwiseGold
from qatui.metrics.bootstrap import defined_interval, ratio_ci, resampled_sums
from qatui.metrics.pairwise import judge_preference

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.events import Verdict

PREFERENCE_CLASSES = ("A", "tie", "B")
"""A pairwise preference's classes, in their order (A better, equal, B better)."""
YES_NO = ("yes", "no")
"""A yes / no verdict's classes, the positive first (TPR is the recall of yes)."""

Unit = list[tuple[str, str]]
"""One item's (people's label, judge's label) pairs: one per human label; resampled together."""


def kappa_from_counts(confusion: np.ndarray, weights: str | None = None) -> np.ndarray:
    """Cohen's kappa of confusion tables (..., k, k), rows people and columns judge; NaN where undefined.

    The formula of `sklearn.metrics.cohen_kappa_score`: 1 - sum(w * observed) / sum(w * expected),
    expected from the row and column totals, w = 1 off the diagonal (None) or |i - j| ('linear').
    """
    counts = np.asarray(confusion, dtype=float)
    k = counts.shape[-1]
    index = np.arange(k)
    w = np.abs(index[:, None] - index[None, :]).astype(float)
    if weights is None:
        w = (w > 0).astype(float)
    total = counts.sum(axis=(-2, -1))
    expected = counts.sum(axis=-1)[..., :, None] * counts.sum(axis=-2)[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = expected / total[..., None, None]
        return 1.0 - (w * counts).sum(axis=(-2, -1)) / (w * expected).sum(axis=(-2, -1))


def _finite(value: float) -> float | None:
    """`value` as a float, None when NaN or infinite (an undefined measure)."""
    return float(value) if np.isfinite(value) else None


def class_agreement(units: Sequence[Unit], classes: Sequence[str], *, ordinal: bool = False, seed: int = 0,
                    ci: bool = True) -> dict[str, Any] | None:
    """Kappa, the confusion matrix and per-class precision and recall of the judge's labels against people's.

    `units`: one list of (people's label, judge's label) per item (a label outside `classes` is
    left out). Returns None without any pair; else `classes`, `ordinal`, `confusion` (rows people,
    columns judge), `metrics` {`kappa`, and `kappa_linear` when `ordinal`; an undefined one is
    absent} with their `ci`, `n` (labels), `per_class` {class: precision,
    recall, each with its CI, `people` and `judge` counts}, `n_items`; for yes / no classes also
    `tpr` and `tnr`. An undefined value (kappa when one class fills both sides, precision of a
    class the judge never chose) is None. Where people gave one class throughout, kappa is left out and
    `kappa_undefined` says why: chance agreement then equals the observed one for any judge, so kappa is 0
    whatever the judge said (a judge right on 39 of 40 labels read kappa 0.000, a figure that measures nothing).
    """
    labels = list(classes)
    index = {label: i for i, label in enumerate(labels)}
    units = [kept for unit in units if (kept := [(p, j) for p, j in unit if p in index and j in index])]
    people = [label for unit in units for label, _ in unit]
    judge = [label for unit in units for _, label in unit]
    if not people:
        return None
    from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support  # only with labels

    with warnings.catch_warnings():  # one class throughout: sklearn warns and answers NaN, read as undefined
        warnings.simplefilter("ignore")
        confusion = confusion_matrix(people, judge, labels=labels)
        kappas = {"kappa": _finite(cohen_kappa_score(people, judge, labels=labels))}
        if ordinal:
            kappas["kappa_linear"] = _finite(cohen_kappa_score(people, judge, labels=labels, weights="linear"))
        precision, recall, _, _ = precision_recall_fscore_support(people, judge, labels=labels, zero_division=np.nan)
    per_item = np.zeros((len(units), len(labels), len(labels)))
    for n, unit in enumerate(units):
        for p, j in unit:
            per_item[n, index[p], index[j]] += 1
    out: dict[str, Any] = {
        "classes": labels, "ordinal": ordinal, "confusion": confusion.tolist(), "n": len(people),
        "n_items": len(units),
        "metrics": {key: value for key, value in kappas.items() if value is not None}, "ci": {},
        "per_class": {
            label: {"precision": _finite(precision[i]), "recall": _finite(recall[i]),
                    "people": int(confusion[i].sum()), "judge": int(confusion[:, i].sum())}
            for i, label in enumerate(labels)
        },
    }
    if len(set(people)) == 1:
        out["metrics"] = {}
        out["kappa_undefined"] = (f"people gave one class ({people[0]}) on every label: kappa would be 0 whatever "
                                  "the judge said, so none is given")
    if ci:
        _intervals(out, per_item, seed)
    if tuple(labels) == YES_NO:
        out["tpr"], out["tnr"] = out["per_class"]["yes"]["recall"], out["per_class"]["no"]["recall"]
    return out


def _intervals(out: dict[str, Any], per_item: np.ndarray, seed: int) -> None:
    """Add the 95% bootstrap CIs over items, every one from the same resamples of the per-item confusion counts."""
    if len(per_item) < 2:
        return
    k = per_item.shape[-1]
    resampled = resampled_sums(per_item.reshape(len(per_item), -1), seed=seed).reshape(-1, k, k)
    one_class = (resampled.sum(axis=2) > 0).sum(axis=1) < 2  # people gave one class there: kappa 0 whatever is said
    for key in out["metrics"]:
        kappas = kappa_from_counts(resampled, "linear" if key == "kappa_linear" else None)
        interval = defined_interval(np.where(one_class, np.nan, kappas))  # undefined, as on the whole sample
        if interval is not None:
            out["ci"][key] = list(interval)
    hits = resampled[:, np.arange(k), np.arange(k)]
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = {"recall": hits / resampled.sum(axis=2), "precision": hits / resampled.sum(axis=1)}
    trials = {"recall": per_item.sum(axis=2), "precision": per_item.sum(axis=1)}  # items x classes
    own_hits = per_item[:, np.arange(k), np.arange(k)]
    for i, label in enumerate(out["classes"]):  # units: the items holding a label of the class (people's; the judge's)
        for name, values in rates.items():
            if out["per_class"][label][name] is None:
                continue
            counts = trials[name][:, i]
            if np.all(np.isin(counts, (0.0, 1.0))):  # one trial per item: binomial, the exact interval at any count
                interval = ratio_ci(np.column_stack([own_hits[:, i], counts]))
            else:
                interval = defined_interval(values[:, i], units=int((counts > 0).sum()))
            out["per_class"][label][f"{name}_ci"] = list(interval) if interval else None


def preference_units(scored: Sequence[tuple[Item, Verdict]]) -> list[Unit]:
    """Per pairwise item the judge decided: (human label, judge's preference) for each human label of the pair."""
    units = []
    for item, verdict in scored:
        if isinstance(item.gold, PairwiseGold):
            judged = judge_preference(verdict, item.gold.a, item.gold.b)
            if judged is not None:
                units.append([(label, judged) for label in item.gold.labels])
    return units


def preference_classes(scored: Sequence[tuple[Item, Verdict]], *, seed: int = 0, ci: bool = True) -> dict[str, Any] | None:
    """`class_agreement` of a judge's A / tie / B preferences with every human label of the pairwise items."""
    return class_agreement(preference_units(scored), PREFERENCE_CLASSES, ordinal=True, seed=seed, ci=ci)
