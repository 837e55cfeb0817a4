"""Running RAGAS's per-response metric streams at once, their events forwarded as they come."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing

from qatui.events import Event
from qatui.judges.base import calls_paid_for

_END = object()


async def merged(streams: list[AsyncIterator[Event]]) -> AsyncIterator[Event]:
    """The events of several async generators, as they come.

    A stream that fails ends the item as any judge's failed call does (`calls_paid_for`): the other streams'
    calls in flight are answered first (their answers cached, their costs in the item's record), and each of
    those streams is closed at its next event, so that it starts no call after the failure. Cancelled from
    outside, every stream is cancelled at once.
    """
    queue: asyncio.Queue = asyncio.Queue()
    failed = False

    async def drain(stream: AsyncIterator[Event]) -> None:
        try:
            async with aclosing(stream):  # type: ignore[type-var]
                async for event in stream:
                    queue.put_nowait(event)
                    if failed:
                        break
        finally:
            queue.put_nowait(_END)

    tasks = [asyncio.ensure_future(drain(s)) for s in streams]
    try:
        async with calls_paid_for(tasks):
            live = len(tasks)
            while live:
                event = await queue.get()
                if event is not _END:
                    yield event
                    continue
                live -= 1
                if error := next((t.exception() for t in tasks if t.done() and not t.cancelled() and t.exception()),
                                 None):
                    failed = True
                    raise error
    finally:
        await asyncio.gather(*tasks, return_exceptions=True)
