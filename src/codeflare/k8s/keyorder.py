"""Writes that must reach the API in the order they were decided, per object, and no more than a
few at a time overall.

A controller that does not wait for its writes before deciding again (the scheduling loop hands
each cycle's decisions to a task) may decide twice about one object before the first write has
landed: an admission, then an eviction. :class:`KeyedOrder` sends the writes of one key one after
another, in the order they were handed over, and the writes of different keys concurrently, at
most ``limit`` at once. A write waits for the earlier writes of its key *before* it takes a slot
of the limit, so a slot is never held by a write that waits for another one (no deadlock however
small the limit). Writes waiting for a slot take it by ``urgency`` (highest first), then in the
order they came: an admission of a high-priority workload need not wait behind the backlog of
low-priority ones decided before it. Cancelling a waiting write never cancels the write it waits
for. Nothing here knows about HTTP or Kubernetes objects: a key is any hashable name.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

__all__ = ["KeyedOrder", "Slots"]

T = TypeVar("T")


class Slots:
    """At most ``size`` holders at once; waiters are served by urgency (highest first), then in
    the order they came. ``async with`` takes a slot at urgency 0."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"limit must be at least 1, got {size}")
        self._free = size
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []  # (minus urgency, arrival, waiter)
        self._arrivals = itertools.count()

    async def acquire(self, urgency: int = 0) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (-urgency, next(self._arrivals), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot, then cancelled: pass it on
                self.release()
            raise

    def release(self) -> None:
        """Give the slot to the first waiter still waiting, else back to the pool."""
        while self._waiting:
            waiter = heapq.heappop(self._waiting)[2]
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()


class KeyedOrder:
    """Per-key order and an overall limit for asynchronous writes."""

    def __init__(self, limit: int) -> None:
        self.limit = Slots(limit)  # also for unordered writes that share the budget
        self._newest: dict[Hashable, asyncio.Future[None]] = {}  # per key: its newest write's end

    def run(self, key: Hashable, write: Callable[[], Awaitable[T]], urgency: int = 0) -> Awaitable[T]:
        """What awaits ``write()`` after every write handed over earlier for ``key``, within the
        limit (a slot taken at ``urgency``). The place in line is taken by this call, not when the
        result is first awaited, so the order of calls is the order of writes; the result must be
        awaited (a write never awaited would hold its key's line)."""
        before = self._newest.get(key)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._newest[key] = done
        return self._after(key, before, done, write, urgency)

    async def _after(
        self,
        key: Hashable,
        before: asyncio.Future[None] | None,
        done: asyncio.Future[None],
        write: Callable[[], Awaitable[T]],
        urgency: int,
    ) -> T:
        try:
            if before is not None:
                await asyncio.wait({before})  # not ``await before``: our cancellation must not cancel it
            await self.limit.acquire(urgency)
            try:
                return await write()
            finally:
                self.limit.release()
        finally:
            done.set_result(None)
            if self._newest.get(key) is done:
                del self._newest[key]
