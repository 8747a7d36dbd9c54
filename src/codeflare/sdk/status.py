"""Cluster and job states as the SDK reports them, derived from one object read.

``CodeFlareClusterStatus`` and ``RayClusterStatus`` keep codeflare-sdk's names; ``status_of``
maps a RayCluster (or the AppWrapper wrapping it) to them without further API calls, and
``pending_reason`` reads why a queued job's Workload waits. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from codeflare.k8s.conditions import find_condition, is_condition_true
from codeflare.k8s.constants import QUEUE_NAME_LABEL

#: What a Workload not admitted yet says before the scheduler wrote a reason on it.
AWAITING_DECISION = "waiting for the admission decision"


class RayClusterStatus(Enum):
    """The RayCluster's own state (KubeRay's ``status.state``)."""

    READY = "ready"
    UNHEALTHY = "unhealthy"
    FAILED = "failed"
    UNKNOWN = "unknown"
    SUSPENDED = "suspended"


class CodeFlareClusterStatus(Enum):
    """What a user wants to know: is it queued, starting, ready, failed?"""

    READY = 1
    STARTING = 2
    QUEUED = 3
    QUEUEING = 4
    FAILED = 5
    UNKNOWN = 6
    SUSPENDED = 7


@dataclass
class RayClusterInfo:
    """A summary of one cluster, as ``details()`` and ``list_all_clusters`` return it."""

    name: str
    namespace: str
    status: RayClusterStatus
    head_cpus: str = ""
    head_memory: str = ""
    workers: int = 0
    worker_cpus: str = ""
    worker_memory: str = ""
    worker_gpus: str = "0"
    dashboard: str = ""
    local_queue: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


def pending_reason(workload: dict[str, Any]) -> str | None:
    """Why a Workload waits: its QuotaReserved=False message verbatim (None once admitted or finished)."""
    status = workload.get("status") or {}
    conditions = status.get("conditions")
    if status.get("admission") or is_condition_true(conditions, "Finished"):
        return None
    reserved = find_condition(conditions, "QuotaReserved")
    if reserved is not None and reserved.get("status") == "False":
        return str(reserved.get("message") or reserved.get("reason") or AWAITING_DECISION)
    return AWAITING_DECISION


def ray_status(obj: dict[str, Any]) -> RayClusterStatus:
    state = str((obj.get("status") or {}).get("state") or "").lower()
    if (obj.get("spec") or {}).get("suspend"):
        return RayClusterStatus.SUSPENDED
    try:
        return RayClusterStatus(state)
    except ValueError:
        return RayClusterStatus.UNKNOWN


def status_of(obj: dict[str, Any]) -> CodeFlareClusterStatus:
    """Map a RayCluster or an AppWrapper to the status users see."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    suspended = bool((obj.get("spec") or {}).get("suspend"))
    if obj.get("kind") == "AppWrapper":
        phase = (obj.get("status") or {}).get("phase") or ""
        if phase == "Running":
            return CodeFlareClusterStatus.STARTING
        if phase in ("Failed",):
            return CodeFlareClusterStatus.FAILED
        if suspended or phase in ("", "Suspended"):
            return _queued_or_suspended(labels)
        return CodeFlareClusterStatus.STARTING
    state = ray_status(obj)
    if state == RayClusterStatus.SUSPENDED:
        return _queued_or_suspended(labels)
    if state == RayClusterStatus.READY:
        return CodeFlareClusterStatus.READY
    if state in (RayClusterStatus.FAILED, RayClusterStatus.UNHEALTHY):
        return CodeFlareClusterStatus.FAILED
    return CodeFlareClusterStatus.STARTING


def _queued_or_suspended(labels: dict[str, Any]) -> CodeFlareClusterStatus:
    return CodeFlareClusterStatus.QUEUED if QUEUE_NAME_LABEL in labels else CodeFlareClusterStatus.SUSPENDED


def _first_container(template: dict[str, Any]) -> dict[str, Any]:
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return containers[0] if isinstance(containers[0], dict) else {}


def info_of(obj: dict[str, Any], dashboard: str = "") -> RayClusterInfo:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    head = _first_container((spec.get("headGroupSpec") or {}).get("template") or {}).get("resources") or {}
    groups = spec.get("workerGroupSpecs") or []
    worker = _first_container((groups[0] if groups else {}).get("template") or {}).get("resources") or {}
    limits = worker.get("limits") or {}
    return RayClusterInfo(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        status=ray_status(obj),
        head_cpus=str((head.get("limits") or {}).get("cpu", "")),
        head_memory=str((head.get("limits") or {}).get("memory", "")),
        workers=sum(int(g.get("replicas") or 0) * int(g.get("numOfHosts") or 1) for g in groups),
        worker_cpus=str(limits.get("cpu", "")),
        worker_memory=str(limits.get("memory", "")),
        worker_gpus=str(limits.get("nvidia.com/gpu", "0")),
        dashboard=dashboard,
        local_queue=((meta.get("labels") or {}).get(QUEUE_NAME_LABEL)),
        labels=dict(meta.get("labels") or {}),
    )
