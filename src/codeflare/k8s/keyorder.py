"""Writes that must reach the API in the order they were decided, per object, and no more than a
few at a time overall.

A controller that does not wait for its writes before deciding again (the scheduling loop hands
each cycle's decisions to a task) may decide twice about one object before the first write has
landed: an admission, then an eviction. :class:`KeyedOrder` sends the writes of one key one after
another, in the order they were handed over, and the writes of different keys concurrently, at
most ``limit`` at once. A write waits for the earlier writes of its key *before* it takes a slot
of the limit, so a slot is never held by a write that waits for another one (no deadlock however
small the limit). Cancelling a waiting write never cancels the write it waits for. Nothing here
knows about HTTP or Kubernetes objects: a key is any hashable name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

__all__ = ["KeyedOrder"]

T = TypeVar("T")


class KeyedOrder:
    """Per-key order and an overall limit for asynchronous writes."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = asyncio.Semaphore(limit)  # also for unordered writes that share the budget
        self._newest: dict[Hashable, asyncio.Future[None]] = {}  # per key: its newest write's end

    def run(self, key: Hashable, write: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """What awaits ``write()`` after every write handed over earlier for ``key``, within the
        limit. The place in line is taken by this call, not when the result is first awaited, so
        the order of calls is the order of writes; the result must be awaited (a write never
        awaited would hold its key's line)."""
        before = self._newest.get(key)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._newest[key] = done
        return self._after(key, before, done, write)

    async def _after(
        self,
        key: Hashable,
        before: asyncio.Future[None] | None,
        done: asyncio.Future[None],
        write: Callable[[], Awaitable[T]],
    ) -> T:
        try:
            if before is not None:
                await asyncio.wait({before})  # not ``await before``: our cancellation must not cancel it
            async with self.limit:
                return await write()
        finally:
            done.set_result(None)
            if self._newest.get(key) is done:
                del self._newest[key]
