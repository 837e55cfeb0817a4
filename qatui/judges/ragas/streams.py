"""Running RAGAS's per-response metric streams at once, their events forwarded as they come."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from qatui.events import Event

_END = object()


async def merged(streams: list[AsyncIterator[Event]]) -> AsyncIterator[Event]:
    """The events of several async generators, as they come; the first error cancels the rest."""
    queue: asyncio.Queue = asyncio.Queue()

    async def drain(stream: AsyncIterator[Event]) -> None:
        try:
            async for event in stream:
                queue.put_nowait(event)
        finally:
            queue.put_nowait(_END)

    tasks = [asyncio.ensure_future(drain(s)) for s in streams]
    try:
        live = len(tasks)
        while live:
            event = await queue.get()
            if event is _END:
                live -= 1
                for task in tasks:
                    if task.done() and not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
                continue
            yield event
        for task in tasks:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
