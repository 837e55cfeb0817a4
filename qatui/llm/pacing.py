"""How many calls one backbone has in flight: a limit that adapts (AIMD) and a pause a provider asks for.

A provider that rate-limits says so with 429s (and often `Retry-After`); one that is overloaded
times out. Either way, asking harder makes it worse, and a fixed concurrency either wastes the
provider's room or floods it. So each backbone's limit moves as TCP's window does: every
answered call adds `1 / limit` (about one more call in flight per round of answers, up to the
configured `max_concurrency`); a 429 or a timeout halves it (down to 1), once per round: a
call sent before the last cut says nothing new about the cut limit and does not cut again. A
`Retry-After` (or `retry-after-ms`) pauses every new call of the backbone until it has passed,
since the provider said no call would be answered before then.

The limit is shared by every client of the backbone in the process; waiters queue in arrival
order (FIFO) and are handed a slot directly, so none is overtaken. Waiting for a slot is never
an attempt: a call that waits has not been asked yet. `snapshot()` gives what a live view
shows (the CLI's progress line, the TUI's run header).
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass

MAX_PAUSE_S = 60.0
"""The longest one `Retry-After` pauses a backbone (a provider's header is data, not an order to stop for good)."""

OK, OVERLOADED, OTHER = "ok", "overloaded", "other"
"""How an attempt ended, as the limit sees it: answered; a 429 or a timeout; any other failure (no change)."""

_LIMITS: weakref.WeakSet[AdaptiveLimit] = weakref.WeakSet()


@dataclass(frozen=True)
class Pace:
    """One backbone's limit at a moment: what a live view shows."""

    model: str
    limit: int
    ceiling: int
    in_flight: int
    waiting: int
    rate_limited: int
    timeouts: int
    paused_s: float
    """Seconds left of a pause a `Retry-After` asked for (0 when none)."""
    last_used: float
    """`time.monotonic()` of the last slot taken."""


class AdaptiveLimit:
    """The AIMD concurrency limit of one backbone (see the module docstring); safe across threads and loops."""

    def __init__(self, model: str, ceiling: int) -> None:
        self.model = model
        self.ceiling = max(1, int(ceiling))
        self.limit = float(self.ceiling)
        self.in_flight = 0
        self.max_in_flight = 0
        self.rate_limited = 0
        self.timeouts = 0
        self.cuts = 0
        self.paused_until = 0.0
        self.last_used = 0.0
        self._last_cut = float("-inf")
        self._waiters: deque[asyncio.Future[float]] = deque()
        self._lock = threading.Lock()
        self._wake_at = 0.0
        _LIMITS.add(self)

    @property
    def allowed(self) -> int:
        """Calls that may be in flight now."""
        return max(1, int(self.limit))

    def _free(self, now: float) -> bool:
        return now >= self.paused_until and self.in_flight < self.allowed

    def _take(self, now: float) -> float:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.last_used = now
        return now

    async def acquire(self) -> float:
        """Wait for a slot (FIFO); returns the time it was taken, to hand back to `release`."""
        loop = asyncio.get_running_loop()
        with self._lock:
            now = time.monotonic()
            if not self._waiters and self._free(now):
                return self._take(now)
            future: asyncio.Future[float] = loop.create_future()
            self._waiters.append(future)
        self._wake_after_pause(loop)
        try:
            return await future
        except asyncio.CancelledError:
            with self._lock:
                if future.done() and not future.cancelled():
                    self.in_flight -= 1  # handed a slot, then cancelled before using it: hand it on
                elif future in self._waiters:
                    self._waiters.remove(future)
            self._grant()
            raise

    def release(self, taken: float, outcome: str, pause_s: float | None = None) -> None:
        """Give back the slot taken at `taken`; `outcome` is OK, OVERLOADED or OTHER; `pause_s` from a Retry-After."""
        with self._lock:
            self.in_flight -= 1
            now = time.monotonic()
            if outcome == OK:
                self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
            elif outcome == OVERLOADED:
                if taken >= self._last_cut:  # sent under the current limit: it was too many
                    self.limit = max(1.0, self.limit / 2)
                    self._last_cut = now
                    self.cuts += 1
                if pause_s is not None and pause_s > 0:
                    self.paused_until = max(self.paused_until, now + min(pause_s, MAX_PAUSE_S))
        self._grant()
        if self.paused_until > time.monotonic():
            try:
                self._wake_after_pause(asyncio.get_running_loop())
            except RuntimeError:  # no loop in this thread: a waiter's own loop wakes it
                pass

    def count(self, rate_limited: bool) -> None:
        """Tally one 429 (True) or one timeout (False) for the live view."""
        with self._lock:
            if rate_limited:
                self.rate_limited += 1
            else:
                self.timeouts += 1

    def _grant(self) -> None:
        """Hand free slots to the longest-waiting calls, on each one's own loop."""
        granted: list[asyncio.Future[float]] = []
        with self._lock:
            now = time.monotonic()
            while self._waiters and self._free(now):
                future = self._waiters.popleft()
                if future.cancelled():
                    continue
                self._take(now)
                granted.append(future)
        for future in granted:
            loop = future.get_loop()
            try:
                loop.call_soon_threadsafe(self._hand, future, now)
            except RuntimeError:  # that loop is closed: its call is gone, so is its slot
                with self._lock:
                    self.in_flight -= 1

    def _hand(self, future: asyncio.Future[float], now: float) -> None:
        if future.cancelled():
            with self._lock:
                self.in_flight -= 1
            self._grant()
        else:
            future.set_result(now)

    def _wake_after_pause(self, loop: asyncio.AbstractEventLoop) -> None:
        """While paused, make sure someone grants the queue when the pause ends."""
        with self._lock:
            until = self.paused_until
            if until <= time.monotonic() or self._wake_at >= until:
                return
            self._wake_at = until
        loop.call_later(until - time.monotonic() + 0.001, self._grant)

    def pace(self) -> Pace:
        """The limit now, for a live view."""
        with self._lock:
            return Pace(self.model, self.allowed, self.ceiling, self.in_flight, len(self._waiters),
                        self.rate_limited, self.timeouts, max(0.0, self.paused_until - time.monotonic()),
                        self.last_used)


def snapshot(since: float = 0.0) -> list[Pace]:
    """Every backbone's limit that took a slot at or after `since` (`time.monotonic()`), by model."""
    return sorted((limit.pace() for limit in list(_LIMITS) if limit.last_used >= since and limit.last_used),
                  key=lambda pace: pace.model)
