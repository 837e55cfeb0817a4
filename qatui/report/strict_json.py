"""JSON for scripts: what `--json` prints is strict JSON, with no bare `NaN` or `Infinity` a parser chokes on.

Python's `json.dumps` writes a non-finite float as `NaN` / `Infinity`, which is not JSON: `jq`,
JavaScript and most readers refuse the whole output. A figure can be undefined on its data (a
correlation where one side never varies, an agreement with one rater), so instead of failing
such a value becomes `null`, and the top-level object gains `"non_finite"`: for each path
that became null, why (`{"judges.jury.alpha": "NaN: ..."}`), so a null never reads as "absent".

Every finite float is written to `SIGNIFICANT_DIGITS` significant digits: a mean of ones summed in floating
point is 0.9999999999999999, which a reader takes for a figure below 1; rounded, it is the 1.0 it means.
"""

from __future__ import annotations

import json
import math
from typing import Any

NAN_REASON = "NaN: the figure is undefined on these data (e.g. a correlation where one side never varies)"
"""Why a NaN became null."""
SIGNIFICANT_DIGITS = 12
"""The significant digits of a float in `--json` output: past float sums' last-bit noise, far past any figure's
meaning (a correlation on a few thousand items is known to two or three)."""


def strict_dumps(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)` with every non-finite float as null and its reason under `non_finite`."""
    reasons: dict[str, str] = {}
    clean = _finite(value, "", reasons)
    if reasons:
        if isinstance(clean, dict):
            clean = {**clean, "non_finite": reasons}
        else:
            clean = {"value": clean, "non_finite": reasons}
    return json.dumps(clean, allow_nan=False, **options)


def _finite(value: Any, path: str, reasons: dict[str, str]) -> Any:
    """`value` with non-finite floats as None, each one's path and reason added to `reasons`."""
    if isinstance(value, float) and not math.isfinite(value):
        reasons[path or "(value)"] = NAN_REASON if math.isnan(value) else f"{value}: the figure is infinite"
        return None
    if isinstance(value, float):
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, dict):
        return {key: _finite(item, f"{path}.{key}" if path else str(key), reasons) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item, f"{path}[{index}]", reasons) for index, item in enumerate(value)]
    return value
