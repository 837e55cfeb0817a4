"""Accuracy of a judge's A/B/tie preference against every human label (the papers count judgements).

`accuracy` scores each human label (A, B or tie) by exact match. `accuracy_no_tie` keeps only
human labels A and B; a judge tie on them counts wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.data.model import PairwiseGold, Preference

if TYPE_CHECKING:
    from qatui.events import Verdict

_FLIP: dict[Preference, Preference] = {"A": "B", "B": "A", "tie": "tie"}


def judge_preference(verdict: Verdict, a: str, b: str) -> Preference | None:
    """The judge's preference between `a` (A) and `b` (B); from its scores when it gave no pair."""
    if verdict.preference is not None and verdict.pair is not None:
        if verdict.pair == (a, b):
            return verdict.preference
        if verdict.pair == (b, a):
            return _FLIP[verdict.preference]
    if a in verdict.scores and b in verdict.scores:
        score_a, score_b = verdict.scores[a], verdict.scores[b]
        return "A" if score_a > score_b else "B" if score_b > score_a else "tie"
    return None


def judgement_hits(gold: PairwiseGold, verdict: Verdict) -> dict[str, list[float]]:
    """Per human label, 1.0 when the judge agrees: under `accuracy` and `accuracy_no_tie`."""
    judged = judge_preference(verdict, gold.a, gold.b)
    if judged is None:
        return {}
    return {
        "accuracy": [float(judged == label) for label in gold.labels],
        "accuracy_no_tie": [float(judged == label) for label in gold.labels if label != "tie"],
    }
