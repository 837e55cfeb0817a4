"""`run --plan`'s view of a judge's calls: each request built exactly as the run would send it, counted, never sent.

A judge runs on an item with `CAPTURE` bound: its client builds each request (prompt, schema,
fences, trimming to the window) as a real run would, and `qatui.llm.spend.hold` records it (its
model, purpose, prompt tokens, `max_tokens`, and whether the call cache already answers it) and
then waits for ever, so nothing is sent. The planner cancels the judge once its first calls are
held: calls a judge asks only after an answer (MinosEval's second step, a re-ask) cannot be
built without that answer, and are estimated from these (`qatui.engine.pricing`).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Captured:
    """One request a judge built: what a run would send, counted with the backbone's tokenizer."""

    model: str
    purpose: str
    prompt_tokens: int
    max_tokens: int
    cached: bool
    """The call cache already holds its answer: a run would pay nothing for it."""
    answer: str | None = None
    """That cached answer's text (None when not cached): what a judge then embeds out of it can be counted."""
    key: str = ""
    """Its call cache key: judges that build one request are answered once in a run (the cache)."""


@dataclass
class Capture:
    """The requests held so far on one item."""

    calls: list[Captured] = field(default_factory=list)


CAPTURE: ContextVar[Capture | None] = ContextVar("qatui_capture", default=None)
"""Bound by the planner while it runs a judge on an item; None in a real run."""
