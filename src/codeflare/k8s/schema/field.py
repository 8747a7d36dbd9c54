"""Field errors as Kubernetes reports them: a cause type, a dotted field path, a value, a detail.

The schema engine, ObjectMeta validation and every API-server strategy describe what is wrong
with an object as a list of :class:`FieldError`; the API server turns that list into the causes
of a 422 ``Status`` and renders each one as ``spec.x: Invalid value: 3: must be ...``, the way
``k8s.io/apimachinery/pkg/util/validation/field`` does. This module is pure data: it knows
nothing about HTTP, Status bodies or which resource an error belongs to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
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
        return f"{self.field}: {self.body()}"

    def body(self) -> str:
        """The message without the field (``field.Error.ErrorBody``): ``Invalid value: 3: must be ...``."""
        text = _DETAIL_PREFIX.get(self.type, "Invalid value")
        if self.value is not _NO_VALUE and self.type not in (FIELD_REQUIRED, FIELD_FORBIDDEN):
            text += f": {_render_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def cause(self) -> dict[str, Any]:
        """A ``Status`` cause, as kube-apiserver writes it: the field apart from the message (kubectl
        prints ``field: message``); a field-manager conflict's message is the conflict alone."""
        message = self.detail if self.type == FIELD_CONFLICT else self.body()
        return {"reason": self.type, "message": message, "field": self.field}


def json_type(value: Any, *, whole_floats_are_integers: bool = True) -> str:
    """The JSON type name of a decoded JSON value, for "must be of type" errors.

    A float with a whole value (3.0) is "integer" as OpenAPI schemas see it; ObjectMeta's typed
    fields pass ``whole_floats_are_integers=False`` so that 3.0 for an integer field reads "number".
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if whole_floats_are_integers and value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__
