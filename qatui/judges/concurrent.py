"""A judge's calls for one item asked at once, their results taken as they finish."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")


async def as_they_finish(calls: Iterable[Awaitable[T]]) -> AsyncIterator[T]:
    """Each call's result as soon as it is ready; the calls still running are cancelled if the consumer stops.

    The backbone's own semaphore bounds how many run at once; an error in one ends the item.
    """
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
    finally:
        for task in tasks:
            task.cancel()
