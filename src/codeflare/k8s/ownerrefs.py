"""Owner references: build one from an object, find the controller, test ownership.

Children the controllers create carry a controlling owner reference so the garbage collector
deletes them with their owner and informers can route their events back to it. The reference is
built from the owner object itself (apiVersion, kind, name, uid); callers holding an object read
from a list (where apiVersion/kind may be absent) pass them explicitly. Ownership is decided by
uid, as the garbage collector does, never by name alone. No API calls here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codeflare.k8s.types import Obj

__all__ = ["controller_of", "is_owned_by", "owner_reference", "owner_references"]


def owner_reference(
    owner: Mapping[str, Any],
    *,
    api_version: str | None = None,
    kind: str | None = None,
    controller: bool = True,
    block_owner_deletion: bool = True,
) -> Obj:
    """An ownerReference pointing at ``owner`` (controlling and blocking deletion by default).

    ``api_version`` and ``kind`` override (or stand in for missing) fields of ``owner``.
    ``ValueError`` when the owner has no name, uid, apiVersion or kind.
    """
    meta = owner.get("metadata") or {}
    ref: Obj = {
        "apiVersion": api_version or owner.get("apiVersion") or "",
        "kind": kind or owner.get("kind") or "",
        "name": meta.get("name") or "",
        "uid": meta.get("uid") or "",
    }
    missing = [key for key, value in ref.items() if not value]
    if missing:
        raise ValueError(f"cannot reference an owner without {', '.join(missing)}")
    ref["controller"] = controller
    ref["blockOwnerDeletion"] = block_owner_deletion
    return ref


def owner_references(obj: Mapping[str, Any]) -> list[Obj]:
    """``obj.metadata.ownerReferences`` (an empty list when absent)."""
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])


def controller_of(obj: Mapping[str, Any], kind: str | None = None) -> Obj | None:
    """The owner reference with ``controller: true`` (of ``kind``, when given), or None."""
    for ref in owner_references(obj):
        if ref.get("controller") and (kind is None or ref.get("kind") == kind):
            return ref
    return None


def is_owned_by(obj: Mapping[str, Any], owner: Mapping[str, Any] | str) -> bool:
    """Whether ``obj`` has an owner reference to ``owner`` (an object or its uid)."""
    uid = owner if isinstance(owner, str) else (owner.get("metadata") or {}).get("uid")
    return bool(uid) and any(ref.get("uid") == uid for ref in owner_references(obj))
