"""Ray's autoscaler under a queue: the RayCluster is an elastic job, resized by Workload slices.

Local mode as users run it (API server, operator, agent; real Ray). The queue's quota holds the
head and two workers (3 CPUs). A cluster of min 1 / max 3 workers starts with one; a job of two
simultaneous tasks makes Ray's autoscaler ask for two: a new Workload slice is admitted within
quota, the old one finishes (WorkloadSliceReplaced), and the second worker starts without the
cluster ever being suspended. A job of three asks for a third: its slice stays pending with the
engine's reason, the third worker waits as a scheduling-gated Pod, two keep running. When the
work stops, the autoscaler scales back to one and the admitted slice's usage drops with it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from codeflare.api.raycluster import ELASTIC_JOB_ANNOTATION, ELASTIC_JOB_SCHEDULING_GATE
from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.sdk import FlavorQuota, create_cluster_queue, create_local_queue
from tests.local.test_autoscaling import SCALE_TIMEOUT, autoscaled, replicas, submit, worker_pods
from tests.sdk.conftest import FLAVOR, Local, local
from tests.support import local_agent as la
from tests.support.polling import wait_for

__all__ = ["local"]

pytestmark = pytest.mark.ray

QUEUE = "elastic-queue"


def workloads(kube: Kube, name: str) -> list[dict[str, Any]]:
    uid = kube.get(kinds.RAYCLUSTER, name, "default")["metadata"]["uid"]
    return kube.list(kinds.WORKLOAD, "default", labels={"kueue.x-k8s.io/job-uid": uid})


def unfinished(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [w for w in items if not is_condition_true(conditions_of(w), "Finished")]


def admitted_workers(kube: Kube, name: str) -> int | None:
    """The worker count of the one admitted, unfinished slice (None while there is not exactly one)."""
    admitted = [w for w in unfinished(workloads(kube, name)) if (w.get("status") or {}).get("admission")]
    if len(admitted) != 1:
        return None
    psas = admitted[0]["status"]["admission"]["podSetAssignments"]
    return next(int(p["count"]) for p in psas if p["name"] == "small")


def pending_slice(kube: Kube, name: str, evaluated: bool = False) -> dict[str, Any] | None:
    """The unadmitted slice (with ``evaluated``: only once the scheduler has said why it waits,
    past the first ``PendingEvaluation``)."""
    for w in unfinished(workloads(kube, name)):
        reserved = find_condition(conditions_of(w), "QuotaReserved")
        admitted = (w.get("status") or {}).get("admission")
        waits = not admitted and reserved is not None and reserved.get("status") == "False"
        if waits and not (evaluated and reserved.get("reason") == "PendingEvaluation"):
            return w
    return None


QUEUED_IDLE_TIMEOUT_S = 20


@pytest.mark.timeout(900)
def test_scale_ups_are_admitted_as_slices_within_quota_and_scale_down_releases_it(
    local: Local, tmp_path: Path
) -> None:
    kube = local.client.kube
    create_cluster_queue("elastic-cq", [FlavorQuota(FLAVOR, {"cpu": "3", "memory": "8Gi"})],
                         namespace_selector={}, client=local.client)
    create_local_queue(QUEUE, "elastic-cq", "default", client=local.client)
    rc = autoscaled("grow", queue=QUEUE)
    rc["metadata"]["annotations"] = {ELASTIC_JOB_ANNOTATION: "true"}
    # the second worker must outlive the gap between the two jobs (on a loaded CI machine the
    # second job's tasks took longer than the shared 5 s to reach it, and it was scaled down)
    rc["spec"]["autoscalerOptions"]["idleTimeoutSeconds"] = QUEUED_IDLE_TIMEOUT_S
    kube.create(kinds.RAYCLUSTER, rc)
    wait_for(lambda: admitted_workers(kube, "grow") == 1 or None, SCALE_TIMEOUT, 0.5, what="first slice")
    wait_for(lambda: la.is_ready(kube, "grow"), SCALE_TIMEOUT, 0.5, what="grow ready")
    local.remember("grow")
    first = unfinished(workloads(kube, "grow"))[0]["metadata"]["name"]

    # two tasks at once: a slice for 2 workers fits the quota
    client, job = submit(kube, "grow", tmp_path, tasks=2)
    submitted = time.monotonic()
    wait_for(lambda: admitted_workers(kube, "grow") == 2 or None, SCALE_TIMEOUT, 0.3, what="2-worker slice")
    admitted = time.monotonic()
    wait_for(lambda: len(worker_pods(kube, "grow")) == 2 or None, SCALE_TIMEOUT, 0.3, what="2 worker pods")
    running = time.monotonic()
    final = wait_for(lambda: (s := client.get_job_status(job)).is_terminal() and s, SCALE_TIMEOUT, 0.5,
                     what="the 2-task job")
    assert str(final) == "SUCCEEDED", client.get_job_logs(job)
    assert "ran on 2 workers" in client.get_job_logs(job)
    old = next(w for w in workloads(kube, "grow") if w["metadata"]["name"] == first)
    assert find_condition(conditions_of(old), "Finished")["reason"] == "WorkloadSliceReplaced"
    assert not kube.get(kinds.RAYCLUSTER, "grow", "default")["spec"].get("suspend")  # never requeued
    local.remember("grow")

    # three tasks at once: the slice for 3 workers exceeds the quota and waits with the reason
    client, job = submit(kube, "grow", tmp_path, tasks=3)
    wait_for(lambda: replicas(kube, "grow") == 3 or None, SCALE_TIMEOUT, 0.3, what="the autoscaler asking 3")
    waiting = wait_for(lambda: pending_slice(kube, "grow", evaluated=True), SCALE_TIMEOUT, 0.3,
                       what="a pending slice with the scheduler's reason")
    reserved = find_condition(conditions_of(waiting), "QuotaReserved")
    assert reserved["reason"] and "cpu" in reserved["message"], reserved
    gated = wait_for(lambda: worker_pods(kube, "grow", phase="Pending") or None, SCALE_TIMEOUT, 0.3,
                     what="the gated worker pod")
    pod = kube.get(kinds.POD, gated[0], "default")
    assert pod["spec"]["schedulingGates"] == [{"name": ELASTIC_JOB_SCHEDULING_GATE}]
    assert len(worker_pods(kube, "grow")) == 2 and admitted_workers(kube, "grow") == 2

    # the work stops: back to one worker, the pending slice goes and the admitted one shrinks
    client.stop_job(job)
    stopped = time.monotonic()

    def scaled_down() -> bool | None:
        one = replicas(kube, "grow") == 1 and len(worker_pods(kube, "grow")) == 1
        return (one and admitted_workers(kube, "grow") == 1 and pending_slice(kube, "grow") is None) or None

    wait_for(scaled_down, SCALE_TIMEOUT, 0.3, what="scale-down to 1 worker with its quota released")
    released = time.monotonic()
    assert worker_pods(kube, "grow", phase="Pending") == []
    print(
        f"\nelastic queueing: 2-worker slice admitted {admitted - submitted:.1f}s after submit, 2nd worker "
        f"running {running - submitted:.1f}s after submit; back to 1 worker and quota released "
        f"{released - stopped:.1f}s after the job was stopped"
    )
