"""When the client sends a failed request again: the retry policy and the failure mapping below HTTP.

:func:`send_with_retries` resends a request after a :mod:`~codeflare.kube.errors` type that is
``temporary`` and :meth:`~codeflare.kube.errors.KubeError.retryable` for it (idempotent, or never
processed by the server), waiting with exponential backoff or the server's Retry-After, up to
:class:`RetryPolicy` ``attempts``. :func:`transport_error` turns a failure below HTTP (refused
connection, reset, timeout) into the error type saying whether the request may have been sent.
No request is built here; :class:`~codeflare.kube.client.AsyncKube` passes them in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from codeflare.kube import errors

__all__ = ["NO_RETRIES", "RetryPolicy", "send_with_retries", "transport_error"]

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a request is resent after a retryable temporary error."""

    attempts: int = 4  # sends in all, the first included
    base_delay: float = 0.2  # seconds before the first resend, doubling after each
    max_delay: float = 5.0  # longest wait between two sends (also caps a server's Retry-After)

    def delay(self, attempt: int, error: errors.KubeError) -> float:
        """Seconds to wait after failed send number ``attempt`` (1-based)."""
        hint = getattr(error, "retry_after", None)
        if hint:
            return min(float(hint), self.max_delay)
        return min(self.base_delay * 2 ** (attempt - 1), self.max_delay)


NO_RETRIES = RetryPolicy(attempts=1)


async def send_with_retries(
    send: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    idempotent: bool,
    what: str = "request",
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """``await send()``, resending it after the errors that :class:`RetryPolicy` and the error allow."""
    attempt = 1
    while True:
        try:
            return await send()
        except errors.KubeError as exc:
            if attempt >= policy.attempts or not exc.temporary or not exc.retryable(idempotent):
                raise
            delay = policy.delay(attempt, exc)
            log.debug("%s failed (%s, attempt %d); resending in %.2fs", what, exc, attempt, delay)
            await sleep(delay)
            attempt += 1


def transport_error(
    exc: BaseException, *, kind: str = "", name: str = "", namespace: str = ""
) -> errors.KubeError:
    """The :mod:`errors` type for a failure below HTTP (no answer from the server)."""
    import httpx2

    if isinstance(exc, TimeoutError | httpx2.TimeoutException) and not isinstance(exc, httpx2.ConnectTimeout):
        message = f"no answer from the API server in time: {exc}"
        return errors.TimedOut(message, kind=kind, name=name, namespace=namespace)
    never_sent = isinstance(exc, ConnectionRefusedError | httpx2.ConnectError | httpx2.ConnectTimeout)
    return errors.Unreachable(
        f"cannot reach the API server: {exc}", sent=not never_sent, kind=kind, name=name, namespace=namespace
    )
