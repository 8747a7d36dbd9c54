"""The controllers' work queue: deduplicated keys, one worker per key, delayed re-adds, backoff.

Events only say *which* object to look at; a reconcile reads everything it needs from the API
(or an informer). :class:`WorkQueue` holds the keys waiting for a reconcile, as client-go's
workqueue does: a key added many times is processed once; a key added while it is being
processed is processed again afterwards, never concurrently; :meth:`WorkQueue.add` with a delay
schedules a re-add (the earliest request wins); :meth:`WorkQueue.add_rate_limited` re-adds after a
per-key exponential backoff that :meth:`WorkQueue.forget` resets. :class:`ReconcileQueue` runs a
reconcile function over it with a few workers. Time comes from an injectable :class:`Clock`
(:class:`ManualClock` in tests), so nothing here needs wall-clock sleeps to be tested. Nothing
here is decision state: losing the queue loses nothing, because a restarted controller lists
every object again.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, Protocol, TypeVar

__all__ = ["Clock", "LoopClock", "ManualClock", "Reconcile", "ReconcileQueue", "WorkQueue"]

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


class Clock(Protocol):
    """Monotonic seconds and a way to wait for them to pass."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class LoopClock:
    """The real clock: monotonic time, ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ManualClock:
    """A clock that moves only when told to (:meth:`advance`): deterministic tests of timing."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._order), future))
        await future

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every sleeper whose time has come."""
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)


class WorkQueue(Generic[K]):
    """Keys waiting to be processed; see the module docstring for the guarantees."""

    def __init__(
        self, *, clock: Clock | None = None, base_delay: float = 0.25, max_delay: float = 30.0
    ) -> None:
        self.clock: Clock = clock or LoopClock()
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._ready: deque[K] = deque()
        self._queued: set[K] = set()
        self._active: set[K] = set()
        self._dirty: set[K] = set()
        self._due: dict[K, float] = {}
        self._timers: list[tuple[float, int, K]] = []
        self._order = itertools.count()
        self._failures: dict[K, int] = {}
        self._changed = asyncio.Event()

    def __len__(self) -> int:
        """Keys ready to be handed out now."""
        return len(self._ready)

    def add(self, key: K, delay: float = 0.0) -> None:
        """Queue ``key`` now, or after ``delay`` seconds (of several delayed requests, the earliest wins)."""
        if delay > 0:
            due = self.clock.now() + delay
            if self._due.get(key, due + 1) <= due:
                return
            self._due[key] = due
            heapq.heappush(self._timers, (due, next(self._order), key))
            self._changed.set()
        elif key in self._active:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._ready.append(key)
            self._changed.set()

    def add_rate_limited(self, key: K) -> float:
        """Queue ``key`` after its next backoff (``base_delay`` doubling up to ``max_delay``); the delay."""
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        delay = min(self.base_delay * 2 ** (failures - 1), self.max_delay)
        self.add(key, delay)
        return delay

    def forget(self, key: K) -> None:
        """Reset ``key``'s backoff (its last processing succeeded)."""
        self._failures.pop(key, None)

    def failures(self, key: K) -> int:
        """How many times in a row ``key`` was re-added after a failure."""
        return self._failures.get(key, 0)

    async def get(self) -> K:
        """The next key to process; it is the caller's until :meth:`done`."""
        while True:
            self._promote_due()
            if self._ready:
                key = self._ready.popleft()
                self._queued.discard(key)
                self._active.add(key)
                return key
            self._changed.clear()
            await self._wait(self._next_due())

    def done(self, key: K) -> None:
        """Processing of ``key`` finished; if it was added meanwhile, it is queued again."""
        self._active.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    def _promote_due(self) -> None:
        now = self.clock.now()
        while self._timers and self._timers[0][0] <= now:
            due, _, key = heapq.heappop(self._timers)
            if self._due.get(key) == due:
                del self._due[key]
                self.add(key)

    def _next_due(self) -> float | None:
        while self._timers and self._due.get(self._timers[0][2]) != self._timers[0][0]:
            heapq.heappop(self._timers)  # superseded by an earlier request, or already fired
        return None if not self._timers else max(0.0, self._timers[0][0] - self.clock.now())

    async def _wait(self, timeout: float | None) -> None:
        if timeout is None:
            await self._changed.wait()
            return
        sleeper = asyncio.ensure_future(self.clock.sleep(timeout))
        changed = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait({sleeper, changed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            changed.cancel()


Reconcile = Callable[[K], Awaitable[float | None]]
"""Reconcile one key; return seconds after which to reconcile it again, or None."""


class ReconcileQueue(Generic[K]):
    """A :class:`WorkQueue` with workers running one reconcile function (one per controller).

    A reconcile that raises is retried after the key's backoff; exceptions of the
    ``expected_errors`` types (API errors, conflicts) are logged without a traceback.
    """

    def __init__(
        self,
        reconcile: Reconcile[K],
        *,
        workers: int = 4,
        clock: Clock | None = None,
        base_delay: float = 0.25,
        max_delay: float = 30.0,
        expected_errors: tuple[type[BaseException], ...] = (),
        name: str = "reconcile",
    ) -> None:
        self.queue: WorkQueue[K] = WorkQueue(clock=clock, base_delay=base_delay, max_delay=max_delay)
        self._reconcile = reconcile
        self._workers = workers
        self._expected = expected_errors
        self._name = name
        self.reconciles = 0  # completed reconciles, successful or not (a counter tests can wait on)

    def add(self, key: K, delay: float = 0.0) -> None:
        """Reconcile ``key`` now, or after ``delay`` seconds."""
        self.queue.add(key, delay)

    async def run(self) -> None:
        """Run the workers until cancelled."""
        tasks = [asyncio.create_task(self._work(), name=f"{self._name}-{i}") for i in range(self._workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            delay: float | None = None
            try:
                delay = await self._reconcile(key)
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                backoff = self.queue.add_rate_limited(key)
                failures = self.queue.failures(key)
                log.warning("%s of %s failed (attempt %d), retrying in %.2fs: %s", self._name, key, failures,
                            backoff, exc, exc_info=failures == 1 and not isinstance(exc, self._expected))
            finally:
                self.queue.done(key)
                self.reconciles += 1
            if delay is not None:
                self.queue.add(key, delay)
