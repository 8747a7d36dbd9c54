"""metav1.Condition bookkeeping: set a condition, keeping lastTransitionTime when status holds."""

from __future__ import annotations

from typing import Any


def set_condition(
    conditions: list[dict[str, Any]],
    type_: str,
    status: str,
    reason: str,
    message: str,
    now: str,
    generation: int | None = None,
) -> list[dict[str, Any]]:
    """A new list with ``type_`` set; lastTransitionTime changes only when the status does."""
    out = []
    found = False
    for cond in conditions:
        if cond.get("type") != type_:
            out.append(cond)
            continue
        found = True
        changed = cond.get("status") != status
        new = {
            "type": type_,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": now if changed else cond.get("lastTransitionTime", now),
        }
        if generation is not None:
            new["observedGeneration"] = generation
        out.append(new)
    if not found:
        new = {
            "type": type_,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": now,
        }
        if generation is not None:
            new["observedGeneration"] = generation
        out.append(new)
    return out


def get_condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return cond
    return None
