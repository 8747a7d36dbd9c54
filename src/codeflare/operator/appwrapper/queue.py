"""A reconcile queue: keys processed one at a time each, by a few workers, with delayed re-adds.

Events only say *which* AppWrapper to look at; the reconcile reads everything it needs from the
API. A key added while it is being reconciled is reconciled again afterwards; a reconcile that
raises is retried with exponential backoff; a reconcile may ask to be called again after a delay
(time-based transitions). Nothing here is decision state: losing the queue loses nothing,
because a restarted controller lists every AppWrapper again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable

log = logging.getLogger(__name__)

Reconcile = Callable[[Hashable], Awaitable[float | None]]


class ReconcileQueue:
    """Deduplicating work queue for one controller (one instance per operator, no globals)."""

    def __init__(self, reconcile: Reconcile, *, workers: int = 4, max_backoff: float = 30.0) -> None:
        self._reconcile = reconcile
        self._workers = workers
        self._max_backoff = max_backoff
        self._queue: asyncio.Queue[Hashable] = asyncio.Queue()
        self._queued: set[Hashable] = set()
        self._active: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._timers: dict[Hashable, tuple[float, asyncio.TimerHandle]] = {}
        self._failures: dict[Hashable, int] = {}

    def add(self, key: Hashable, delay: float = 0.0) -> None:
        """Reconcile ``key`` now, or after ``delay`` seconds (the earliest request wins)."""
        if delay > 0:
            loop = asyncio.get_running_loop()
            due = loop.time() + delay
            current = self._timers.get(key)
            if current is not None and current[0] <= due:
                return
            if current is not None:
                current[1].cancel()
            self._timers[key] = (due, loop.call_later(delay, self._fire, key))
            return
        if key in self._active:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def _fire(self, key: Hashable) -> None:
        self._timers.pop(key, None)
        self.add(key)

    async def run(self) -> None:
        """Run the workers until cancelled."""
        workers = [asyncio.create_task(self._work(), name=f"reconcile-{i}") for i in range(self._workers)]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()
            for _, timer in self._timers.values():
                timer.cancel()

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            self._queued.discard(key)
            self._active.add(key)
            delay: float | None
            try:
                delay = await self._reconcile(key)
                self._failures.pop(key, None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures = self._failures[key] = self._failures.get(key, 0) + 1
                delay = min(0.25 * 2 ** (failures - 1), self._max_backoff)
                log.warning("reconcile of %s failed (attempt %d), retrying in %.2fs: %s", key, failures,
                            delay, exc, exc_info=failures == 1 and not _is_expected(exc))
            finally:
                self._active.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                self.add(key)
            if delay is not None:
                self.add(key, delay)


def _is_expected(exc: Exception) -> bool:
    from codeflare.kube import errors

    return isinstance(exc, errors.KubeError)
