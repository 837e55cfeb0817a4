"""Which repeat of a judgement a backbone call belongs to, and how that changes the call.

With `repeats` K > 1 the engine asks a judge K times about the same item and binds `REPEAT`
to the repeat's index (0 to K-1) while it does. A call made in repeat r > 0 goes out with
its own seed (`SEED_STRIDE` apart, so a judge's own samples never collide with another
repeat's) and carries `repeat: r` in its cache key, so a rerun replays every repeat from the
cache. Repeat 0 changes nothing: its seed and cache key are those of a run without repeats,
so a cache filled before repeats existed still answers it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

REPEAT: ContextVar[int] = ContextVar("qatui_repeat", default=0)
"""The index of the repeat being asked (0 for the first, and for every run without repeats); the engine sets it."""

SEED_STRIDE = 1000
"""Seeds of repeat r are `seed + SEED_STRIDE * r + sample`: judges draw at most 20 samples, far below the stride."""

LOCAL_FIELDS = ("repeat",)
"""Request fields that are qatui's own (kept in the cache key, never sent to a provider)."""


def repeat_fields(seed: int, sample: int) -> dict[str, Any]:
    """The seed of this call, and `repeat` when the call belongs to a repeat past the first."""
    repeat = REPEAT.get()
    if repeat <= 0:
        return {"seed": seed + sample}
    return {"seed": seed + SEED_STRIDE * repeat + sample, "repeat": repeat}
