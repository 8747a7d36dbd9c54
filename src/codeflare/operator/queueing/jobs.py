"""What every queued job has in common: its queue, priority class, and the Workload that queues it.

Pure functions over manifests, the same for every kind: the queue-name and priority-class
labels, whether a RayJob or AppWrapper owns the job (then its parent queues), and the Workload
manifest (name, owner reference, ``spec.podSets`` with each pod set's requests and the
nodeSelector/tolerations the job asked for, which eviction restores). What differs between
kinds (pod sets, suspension, injection, finished) is the kind's adapter in :mod:`adapters`.
No I/O; :mod:`jobsync` does the reading and writing.
"""

from __future__ import annotations

import hashlib

from codeflare.api.kueue_conversion import priority_class_ref
from codeflare.api.podsets import pod_requests
from codeflare.k8s.constants import (
    JOB_UID_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    WORKLOAD_PRIORITY_CLASS_SOURCE,
)
from codeflare.k8s.ownerrefs import owner_reference
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind
from codeflare.operator.queueing import maxexec
from codeflare.operator.queueing.adapters import QUEUED_KINDS, adapter_for

__all__ = [
    "JOB_UID_LABEL",
    "QUEUED_KINDS",
    "owned_by_queued_job",
    "pod_priority_class",
    "pod_requests",
    "priority_class",
    "queue_name",
    "same_shape",
    "workload_for",
    "workload_name",
    "workload_pod_sets",
]


def queue_name(job: Obj) -> str | None:
    labels = (job.get("metadata") or {}).get("labels") or {}
    value = labels.get(QUEUE_NAME_LABEL)
    return str(value) if value else None


def owned_by_queued_job(job: Obj) -> bool:
    """Whether a RayJob or AppWrapper controls ``job`` (its parent is the one that queues)."""
    for ref in (job.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and (ref.get("apiVersion"), ref.get("kind")) in (
            (kinds.RAYJOB.api_version, kinds.RAYJOB.kind),
            (kinds.APPWRAPPER.api_version, kinds.APPWRAPPER.kind),
        ):
            return True
    return False


def pod_priority_class(kind: Kind, job: Obj) -> str | None:
    """The scheduling.k8s.io PriorityClass named by the job's pod templates (the first one set)."""
    for ps in adapter_for(kind).pod_sets(job):
        name = (ps.template.get("spec") or {}).get("priorityClassName")
        if name:
            return str(name)
    return None


def priority_class(job: Obj) -> str | None:
    labels = (job.get("metadata") or {}).get("labels") or {}
    value = labels.get(PRIORITY_CLASS_LABEL)
    return str(value) if value else None


def workload_name(kind: Kind, job: Obj) -> str:
    """``<kind>-<name>-<hash>``, stable for a job and at most 253 characters."""
    meta = job.get("metadata") or {}
    digest = hashlib.sha256(f"{kind.kind}/{meta.get('name')}/{meta.get('uid', '')}".encode()).hexdigest()[:5]
    prefix = f"{kind.kind.lower()}-{meta.get('name', '')}"[:240]
    return f"{prefix}-{digest}"


def workload_pod_sets(kind: Kind, job: Obj) -> list[Obj]:
    """Workload ``spec.podSets`` for a job: name, count, and a template with the requests and the
    nodeSelector/tolerations the job's own template has (what eviction restores)."""
    out = []
    for ps in adapter_for(kind).pod_sets(job):
        pod_spec = ps.template.get("spec") or {}
        spec: Obj = {"containers": [{"name": "main", "resources": {"requests": pod_requests(ps.template)}}]}
        for key in ("nodeSelector", "tolerations"):
            if pod_spec.get(key):
                spec[key] = pod_spec[key]
        out.append({"name": ps.name, "count": ps.count, "template": {"spec": spec}})
    return out


def same_shape(wanted: list[Obj], current: list[Obj]) -> bool:
    """Whether two ``spec.podSets`` ask for the same pods (names, counts, requests), whatever
    node selectors or tolerations admission has put into the job meanwhile."""

    def shape(pod_sets: list[Obj]) -> list[tuple[object, object, object]]:
        return [
            (
                ps.get("name"),
                ps.get("count"),
                ((ps.get("template") or {}).get("spec") or {}).get("containers"),
            )
            for ps in pod_sets
        ]

    return shape(wanted) == shape(current)


def workload_for(
    kind: Kind,
    job: Obj,
    priority: int,
    priority_class_name: str | None,
    priority_source: str = WORKLOAD_PRIORITY_CLASS_SOURCE,
) -> Obj:
    """The Workload manifest that queues ``job`` (owner reference to the job); its
    max-exec-time-seconds label sets ``spec.maximumExecutionTimeSeconds`` (ValueError if bad)."""
    meta = job.get("metadata") or {}
    labels = {JOB_UID_LABEL: str(meta.get("uid", ""))}
    spec: Obj = {
        "queueName": queue_name(job) or "",
        "podSets": workload_pod_sets(kind, job),
        "priority": priority,
        "active": True,
    }
    maximum = maxexec.label_seconds(job)  # ValueError on a bad label
    if maximum is not None:
        spec["maximumExecutionTimeSeconds"] = maximum
    ref = priority_class_ref(priority_source, priority_class_name or "")
    if ref is not None:
        spec["priorityClassRef"] = ref
    return {
        "apiVersion": kinds.WORKLOAD.api_version,
        "kind": kinds.WORKLOAD.kind,
        "metadata": {
            "name": workload_name(kind, job),
            "namespace": meta.get("namespace", ""),
            "labels": labels,
            "ownerReferences": [owner_reference(job, api_version=kind.api_version, kind=kind.kind)],
        },
        "spec": spec,
    }
