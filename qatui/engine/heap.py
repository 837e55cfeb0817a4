"""Python's garbage collector in qatui: off the objects that outlive a run while it runs (and off a session being
read), and, in a `qatui` process, collecting its young generation less often.

A run allocates many small objects (events, requests, parsed answers), which triggers the
collector often, and each full collection re-walks everything alive: LiteLLM's modules, the
dataset, loaded models. Those existed before the run and will outlive it, so `gc.freeze()`
moves them out of the collector's sight until the last run in the process ends. Measured on a
cached pairwise replay of 2,000 calls: 0.50 -> 0.27 ms of CPU per call (bench/NOTES.md). Garbage
that exists at the freeze is collected after the unfreeze, never lost.

A `qatui` process (the console script, `python -m qatui`) also sets the collector's thresholds
(`PROCESS_THRESHOLDS`): at Python's defaults a fully cached 2,000-call rerun still collected 357
times, 0.11 to 0.19 s of its 1.0 s (before and after its run, and the young generation during it);
at these, 97 times, 0.05 s (bench/NOTES.md, "The collector").
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any


class _SharedSwitch:
    """A process-wide setting many holders may want at once: `first_in()` when the first enters, and
    `last_out(what first_in returned)` when the last one leaves (a failing holder leaves too)."""

    def __init__(self, first_in: Callable[[], Any], last_out: Callable[[Any], None]) -> None:
        self._first_in, self._last_out = first_in, last_out
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: Any = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the switch for the `with` block."""
        with self._lock:
            if self._holders == 0:
                self._saved = self._first_in()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    self._last_out(self._saved)


PROCESS_THRESHOLDS = (10_000, 20, 20)
"""The collector's thresholds in a `qatui` process (Python's defaults: 700, 10, 10): the young generation is collected
at 10,000 net allocations of containers, not 700, the older ones as often relative to it as at the defaults. A run
makes hundreds of thousands of short-lived containers (the JSON of cache entries and session shards, events,
verdicts); cyclic garbage is still collected, a little later."""


def tune_process_collector() -> None:
    """Set `PROCESS_THRESHOLDS`, for a process that is qatui's alone (never one that only calls into qatui)."""
    gc.set_threshold(*PROCESS_THRESHOLDS)


def _pause_collector() -> bool:
    """Turn the cyclic collector off; whether it was on."""
    was_on = gc.isenabled()
    gc.disable()
    return was_on


_frozen = _SharedSwitch(gc.freeze, lambda _: gc.unfreeze())
_paused = _SharedSwitch(_pause_collector, lambda was_on: gc.enable() if was_on else None)


def frozen_heap() -> AbstractContextManager[None]:
    """Freeze what is alive now for as long as any run holds this; the last one out unfreezes."""
    return _frozen.held()


def collector_paused() -> AbstractContextManager[None]:
    """Keep the cyclic collector from running at all while this is held; the last one out restores it as it was.

    Reading a big session into the TUI builds hundreds of thousands of small objects that all stay:
    each full collection walked them again, 1.1 of the 2.8 s a 3,000-item session took to read
    (measured with `gc.callbacks`). What is freed meanwhile goes by reference counting as always;
    only cycles wait for the collector's next run.
    """
    return _paused.held()
