"""Kubernetes API errors as values: field errors and `Status` responses.

Every failure the embedded API server reports is an :class:`ApiError` carrying the HTTP code,
the machine-readable reason and, for 422 Invalid, the list of :class:`FieldError` causes. The
HTTP layer turns it into a ``meta.k8s.io/v1 Status`` body. Pure data; no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# Cause types, as Kubernetes spells them in Status.details.causes[].reason.
FIELD_REQUIRED = "FieldValueRequired"
FIELD_INVALID = "FieldValueInvalid"
FIELD_NOT_SUPPORTED = "FieldValueNotSupported"
FIELD_FORBIDDEN = "FieldValueForbidden"
FIELD_TOO_LONG = "FieldValueTooLong"
FIELD_DUPLICATE = "FieldValueDuplicate"
FIELD_TYPE_INVALID = "FieldValueTypeInvalid"
FIELD_CONFLICT = "FieldManagerConflict"

_DETAIL_PREFIX = {
    FIELD_REQUIRED: "Required value",
    FIELD_INVALID: "Invalid value",
    FIELD_NOT_SUPPORTED: "Unsupported value",
    FIELD_FORBIDDEN: "Forbidden",
    FIELD_TOO_LONG: "Too long",
    FIELD_DUPLICATE: "Duplicate value",
    FIELD_TYPE_INVALID: "Invalid value",
    FIELD_CONFLICT: "Conflict",
}


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


_NO_VALUE = object()


@dataclass(frozen=True)
class FieldError:
    """One invalid field: ``field`` is a dotted path such as ``spec.workerGroupSpecs[0].replicas``."""

    type: str
    field: str
    detail: str = ""
    value: Any = _NO_VALUE

    def message(self) -> str:
        """Render the error the way Kubernetes does: ``spec.x: Invalid value: 3: must be ...``."""
        prefix = _DETAIL_PREFIX.get(self.type, "Invalid value")
        text = f"{self.field}: {prefix}"
        if self.value is not _NO_VALUE and self.type not in (FIELD_REQUIRED, FIELD_FORBIDDEN):
            text += f": {_render_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def cause(self) -> dict[str, Any]:
        return {"reason": self.type, "message": self.message(), "field": self.field}


@dataclass
class ApiError(Exception):
    """An error answer: HTTP ``code``, Status ``reason`` and a human ``message``."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    causes: list[FieldError] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def status(self) -> dict[str, Any]:
        """The ``meta.k8s.io/v1 Status`` body for this error."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
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


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def unauthorized(message: str = "Unauthorized") -> ApiError:
    return ApiError(401, "Unauthorized", message)


def forbidden(message: str, resource: str = "", name: str = "", group: str = "") -> ApiError:
    return ApiError(403, "Forbidden", message, _details(resource, name, group) if resource else {})


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{_qualified(resource, group)} "{name}" not found',
        _details(resource, name, group),
    )


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> ApiError:
    return ApiError(405, "MethodNotAllowed", message)


def already_exists(resource: str, name: str, group: str = "") -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{_qualified(resource, group)} "{name}" already exists',
        _details(resource, name, group),
    )


def conflict(resource: str, name: str, group: str = "", why: str = "") -> ApiError:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}',
        _details(resource, name, group),
    )


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


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
    return ApiError(
        422,
        "Invalid",
        f'{kind}{"." + group if group else ""} "{name}" is invalid: {rendered}',
        _details(kind, name, group),
        list(causes),
    )
