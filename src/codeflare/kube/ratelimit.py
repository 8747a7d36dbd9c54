"""Client-side request rate limit: the token bucket client-go puts behind ``QPS`` and ``Burst``.

A client configured with ``qps`` and ``burst`` (the operator's ``clientConnection``) may send
``burst`` requests at once and then ``qps`` a second on average. As in client-go (its
``flowcontrol.NewTokenBucketRateLimiter``, built on ``golang.org/x/time/rate``), the bucket holds
at most ``burst`` tokens, starts full and refills continuously at ``qps``; each request takes one
token, and when none is left it *reserves* the next one and waits for it, so waiters are served
in the order they asked and the average rate never exceeds ``qps``. :meth:`TokenBucket.reserve`
is the pure arithmetic (time is passed in); :meth:`TokenBucket.acquire` is the asyncio wait.
Nothing here knows about HTTP: :class:`~codeflare.kube.client.AsyncKube` calls ``acquire`` before
each request it sends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """``burst`` tokens, refilled at ``qps`` a second; a request waits until its token is due."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if not qps > 0:
            raise ValueError(f"qps must be greater than 0, got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = clock
        self._tokens = float(burst)  # may go negative: tokens already promised to waiters
        self._last: float | None = None

    def reserve(self, now: float) -> float:
        """Take one token at time ``now``; returns how many seconds the caller must wait for it."""
        if self._last is not None and now > self._last:  # a clock stepping back adds nothing
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        # a deficit of a rounding error is no deficit (x/time/rate fixed the same, golang/go#34861)
        return 0.0 if self._tokens > -1e-9 else -self._tokens / self.qps

    async def acquire(self) -> None:
        """Wait (asyncio) until this caller's token is due."""
        delay = self.reserve(self._clock())
        if delay > 0:
            await asyncio.sleep(delay)

    def __repr__(self) -> str:
        return f"TokenBucket(qps={self.qps:g}, burst={self.burst})"
