"""Node providers as the scale-out decision sees them: MachineSets and MachineDeployments as groups.

Reads, from a provider object, the labels its nodes carry, the allocatable of one node and the
scale-out requests recorded on it; writes those requests back. Pure functions over manifests.

Where the node shape comes from (one new node's allocatable):
* OpenShift MachineSet (``machine.openshift.io/v1beta1``): the annotations OpenShift's machine
  controllers put on MachineSets, ``machine.openshift.io/vCPU``, ``machine.openshift.io/memoryMb``
  and ``machine.openshift.io/GPU`` (as ``nvidia.com/gpu``); node labels from
  ``spec.template.spec.metadata.labels``. Marked for deletion with the Machine annotation
  ``machine.openshift.io/delete-machine: "true"``.
* Cluster API MachineDeployment (``cluster.x-k8s.io/v1beta1``): the cluster-autoscaler's
  scale-from-zero annotations ``capacity.cluster-autoscaler.kubernetes.io/cpu``, ``memory``,
  ``gpu-count`` and ``gpu-type`` (resource name, default ``nvidia.com/gpu``); node labels from
  ``spec.template.metadata.labels``. Marked with the Machine annotation
  ``cluster.x-k8s.io/delete-machine``.
The Node itself gets the same annotation too (so a provider without Machine objects, such as the
tests' simulator, can tell which node to remove first).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from codeflare.k8s.constants import SCALE_OUT_REQUESTS_ANNOTATION
from codeflare.k8s.quantity import QuantityError, milli_value
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind
from codeflare.scheduling.scaleout import NodeGroup, RecordedRequest, ScaleRequest

log = logging.getLogger(__name__)

GPU = "nvidia.com/gpu"
MACHINE = Kind("machine.openshift.io", "v1beta1", "Machine", "machines")
CAPI_MACHINE = Kind("cluster.x-k8s.io", "v1beta1", "Machine", "machines")


@dataclass(frozen=True)
class Provider:
    """How one provider kind names things."""

    kind: Kind
    delete_annotation: str
    machine_kind: Kind
    node_machine_annotation: str  # on Nodes: the Machine that runs it


MACHINE_SETS = Provider(
    kinds.MACHINE_SET, "machine.openshift.io/delete-machine", MACHINE, "machine.openshift.io/machine"
)
MACHINE_DEPLOYMENTS = Provider(
    kinds.MACHINE_DEPLOYMENT, "cluster.x-k8s.io/delete-machine", CAPI_MACHINE, "cluster.x-k8s.io/machine"
)
PROVIDERS = {"machineset": MACHINE_SETS, "machinedeployment": MACHINE_DEPLOYMENTS}


def group_name(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def node_labels(obj: Obj) -> dict[str, str]:
    """The labels the group's nodes carry."""
    template = (obj.get("spec") or {}).get("template") or {}
    if obj.get("kind") == kinds.MACHINE_SET.kind:
        meta = (template.get("spec") or {}).get("metadata") or {}
    else:
        meta = template.get("metadata") or {}
    return {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}


def _milli(value: Any, scale: int = 1) -> int | None:
    try:
        return milli_value(str(value).strip()) * scale
    except (QuantityError, ValueError):
        return None


def node_shape(obj: Obj) -> dict[str, int]:
    """One node's allocatable in milli-units, from the provider's annotations (see module docs)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    shape: dict[str, int | None] = {}
    if obj.get("kind") == kinds.MACHINE_SET.kind:
        if "machine.openshift.io/vCPU" in annotations:
            shape["cpu"] = _milli(annotations["machine.openshift.io/vCPU"])
        if "machine.openshift.io/memoryMb" in annotations:
            shape["memory"] = _milli(annotations["machine.openshift.io/memoryMb"], 2**20)
        if "machine.openshift.io/GPU" in annotations:
            shape[GPU] = _milli(annotations["machine.openshift.io/GPU"])
    else:
        prefix = "capacity.cluster-autoscaler.kubernetes.io/"
        if prefix + "cpu" in annotations:
            shape["cpu"] = _milli(annotations[prefix + "cpu"])
        if prefix + "memory" in annotations:
            shape["memory"] = _milli(annotations[prefix + "memory"])
        if prefix + "gpu-count" in annotations:
            shape[str(annotations.get(prefix + "gpu-type") or GPU)] = _milli(
                annotations[prefix + "gpu-count"]
            )
    return {k: v for k, v in shape.items() if v is not None and v > 0}


def to_node_group(obj: Obj) -> NodeGroup:
    return NodeGroup(
        group_name(obj),
        str(obj.get("kind", "")),
        int((obj.get("spec") or {}).get("replicas") or 0),
        node_labels(obj),
        node_shape(obj),
    )


def read_requests(obj: Obj) -> dict[str, Obj]:
    """The group's recorded requests: workload key -> {nodes, requestedAt, releasedAt?, owner?}."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(SCALE_OUT_REQUESTS_ANNOTATION)
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        log.warning("%s: unreadable %s annotation ignored", group_name(obj), SCALE_OUT_REQUESTS_ANNOTATION)
        return {}
    return {str(k): dict(v) for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def recorded(obj: Obj) -> list[RecordedRequest]:
    """The recorded requests as the decision takes them."""
    out = []
    for key, entry in sorted(read_requests(obj).items()):
        try:
            nodes = int(entry.get("nodes") or 0)
        except (TypeError, ValueError):
            continue
        if nodes > 0:
            out.append(
                RecordedRequest(
                    key,
                    group_name(obj),
                    nodes,
                    epoch_seconds(entry.get("requestedAt")) or 0.0,
                    epoch_seconds(entry.get("releasedAt")),
                )
            )
    return out


def with_requests(obj: Obj, requests: Mapping[str, Obj], replicas: int) -> Obj:
    """``obj`` with ``spec.replicas`` and the requests annotation set (one write carries both)."""
    meta = obj.setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {}) or {}
    meta["annotations"] = annotations
    if requests:
        text = json.dumps(dict(sorted(requests.items())), sort_keys=True)
        annotations[SCALE_OUT_REQUESTS_ANNOTATION] = text
    else:
        annotations.pop(SCALE_OUT_REQUESTS_ANNOTATION, None)
    obj.setdefault("spec", {})["replicas"] = max(0, replicas)
    return obj


def replicas_of(obj: Obj) -> int:
    return int((obj.get("spec") or {}).get("replicas") or 0)


def release(obj: Obj, workloads: Iterable[str], when: str) -> Obj | None:
    """``obj`` with the requests of ``workloads`` marked released at ``when``; None if none changes."""
    requests = read_requests(obj)
    touched = [key for key in workloads if key in requests and not requests[key].get("releasedAt")]
    for key in touched:
        requests[key]["releasedAt"] = when
    return with_requests(obj, requests, replicas_of(obj)) if touched else None


def request_nodes(
    obj: Obj, asks: Iterable[ScaleRequest], when: str, owners: Mapping[str, Mapping[str, str]]
) -> Obj | None:
    """``obj`` grown by the asks not yet recorded, each recorded with its owner; None if none is new."""
    requests = read_requests(obj)
    new = [r for r in asks if r.workload not in requests]
    if not new:
        return None
    for r in new:
        owner = dict(owners.get(r.workload, {}))
        requests[r.workload] = {"nodes": r.nodes, "requestedAt": when, "owner": owner}
    return with_requests(obj, requests, replicas_of(obj) + sum(r.nodes for r in new))


def give_back(obj: Obj, remaining: Mapping[str, int], considered: set[str], removed: int) -> Obj:
    """``obj`` after scale-in: ``removed`` fewer replicas; considered requests shrunk or dropped."""
    kept = {
        k: (dict(v, nodes=remaining[k]) if k in remaining else v)
        for k, v in read_requests(obj).items()
        if k in remaining or k not in considered
    }
    return with_requests(obj, kept, replicas_of(obj) - removed)


def nodes_of(group: NodeGroup, nodes: Mapping[Any, Obj]) -> list[Obj]:
    """Nodes carrying every label of the group's template (none when the template has no labels)."""
    if not group.labels:
        return []
    return [
        n
        for n in nodes.values()
        if all(((n.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in group.labels.items())
    ]
