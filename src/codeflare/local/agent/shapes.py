"""What the agent reads from a RayCluster and writes back, as pure functions.

RayCluster head/worker groups become :class:`NodeTemplate` values (``--num-cpus``/``--num-gpus``/
``--memory``/custom resources from rayStartParams first, then from the container's limits or
requests, as KubeRay does); Ray nodes become Pod objects; the cluster becomes a KubeRay-style
status (state, conditions, replica counts, endpoints, head IPs). No I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal

from codeflare.k8s.conditions import set_condition
from codeflare.k8s.constants import (
    LOCAL_PID_ANNOTATION,
    RAY_CLUSTER_LABEL,
    RAY_GROUP_LABEL,
    RAY_NODE_TYPE_LABEL,
)
from codeflare.k8s.ownerrefs import owner_reference
from codeflare.k8s.quantity import Format, format_quantity, parse_quantity
from codeflare.k8s.types import Obj
from codeflare.local.agent.cluster_runner import NodeTemplate
from codeflare.local.agent.ray_node import LOOPBACK

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "intel.com/gpu")
MIN_OBJECT_STORE = 80 * 1024 * 1024
CREATED_BY = "codeflare-local-agent"
#: The conditions KubeRay writes on a RayCluster, in the order it writes them.
CONDITION_TYPES = ("RayClusterProvisioned", "HeadPodReady", "RayClusterSuspended")


def _container(template: Obj) -> Obj:
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return containers[0] if isinstance(containers[0], dict) else {}


def _resource(container: Obj, name: str) -> Decimal | None:
    resources = container.get("resources") or {}
    for source in ("limits", "requests"):
        value = (resources.get(source) or {}).get(name)
        if value is not None:
            return parse_quantity(value)
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
        RAY_CLUSTER_LABEL: meta["name"],
        RAY_NODE_TYPE_LABEL: "head" if head else "worker",
        RAY_GROUP_LABEL: "headgroup" if head else group,
        "app.kubernetes.io/created-by": CREATED_BY,
    }
    # a time not known (an exited node's start, after an agent restart) is left out: "" is no date
    times = {k: v for k, v in (("startedAt", started), ("finishedAt", finished)) if v}
    if phase == "Running":
        state: Obj = {"running": {k: v for k, v in times.items() if k == "startedAt"}}
    elif phase in ("Failed", "Succeeded"):
        state = {
            "terminated": {
                "exitCode": exit_code if exit_code is not None else 137,
                "reason": "Completed" if exit_code == 0 else "Error",
                **times,
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
            "annotations": {LOCAL_PID_ANNOTATION: str(pid or "")},
            "ownerReferences": [
                owner_reference(
                    cluster, api_version=cluster.get("apiVersion") or "ray.io/v1", kind="RayCluster"
                )
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


def _conditions(old: list[Obj], now: str, wanted: list[tuple[str, bool, str]]) -> list[Obj]:
    """KubeRay's conditions, each keeping its lastTransitionTime while its status stays."""
    conditions = [dict(c) for c in old if c.get("type") in CONDITION_TYPES]
    for type_, ok, reason in wanted:
        set_condition(conditions, type_, ok, reason, "", now)
    return sorted(conditions, key=lambda c: CONDITION_TYPES.index(c["type"]))


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
        "desiredCPU": format_quantity(cpu),
        "desiredMemory": format_quantity(memory, Format.BINARY_SI),
        "desiredGPU": format_quantity(gpu),
        "desiredTPU": "0",
        "lastUpdateTime": now,
        "observedGeneration": cluster["metadata"].get("generation", 1),
        "conditions": _conditions(
            old,
            now,
            [
                (
                    "RayClusterProvisioned",
                    state == "ready" or (ready_workers >= desired_workers and head_ready),
                    "AllPodRunningAndReadyFirstTime" if state == "ready" else "RayClusterPodsProvisioning",
                ),
                ("HeadPodReady", head_ready, "HeadPodRunningAndReady" if head_ready else "HeadPodNotFound"),
                (
                    "RayClusterSuspended",
                    state == "suspended",
                    "Suspended" if state == "suspended" else "NotSuspended",
                ),
            ],
        ),
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
