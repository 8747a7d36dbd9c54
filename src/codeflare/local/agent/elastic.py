"""How many workers of an elastic queued RayCluster the agent may run: what its slices admit.

Kueue admits a scale-up of an elastic job as a new Workload slice (``operator.queueing.elastic``)
and keeps the pods above the admitted count behind the ``kueue.x-k8s.io/elastic-job`` scheduling
gate until it is. Locally the agent plays kubelet and KubeRay: for a RayCluster that is queued
(queue-name label) and elastic (``kueue.x-k8s.io/elastic-job: "true"``) it reads the admitted
count of each worker group from the cluster's unfinished admitted Workloads (their
``status.admission.podSetAssignments[].count``: during a swap of slices, the larger) and starts
no more workers than that; the other replicas appear as Pending Pods carrying the gate, so Ray's
autoscaler sees them requested and not running. Any other cluster runs all its replicas.
:func:`runnable_workers` is pure; :func:`admitted_workers` only reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from codeflare.api.raycluster import admitted_pod_set_counts, is_elastic_job
from codeflare.k8s.conditions import conditions_of, is_condition_true
from codeflare.k8s.constants import JOB_UID_LABEL, QUEUE_NAME_LABEL
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.client import AsyncKube


def is_elastic_queued(rc: Obj) -> bool:
    labels = (rc.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(QUEUE_NAME_LABEL)) and is_elastic_job(rc)


def admitted_counts(workloads: Iterable[Obj]) -> dict[str, int]:
    """Pod set -> the largest count admitted by an unfinished Workload of the job."""
    out: dict[str, int] = {}
    for workload in workloads:
        if is_condition_true(conditions_of(workload), "Finished"):
            continue
        for name, count in admitted_pod_set_counts(workload).items():
            out[name] = max(out.get(name, 0), count)
    return out


def runnable_workers(desired: Mapping[str, int], admitted: Mapping[str, int] | None) -> dict[str, int]:
    """Group -> workers to run: the desired ones, capped by the admitted count where there is one."""
    if admitted is None:
        return dict(desired)
    return {group: min(count, admitted.get(group, 0)) for group, count in desired.items()}


async def admitted_workers(kube: AsyncKube, rc: Obj) -> dict[str, int] | None:
    """The admitted worker counts of an elastic queued cluster; None for any other cluster."""
    if not is_elastic_queued(rc):
        return None
    meta = rc["metadata"]
    labels = {JOB_UID_LABEL: str(meta["uid"])}
    workloads = await kube.list(kinds.WORKLOAD, meta.get("namespace"), labels=labels)
    return admitted_counts(workloads)
