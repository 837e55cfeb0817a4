"""The baselines' steps as one line each (pointwise score, A/B choice, LINKAGE place, G-Eval rating), for the run state."""

from __future__ import annotations

from qatui.events import (
    CandidatePlaced,
    DimensionRated,
    Event,
    PairJudged,
    PointScored,
    ReferenceListBuilt,
    StepsWritten,
)

BASELINE_EVENTS = (PointScored, CandidatePlaced, ReferenceListBuilt, StepsWritten, DimensionRated)
"""The events the Baselines panel lists, with MinosEval's `PairJudged` choices (ranked by win rate: `state._pair`)."""


def baseline_line(e: Event) -> str:
    """One line for a baseline judge's step, as the Baselines panel lists them."""
    again = " (re-asked)" if getattr(e, "reasked", False) else ""
    if isinstance(e, PointScored):
        return f"{e.response}: {e.label or f'{e.score:.2f} / {e.top:g}'}{again}"
    if isinstance(e, PairJudged):
        winner = e.first if e.choice == "A" else e.second
        return f"{e.first} vs {e.second}: {winner}{' (rematch of a win-rate tie)' if e.rematch else ''}{again}"
    if isinstance(e, CandidatePlaced):
        return f"{e.response}: placed at {e.position} in the reference list{again}"
    if isinstance(e, ReferenceListBuilt):
        return f"reference list of {len(e.references)}, {'from the dataset' if e.source == 'dataset' else 'written by the backbone'}"
    if isinstance(e, StepsWritten):
        return f"evaluation steps for {e.dimension} written"
    if isinstance(e, DimensionRated):
        return f"{e.response} {e.dimension}: {e.score:.2f} ({e.method})"
    return type(e).__name__
