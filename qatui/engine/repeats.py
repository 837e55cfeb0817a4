"""What a run says and stores about a judge asked K times (`repeats`); the rule combining the K answers is
`metrics.repeated` (the runner's `aggregate`).

A judge asked to repeat that calls no backbone is asked once (`jobs.judge_once_when_fixed`);
`judged_once_line` is what a run prints about it and `self_agreement_doc` what its summary holds.
"""

from __future__ import annotations

from typing import Any

from qatui.metrics.self_agreement import self_agreement


def judged_once_line(names: list[str]) -> str:
    """The one line a run prints about judges it asks once although repeats were asked for ('' when none)."""
    if not names:
        return ""
    return (f"repeats: {', '.join(names)} {'calls' if len(names) == 1 else 'call'} no backbone and always "
            "answer the same: judged once, self-agreement not applicable")


def judged_once_doc() -> dict[str, Any]:
    """The self-agreement of a judge asked to repeat that calls no backbone: not applicable, and why."""
    return {"repeats": 1, "not_applicable": "calls no backbone: always the same answer, judged once"}


def self_agreement_doc(meta: dict, judge: str, verdicts: dict, seed: int) -> dict[str, Any] | None:
    """A judge's agreement with itself across repeats (`metrics.self_agreement`) when it was asked to repeat:
    measured when its options ask for K > 1, not applicable when it calls no backbone (`judged_once`); else None."""
    if judge in (meta.get("judged_once") or []):
        return judged_once_doc()
    options = (meta.get("judges") or {}).get(judge)
    asked = options.get("repeats") if isinstance(options, dict) else None
    if not isinstance(asked, int) or isinstance(asked, bool) or asked < 2:
        return None
    return self_agreement(verdicts, seed=seed) | {"repeats": asked}
