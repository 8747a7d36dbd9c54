"""Builders and readers for queueing tests: queued RayClusters, Kueue admin objects, Workload lookups.

Small, CPU-only manifests so that quota arithmetic in tests stays obvious (milli-CPU), plus the
reads tests repeat: the Workload of a job, its admission, whether the job runs, whether every job
runs exactly when admitted, and deleting the admitted jobs (their work is done).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codeflare.kube import kinds
from codeflare.kube.client import Kube
from tests.support.polling import wait_for

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
Obj = dict[str, Any]


def raycluster(
    name: str, namespace: str, cpu: str = "1", queue: str | None = "queue", workers: int = 0
) -> Obj:
    """A suspended RayCluster whose head (and each of ``workers`` workers) requests ``cpu``."""
    template = {
        "spec": {"containers": [{"name": "ray", "image": "ray", "resources": {"requests": {"cpu": cpu}}}]}
    }
    spec: Obj = {"suspend": True, "headGroupSpec": {"rayStartParams": {}, "template": template}}
    if workers:
        spec["workerGroupSpecs"] = [
            {"groupName": "workers", "replicas": workers, "rayStartParams": {}, "template": template}
        ]
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue} if queue else {}},
        "spec": spec,
    }


def workload(
    name: str, namespace: str, queue: str, cpu: str, priority: int = 0, labels: dict[str, str] | None = None
) -> Obj:
    """A Workload created directly (no job behind it), as Kueue's scheduler performance test does:
    one pod set "main" of one pod requesting ``cpu``, queued in LocalQueue ``queue``."""
    container = {"name": "main", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": kinds.WORKLOAD.api_version,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": {
            "queueName": queue,
            "priority": priority,
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}],
        },
    }


def cluster_queue(name: str, cpu: str, cohort: str | None = None) -> Obj:
    spec: Obj = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
            }
        ],
    }
    if cohort:
        spec["cohortName"] = cohort
    return {"metadata": {"name": name}, "spec": spec}


def local_queue(name: str, namespace: str, cluster_queue_name: str) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cluster_queue_name}}


def create_flavor_and_queues(
    kube: Kube, queues: dict[str, tuple[str, str]], cohort: str | None = None
) -> None:
    """One "default" ResourceFlavor; per namespace a ClusterQueue (named after it) and LocalQueue "queue".

    ``queues`` maps namespace to (ClusterQueue name, nominal CPU).
    """
    from tests.support.control_plane import ensure_namespace

    kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
    for namespace, (cq, cpu) in queues.items():
        ensure_namespace(kube, namespace)
        kube.create(kinds.CLUSTER_QUEUE, cluster_queue(cq, cpu, cohort))
        kube.create(kinds.LOCAL_QUEUE, local_queue("queue", namespace, cq))


def workloads_by_job_uid(kube: Kube) -> dict[str, Obj]:
    """Every Workload in the cluster, by the uid of the job that owns it."""
    out: dict[str, Obj] = {}
    for wl in kube.list(kinds.WORKLOAD, all_namespaces=True):
        for ref in wl["metadata"].get("ownerReferences") or []:
            out[str(ref.get("uid"))] = wl
    return out


def admission(workload: Obj | None) -> Obj | None:
    """The Workload's admission unless it has none or has finished."""
    if workload is None:
        return None
    status = workload.get("status") or {}
    if any(c.get("type") == "Finished" and c.get("status") == "True" for c in status.get("conditions") or []):
        return None
    value = status.get("admission")
    return dict(value) if value else None


def running(job: Obj) -> bool:
    return (job.get("spec") or {}).get("suspend") is False


def cluster_admissions(kube: Kube) -> list[tuple[Obj, bool]] | str:
    """Each RayCluster's metadata and whether its Workload holds an admission, once every cluster has
    a Workload and runs exactly when admitted; until then what is off (words for :func:`wait_settled`)."""
    clusters = kube.list(kinds.RAYCLUSTER, all_namespaces=True)
    workloads = workloads_by_job_uid(kube)
    out: list[tuple[Obj, bool]] = []
    for job in clusters:
        meta = job["metadata"]
        wl = workloads.get(meta["uid"])
        if wl is None:
            return f"{meta['namespace']}/{meta['name']} has no Workload"
        admitted = admission(wl) is not None
        if admitted != running(job):
            return f"{meta['namespace']}/{meta['name']}: admitted={admitted} but running={running(job)}"
        out.append((meta, admitted))
    return out


def delete_admitted(kube: Kube) -> int:
    """Delete every RayCluster whose Workload is admitted (its job finished); returns how many."""
    workloads = workloads_by_job_uid(kube)
    deleted = 0
    for job in kube.list(kinds.RAYCLUSTER, all_namespaces=True):
        if admission(workloads.get(job["metadata"]["uid"])) is not None:
            kube.delete(kinds.RAYCLUSTER, job["metadata"]["name"], job["metadata"]["namespace"])
            deleted += 1
    return deleted


def wait_settled(check: Callable[[], str], timeout: float = 60.0, what: str = "convergence") -> None:
    """Poll ``check`` (which says what is still off, or "" when settled); fail with its last words."""
    last = [""]

    def settled() -> bool:
        last[0] = check()
        return not last[0]

    try:
        wait_for(settled, timeout, 0.3, what)
    except AssertionError:
        raise AssertionError(f"no {what} after {timeout}s: {last[0]}") from None
