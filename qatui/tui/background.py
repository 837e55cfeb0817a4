"""Runs execute on their own event loop in a thread, so nothing a judge does can stall the UI.

A judge may import torch or LiteLLM, load a model, or score text on the CPU; on the UI's loop
any of these would freeze the screen for seconds. The app owns one `EngineLoop`, started on
the first run and kept for the next ones, so process-wide asyncio objects of the backbone
layer (semaphores, HTTP clients) stay bound to one loop. A `RunHandle` drives one job there;
its events wait in a deque that the run screen drains 20 times a second (docs/LIBRARIES.md#tui-batches).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qatui.engine.jobs import RunJob


@dataclass(frozen=True)
class RunEnded:
    """The last item a handle queues: the session's final status and its stored summary."""

    status: str
    summary: dict[str, dict] = field(default_factory=dict)
    error: str = ""


class EngineLoop:
    """An asyncio loop in a daemon thread, started on first use."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def submit(self, coro: Coroutine[Any, Any, None]) -> Future[None]:
        """Schedule `coro` on the loop."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call_soon(self, callback: Callable[[], object]) -> None:
        """Run `callback` on the loop's thread."""
        self.loop.call_soon_threadsafe(callback)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="qatui-engine", daemon=True)
            self._thread.start()
        return self._loop

    def close(self) -> None:
        """Cancel what is left on the loop (helpers a judge left behind), then stop the loop and its thread."""
        if self._loop is None or self._thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(_cancel_all(), self._loop).result(timeout=5)
        except TimeoutError:
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()
        self._loop = self._thread = None


async def _cancel_all() -> None:
    """Cancel every other task on the running loop and wait (briefly) for them to finish."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=2)


class RunHandle:
    """One job on the engine loop: start it, take its queued events, pause, resume or cancel it, wait for its end."""

    def __init__(self, job: RunJob) -> None:
        self.job = job
        self.watching: tuple[str, str] | None = None
        """The (item id, judge) whose transcript is on screen: only its calls stream (the screen sets it)."""
        job.engine.watch_tokens = self._watched
        self.ended = threading.Event()
        self._events: deque[object] = deque()
        self._loop: EngineLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._cancelled = False

    def _watched(self, item_id: str, judge: str) -> bool:
        """Asked by the engine at each call, on its loop: stream it only if its transcript is on screen."""
        return self.watching == (item_id, judge)

    @property
    def running(self) -> bool:
        """Whether the run's engine is still working."""
        return self._loop is not None and not self.ended.is_set()

    def start(self, loop: EngineLoop) -> None:
        """Begin consuming the job's engine."""
        self._loop = loop
        loop.submit(self._drive())

    @property
    def paused(self) -> bool:
        """Whether the run is paused (tasks in flight finish, none starts)."""
        return self.job.engine.paused

    def pause(self) -> None:
        """Let the tasks in flight finish but start no new one (on the engine loop, where its gate lives)."""
        if self._loop is not None:
            self._loop.call_soon(self.job.engine.pause)

    def resume(self) -> None:
        """Let the engine take tasks again."""
        if self._loop is not None:
            self._loop.call_soon(self.job.engine.resume)

    def take(self) -> list[object]:
        """The events queued since the last call, oldest first (engine events, then a `RunEnded`)."""
        return [self._events.popleft() for _ in range(len(self._events))]

    @property
    def stopping(self) -> bool:
        """Whether a stop was asked (`cancel`): a second one stops the run at once."""
        return self._cancelled

    def cancel(self, now: bool = False) -> None:
        """Stop the run, leaving the session resumable with every finished item saved.

        The first stop is the CLI's first Ctrl-C (`Engine.stop_calls`): no new item or call starts and the calls in
        flight are waited for, so that what they cost is recorded and their answers reach the call cache (a resume
        takes them from there, paying nothing twice); cancelled at once, their answers were lost and paid again.
        A second stop, or `now`, cancels the run's task at once, as the CLI's second Ctrl-C; so does the first when
        the run sends its calls as provider batches (those are the provider's, collected by a resume)."""
        first = not self._cancelled
        self._cancelled = True
        if self._loop is None:
            return
        if first and not now and self.job.engine.batcher is None:
            self._loop.call_soon(self.job.engine.stop_calls)
        else:
            self._loop.call_soon(lambda: self._task and self._task.cancel())

    async def wait(self) -> None:
        """Until the session is summarised and closed, without blocking the caller's loop."""
        await asyncio.to_thread(self.ended.wait)

    async def _drive(self) -> None:
        from qatui.engine.jobs import finish_run

        status, error = "interrupted", ""
        self._task = asyncio.current_task()
        try:
            if self._cancelled:  # cancelled before the loop got to it
                raise asyncio.CancelledError
            async for event in self.job.engine.run():
                self._events.append(event)
            status = getattr(event, "status", "completed")  # the last: RunFinished (completed, capped or stopped)
        except asyncio.CancelledError:
            status = "cancelled"
        except Exception as e:  # noqa: BLE001 - the engine broke (a judge's failure is an ItemFailed)
            error = f"{type(e).__name__}: {e}"
        try:
            summary = finish_run(self.job, status)
            status = self.job.session.meta.get("status", status)  # "failed" when every item failed
        except Exception as e:  # noqa: BLE001 - shown to the user; the session stays resumable
            summary, error = {}, error or f"{type(e).__name__}: {e}"
        self.ended.set()  # before the screen can read the end: whoever sees RunEnded sees the run not running
        self._events.append(RunEnded(status, summary, error))
