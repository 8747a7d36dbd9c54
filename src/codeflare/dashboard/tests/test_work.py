"""The My work rows: states, reasons and positions, workers, Ray dashboard links, who is shown."""

from __future__ import annotations

from typing import Any

from codeflare.dashboard.snapshot import Snapshot
from codeflare.dashboard.work import dashboard_url, desired_workers, find_row, work_rows
from codeflare.k8s.constants import (
    APPWRAPPER_LABEL,
    DASHBOARD_URL_ANNOTATION,
    JOB_UID_LABEL,
    QUEUE_NAME_LABEL,
)


def obj(
    kind: str, name: str, uid: str = "", labels: dict[str, str] | None = None, **rest: Any
) -> dict[str, Any]:
    meta = {
        "name": name,
        "namespace": "ns",
        "uid": uid or f"uid-{name}",
        "labels": labels or {},
        "creationTimestamp": "2026-01-01T00:00:00Z",
    }
    return {"kind": kind, "metadata": meta, **rest}


WORKERS = {"workerGroupSpecs": [{"replicas": 2, "numOfHosts": 2}, {"replicas": 1}]}


def test_a_queued_cluster_shows_its_workloads_reason_and_position() -> None:
    queued = obj("RayCluster", "rc", labels={QUEUE_NAME_LABEL: "lq"}, spec={"suspend": True, **WORKERS})
    wl = obj(
        "Workload",
        "wl",
        labels={JOB_UID_LABEL: "uid-rc"},
        spec={"queueName": "lq"},
        status={
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "False",
                    "reason": "Pending",
                    "message": "insufficient quota for cpu",
                }
            ]
        },
    )
    lq = obj("LocalQueue", "lq", spec={"clusterQueue": "cq"})
    (row,) = work_rows(Snapshot({"RayCluster": [queued], "Workload": [wl], "LocalQueue": [lq]}))
    assert (row.state, row.position, row.cluster_queue, row.message) == (
        "Queued",
        1,
        "cq",
        "insufficient quota for cpu",
    )
    assert (row.workers_ready, row.workers_desired, row.queue) == (0, 5, "lq")
    assert set(row.actions) == {"down"}


def test_a_queued_cluster_without_a_workload_says_so() -> None:
    queued = obj("RayCluster", "rc", labels={QUEUE_NAME_LABEL: "lq"}, spec={"suspend": True})
    (row,) = work_rows(Snapshot({"RayCluster": [queued]}))
    assert row.reason == "NoWorkload" and "queueing controller" in row.message


def test_a_jobs_own_cluster_and_a_wrapped_cluster_are_shown_under_their_owner() -> None:
    own = obj("RayCluster", "job-raycluster", status={"readyWorkerReplicas": 1}, spec=WORKERS)
    own["metadata"]["ownerReferences"] = [{"kind": "RayJob", "name": "job", "uid": "uid-job"}]
    wrapped = obj(
        "RayCluster",
        "inner",
        labels={APPWRAPPER_LABEL: "aw"},
        spec=WORKERS,
        status={"readyWorkerReplicas": 3},
    )
    job = obj(
        "RayJob",
        "job",
        spec={},
        status={"jobStatus": "RUNNING", "jobId": "raysubmit_1", "rayClusterName": "job-raycluster"},
    )
    aw = obj(
        "AppWrapper",
        "aw",
        spec={"components": [{"template": {"kind": "RayCluster", "metadata": {"name": "inner"}}}]},
        status={"phase": "Running"},
    )
    rows = work_rows(Snapshot({"RayCluster": [own, wrapped], "RayJob": [job], "AppWrapper": [aw]}))
    assert [(r.kind, r.name, r.state) for r in rows] == [
        ("AppWrapper", "aw", "Running"),
        ("RayJob", "job", "Running"),
    ]
    job_row = find_row(rows, "RayJob", "ns", "job")
    assert job_row is not None and (job_row.workers_ready, job_row.workers_desired, job_row.job_id) == (
        1,
        5,
        "raysubmit_1",
    )
    assert set(job_row.actions) == {"stop", "delete"}
    aw_row = find_row(rows, "AppWrapper", "ns", "aw")
    assert aw_row is not None and aw_row.workers_ready == 3


def test_ray_dashboard_from_local_modes_annotation_or_the_head_service() -> None:
    local = obj("RayCluster", "a")
    local["metadata"]["annotations"] = {DASHBOARD_URL_ANNOTATION: "http://127.0.0.1:8265"}
    assert dashboard_url(local) == "http://127.0.0.1:8265"
    served = obj(
        "RayCluster", "b", status={"endpoints": {"dashboard": "8265"}, "head": {"serviceIP": "10.0.0.9"}}
    )
    assert dashboard_url(served) == "http://10.0.0.9:8265"
    assert dashboard_url(obj("RayCluster", "c")) == ""


def test_desired_workers_count_hosts() -> None:  # ARCHITECTURE: replicas x numOfHosts per group
    assert desired_workers(WORKERS) == 5 and desired_workers({}) == 0


def test_age_is_kubectls() -> None:
    (row,) = work_rows(Snapshot({"RayCluster": [obj("RayCluster", "a")]}))
    assert row.age(1767225600 + 190) == "3m10s"  # 2026-01-01T00:00:00Z + 190 s
