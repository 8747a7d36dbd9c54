"""Which nodes of a group scale-in may remove: pure functions over the informers' caches.

A node may go when it runs no live pod of a workload other than the released ones, is not
already on its way out, and its removal leaves every admitted workload's flavors enough
allocatable on the remaining Ready nodes. Candidates come in removal order: nodes already marked
for deletion first, then not-Ready ones, then the newest names. The controller passes the
caches in and carries the choice out; nothing here writes or reads the API.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

from codeflare.k8s.conditions import conditions_of, is_condition_true
from codeflare.k8s.constants import APPWRAPPER_LABEL, QUEUE_NAME_LABEL, RAY_CLUSTER_LABEL
from codeflare.k8s.quantity import milli_value
from codeflare.k8s.types import Obj
from codeflare.operator.queueing import convert
from codeflare.scheduling.scaleout import NodeGroup, labels_satisfy

__all__ = ["MANAGED_POD_LABELS", "finished", "marked", "removable", "removal_rank"]

# pods of workloads we manage: the first two name the job the pod belongs to
MANAGED_POD_LABELS = (RAY_CLUSTER_LABEL, APPWRAPPER_LABEL, QUEUE_NAME_LABEL)


def finished(obj: Obj) -> bool:
    """Whether a Workload is Finished."""
    return is_condition_true(conditions_of(obj), "Finished")


def ready(node: Obj) -> bool:
    return is_condition_true(conditions_of(node), "Ready")


def marked(node: Obj) -> bool:
    """Whether a node carries a provider's delete-machine mark."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    return any(a.endswith("/delete-machine") for a in annotations)


def removal_rank(node: Obj) -> tuple[int, int, str]:
    """Nodes already marked first, then not-Ready ones, then newest names first (reverse order)."""
    name = node["metadata"]["name"]
    return (
        0 if marked(node) else 1,
        1 if ready(node) else 0,
        "".join(chr(0x10FFFF - ord(c)) for c in name),
    )


def _busy(pods: Iterable[Obj], released: set[tuple[str, str]]) -> set[str]:
    """Nodes running a live managed pod that belongs to none of the ``released`` jobs."""
    busy: set[str] = set()
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        mine = [labels[k] for k in MANAGED_POD_LABELS[:2] if k in labels]
        if any(k in labels for k in MANAGED_POD_LABELS) and not any(
            (meta.get("namespace", ""), v) in released for v in mine
        ):
            busy.add(str(node))
    return busy


def removable(
    group: NodeGroup,
    members: list[Obj],
    owners: list[Mapping[str, Any]],
    *,
    pods: Iterable[Obj],
    flavors: Iterable[Obj],
    workloads: Iterable[Obj],
    nodes: Iterable[Obj],
) -> list[str]:
    """The group's nodes, in removal order, that run no pod of another workload and hold no admission.

    ``owners`` are the jobs of the released requests (their pods do not keep a node busy);
    ``pods``, ``flavors``, ``workloads`` and ``nodes`` are the caches of those kinds.
    """
    released = {(str(o.get("namespace", "")), str(o.get("name", ""))) for o in owners if o}
    busy = _busy(pods, released)
    # marked nodes beyond the replicas are already given back (the provider has yet to remove
    # them); marked nodes within the replicas were marked by a pass that died before lowering them
    surplus = max(0, len(members) - group.replicas)
    going = {n["metadata"]["name"] for n in sorted(members, key=removal_rank)[:surplus] if marked(n)}
    idle = [n for n in members if n["metadata"]["name"] not in busy | going]
    idle.sort(key=removal_rank)
    return _keep_admitted_capacity(group, idle, going, flavors, workloads, list(nodes))


def _keep_admitted_capacity(
    group: NodeGroup,
    idle: list[Obj],
    going: set[str],
    flavors: Iterable[Obj],
    workloads: Iterable[Obj],
    nodes: list[Obj],
) -> list[str]:
    """Drop candidates whose removal would leave admitted workloads' flavors short of nodes."""
    labels_of = {
        str((flavor.get("metadata") or {}).get("name", "")): dict(
            (flavor.get("spec") or {}).get("nodeLabels") or {})
        for flavor in flavors
    }
    served = {f: labels for f, labels in labels_of.items() if labels_satisfy(group.labels, labels)}
    usage: dict[tuple[str, str], int] = {}
    for obj in workloads:
        admission = convert.admission_of(obj)
        if admission is None or finished(obj):
            continue
        for psa in admission.pod_set_assignments:
            for resource, amount in psa.resource_usage.items():
                flavor = psa.flavors.get(resource)
                if flavor in served:
                    usage[(flavor, resource)] = usage.get((flavor, resource), 0) + amount.milli
    chosen: list[str] = []
    for candidate in idle:
        name = candidate["metadata"]["name"]
        if all(
            _allocatable(nodes, served[f], r, going | set(chosen) | {name}) >= need
            for (f, r), need in usage.items()
        ):
            chosen.append(name)
    return chosen


def _allocatable(nodes: Iterable[Obj], labels: Mapping[str, str], resource: str, without: set[str]) -> int:
    total = 0
    for node in nodes:
        meta = node.get("metadata") or {}
        if meta.get("name") in without or not ready(node):
            continue
        if not labels_satisfy(meta.get("labels") or {}, labels):
            continue
        value = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
        if value is not None:
            with contextlib.suppress(ValueError):
                total += milli_value(str(value))
    return total
