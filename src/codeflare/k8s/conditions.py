"""metav1.Condition lists: one getter and one setter, with the API's semantics.

A condition is ``{type, status, reason, message, lastTransitionTime[, observedGeneration]}`` in
``status.conditions``. :func:`set_condition` changes ``lastTransitionTime`` only when the status
changes (as ``meta.SetStatusCondition`` does) and says whether anything changed, so callers can
skip writes that would change nothing. Nothing here reads a clock or talks to an API; the time is
passed in as an RFC 3339 string (see :mod:`codeflare.k8s.timestamps`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from codeflare.k8s.types import Obj

__all__ = ["condition_status", "conditions_of", "find_condition", "is_condition_true", "set_condition"]


def conditions_of(obj: Mapping[str, Any]) -> list[Obj]:
    """``obj.status.conditions`` (an empty list when absent)."""
    return list((obj.get("status") or {}).get("conditions") or [])


def find_condition(conditions: Iterable[Mapping[str, Any]] | None, type_: str) -> Obj | None:
    """The condition of ``type_`` in ``conditions`` (a list, or None), or None."""
    for condition in conditions or ():
        if condition.get("type") == type_:
            return condition  # type: ignore[return-value]
    return None


def condition_status(conditions: Iterable[Mapping[str, Any]] | None, type_: str) -> str | None:
    """"True", "False", "Unknown", or None when ``type_`` is absent."""
    condition = find_condition(conditions, type_)
    return None if condition is None else condition.get("status")


def is_condition_true(conditions: Iterable[Mapping[str, Any]] | None, type_: str) -> bool:
    """Whether the condition of ``type_`` is present with status "True"."""
    return condition_status(conditions, type_) == "True"


def set_condition(
    conditions: list[Obj],
    type_: str,
    status: str | bool,
    reason: str,
    message: str,
    now: str,
    observed_generation: int | None = None,
) -> bool:
    """Set the condition of ``type_`` in ``conditions`` (in place); True when anything changed.

    ``status`` is "True", "False", "Unknown" or a bool. ``lastTransitionTime`` becomes ``now``
    for a new condition or a changed status, and is otherwise kept. ``observedGeneration`` is
    written when given and kept otherwise. Other keys of an existing condition are kept.
    """
    text = ("True" if status else "False") if isinstance(status, bool) else status
    for index, current in enumerate(conditions):
        if current.get("type") != type_:
            continue
        updated = dict(current, status=text, reason=reason, message=message)
        if current.get("status") != text or not current.get("lastTransitionTime"):
            updated["lastTransitionTime"] = now
        if observed_generation is not None:
            updated["observedGeneration"] = observed_generation
        if updated == current:
            return False
        conditions[index] = updated
        return True
    new: Obj = {"type": type_, "status": text, "reason": reason, "message": message,
                "lastTransitionTime": now}
    if observed_generation is not None:
        new["observedGeneration"] = observed_generation
    conditions.append(new)
    return True
