"""Agreement between two judges on the same items, and inter-rater reliability coefficients."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import krippendorff
import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field

from qatui.metrics.correlation import correlations
from qatui.metrics.kendall import no_decision, tier_places
from qatui.metrics.pairwise import judge_preference

if TYPE_CHECKING:
    from qatui.events import Verdict


class JudgeAgreement(BaseModel):
    """`kendall` (mean tau-b of the tied groups), `top1` and `preference` shares, with item counts.

    `no_decision`: per figure, of the items it counts, those where one judge tied every candidate both ranked and
    the other did not, each counted 0 (`judge_agreement`); a figure without such items is absent.
    `neither_decided`: items left out of `kendall` and `top1` because both judges tied every candidate both ranked."""

    model_config = ConfigDict(frozen=True)

    metrics: dict[str, float] = Field(default_factory=dict)
    n: dict[str, int] = Field(default_factory=dict)
    no_decision: dict[str, int] = Field(default_factory=dict)
    neither_decided: int = 0


def _shared_tiers(verdict: Verdict, shared: set[str]) -> list[list[str]]:
    """A verdict's tied groups over the `shared` candidates."""
    return [kept for tier in verdict.tiers if (kept := [cid for cid in tier if cid in shared])]


def ranking_tau(a: Verdict, b: Verdict) -> float | None:
    """Kendall tau-b between two judges' tied groups over the candidates both ranked (ties count as ties).

    None below 2 candidates, or when either judge tied them all (tau-b is undefined there: two judges
    with no opinion are not in agreement, and neither is one with an opinion against one without).
    """
    shared = set(a.ranking) & set(b.ranking)
    places_a, places_b = tier_places(_shared_tiers(a, shared)), tier_places(_shared_tiers(b, shared))
    ordered = sorted(shared)
    return correlations([-places_a[c] for c in ordered], [-places_b[c] for c in ordered]).get("kendall")


def top_agreement(a: Verdict, b: Verdict) -> float:
    """How far both judges put the same candidates first, over the candidates both ranked: of those either put in
    its first group, the share both did (1 when they name the same best, or the same tied best; 1/2 for "a" against
    "a = b"). A random tie-break would give two judges that said the same "a = b" 1/2."""
    shared = set(a.ranking) & set(b.ranking)
    top_a, top_b = set(_shared_tiers(a, shared)[0]), set(_shared_tiers(b, shared)[0])
    return len(top_a & top_b) / len(top_a | top_b)


def _undecided(verdict: Verdict, shared: set[str]) -> bool:
    """Whether the judge put every candidate of `shared` in one group: it told none of them apart."""
    return no_decision(_shared_tiers(verdict, shared))


def one_undecided(a: Verdict, b: Verdict) -> bool:
    """Whether, of two verdicts on one item, exactly one tied every candidate both ranked (a no decision against a
    decision: 0 in `judge_agreement`, a disagreement in `sessions compare`'s list)."""
    shared = set(a.ranking) & set(b.ranking)
    return len(shared) >= 2 and _undecided(a, shared) != _undecided(b, shared)


def judge_agreement(verdicts_a: Mapping[str, Verdict], verdicts_b: Mapping[str, Verdict]) -> JudgeAgreement:
    """How two judges agree on the items both judged (item id -> Verdict); keys without items are absent.

    `kendall` and `top1` are measured on what each judge said, over the candidates both ranked (two or more).
    An item where one judge tied them all and the other did not is a *no decision*: it counts 0 in both (the judge
    with no opinion agrees with no one, as against people's gold; it would share 1 in k of the other's first
    group) and `no_decision` counts it. An item where both tied them all is left out: neither
    told any apart, so there is no order to agree on. `preference` is the A / tie / B choice of two judges of the
    same pair, a tie a choice of its own (as in the confusion matrix against people).
    """
    found: dict[str, list[float]] = {"kendall": [], "top1": [], "preference": []}
    undecided_items = neither = 0
    for item_id, a in verdicts_a.items():
        if (b := verdicts_b.get(item_id)) is None:
            continue
        shared = set(a.ranking) & set(b.ranking)
        if len(shared) >= 2 and a.tiers and b.tiers:
            undecided = (_undecided(a, shared), _undecided(b, shared))
            if undecided == (False, False) and (tau := ranking_tau(a, b)) is not None:
                found["kendall"].append(tau)
                found["top1"].append(top_agreement(a, b))
            elif undecided != (True, True):
                found["kendall"].append(0.0)
                found["top1"].append(0.0)
                undecided_items += 1
            else:
                neither += 1
        if a.pair and a.preference and b.pair and b.preference and set(a.pair) == set(b.pair):
            found["preference"].append(float(a.preference == judge_preference(b, *a.pair)))
    return JudgeAgreement(
        metrics={key: float(np.mean(values)) for key, values in found.items() if values},
        n={key: len(values) for key, values in found.items() if values},
        no_decision={key: undecided_items for key in ("kendall", "top1") if undecided_items},
        neither_decided=neither,
    )


def fleiss_kappa(table: ArrayLike) -> float | None:
    """Fleiss' kappa of a subjects x categories count table (same raters per row); None if undefined."""
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or len(counts) == 0 or (counts < 0).any():
        raise ValueError("Fleiss' kappa needs a non-empty 2-D table of non-negative counts")
    raters = counts.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (at least 2) of ratings for every subject")
    n = raters[0]
    agreement = ((counts**2).sum(axis=1) - n) / (n * (n - 1))  # P_i
    shares = counts.sum(axis=0) / counts.sum()  # p_j
    expected = float((shares**2).sum())  # P_e
    if expected == 1.0:
        return None
    return float((agreement.mean() - expected) / (1.0 - expected))


def krippendorff_alpha(
    reliability_data: ArrayLike, level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal"
) -> float | None:
    """Krippendorff's alpha of a raters x units table (NaN = missing); None if undefined.

    Undefined: fewer than two distinct values among the units that two or more raters rated.
    """
    data = np.asarray(reliability_data, dtype=float)
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    if np.unique(pairable[~np.isnan(pairable)]).size < 2:
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


ChecklistKey = tuple[str, str, str]
"""(item id, candidate id, question id): one yes/no decision of a CheckEval run."""


def checklist_answers(verdicts: Mapping[str, Verdict]) -> dict[ChecklistKey, tuple[str, str | None]]:
    """Every CheckEval answer of a run (item id -> Verdict), keyed by candidate id: (dimension, answer)."""
    out: dict[ChecklistKey, tuple[str, str | None]] = {}
    for item_id, verdict in verdicts.items():
        by_label = verdict.by_label
        for a in verdict.artifacts:
            if a.type == "checklist_answered" and a.response in by_label:
                out[(item_id, by_label[a.response], a.question_id)] = (a.dimension, a.answer)
    return out


def checklist_agreement(
    runs: list[Mapping[ChecklistKey, tuple[str, str | None]]],
) -> dict[str, dict[str, float | int | None]]:
    """Inter-evaluator agreement of several CheckEval runs over their yes/no answers, per dimension and overall.

    Units are the (item, candidate, question) decisions found in at least one run; an
    unanswered question is a missing value. Krippendorff's alpha (nominal) uses every unit
    two or more runs answered; Fleiss' kappa, which needs every rater on every unit, uses
    the units all runs answered (`n_complete`). None where a coefficient is undefined.
    """
    if len(runs) < 2:
        raise ValueError("agreement needs at least two runs")
    keys = sorted({k for run in runs for k in run})
    dimension_of = {k: next(run[k][0] for run in runs if k in run) for k in keys}
    out: dict[str, dict[str, float | int | None]] = {}
    for dim in [*dict.fromkeys(dimension_of[k] for k in keys), "all"]:
        chosen = [k for k in keys if dim == "all" or dimension_of[k] == dim]
        table = np.array([[{"yes": 1.0, "no": 0.0}.get(run[k][1], np.nan) if k in run else np.nan for k in chosen]
                          for run in runs])
        out[dim] = nominal_agreement(table, (1.0, 0.0))
    return out


def cohen_kappa(first: ArrayLike, second: ArrayLike, categories: tuple[float, ...]) -> float | None:
    """Cohen's kappa (scikit-learn's) of two raters' aligned category codes; None where undefined (one code
    throughout on both sides)."""
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():  # one code throughout: sklearn warns and answers NaN, read as undefined
        warnings.simplefilter("ignore")
        value = float(cohen_kappa_score(np.asarray(first), np.asarray(second), labels=list(categories)))
    return value if np.isfinite(value) else None


def nominal_agreement(table: np.ndarray, categories: tuple[float, ...], *,
                      cohen_for_two: bool = False) -> dict[str, float | int | str | None]:
    """Krippendorff's alpha (nominal) and kappa of a raters x units table of category codes (NaN = missing).

    Alpha uses every unit two or more raters coded (`n_units`); kappa, which needs every rater on every
    unit, the units all of them coded (`n_complete`). Kappa is Fleiss' (CheckEval's, over any number of
    evaluators), or with `cohen_for_two` and two raters Cohen's: what qatui calls a judge's kappa against people
    everywhere else (Fleiss' with two raters is Scott's pi, another figure under the same name). `kappa_of` names
    it. None where undefined.
    """
    coded = (~np.isnan(table)).sum(axis=0) if table.size else np.zeros(0)
    complete = table[:, ~np.isnan(table).any(axis=0)] if table.size else table
    if cohen_for_two and len(complete) == 2:
        kappa, kind = (cohen_kappa(complete[0], complete[1], categories) if complete.shape[1] else None), "Cohen"
    else:
        counts = np.stack([(complete == c).sum(axis=0) for c in categories], axis=1)
        kappa, kind = (fleiss_kappa(counts) if complete.shape[1] else None), "Fleiss"
    return {
        "alpha": krippendorff_alpha(table) if table.size and coded.max() >= 2 else None,
        "kappa": kappa,
        "kappa_of": kind,
        "n_units": int((coded >= 2).sum()),
        "n_complete": int(complete.shape[1]) if table.size else 0,
    }
