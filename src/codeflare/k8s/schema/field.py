"""Field errors as Kubernetes reports them: a cause type, a dotted field path, a value, a detail.

The schema engine, ObjectMeta validation and every API-server strategy describe what is wrong
with an object as a list of :class:`FieldError` (its :class:`ErrorType` one of Kubernetes' cause
types; :func:`type_invalid` the one "must be of type" error); the API server turns that list
into the causes of a 422 ``Status`` and renders each one as ``spec.x: Invalid value: 3: must
be ...``, the way ``k8s.io/apimachinery/pkg/util/validation/field`` does. This module is pure
data: it knows nothing about HTTP, Status bodies or which resource an error belongs to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ErrorType(StrEnum):
    """What is wrong with a field (``field.ErrorType``), spelled as Kubernetes writes it in
    ``Status.details.causes[].reason``."""

    REQUIRED = "FieldValueRequired"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    DUPLICATE = "FieldValueDuplicate"
    TYPE_INVALID = "FieldValueTypeInvalid"
    CONFLICT = "FieldManagerConflict"


_DETAIL_PREFIX = {
    ErrorType.REQUIRED: "Required value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.CONFLICT: "Conflict",
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

    type: ErrorType
    field: str
    detail: str = ""
    value: Any = _NO_VALUE

    def message(self) -> str:
        """Render the error the way Kubernetes does: ``spec.x: Invalid value: 3: must be ...``."""
        return f"{self.field}: {self.body()}"

    def body(self) -> str:
        """The message without the field (``field.Error.ErrorBody``): ``Invalid value: 3: must be ...``."""
        text = _DETAIL_PREFIX.get(self.type, "Invalid value")
        if self.value is not _NO_VALUE and self.type not in (ErrorType.REQUIRED, ErrorType.FORBIDDEN):
            text += f": {_render_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def cause(self) -> dict[str, Any]:
        """A ``Status`` cause, as kube-apiserver writes it: the field apart from the message (kubectl
        prints ``field: message``); a field-manager conflict's message is the conflict alone."""
        message = self.detail if self.type == ErrorType.CONFLICT else self.body()
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


def type_invalid(path: str, wanted: str, value: Any, *, whole_floats_are_integers: bool = True) -> FieldError:
    """``path: Invalid value: "<value's JSON type>": must be of type <wanted>`` (``field.TypeInvalid``)."""
    found = json_type(value, whole_floats_are_integers=whole_floats_are_integers)
    return FieldError(ErrorType.TYPE_INVALID, path, f"must be of type {wanted}", found)
