"""What a delete request means before anything is removed: preconditions and propagation.

A delete may carry preconditions (uid, resourceVersion) that must match the stored object
(409 otherwise, with Kubernetes' message), and a propagation policy: ``Foreground`` and
``Orphan`` are expressed as the ``foregroundDeletion`` and ``orphan`` finalizers the garbage
collector honours, ``Background`` (the default) adds none. An object with finalizers is only
marked (deletionTimestamp); the object API carries that out. Pure functions.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.registry.resources import ResourceType

PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")
FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"


@dataclass
class DeleteResult:
    """What a delete did: the object as last seen, and whether it is gone or only marked."""

    obj: dict[str, Any]
    gone: bool


def check_preconditions(
    rt: ResourceType, name: str, meta: dict[str, Any], preconditions: dict[str, Any]
) -> None:
    """409 when the delete's uid or resourceVersion precondition does not match ``meta``."""
    uid = preconditions.get("uid")
    if uid and uid != meta.get("uid"):
        raise errors.conflict(
            rt.plural,
            name,
            rt.group,
            f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid')}",
        )
    rv = preconditions.get("resourceVersion")
    if rv and str(rv) != meta.get("resourceVersion"):
        raise errors.conflict(
            rt.plural,
            name,
            rt.group,
            f"Precondition failed: ResourceVersion in precondition: {rv}, "
            f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
        )


def finalizers_after_delete(meta: dict[str, Any], propagation: str) -> list[str]:
    """The object's finalizers once the delete's propagation policy is expressed among them."""
    if propagation and propagation not in PROPAGATION_POLICIES:
        raise errors.bad_request(
            f'propagationPolicy: Unsupported value: "{propagation}": supported values: '
            '"Background", "Foreground", "Orphan"'
        )
    finalizers = list(meta.get("finalizers") or [])
    if propagation == "Foreground" and FOREGROUND_FINALIZER not in finalizers:
        finalizers.append(FOREGROUND_FINALIZER)
    if propagation == "Orphan" and ORPHAN_FINALIZER not in finalizers:
        finalizers.append(ORPHAN_FINALIZER)
    return finalizers


def marked_for_deletion(old: dict[str, Any], finalizers: list[str], now: str) -> dict[str, Any]:
    """A copy of ``old`` held by ``finalizers``: deletionTimestamp set once, grace period 0."""
    new = copy.deepcopy(old)
    meta = new["metadata"]
    meta["finalizers"] = finalizers
    meta.setdefault("deletionTimestamp", now)
    meta.setdefault("deletionGracePeriodSeconds", 0)
    return new
