"""Kubernetes API errors as values: ``Status`` responses and their constructors.

Every failure the embedded API server reports is an :class:`ApiError` carrying the HTTP code,
the machine-readable reason and, for 422 Invalid, the list of :class:`FieldError` causes (field
errors themselves and their :class:`~codeflare.k8s.schema.field.ErrorType` live in
:mod:`codeflare.k8s.schema.field`, shared with the schema engine and the SDK). The HTTP layer
turns an error into a ``meta.k8s.io/v1 Status`` body. Pure data; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codeflare.k8s.schema.field import FieldError

__all__ = [
    "ApiError",
    "already_exists",
    "bad_request",
    "conflict",
    "forbidden",
    "gone",
    "insufficient_storage",
    "invalid",
    "method_not_allowed",
    "not_found",
    "too_large_resource_version",
    "unauthorized",
    "unsupported_media_type",
]


@dataclass
class ApiError(Exception):
    """An error answer: HTTP ``code``, Status ``reason`` and a human ``message``."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    causes: list[FieldError] = field(default_factory=list)
    list_meta: dict[str, Any] = field(default_factory=dict)  # Status.metadata (a fresh continue token)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def status(self) -> dict[str, Any]:
        """The ``meta.k8s.io/v1 Status`` body for this error."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        details = dict(self.details)
        if self.causes:
            details["causes"] = [c.cause() for c in self.causes]
        if details:
            body["details"] = details
        return body


def _details(kind: str, name: str, group: str) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    return out


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def _about_object(
    code: int,
    reason: str,
    resource: str,
    name: str,
    group: str,
    *,
    before: str = "",
    after: str = "",
    causes: list[FieldError] | None = None,
) -> ApiError:
    """An error about one named object, worded ``<before>resource.group "name"<after>``."""
    message = f'{before}{_qualified(resource, group)} "{name}"{after}'
    return ApiError(code, reason, message, _details(resource, name, group), list(causes or ()))


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def unauthorized(message: str = "Unauthorized") -> ApiError:
    return ApiError(401, "Unauthorized", message)


def forbidden(message: str, resource: str = "", name: str = "", group: str = "") -> ApiError:
    return ApiError(403, "Forbidden", message, _details(resource, name, group) if resource else {})


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    return _about_object(404, "NotFound", resource, name, group, after=" not found")


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> ApiError:
    return ApiError(405, "MethodNotAllowed", message)


def already_exists(resource: str, name: str, group: str = "") -> ApiError:
    return _about_object(409, "AlreadyExists", resource, name, group, after=" already exists")


def conflict(resource: str, name: str, group: str = "", why: str = "") -> ApiError:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    before = "Operation cannot be fulfilled on "
    return _about_object(409, "Conflict", resource, name, group, before=before, after=f": {why}")


def gone(message: str, continue_token: str = "") -> ApiError:
    """410 Expired; ``continue_token`` lets a list go on from where it was (inconsistently)."""
    return ApiError(410, "Expired", message, list_meta={"continue": continue_token} if continue_token else {})


def too_large_resource_version(requested: int, current: int, retry_after: int) -> ApiError:
    """504 Timeout for a read at a resourceVersion the store has not reached (kube-apiserver's
    ``storage.NewTooLargeResourceVersionError``: a Timeout whose one cause says why)."""
    details: dict[str, Any] = {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    }
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    message = f"Timeout: Too large resource version: {requested}, current: {current}"
    return ApiError(504, "Timeout", message, details)


def insufficient_storage(state_dir: str) -> ApiError:
    """507: the disk under the state directory is full; deletes still work to free it."""
    return ApiError(
        507,
        "InsufficientStorage",
        f"the API server's storage is full: no space left on the device of {state_dir}; "
        "writes are refused until space is freed (DELETE requests still work)",
    )


def unsupported_media_type(content_type: str) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: " + content_type,
    )


def invalid(kind: str, name: str, causes: list[FieldError], group: str = "") -> ApiError:
    """422 Invalid naming each bad field, with Kubernetes' message shape."""
    rendered = ", ".join(c.message() for c in causes)
    if len(causes) > 1:
        rendered = f"[{rendered}]"
    return _about_object(422, "Invalid", kind, name, group, after=f" is invalid: {rendered}", causes=causes)
