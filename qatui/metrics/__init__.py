"""Meta-evaluation: how well a judge's verdicts agree with human gold, and judges with each other.

The names below load on first use (PEP 562): most of this package needs SciPy, whose import
costs about a second, and the TUI imports `metrics.kendall` alone to draw its first rows.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qatui.metrics.agreement import JudgeAgreement, fleiss_kappa, judge_agreement, krippendorff_alpha, ranking_tau
    from qatui.metrics.summary import JudgeMetrics, summarize

_HOMES = {
    "JudgeAgreement": "agreement",
    "fleiss_kappa": "agreement",
    "judge_agreement": "agreement",
    "krippendorff_alpha": "agreement",
    "ranking_tau": "agreement",
    "JudgeMetrics": "summary",
    "summarize": "summary",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """Import a public name's module when the name is first asked for."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"qatui.metrics.{_HOMES[name]}"), name)
