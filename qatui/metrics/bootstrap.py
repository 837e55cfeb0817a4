"""95% percentile bootstrap confidence intervals over questions (or documents): of a mean, or of a pooled ratio.

Values come as rows = resampled units and columns = groups (e.g. rating dimensions), NaN
where a unit has no value for a group. The statistic is the mean over groups of each
group's mean over its units, which for one column is the plain mean.

When every unit gives the same value, every resample repeats it: a percentile bootstrap would
say [1.000, 1.000] of 6 items all judged right, a certainty 6 items cannot give. So a proportion
every unit gave at 0 or 1 (an accuracy, a recall) gets Clopper-Pearson's exact interval over its
units (`unanimous_interval`: 6 of 6 is [0.541, 1]), and any other statistic no interval at all.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache

import numpy as np
from numpy.typing import ArrayLike

N_RESAMPLES = 1000


@cache
def _seed_arg() -> str:
    """scipy >= 1.15 seeds through `rng`; older releases through `random_state`."""
    from scipy.stats import bootstrap

    return "rng" if "rng" in inspect.signature(bootstrap).parameters else "random_state"


def percentile_ci(table: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], *, seed: int = 0,
                  confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of `statistic` over the rows of `table`, resampling whole rows.

    `statistic` takes resampled tables (..., rows, columns) and reduces the rows axis; one
    seeded call of `scipy.stats.bootstrap` shared by every interval qatui reports.
    """
    from scipy.stats import bootstrap  # here: `scipy.stats` costs about a second to import, and a run
    # whose figures need no interval never asks

    result = bootstrap(
        (np.arange(len(table)),),
        lambda picked, axis: statistic(table[np.moveaxis(picked, axis, -1).astype(int)]),
        n_resamples=N_RESAMPLES,
        batch=250,
        vectorized=True,
        confidence_level=confidence,
        method="percentile",
        **{_seed_arg(): np.random.default_rng(seed)},
    )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))


def unit_table(values: ArrayLike) -> np.ndarray:
    """`values` (1-D, or units x columns) as a 2-D float table without rows that hold no value."""
    table = np.asarray(values, dtype=float)
    table = table.reshape(len(table), -1) if table.size else np.empty((0, 1))
    return table[~np.isnan(table).all(axis=1)]


def _grouped_mean(table: np.ndarray, axis: int = -2) -> np.ndarray:
    """Mean over non-empty columns of the column means along `axis`, ignoring NaN."""
    present = ~np.isnan(table)
    counts = present.sum(axis=axis)
    sums = np.where(present, table, 0.0).sum(axis=axis)
    means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return (means * (counts > 0)).sum(axis=-1) / (counts > 0).sum(axis=-1)


def grouped_mean(values: ArrayLike) -> float:
    """The point estimate that `mean_ci` brackets (rows of only NaN are ignored)."""
    return float(_grouped_mean(unit_table(values)))


def unanimous_interval(value: float, units: int, *, confidence: float = 0.95) -> tuple[float, float] | None:
    """The CI of a proportion that each of `units` units gave alike: Clopper-Pearson's exact interval of 0 or
    `units` successes in `units` trials when `value` is 0 or 1 (each unit one trial, the fewest the data allow);
    None for any other value, whose spread the units do not show.

    At those two ends the exact interval has a closed form, [(alpha/2)^(1/n), 1] and its mirror (the tests check
    it against SciPy's `binomtest`), so a run whose figures need no bootstrap still imports no SciPy.
    """
    if units < 2 or value not in (0.0, 1.0):
        return None
    bound = ((1 - confidence) / 2) ** (1 / units)
    return (bound, 1.0) if value == 1.0 else (0.0, 1.0 - bound)


def mean_ci(values: ArrayLike, *, seed: int = 0, confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap CI of `grouped_mean` over rows; None below 2 rows, and None when every value is the same
    (no spread to resample; a mean need not be a proportion, so `unanimous_interval` is not assumed)."""
    table = unit_table(values)
    if len(table) < 2:
        return None
    finite = table[~np.isnan(table)]
    if np.all(finite == finite[0]):
        return None
    return percentile_ci(table, _grouped_mean, seed=seed, confidence=confidence)


def ratio_ci(rows: ArrayLike, *, seed: int = 0, confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap CI of sum(numerators) / sum(denominators), resampling whole rows.

    Each row is one unit (an item) as (numerator, denominator), e.g. (labels the judge agreed
    with, labels): an item with three human labels is resampled as one, never label by label.
    None below 2 rows; when every row gives the same ratio, `unanimous_interval`. When every row is one trial
    (a hit or a miss of one label), the proportion is binomial and gets Clopper-Pearson's exact interval at any
    count: a percentile bootstrap one step in from the end is too narrow there (11 of 12 read [0.750, 1.000],
    tighter and higher than 12 of 12's exact [0.735, 1]: a worse judge looked surer).
    """
    table = np.asarray(rows, dtype=float).reshape(-1, 2)
    table = table[table[:, 1] > 0]
    if len(table) < 2:
        return None
    ratios = table[:, 0] / table[:, 1]
    if np.all(ratios == ratios[0]):
        return unanimous_interval(float(ratios[0]), len(table), confidence=confidence)
    if np.all(table[:, 1] == 1) and np.all(np.isin(table[:, 0], (0.0, 1.0))):
        from scipy.stats import binomtest

        found = binomtest(int(table[:, 0].sum()), len(table)).proportion_ci(confidence_level=confidence, method="exact")
        return float(found.low), float(found.high)
    return percentile_ci(table, lambda chosen: chosen[..., 0].sum(axis=-1) / chosen[..., 1].sum(axis=-1),
                         seed=seed, confidence=confidence)


def defined_ci(table: np.ndarray, statistic: Callable[[np.ndarray], float], *, seed: int = 0,
               confidence: float = 0.95, min_defined: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap CI over the rows of `table` of a statistic that some resamples leave undefined (NaN).

    Krippendorff's alpha and Fleiss' kappa are undefined on a resample holding one value
    throughout; such resamples are left out, and there is no CI when more than
    1 - `min_defined` of them are. Seeded like `percentile_ci`; one statistic call per resample.
    """
    picks = np.random.default_rng(seed).integers(0, len(table), size=(N_RESAMPLES, len(table)))
    values = np.array([statistic(table[rows]) for rows in picks])
    return defined_interval(values, confidence=confidence, min_defined=min_defined)


def defined_interval(values: np.ndarray, *, confidence: float = 0.95, min_defined: float = 0.95,
                     units: int | None = None) -> tuple[float, float] | None:
    """The percentile interval of a statistic's resampled `values`, NaN (undefined) ones left out.

    None when more than 1 - `min_defined` of them are undefined (see `defined_ci`). When every resample gave
    the same value, `unanimous_interval` over `units` (the units the statistic is a proportion of; None
    when it is no proportion).
    """
    defined = values[np.isfinite(values)]
    if len(defined) < min_defined * len(values) or not len(defined):
        return None
    if np.all(defined == defined[0]):
        return unanimous_interval(float(defined[0]), units, confidence=confidence) if units is not None else None
    tail = (1 - confidence) / 2 * 100
    return float(np.percentile(defined, tail)), float(np.percentile(defined, 100 - tail))


def resampled_sums(table: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """The column sums of `N_RESAMPLES` bootstrap resamples of the rows of `table`, as resamples x columns.

    For statistics of pooled counts (a confusion matrix summed over items): every statistic
    computed from the same sums shares one set of resamples, and a resample costs a count of
    how often each row was drawn times the table, not a copy of the rows. Seeded like `defined_ci`.
    """
    table = np.asarray(table, dtype=float)
    rows = len(table)
    picks = np.random.default_rng(seed).integers(0, rows, size=(N_RESAMPLES, rows))
    sums = []
    for start in range(0, N_RESAMPLES, 100):
        drawn = np.stack([np.bincount(chosen, minlength=rows) for chosen in picks[start:start + 100]])
        sums.append(drawn @ table)
    return np.concatenate(sums)
