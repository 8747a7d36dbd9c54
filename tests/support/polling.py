"""The one way tests wait for the system to reach a state: poll a probe until it is truthy.

Every test that waits for a controller, the agent or the API server goes through
:func:`wait_for` (threads, plain code) or :func:`async_wait_for` (inside an event loop). A probe
returns something truthy when the state is reached (that value is returned to the caller) and
something falsy otherwise; a failure message carries the last value seen, so a timeout says how
far the system got. Kubernetes API errors raised by a probe count as "not yet" (an object may not
exist yet), any other exception fails at once. This module decides nothing about what to wait
for, and never asserts that nothing happened: for that, wait on a counter the system exposes.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from codeflare.kube.errors import KubeError

T = TypeVar("T")

#: Exceptions a probe may raise while the state is not reached yet.
NOT_YET: tuple[type[BaseException], ...] = (KubeError,)


def wait_for(
    probe: Callable[[], T],
    timeout: float = 30.0,
    interval: float = 0.1,
    what: str = "",
) -> T:
    """Call ``probe`` until it returns something truthy and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = probe()
        except NOT_YET as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or probe}: last={last!r}")
        time.sleep(interval)


async def async_wait_for(
    probe: Callable[[], T | Awaitable[T]],
    timeout: float = 30.0,
    interval: float = 0.05,
    what: str = "",
) -> T:
    """:func:`wait_for` inside an event loop; ``probe`` may be sync or async."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while True:
        try:
            result = probe()
            last = await result if inspect.isawaitable(result) else result
        except NOT_YET as exc:
            last = exc
        else:
            if last:
                return last  # type: ignore[no-any-return]
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or probe}: last={last!r}")
        await asyncio.sleep(interval)
