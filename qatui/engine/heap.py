"""Keep the garbage collector off the objects that outlive a run, while it runs (and off a session being read).

A run allocates many small objects (events, requests, parsed answers), which triggers the
collector often, and each full collection re-walks everything alive: LiteLLM's modules, the
dataset, loaded models. Those existed before the run and will outlive it, so `gc.freeze()`
moves them out of the collector's sight until the last run in the process ends. Measured on a
cached pairwise replay of 2,000 calls: 0.50 -> 0.27 ms of CPU per call (issue #14). Garbage
that exists at the freeze is collected after the unfreeze, never lost.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_runs = 0


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Freeze what is alive now for as long as any run holds this; the last one out unfreezes."""
    global _runs
    with _lock:
        if _runs == 0:
            gc.freeze()
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0:
                gc.unfreeze()


_paused = 0
_was_enabled = True


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector from running at all while this is held (refcounted; the last one out
    restores it as it was).

    Reading a big session into the TUI builds hundreds of thousands of small objects that all stay:
    each full collection walked them again, 1.1 of the 2.8 s a 3,000-item session took to read
    (measured with `gc.callbacks`). What is freed meanwhile goes by reference counting as always;
    only cycles wait for the collector's next run.
    """
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
