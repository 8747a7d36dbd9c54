"""The queueing controller's pure parts: what a job's sync does, the queue counters, waitForPodsReady.

Each case arranges a job and its Workload as the caches would hold them and checks the decision
the controller would carry out; nothing here talks to an API.
"""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.k8s.constants import QUEUE_NAME_LABEL
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.operator.queueing import jobs
from codeflare.operator.queueing.jobsync import JobStep, decide_job
from codeflare.operator.queueing.reporter import count_workloads
from codeflare.operator.queueing.status import PodsReadyStep, pods_ready_step
from codeflare.scheduling import Admission, PodSetAssignment

ADMISSION = {
    "clusterQueue": "cq",
    "podSetAssignments": [
        {"name": "head", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "1"}, "count": 1}
    ],
}


def cluster(*, queue: str | None = "lq", suspend: bool = True, status: Obj | None = None, **meta: Any) -> Obj:
    labels = {QUEUE_NAME_LABEL: queue} if queue else {}
    head = {"template": {"spec": {"containers": [{"name": "ray", "resources": {"requests": {"cpu": "1"}}}]}}}
    job: Obj = {
        "metadata": {"name": "rc", "namespace": "ns", "uid": "u1", "labels": labels, **meta},
        "spec": {"suspend": suspend, "headGroupSpec": head},
    }
    if status is not None:
        job["status"] = status
    return job


def workload_of(job: Obj, *, admitted: bool = False, conditions: list[Obj] | None = None) -> Obj:
    wl = jobs.workload_for(kinds.RAYCLUSTER, job, 0, None)
    wl["status"] = {"conditions": conditions or []}
    if admitted:
        wl["status"]["admission"] = ADMISSION
    return wl


def decide(job: Obj | None, workload: Obj | None, **kw: Any) -> Any:
    kw.setdefault("default_queue", None)
    kw.setdefault("assumed", None)
    return decide_job(kinds.RAYCLUSTER, job, workload, **kw)


ASSUMED = Admission("cq", (PodSetAssignment("head", {"cpu": "default"}, {"cpu": "1"}, 1),))


def test_a_job_without_a_workload_is_queued_and_suspended_first_if_it_runs() -> None:
    assert decide(cluster(), None).step is JobStep.QUEUE
    assert not decide(cluster(), None).suspend_first
    running = decide(cluster(suspend=False), None)
    assert (running.step, running.suspend_first) == (JobStep.QUEUE, True)


def test_an_unlabelled_fresh_job_gets_the_default_queue_and_others_are_left_alone() -> None:
    assert decide(cluster(queue=None), None, default_queue="default").queue == "default"
    assert decide(cluster(queue=None), None).step is JobStep.NOTHING
    started = cluster(queue=None, suspend=False, status={"state": "ready"})
    assert decide(started, None, default_queue="default").step is JobStep.NOTHING


def test_deleted_gone_and_parented_jobs_are_not_queued() -> None:
    assert decide(None, None).step is JobStep.NOTHING
    assert decide(cluster(deletionTimestamp="2024-01-01T00:00:00Z"), None).step is JobStep.NOTHING
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "j", "uid": "j1", "controller": True}
    assert decide(cluster(ownerReferences=[owner]), None).step is JobStep.NOTHING


def test_admission_unsuspends_only_once_written_and_absence_suspends_only_without_one_in_flight() -> None:
    job = cluster()
    admitted = decide(job, workload_of(job, admitted=True))
    assert admitted.step is JobStep.UNSUSPEND and admitted.admission is not None
    assert admitted.admission.cluster_queue == "cq"
    assert decide(job, workload_of(job), assumed=ASSUMED).step is JobStep.NOTHING  # not written yet
    running = cluster(suspend=False)
    assert decide(running, workload_of(running)).step is JobStep.SUSPEND
    assert decide(running, workload_of(running), assumed=ASSUMED).step is JobStep.NOTHING
    assert decide(running, workload_of(running, admitted=True)).step is JobStep.NOTHING


def test_changed_pod_sets_resize_the_workload_and_requeue_an_admitted_one() -> None:
    job = cluster(suspend=False)
    stale = workload_of(job, admitted=True)
    stale["spec"]["podSets"][0]["count"] = 2
    resized = decide(job, stale)
    assert (resized.step, resized.evict) == (JobStep.RESIZE, True)
    assert list(resized.pod_sets) == jobs.workload_pod_sets(kinds.RAYCLUSTER, job)
    pending = workload_of(job)
    pending["spec"]["podSets"][0]["count"] = 2
    assert not decide(cluster(), pending).evict


@pytest.mark.parametrize(
    ("status", "succeeded"),
    [
        (
            {
                "jobDeploymentStatus": "Complete",
                "jobStatus": "SUCCEEDED",
                "message": "failed once, then fine",
            },
            True,
        ),
        ({"jobDeploymentStatus": "Complete", "jobStatus": "FAILED"}, False),
        ({"jobDeploymentStatus": "Failed", "jobStatus": "FAILED"}, False),
    ],
)
def test_a_finished_rayjob_finishes_its_workload_with_kueues_success_flag(
    status: Obj, succeeded: bool
) -> None:
    job = {**cluster(), "status": status}
    wl = jobs.workload_for(kinds.RAYJOB, job, 0, None)
    decision = decide_job(kinds.RAYJOB, job, wl, default_queue=None, assumed=None)
    assert (decision.step, decision.succeeded) == (JobStep.FINISH, succeeded)
    assert decide_job(kinds.RAYJOB, job, None, default_queue=None, assumed=None).step is JobStep.NOTHING


def test_queue_counters_count_unfinished_workloads_per_queue_and_local_queue_usage() -> None:
    def wl(name: str, queue: str, *, admitted: bool = False, finished: bool = False) -> Obj:
        conditions = [{"type": "Finished", "status": "True"}] if finished else []
        status: Obj = {"conditions": conditions}
        if admitted:
            status["admission"] = ADMISSION
        return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"queueName": queue}, "status": status}

    counts = count_workloads(
        [wl("a", "lq", admitted=True), wl("b", "lq"), wl("c", "lq", finished=True), wl("d", "other")],
        {("ns", "lq"): "cq"},
    )
    assert counts.of_cluster_queue("cq") == (1, 1)
    assert counts.of_local_queue(("ns", "lq")) == (1, 1)
    assert counts.of_local_queue(("ns", "other")) == (1, 0)
    assert {k: str(v) for k, v in counts.local_usage[("ns", "lq")].items()} == {("default", "cpu"): "1"}


def pods_ready_workload(*, conditions: tuple[Obj, ...] = ()) -> Obj:
    reserved = {"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    return {"status": {"admission": ADMISSION, "conditions": [reserved, *conditions]}}


def test_wait_for_pods_ready_steps() -> None:
    t0 = 1704067200.0  # 2024-01-01T00:00:00Z
    wl = pods_ready_workload()
    assert pods_ready_step(wl, True, t0 + 100, 10) is PodsReadyStep.READY
    assert pods_ready_step(wl, False, t0 + 5, 10) is PodsReadyStep.WAITING
    assert pods_ready_step(wl, False, t0 + 11, 10) is PodsReadyStep.TIMED_OUT
    once_ready = pods_ready_workload(conditions=({"type": "PodsReady", "status": "True"},))
    assert pods_ready_step(once_ready, False, t0 + 11, 10) is None  # recovering is the job's business
    assert pods_ready_step({"status": {}}, False, t0 + 11, 10) is None  # not admitted
    finished = pods_ready_workload(conditions=({"type": "Finished", "status": "True"},))
    assert pods_ready_step(finished, False, t0 + 11, 10) is None
