"""Client-side request rate limit: the token bucket client-go puts behind ``QPS`` and ``Burst``,
serving waiting requests by priority.

A client configured with ``qps`` and ``burst`` (the operator's ``clientConnection``) may send
``burst`` requests at once and then ``qps`` a second on average. As in client-go (its
``flowcontrol.NewTokenBucketRateLimiter``, built on ``golang.org/x/time/rate``), the bucket holds
at most ``burst`` tokens, starts full and refills continuously at ``qps``; each request takes one
token. :meth:`TokenBucket.reserve` is that arithmetic (time is passed in). Where we differ from
client-go: a request that finds no token waits in line by :class:`Priority` (first come, first
served within one priority), so the writes that start work (admissions, evictions) go before the
bookkeeping (pending reasons, queue counters, estimates) that shares the same budget; the total
rate is the same bucket's. Bookkeeping also leaves ``keep`` tokens (half the burst by default) in
the bucket: it takes a token only while at least ``keep`` remain after it, so under a flood of
admissions it waits until they leave tokens over, and an admission that follows a round of
bookkeeping still finds tokens there. A caller picks its priority with :func:`priority` (a
context variable, so it follows the tasks it starts). Nothing here knows about HTTP:
:class:`~codeflare.kube.client.AsyncKube` calls :meth:`TokenBucket.acquire` before each request.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import enum
import heapq
import itertools
import time
from collections.abc import Callable, Iterator

__all__ = ["Priority", "TokenBucket", "current_priority", "priority"]

_EPSILON = 1e-9  # a deficit of a rounding error is no deficit (x/time/rate fixed the same, golang/go#34861)


class Priority(enum.IntEnum):
    """Which waiting request gets the next token: the lowest value first."""

    ADMISSION = 0  # writes that start or stop work: admissions, evictions
    DEFAULT = 1
    BOOKKEEPING = 2  # reports about work: pending reasons, queue status counters


_PRIORITY: contextvars.ContextVar[Priority] = contextvars.ContextVar(
    "codeflare_request_priority", default=Priority.DEFAULT
)


@contextlib.contextmanager
def priority(level: Priority) -> Iterator[None]:
    """Requests sent inside this block (and by tasks started inside it) wait at ``level``."""
    token = _PRIORITY.set(level)
    try:
        yield
    finally:
        _PRIORITY.reset(token)


def current_priority() -> Priority:
    """The priority requests sent from here wait at (:data:`Priority.DEFAULT` outside any block)."""
    return _PRIORITY.get()


class TokenBucket:
    """``burst`` tokens, refilled at ``qps`` a second; waiting requests are served by priority."""

    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        keep: int | None = None,
    ) -> None:
        if not qps > 0:
            raise ValueError(f"qps must be greater than 0, got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self.keep = burst // 2 if keep is None else keep  # tokens bookkeeping leaves in the bucket
        if not 0 <= self.keep < self.burst:
            raise ValueError(f"keep must be at least 0 and less than burst {burst}, got {keep}")
        self._clock = clock
        self._tokens = float(burst)  # may go negative: tokens already promised to waiters
        self._last: float | None = None
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []  # (priority, arrival, waiter)
        self._arrivals = itertools.count()
        self._timer: asyncio.TimerHandle | None = None

    def reserve(self, now: float) -> float:
        """Take one token at time ``now``; returns how many seconds the caller must wait for it."""
        if self._last is not None and now > self._last:  # a clock stepping back adds nothing
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens > -_EPSILON else -self._tokens / self.qps

    def due_in(self, now: float, level: Priority = Priority.DEFAULT) -> float:
        """Seconds from ``now`` until a request at ``level`` may take a token (0: now); takes nothing."""
        tokens = self._tokens
        if self._last is not None and now > self._last:
            tokens = min(float(self.burst), tokens + (now - self._last) * self.qps)
        needed = 1.0 + (self.keep if level >= Priority.BOOKKEEPING else 0)
        return 0.0 if tokens >= needed - _EPSILON else (needed - tokens) / self.qps

    async def acquire(self, level: Priority | None = None) -> None:
        """Wait (asyncio) for a token; ``level`` defaults to the caller's :func:`priority`."""
        now = self._clock()
        rank = _PRIORITY.get() if level is None else level
        if not self._waiting and self.due_in(now, rank) == 0.0:
            self._take(now, rank)
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (int(rank), next(self._arrivals), waiter))
        self._dispatch()
        await waiter  # cancelled: the dispatcher skips it

    def _take(self, now: float, level: Priority) -> None:
        """Hand one token to a request at ``level`` (it is due: :meth:`due_in` said so)."""
        self.reserve(now)

    def _dispatch(self) -> None:
        """Hand every token that is there to the first waiters by priority; wake again at the next."""
        if self._timer is not None:
            self._timer.cancel()  # harmless when it is the timer that called
            self._timer = None
        now = self._clock()
        while self._waiting and self.due_in(now, Priority(self._waiting[0][0])) == 0.0:
            rank, _, waiter = heapq.heappop(self._waiting)
            if not waiter.done():
                self._take(now, Priority(rank))
                waiter.set_result(None)
        while self._waiting and self._waiting[0][2].done():
            heapq.heappop(self._waiting)
        if self._waiting:
            wait = self.due_in(now, Priority(self._waiting[0][0]))
            self._timer = asyncio.get_running_loop().call_later(wait, self._dispatch)

    def __repr__(self) -> str:
        return f"TokenBucket(qps={self.qps:g}, burst={self.burst}, keep={self.keep})"
