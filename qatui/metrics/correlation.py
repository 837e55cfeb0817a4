"""Kendall tau-b, Spearman rho and Pearson r of two paired samples, or nothing when undefined."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """The three correlations of `x` and `y`; empty (never NaN) for < 2 points or a constant side."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(xs) != len(ys):
        raise ValueError(f"paired samples differ in length: {len(xs)} and {len(ys)}")
    if len(xs) < 2 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return {}
    from scipy.stats import kendalltau, pearsonr, spearmanr  # here: a run with no pair to correlate never pays for it

    values = {
        "kendall": kendalltau(xs, ys, variant="b").statistic,
        "spearman": spearmanr(xs, ys).statistic,
        "pearson": pearsonr(xs, ys).statistic,
    }
    return {key: float(np.clip(value, -1.0, 1.0)) for key, value in values.items()}
