"""Meta-evaluation: how well a judge's verdicts agree with human gold, and judges with each other."""

from qatui.metrics.agreement import JudgeAgreement, fleiss_kappa, judge_agreement, krippendorff_alpha, ranking_tau
from qatui.metrics.summary import JudgeMetrics, summarize

__all__ = [
    "JudgeAgreement",
    "JudgeMetrics",
    "fleiss_kappa",
    "judge_agreement",
    "krippendorff_alpha",
    "ranking_tau",
    "summarize",
]
