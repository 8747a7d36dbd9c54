"""Kueue's ``resource-in-use`` finalizer on ClusterQueues and ResourceFlavors.

Kueue (pkg/controller/core/clusterqueue_controller.go, resourceflavor_controller.go) keeps this
finalizer on every ClusterQueue and ResourceFlavor; a ClusterQueue being deleted keeps it until
no workload holds quota in it, a ResourceFlavor until no ClusterQueue names it. LocalQueues carry
no finalizer in Kueue v0.14 and none here. :func:`finalizers_change` is the pure decision; the
queue-status reporter writes it.
"""

from __future__ import annotations

from codeflare.k8s.constants import RESOURCE_IN_USE_FINALIZER
from codeflare.k8s.types import Obj


def finalizers_change(obj: Obj, in_use: bool) -> list[str] | None:
    """The object's new ``metadata.finalizers``, or None when they stay as they are."""
    meta = obj.get("metadata") or {}
    finalizers = [str(f) for f in meta.get("finalizers") or []]
    if not meta.get("deletionTimestamp"):
        return None if RESOURCE_IN_USE_FINALIZER in finalizers else [*finalizers, RESOURCE_IN_USE_FINALIZER]
    if RESOURCE_IN_USE_FINALIZER in finalizers and not in_use:
        return [f for f in finalizers if f != RESOURCE_IN_USE_FINALIZER]
    return None


def flavors_in_use(cluster_queues: list[Obj]) -> set[str]:
    """The ResourceFlavors some ClusterQueue names (terminating ones included, as Kueue's cache)."""
    return {
        str(flavor.get("name", ""))
        for cq in cluster_queues
        for group in (cq.get("spec") or {}).get("resourceGroups") or []
        for flavor in group.get("flavors") or []
    }
