"""What the agent reads from a RayCluster and writes back, as pure functions.

RayCluster head/worker groups become :class:`NodeTemplate` values (``--num-cpus``/``--num-gpus``/
``--memory``/custom resources from rayStartParams first, then from the container's limits or
requests, as KubeRay does); Ray nodes become Pod objects; the cluster becomes a KubeRay-style
status (state, conditions, replica counts, endpoints, head IPs). No I/O.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from codeflare.local.agent.cluster_runner import NodeTemplate

Obj = dict[str, Any]
LOOPBACK = "127.0.0.1"
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "intel.com/gpu")
MIN_OBJECT_STORE = 80 * 1024 * 1024

_SUFFIX: dict[str, int | Decimal] = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "m": Decimal("0.001"),
}
_QUANTITY = re.compile(r"^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$")


def quantity(value: Any) -> Decimal:
    """A Kubernetes quantity as a Decimal ("500m" -> 0.5, "2Gi" -> 2147483648)."""
    match = _QUANTITY.match(str(value).strip())
    if match is None:
        raise ValueError(f"invalid quantity {value!r}")
    return Decimal(match.group(1)) * Decimal(_SUFFIX[match.group(2) or ""])


def _container(template: Obj) -> Obj:
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return containers[0] if isinstance(containers[0], dict) else {}


def _resource(container: Obj, name: str) -> Decimal | None:
    resources = container.get("resources") or {}
    for source in ("limits", "requests"):
        value = (resources.get(source) or {}).get(name)
        if value is not None:
            return quantity(value)
    return None


def node_template(group: Obj, *, head: bool) -> NodeTemplate:
    """The Ray node shape of a head group or worker group spec."""
    params = {str(k): str(v) for k, v in (group.get("rayStartParams") or {}).items()}
    template = group.get("template") or {}
    container = _container(template)
    cpu = Decimal(params.pop("num-cpus")) if "num-cpus" in params else _resource(container, "cpu")
    num_cpus = max(1, math.floor(cpu)) if cpu is not None else 1
    if "num-gpus" in params:
        num_gpus = int(Decimal(params.pop("num-gpus")))
    else:
        num_gpus = int(sum((_resource(container, g) or Decimal(0)) for g in GPU_RESOURCES))
    memory = int(Decimal(params.pop("memory"))) if "memory" in params else None
    if memory is None:
        mem = _resource(container, "memory")
        memory = int(mem) if mem is not None else None
    resources: dict[str, float] = {}
    if "resources" in params:
        raw = params.pop("resources").strip().strip("'\"")
        resources = {str(k): float(v) for k, v in json.loads(raw.replace('\\"', '"')).items()}
    object_store = None
    if memory is not None:
        object_store = max(MIN_OBJECT_STORE, memory * 3 // 10)
    env = {str(e["name"]): str(e.get("value", "")) for e in container.get("env") or [] if "name" in e}
    for key in ("dashboard-host", "block", "port", "node-ip-address"):
        params.pop(key, None)
    return NodeTemplate(
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        memory_bytes=memory,
        object_store_memory_bytes=object_store
        if object_store is None
        else min(object_store, 512 * 1024 * 1024),
        resources=resources,
        ray_start_params=params,
        env=env,
    )


def desired_workers(spec: Obj) -> dict[str, tuple[int, Obj]]:
    """group name -> (number of Ray worker nodes, group spec)."""
    out: dict[str, tuple[int, Obj]] = {}
    for group in spec.get("workerGroupSpecs") or []:
        name = str(group.get("groupName") or "workers")
        replicas = group.get("replicas")
        if replicas is None:
            replicas = group.get("minReplicas") or 0
        if group.get("suspend"):
            replicas = 0
        out[name] = (int(replicas) * int(group.get("numOfHosts") or 1), group)
    return out


def pod_name(cluster: str, node: str) -> str:
    """Pod name of a Ray node (``demo-head``, ``demo-small-group-worker-0``)."""
    if node == "head":
        return f"{cluster}-head"[:253]
    group, _, index = node.rpartition("-")
    return f"{cluster}-{group}-worker-{index}"[:253]


def pod_for(
    cluster: Obj,
    node: str,
    group: str,
    head: bool,
    template: Obj,
    node_name: str,
    *,
    phase: str,
    ready: bool,
    exit_code: int | None = None,
    pid: int | None = None,
    started: str = "",
    finished: str = "",
) -> Obj:
    """A Pod object standing for one Ray node process."""
    meta = cluster["metadata"]
    container = dict(_container(template))
    container.setdefault("name", "ray-head" if head else "ray-worker")
    container.setdefault("image", "ray")
    labels = {
        **((template.get("metadata") or {}).get("labels") or {}),
        "ray.io/cluster": meta["name"],
        "ray.io/node-type": "head" if head else "worker",
        "ray.io/group": "headgroup" if head else group,
        "app.kubernetes.io/created-by": "codeflare-local-agent",
    }
    if phase == "Running":
        state: Obj = {"running": {"startedAt": started}}
    elif phase in ("Failed", "Succeeded"):
        state = {
            "terminated": {
                "exitCode": exit_code if exit_code is not None else 137,
                "reason": "Completed" if exit_code == 0 else "Error",
                "startedAt": started,
                "finishedAt": finished,
            }
        }
    else:
        state = {"waiting": {"reason": "ContainerCreating"}}
    cond_ready = "True" if ready else "False"
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(meta["name"], node),
            "namespace": meta.get("namespace", "default"),
            "labels": labels,
            "annotations": {"local.codeflare.dev/pid": str(pid or "")},
            "ownerReferences": [
                {
                    "apiVersion": cluster.get("apiVersion", "ray.io/v1"),
                    "kind": "RayCluster",
                    "name": meta["name"],
                    "uid": meta.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"nodeName": node_name, "containers": [container], "restartPolicy": "Never"},
        "status": {
            "phase": phase,
            "podIP": LOOPBACK,
            "hostIP": LOOPBACK,
            "conditions": [
                {"type": "Ready", "status": cond_ready},
                {"type": "ContainersReady", "status": cond_ready},
                {"type": "PodScheduled", "status": "True"},
            ],
            "containerStatuses": [
                {
                    "name": container["name"],
                    "ready": ready,
                    "restartCount": 0,
                    "image": container["image"],
                    "state": state,
                }
            ],
        },
    }
    return pod


def _condition(type_: str, ok: bool, reason: str, message: str, now: str, old: list[Obj]) -> Obj:
    status = "True" if ok else "False"
    previous = next((c for c in old if c.get("type") == type_), None)
    since = previous.get("lastTransitionTime", now) if previous and previous.get("status") == status else now
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since,
    }


def cluster_status(
    cluster: Obj,
    *,
    state: str,
    ready_workers: int,
    desired_workers: int,
    head_ready: bool,
    endpoints: Mapping[str, str] | None,
    now: str,
    reason: str = "",
) -> Obj:
    """RayCluster status as KubeRay writes it."""
    spec = cluster.get("spec") or {}
    old = (cluster.get("status") or {}).get("conditions") or []
    cpu = Decimal(0)
    memory = Decimal(0)
    gpu = Decimal(0)
    groups = [(1, spec.get("headGroupSpec") or {})] + [(n, g) for n, g in desired_workers_items(spec)]
    for count, group in groups:
        container = _container(group.get("template") or {})
        cpu += count * (_resource(container, "cpu") or Decimal(0))
        memory += count * (_resource(container, "memory") or Decimal(0))
        gpu += count * sum((_resource(container, g) or Decimal(0)) for g in GPU_RESOURCES)
    status: Obj = {
        "state": state,
        "readyWorkerReplicas": ready_workers,
        "availableWorkerReplicas": ready_workers,
        "desiredWorkerReplicas": desired_workers,
        "minWorkerReplicas": sum(int(g.get("minReplicas") or 0) for g in spec.get("workerGroupSpecs") or []),
        "maxWorkerReplicas": sum(
            int(g.get("maxReplicas") or g.get("replicas") or 0) for g in spec.get("workerGroupSpecs") or []
        ),
        "desiredCPU": _fmt(cpu),
        "desiredMemory": _fmt(memory),
        "desiredGPU": _fmt(gpu),
        "desiredTPU": "0",
        "lastUpdateTime": now,
        "observedGeneration": cluster["metadata"].get("generation", 1),
        "conditions": [
            _condition(
                "RayClusterProvisioned",
                state == "ready" or (ready_workers >= desired_workers and head_ready),
                "AllPodRunningAndReadyFirstTime" if state == "ready" else "RayClusterPodsProvisioning",
                "",
                now,
                old,
            ),
            _condition(
                "HeadPodReady",
                head_ready,
                "HeadPodRunningAndReady" if head_ready else "HeadPodNotFound",
                "",
                now,
                old,
            ),
            _condition(
                "RayClusterSuspended",
                state == "suspended",
                "Suspended" if state == "suspended" else "NotSuspended",
                "",
                now,
                old,
            ),
        ],
    }
    if reason:
        status["reason"] = reason
    if endpoints:
        status["endpoints"] = dict(endpoints)
        status["head"] = {
            "podIP": LOOPBACK,
            "serviceIP": LOOPBACK,
            "podName": pod_name(cluster["metadata"]["name"], "head"),
        }
    return status


def desired_workers_items(spec: Obj) -> list[tuple[int, Obj]]:
    return list(desired_workers(spec).values())


def _fmt(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return f"{int(value * 1000)}m"
