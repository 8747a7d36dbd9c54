"""The Nodes view: capacity and allocation per node, GPUs by product, scale-out in flight.

Allocation is what the scheduler would count: the requests of every pod bound to the node that
has not ended (``spec.nodeName`` set, phase not Succeeded/Failed). GPUs are grouped by the
product label NVIDIA's feature discovery sets. Scale-out requests are read from the node groups
(MachineSets, MachineDeployments) the operator annotates, and from nodes reserved for a
workload. A user who may not read Nodes sees that said, not an empty machine. Pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from codeflare.dashboard.queues import ZERO, amount
from codeflare.dashboard.snapshot import Snapshot, meta, spec, status
from codeflare.k8s.conditions import is_condition_true
from codeflare.k8s.constants import RESERVED_FOR_ANNOTATION, SCALE_OUT_REQUESTS_ANNOTATION
from codeflare.k8s.types import Obj
from codeflare.kube import kinds

GPU = "nvidia.com/gpu"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
SHOWN_RESOURCES = ("cpu", "memory", GPU)


@dataclass(frozen=True)
class NodeRow:
    name: str
    ready: bool
    schedulable: bool
    capacity: Mapping[str, Decimal]
    allocatable: Mapping[str, Decimal]
    allocated: Mapping[str, Decimal]
    pods: int
    gpu_product: str = ""
    reserved_for: str = ""


@dataclass(frozen=True)
class ScaleOutRequest:
    group: str  # "MachineSet/openshift-machine-api/gpu-a100"
    workload: str
    nodes: int
    requested_at: str
    released_at: str = ""


@dataclass(frozen=True)
class NodesView:
    nodes: tuple[NodeRow, ...]
    gpus_by_product: Mapping[str, tuple[Decimal, Decimal]] = field(
        default_factory=dict
    )  # (allocatable, used)
    scale_out: tuple[ScaleOutRequest, ...] = ()
    nodes_refused: bool = False


def pod_requests(pod: Obj) -> dict[str, Decimal]:
    """A pod's requests as the scheduler counts them: the sum of its containers (init containers'
    maximum when larger, as Kubernetes does)."""
    total: dict[str, Decimal] = {}
    for container in spec(pod).get("containers") or []:
        for res, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[res] = total.get(res, ZERO) + amount(value)
    for container in spec(pod).get("initContainers") or []:
        for res, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[res] = max(total.get(res, ZERO), amount(value))
    return total


def _quantities(values: Mapping[str, object] | None) -> dict[str, Decimal]:
    return {str(k): amount(v) for k, v in (values or {}).items()}


def _requests_of(group: Obj, kind: str) -> list[ScaleOutRequest]:
    text = (meta(group).get("annotations") or {}).get(SCALE_OUT_REQUESTS_ANNOTATION)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return []
    where = f"{kind}/{meta(group).get('namespace')}/{meta(group).get('name')}"
    out = []
    for workload, entry in sorted(data.items() if isinstance(data, dict) else []):
        if isinstance(entry, dict):
            out.append(
                ScaleOutRequest(
                    where,
                    str(workload),
                    int(entry.get("nodes") or 0),
                    str(entry.get("requestedAt") or ""),
                    str(entry.get("releasedAt") or ""),
                )
            )
    return out


def nodes_view(snapshot: Snapshot) -> NodesView:
    allocated: dict[str, dict[str, Decimal]] = {}
    pods: dict[str, int] = {}
    for pod in snapshot.of(kinds.POD):
        node = spec(pod).get("nodeName")
        if not node or status(pod).get("phase") in ("Succeeded", "Failed"):
            continue
        pods[node] = pods.get(node, 0) + 1
        mine = allocated.setdefault(str(node), {})
        for res, value in pod_requests(pod).items():
            mine[res] = mine.get(res, ZERO) + value
    rows = []
    gpus: dict[str, tuple[Decimal, Decimal]] = {}
    for node in sorted(snapshot.of(kinds.NODE), key=lambda o: str(meta(o).get("name"))):
        name = str(meta(node).get("name"))
        labels = meta(node).get("labels") or {}
        row = NodeRow(
            name=name,
            ready=is_condition_true(status(node).get("conditions"), "Ready"),
            schedulable=not spec(node).get("unschedulable"),
            capacity=_quantities(status(node).get("capacity")),
            allocatable=_quantities(status(node).get("allocatable")),
            allocated=allocated.get(name, {}),
            pods=pods.get(name, 0),
            gpu_product=str(labels.get(GPU_PRODUCT_LABEL) or ""),
            reserved_for=str((meta(node).get("annotations") or {}).get(RESERVED_FOR_ANNOTATION) or ""),
        )
        rows.append(row)
        have = row.allocatable.get(GPU, ZERO)
        if have > ZERO:
            product = row.gpu_product or "unknown product"
            total, used = gpus.get(product, (ZERO, ZERO))
            gpus[product] = (total + have, used + row.allocated.get(GPU, ZERO))
    requests = [
        req
        for kind in (kinds.MACHINE_SET, kinds.MACHINE_DEPLOYMENT)
        for group in snapshot.of(kind)
        for req in _requests_of(group, kind.kind)
    ]
    return NodesView(tuple(rows), dict(sorted(gpus.items())), tuple(requests), snapshot.refused(kinds.NODE))
