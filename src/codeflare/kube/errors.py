"""One exception hierarchy for every API failure, carrying the server's message and the object.

Permanent errors (bad input, not found, forbidden) and temporary ones (conflicts, throttling,
server or connection trouble) are distinct types, so callers retry only what retrying can fix.
"""

from __future__ import annotations

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


class NotFound(KubeError):
    pass


class AlreadyExists(KubeError):
    pass


class Conflict(KubeError):
    """Stale resourceVersion or server-side apply conflict: re-read and retry."""

    temporary = True


class Invalid(KubeError):
    """422: the object was refused; ``causes`` name the fields."""


class BadRequest(KubeError):
    pass


class Unauthorized(KubeError):
    pass


class Forbidden(KubeError):
    pass


class Gone(KubeError):
    """410: the requested resourceVersion is too old; re-list."""

    temporary = True


class TemporaryError(KubeError):
    """Throttling, timeouts, 5xx, connection failures."""

    temporary = True


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
    cls: type[KubeError]
    if code == 409:
        cls = AlreadyExists if reason == "AlreadyExists" else Conflict
    elif code == 429 or code >= 500:
        cls = TemporaryError
    else:
        cls = _BY_STATUS.get(code, KubeError)
    return cls(
        message,
        status=code,
        reason=reason,
        kind=kind,
        name=name or str(details.get("name") or ""),
        namespace=namespace,
        causes=causes,
    )
