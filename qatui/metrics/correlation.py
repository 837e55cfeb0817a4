"""Kendall tau-b, Spearman rho and Pearson r of two paired samples, or nothing when undefined."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


LARGE = 2.0 ** 500
"""A sample whose largest magnitude passes this is scaled down (by a power of two, exact) before Pearson's r: its
squares would pass the largest float, and r, invariant to scale, would come out 0 or NaN."""


def _scaled(values: np.ndarray) -> np.ndarray:
    """`values` times a power of two that brings its largest magnitude under 1 when it passes `LARGE`, else as given."""
    largest = float(np.max(np.abs(values)))
    return np.ldexp(values, -int(np.frexp(largest)[1])) if largest > LARGE else values


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """The three correlations of `x` and `y`; empty (never NaN) for < 2 points or a constant side.

    Kendall and Spearman read ranks (any finite values); Pearson reads the values scaled by `_scaled`. Should SciPy
    still return a statistic that is not a finite number, it is left out, as an undefined one is: no NaN reaches a
    mean."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(xs) != len(ys):
        raise ValueError(f"paired samples differ in length: {len(xs)} and {len(ys)}")
    if len(xs) < 2 or np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return {}
    from scipy.stats import kendalltau, pearsonr, spearmanr  # here: a run with no pair to correlate never pays for it

    values = {
        "kendall": kendalltau(xs, ys, variant="b").statistic,
        "spearman": spearmanr(xs, ys).statistic,
        "pearson": pearsonr(_scaled(xs), _scaled(ys)).statistic,
    }
    return {key: float(np.clip(value, -1.0, 1.0)) for key, value in values.items() if np.isfinite(value)}
