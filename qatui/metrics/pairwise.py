"""Accuracy of a judge's A/B/tie preference against every human label (the papers count judgements).

`accuracy` scores each human label (A, B or tie) by exact match: a judge's tie is a tie, a hit
on a human tie and never on an A or B. `accuracy_no_tie` keeps only human labels A and B, so a
judge tie there is always a miss (the share of such labels is shown beside the figure).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.data.model import PairwiseGold, Preference
from qatui.ties import tier_preference

if TYPE_CHECKING:
    from qatui.events import Verdict

_FLIP: dict[Preference, Preference] = {"A": "B", "B": "A", "tie": "tie"}


def judge_preference(verdict: Verdict, a: str, b: str) -> Preference | None:
    """The judge's preference between `a` (A) and `b` (B); from its tied groups when it gave no pair.

    The groups (`Verdict.tiers`) follow the judge's tie rule (`qatui.ties`), so two scores its
    `tie_digits` call equal are a tie here as in the preference the engine made.
    """
    if verdict.preference is not None and verdict.pair is not None:
        if verdict.pair == (a, b):
            return verdict.preference
        if verdict.pair == (b, a):
            return _FLIP[verdict.preference]
    return tier_preference(verdict.tiers, a, b)


def judgement_hits(gold: PairwiseGold, verdict: Verdict) -> dict[str, list[float]]:
    """Per human label, 1.0 when the judge agrees: under `accuracy` and `accuracy_no_tie`."""
    judged = judge_preference(verdict, gold.a, gold.b)
    if judged is None:
        return {}
    return label_hits(gold, judged)


def label_hits(gold: PairwiseGold, judged: Preference | None) -> dict[str, list[float]]:
    """Per human label each key counts, 1.0 where `judged` (A / B / tie) is that label; `judged` None (no verdict,
    `metrics.paired.failed_values`) agrees with no label."""
    return {
        "accuracy": [float(judged == label) for label in gold.labels],
        "accuracy_no_tie": [float(judged == label) for label in gold.labels if label != "tie"],
    }
