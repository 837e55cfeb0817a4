"""One line a live run shows beside its progress: spend against the cost cap, and each backbone's pace.

"$0.0123 of $0.05 cap · openai/gpt-4o-mini 3/8 at once (of 16; 12×429, waiting 0.4 s)": how many
calls are in flight against the adaptive limit (`qatui.llm.pacing`), its ceiling when it is below
it, the 429s and timeouts met, and a pause a `Retry-After` asked for; in batch mode, each batch still
running with its state and counts ("batch in_progress 12/40 (1 failed), 2 batches done"). The CLI's
progress line and the TUI's run header both print it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.text import usd

if TYPE_CHECKING:
    from qatui.engine.runner import Engine


def limits_line(engine: Engine) -> str:
    """The line for `engine`'s run (empty before any call, and without a cap)."""
    from qatui.llm.pacing import snapshot

    parts = []
    if (cap := engine.spend_cap) is not None:
        parts.append(f"{usd(cap.spent_usd)} of ${cap.cap_usd:g} cap" + (" (reached: stopping)" if cap.reached else ""))
    if engine.started_at is not None:
        for pace in snapshot(engine.started_at):
            text = f"{pace.model} {pace.in_flight}/{pace.limit} at once"
            notes = [f"of {pace.ceiling}"] if pace.limit < pace.ceiling else []
            notes += [f"{pace.rate_limited}×429"] if pace.rate_limited else []
            notes += [f"{pace.timeouts} timeouts"] if pace.timeouts else []
            notes += [f"waiting {pace.paused_s:.1f} s"] if pace.paused_s >= 0.05 else []
            parts.append(text + (f" ({'; '.join(notes)})" if notes else ""))
    if engine.batcher is not None and (batches := engine.batcher.line()):
        parts.append(batches)
    return " · ".join(parts)
