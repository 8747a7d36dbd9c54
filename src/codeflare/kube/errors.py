"""One exception hierarchy for every API failure, carrying the server's message and the object.

Two properties drive what is retried, and :class:`~codeflare.kube.client.AsyncKube` acts on them:
``temporary`` says a later attempt of the same request may succeed (throttling, server trouble,
an unreachable server), and :meth:`KubeError.retryable` says whether the client may resend it
at once: always when the server cannot have acted on it (429, a connection that never opened),
otherwise only when the request is idempotent. Permanent errors (400 bad request, 401/403, 404,
409 AlreadyExists, 422 invalid) are never resent. A Conflict (stale resourceVersion) or Gone
(expired watch) is not temporary either: resending the same request cannot succeed, the caller
must read or list again (``AsyncKube.update`` and the informers do). No I/O here.
"""

from __future__ import annotations

import json
from typing import Any

from codeflare.errors import CodeFlareError


class KubeError(CodeFlareError):
    """An API call failed; ``status``/``reason`` are the server's, ``message`` its words."""

    temporary = False

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        reason: str = "",
        kind: str = "",
        name: str = "",
        namespace: str = "",
        causes: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.reason = reason
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.causes = causes or []

    def __str__(self) -> str:
        where = f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}".strip()
        return f"{where}: {self.message}" if where and self.name else self.message

    def retryable(self, idempotent: bool) -> bool:
        """Whether the client may send the same request again right away (never, for this type)."""
        return False


class NotFound(KubeError):
    pass


class AlreadyExists(KubeError):
    pass


class Conflict(KubeError):
    """Stale resourceVersion or server-side apply conflict: read again, then retry the change."""


class Invalid(KubeError):
    """422: the object was refused; ``causes`` name the fields."""


class BadRequest(KubeError):
    pass


class Unauthorized(KubeError):
    pass


class Forbidden(KubeError):
    pass


class Gone(KubeError):
    """410: the requested resourceVersion is too old; list again."""


class TemporaryError(KubeError):
    """Throttling, server trouble, connection failures: a later attempt may succeed."""

    temporary = True

    def retryable(self, idempotent: bool) -> bool:
        return idempotent


class TooManyRequests(TemporaryError):
    """429: the server refused the request before acting on it; ``retry_after`` is its hint."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after

    def retryable(self, idempotent: bool) -> bool:
        return True


class ServerError(TemporaryError):
    """5xx: the server failed; it may or may not have acted on the request."""


class Unreachable(TemporaryError):
    """No answer from the server. ``sent``: whether the request may have reached it at all."""

    def __init__(self, message: str, *, sent: bool = True, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.sent = sent

    def retryable(self, idempotent: bool) -> bool:
        return idempotent or not self.sent


class TimedOut(TemporaryError):
    """The client gave up waiting for an answer. Not resent by the client: the timeout was spent."""

    def retryable(self, idempotent: bool) -> bool:
        return False


_BY_STATUS: dict[int, type[KubeError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    410: Gone,
    422: Invalid,
}


def from_status(status: dict[str, Any], *, kind: str = "", name: str = "", namespace: str = "") -> KubeError:
    """Build the matching exception from a Kubernetes ``Status`` body."""
    code = int(status.get("code") or 0)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or reason or f"HTTP {code}")
    details = status.get("details") or {}
    causes = details.get("causes") or []
    common: dict[str, Any] = {
        "status": code,
        "reason": reason,
        "kind": kind,
        "name": name or str(details.get("name") or ""),
        "namespace": namespace,
        "causes": causes,
    }
    if code == 429:
        hint = details.get("retryAfterSeconds")
        return TooManyRequests(message, retry_after=float(hint) if hint else None, **common)
    cls: type[KubeError]
    if code == 409:
        cls = AlreadyExists if reason == "AlreadyExists" else Conflict
    elif code >= 500:
        cls = ServerError
    else:
        cls = _BY_STATUS.get(code, KubeError)
    return cls(message, **common)


def from_response(
    code: int, body: str, *, kind: str = "", name: str = "", namespace: str = ""
) -> KubeError:
    """The exception for an HTTP error answer: its ``Status`` body when it has one, else its text.

    A proxy or load balancer in front of the API server may answer with plain text (or JSON with
    another content type); the HTTP code still decides the type, and the text is the message.
    """
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and (parsed.get("kind") == "Status" or "message" in parsed):
        status = dict(parsed, code=parsed.get("code") or code)
    else:
        status = {"code": code, "message": body.strip()[:500]}
    return from_status(status, kind=kind, name=name, namespace=namespace)
