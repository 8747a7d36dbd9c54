"""What an update may change in ``metadata``: the API server's ObjectMeta update rules.

The syntax of ObjectMeta (names, labels, owners, ...) is checked by
:func:`codeflare.k8s.schema.objectmeta.validate_object_meta`, shared with the schema engine and
the SDK. This module adds the rules only a server applying an update can check, because they
compare the stored object with the new one: immutable identity fields, deletion fields clients
cannot set, and no new finalizers once deletion has started. Pure functions; no I/O.
"""

from __future__ import annotations

from typing import Any

from codeflare.k8s.schema.field import ErrorType, FieldError

_IMMUTABLE = ("name", "namespace", "uid", "creationTimestamp")


def validate_meta_update(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    """What an update may not change in ``metadata`` (both arguments are metadata dicts).

    name, namespace, uid and creationTimestamp are immutable; an empty uid or
    creationTimestamp in ``new`` counts as "unchanged" (the server copies them from the stored
    object, as Kubernetes does). Clients cannot set or move deletionTimestamp or
    deletionGracePeriodSeconds, and no finalizer may be added once deletion has started.
    This does not re-run :func:`validate_object_meta` on ``new``.
    """
    errs: list[FieldError] = []
    for key in _IMMUTABLE:
        before, after = old.get(key) or "", new.get(key) or ""
        if key in ("uid", "creationTimestamp") and not after:
            continue
        if before != after:
            errs.append(FieldError(ErrorType.INVALID, f"metadata.{key}", "field is immutable", after))
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        before, after = old.get(key), new.get(key)
        if after is not None and before != after:
            errs.append(FieldError(ErrorType.INVALID, f"metadata.{key}", "field is immutable", after))
    if old.get("deletionTimestamp"):
        known = set(old.get("finalizers") or [])
        added = [f for f in new.get("finalizers") or [] if isinstance(f, str) and f not in known]
        if added:
            errs.append(
                FieldError(
                    ErrorType.FORBIDDEN,
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {added}",
                )
            )
    return errs
