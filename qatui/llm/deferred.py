"""A backbone's live check put off until a run's first call the cache cannot answer (`llm.preflight` decides when).

A served embedder's probe and a served NLI model's `/info` and label check are put off the same way, until the
run's first request the model-output store cannot answer (`judges.resources` decides when; the embedder and the
NLI scorer await `before_call` through a protocol of their own, their packages never importing this one).

`DeferredCheck` holds the check (made once; the calls behind the first wait for its outcome) and what it showed;
`RUN_STOP` is how a failed one stops the run: the engine binds it around each (item, judge), so the item is left
pending even when its judge goes on without the call (a jury's member); `RUN_STOPPING` is how a stopping run (its
first Ctrl-C) keeps new calls from starting while those in flight return. Kept apart from `llm.preflight`, which
makes the check, so that `LLMClient` can wait for it without importing what imports it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

from qatui.errors import QatuiError
from qatui.llm.errors import LLMCallError


class BackboneDown(LLMCallError):
    """A call's backbone (or served model) failed its put-off live check: the run stops, the item is left pending."""


RUN_STOP: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar("qatui_run_stop", default=None)
"""Bound by the engine around each (item, judge): called with the reason when a put-off check fails."""


RUN_STOPPING: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar("qatui_run_stopping",
                                                                                         default=None)
"""Bound by the engine around each (item, judge): whether the run is stopping (its first Ctrl-C). No call starts
then (`check_not_stopping`), while the calls in flight return: their answers reach the call cache, and their cost
the session, so the resume never pays for them again."""


class RunStopping(LLMCallError):
    """A call not started because the run is stopping: its item is left pending, never failed."""


def check_not_stopping(model: str) -> None:
    """`RunStopping` when the run is stopping (`RUN_STOPPING`); else nothing. Called before a call is sent."""
    if (stopping := RUN_STOPPING.get()) is not None and stopping():
        raise RunStopping(f"{model}: not asked: the run is stopping (Ctrl-C)")


class DeferredCheck:
    """A backbone's live request, put off until its first call the cache cannot answer; made once.

    `make` makes it: the line it showed, or a `QatuiError` saying why the backbone cannot be used."""

    def __init__(self, make: Callable[[], Coroutine[Any, Any, str]]) -> None:
        self._make = make
        self.line = ""
        """What the request showed ("… replied in 0.1 s …"), once made and answered."""
        self.refusal: str | None = None
        """Why the backbone cannot be used, once the request failed."""
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    @property
    def made(self) -> bool:
        """Whether the request has been made (answered or not)."""
        return bool(self.line) or self.refusal is not None

    @property
    def passed(self) -> bool:
        """Whether the request has been made and answered: what the model computes from now on may be used."""
        return bool(self.line) and self.refusal is None

    async def before_call(self) -> None:
        """Before a call the cache could not answer: make the request once (the first call makes it, the calls
        behind it wait for its outcome); when the backbone cannot be used, stop the run (`RUN_STOP`) and raise
        `BackboneDown` with the reason."""
        if not self.made:
            loop = asyncio.get_running_loop()
            async with self._locks.setdefault(loop, asyncio.Lock()):
                if not self.made:
                    try:  # in a context of its own, as before a run: not an item's call, not recorded, not capped
                        self.line = await loop.create_task(self._make(), context=contextvars.Context())
                    except QatuiError as e:
                        self.refusal = str(e)
        if self.refusal is not None:
            if (stop := RUN_STOP.get()) is not None:
                stop(self.refusal)
            raise BackboneDown(self.refusal)
