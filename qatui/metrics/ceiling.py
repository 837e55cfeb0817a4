"""How far a judge is from people where several people labelled the same items: the human ceiling and the alt-test.

Both read decisions (`metrics.people`): for each item and pair of its responses, which is better
or a tie, coded 0 / 1 / 2, whatever kind of label (ranking, pair, ratings) made them.

The human ceiling is leave one out: each person against the majority of the others on the units
both decided (the label most of them gave, a tie when two or more share the most: `ties.plurality`,
as for a pairwise gold), by Cohen's kappa (nominal, scikit-learn's) and accuracy. The judge is measured against the very same references on the
very same units, so its figure and the ceiling (the mean over people) compare like with like.

The alternative annotator test (Calderon, Reichart and Dror, ACL 2025) asks whether the judge
could replace one of the people. For each person j, on each item j and at least one other
person decided: the judge's alignment with the others is the share of their decisions it
matches, and so is j's; W_f = [judge >= j], W_h = [j >= judge]. A one-sided t-test
(`scipy.stats.ttest_1samp`, alternative "less") of d = W_h - W_f against epsilon asks whether
people beat the judge by less than epsilon; the p-values over people are corrected by
Benjamini-Yekutieli (`scipy.stats.false_discovery_control`, method "by") at q = 0.05. The
winning rate is the share of people rejected; the judge passes at 0.5 or more. The advantage
probability is the mean of W_f over people. It runs with three or more people who each decided
at least 30 such items (the t-test's normality needs them), as the paper advises.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from qatui.metrics.agreement import cohen_kappa
from qatui.metrics.people import CATEGORIES, Unit
from qatui.ties import plurality

Decisions = Mapping[Unit, float]
EPSILON = 0.2
"""The alt-test's default cost-benefit margin: the paper's value for expert annotators (0.15 skilled, 0.1 crowd)."""
Q_FDR = 0.05
MIN_PEOPLE = 3
MIN_ITEMS = 30


def references(people: Mapping[str, Decisions]) -> tuple[dict[str, dict[Unit, float]], set[Unit]]:
    """For each person, the majority of the other people's decisions on every unit one of them made; and the units
    left out of someone's references because the others split on them (no decision is made most often).

    A split is no reference: read as a tie (the plurality's tie code), a pair the others split A / B became a tie
    nobody gave, so a judge that always says tie scored above every person (they all chose a side)."""
    out, split = {}, set()
    for name in people:
        others: dict[Unit, list[float]] = {}
        for other, decisions in people.items():
            if other != name:
                for unit, code in decisions.items():
                    others.setdefault(unit, []).append(code)
        out[name] = {}
        for unit, codes in others.items():
            if (majority := plurality(codes, tie=None)) is None:
                split.add(unit)
            else:
                out[name][unit] = majority
    return out, split


def _agreement(mine: list[float], theirs: list[float]) -> dict[str, Any]:
    """Cohen's kappa and accuracy of decisions `mine` against the reference `theirs`, aligned.

    Kappa is None where it is undefined, and where the reference is one class throughout (`one_class`: True), as
    `classes.agreement` leaves it out against people who gave one class: chance agreement then equals the observed
    one whatever `mine` says, so kappa is 0, a figure that measures nothing (a person matching 39 of 40 read 0.000
    as the ceiling)."""
    if len(set(theirs)) == 1:
        return {"kappa": None, "accuracy": float(np.mean(np.equal(mine, theirs))), "n": len(mine), "one_class": True}
    return {"kappa": cohen_kappa(mine, theirs, CATEGORIES),
            "accuracy": float(np.mean(np.equal(mine, theirs))), "n": len(mine)}


def _mean(values: list[float | None]) -> float | None:
    """The mean of the defined values, None when there is none."""
    found = [v for v in values if v is not None]
    return float(np.mean(found)) if found else None


def human_ceiling(people: Mapping[str, Decisions], judges: Mapping[str, Decisions]) -> dict[str, Any] | None:
    """Each person against the others' majority, and each judge against the same references on the same units.

    None below two people. Returns `people` {name: kappa, accuracy, n}, `ceiling` {kappa,
    accuracy: means over people, on every unit they decided}, `judges` {name: {kappa, accuracy: means over the same
    references, `per_person`, and `ceiling`: the people's kappa and accuracy on the units that judge decided, over the
    people it shares units with, the figure to set beside it (a judge not applicable on half the items was set
    against a ceiling of twice its units), with `units` (summed over people) and `ceiling_units` (the ceiling's on
    every unit)}}, `split`: how many units were left out of someone's references because the
    others split on them (`references`), and `one_class`: how many people's references are one class, whose kappa
    (and the judge's against them) is left out of the means (`_agreement`; every one: the kappas are None). A person
    or judge with no unit in common is left out.
    """
    if len(people) < 2:
        return None
    refs, split = references(people)
    persons: dict[str, dict[str, Any]] = {}
    judged: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in judges}
    beside: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in judges}
    for name, decisions in people.items():
        for judge, theirs in judges.items():
            units = [u for u in decisions if u in refs[name] and u in theirs]
            if units:
                reference = [refs[name][u] for u in units]
                judged[judge][name] = _agreement([theirs[u] for u in units], reference)
                beside[judge][name] = _agreement([decisions[u] for u in units], reference)
        units = [u for u in decisions if u in refs[name]]
        if units:
            persons[name] = _agreement([decisions[u] for u in units], [refs[name][u] for u in units])
    return {
        "people": persons,
        "ceiling": _means(persons),
        "judges": {judge: {**_means(per), "per_person": per, "ceiling": _means(beside[judge]),
                           "units": sum(p["n"] for p in per.values()),
                           "ceiling_units": sum(p["n"] for p in persons.values()),
                           "one_class": sum(1 for found in beside[judge].values() if found.get("one_class"))}
                   for judge, per in judged.items()},
        "split": len(split),
        "one_class": sum(1 for found in persons.values() if found.get("one_class")),
    }


def _means(per_person: Mapping[str, Mapping[str, Any]]) -> dict[str, float | None]:
    """Kappa and accuracy, each the mean over people of the defined values."""
    return {key: _mean([p[key] for p in per_person.values()]) for key in ("kappa", "accuracy")}


def _by_item(decisions: Decisions) -> dict[str, dict[Unit, float]]:
    """Decisions grouped by item id."""
    out: dict[str, dict[Unit, float]] = {}
    for unit, code in decisions.items():
        out.setdefault(unit[0], {})[unit] = code
    return out


def _alignment(mine: dict[Unit, float], others: list[dict[Unit, float]]) -> float | None:
    """The share of the others' decisions on the item that `mine` matches, averaged over the others."""
    scores = [float(np.mean([mine[u] == theirs[u] for u in shared]))
              for theirs in others if (shared := [u for u in theirs if u in mine])]
    return float(np.mean(scores)) if scores else None


def alt_test(people: Mapping[str, Decisions], judge: Decisions, *, epsilon: float = EPSILON, q: float = Q_FDR,
             min_people: int = MIN_PEOPLE, min_items: int = MIN_ITEMS) -> dict[str, Any]:
    """The alternative annotator test of `judge` against `people` (see the module's docstring).

    Returns `ran` (False with a `reason` when too few people have enough items), `epsilon`, `q`,
    `items` per person, and when it ran `per_person` {name: p, p_adjusted, rejected,
    advantage}, `winning_rate`, `advantage_probability` and `passed` (winning rate >= 0.5).
    """
    from scipy.stats import false_discovery_control, ttest_1samp

    items = {name: _by_item(decisions) for name, decisions in people.items()}
    mine = _by_item(judge)
    tested: dict[str, tuple[list[float], list[float]]] = {}
    counts = {}
    for name, own in items.items():
        w_judge, w_person = [], []
        for item_id, decided in own.items():
            others = [items[o][item_id] for o in items if o != name and item_id in items[o]]
            if not others or item_id not in mine:
                continue
            judge_score, person_score = _alignment(mine[item_id], others), _alignment(decided, others)
            if judge_score is None or person_score is None:
                continue
            w_judge.append(float(judge_score >= person_score))
            w_person.append(float(person_score >= judge_score))
        counts[name] = len(w_judge)
        if len(w_judge) >= min_items:
            tested[name] = (w_judge, w_person)
    out: dict[str, Any] = {"epsilon": epsilon, "q": q, "items": counts, "ran": len(tested) >= min_people}
    if not out["ran"]:
        out["reason"] = (f"needs {min_people} people who each labelled at least {min_items} items that another "
                         f"person labelled and the judge judged; {len(tested)} have")
        return out
    names = list(tested)
    with warnings.catch_warnings():  # d constant: the t statistic is infinite and its p-value 0 or 1, as wanted
        warnings.simplefilter("ignore")
        p_values = np.array([ttest_1samp(np.subtract(tested[n][1], tested[n][0]), epsilon, alternative="less").pvalue
                             for n in names], dtype=float)
    p_values = np.nan_to_num(p_values, nan=1.0)
    adjusted = false_discovery_control(p_values, method="by")
    out["per_person"] = {
        name: {"p": float(p), "p_adjusted": float(a), "rejected": bool(a <= q),
               "advantage": float(np.mean(tested[name][0]))}
        for name, p, a in zip(names, p_values, adjusted, strict=True)
    }
    out["winning_rate"] = float(np.mean([v["rejected"] for v in out["per_person"].values()]))
    out["advantage_probability"] = float(np.mean([v["advantage"] for v in out["per_person"].values()]))
    out["passed"] = out["winning_rate"] >= 0.5
    return out


def alt_test_sentence(result: Mapping[str, Any]) -> str:
    """The alt-test's result stated plainly: can the judge replace an annotator, or why it did not run."""
    if not result["ran"]:
        return f"alt-test not run: {result['reason']}"
    verdict = "can" if result["passed"] else "cannot"
    beaten = sum(v["rejected"] for v in result["per_person"].values())
    return (f"the judge {verdict} replace an annotator: winning rate {result['winning_rate']:.2f} at "
            f"ε={result['epsilon']:g} ({beaten} of {len(result['per_person'])} people, Benjamini-Yekutieli "
            f"q={result['q']:g}; advantage probability {result['advantage_probability']:.2f})")
