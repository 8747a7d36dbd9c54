"""events.k8s.io/v1 Events as kube-apiserver validates their creation (ValidateEventCreate).

The strict rules of the events API, which core/v1 Events are spared for compatibility: an
eventTime, a type of Normal or Warning, and a reporting controller, reporting instance, action
and reason. Length limits and the series rules are not checked here.
"""

from __future__ import annotations

from typing import Any

from codeflare.k8s.schema.field import ErrorType, FieldError

_REQUIRED = ("eventTime", "reportingController", "reportingInstance", "action", "reason")


def validate_event(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    if old is not None:
        return []  # creation rules
    errs = [FieldError(ErrorType.REQUIRED, key, "") for key in _REQUIRED if not obj.get(key)]
    kind = obj.get("type")
    if kind not in ("Normal", "Warning"):
        errs.append(FieldError(ErrorType.INVALID, "type", f"has invalid value: {kind or ''}", ""))
    return errs
