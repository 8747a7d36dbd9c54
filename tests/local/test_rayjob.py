"""RayJob end to end in local mode: submission through Ray's Jobs API and the status mirror.

Success, failure and activeDeadlineSeconds share one small head-only RayCluster through
``clusterSelector`` (their semantics do not depend on who owns the cluster). Suspend/resume and
shutdownAfterJobFinishes are about the job's own cluster, so that test lets the job create it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.kube import kinds
from tests.local.conftest import LocalPlane
from tests.support import local_agent as la
from tests.support.control_plane import wait_for

pytestmark = pytest.mark.ray

SHARED = "shared"


def rayjob(name: str, entrypoint: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"entrypoint": entrypoint, **spec},
    }


def selector_job(name: str, entrypoint: str, **spec: Any) -> dict[str, Any]:
    return rayjob(name, entrypoint, clusterSelector={"ray.io/cluster": SHARED}, **spec)


def job_status(plane: LocalPlane, name: str) -> dict[str, Any]:
    obj = plane.kube.find(kinds.RAYJOB, name, "default")
    return {} if obj is None else dict(obj.get("status") or {})


def wait_deployment(plane: LocalPlane, name: str, *wanted: str, timeout: float = 90) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        status = job_status(plane, name)
        return status if status.get("jobDeploymentStatus") in wanted else None

    return plane.wait(reached, timeout, f"RayJob {name} in {wanted}")


def logs_of(plane: LocalPlane, name: str) -> str:
    cm = plane.kube.find(kinds.CONFIGMAP, f"{name}-logs", "default")
    return "" if cm is None else str((cm.get("data") or {}).get("logs", ""))


@pytest.fixture(scope="module")
def shared(plane: LocalPlane) -> Iterator[LocalPlane]:
    """A head-only cluster the selector jobs run on (job drivers need no CPU)."""
    plane.kube.create(kinds.RAYCLUSTER, la.raycluster(SHARED, workers=0))
    plane.wait_ready(SHARED)
    yield plane
    plane.delete_and_wait(SHARED)


@pytest.fixture
def jobs(shared: LocalPlane) -> Iterator[LocalPlane]:
    yield shared
    for obj in shared.kube.list(kinds.RAYJOB, "default"):
        shared.kube.delete(kinds.RAYJOB, obj["metadata"]["name"], "default")
    wait_for(lambda: not shared.kube.list(kinds.RAYJOB, "default"), 30, 0.2, what="RayJobs deleted")


def test_successful_job_completes_and_keeps_its_logs(jobs: LocalPlane) -> None:
    jobs.kube.create(kinds.RAYJOB, selector_job("hello", "python -c \"print('hello from a rayjob')\""))
    status = wait_deployment(jobs, "hello", "Complete", "Failed")

    assert status["jobDeploymentStatus"] == "Complete", status
    assert status["jobStatus"] == "SUCCEEDED"
    assert status["rayClusterName"] == SHARED
    assert status["dashboardURL"].startswith("http://127.0.0.1:")
    assert status["jobId"] and status["startTime"] and status["endTime"]
    assert "hello from a rayjob" in logs_of(jobs, "hello")
    assert la.is_ready(jobs.kube, SHARED), "a selector job must not touch the cluster it used"


def test_failing_entrypoint_marks_the_job_failed_with_reason(jobs: LocalPlane) -> None:
    entrypoint = "python -c \"import sys; print('about to fail'); sys.exit(3)\""
    jobs.kube.create(kinds.RAYJOB, selector_job("broken", entrypoint))
    status = wait_deployment(jobs, "broken", "Complete", "Failed")

    assert status["jobDeploymentStatus"] == "Failed", status
    assert status["jobStatus"] == "FAILED"
    assert status["reason"] == "AppFailed"
    assert "exit code 3" in status["message"]
    assert "about to fail" in logs_of(jobs, "broken")


def test_active_deadline_stops_the_ray_job(jobs: LocalPlane) -> None:
    from ray.job_submission import JobStatus, JobSubmissionClient

    entrypoint = "python -c \"import time; print('sleeping', flush=True); time.sleep(300)\""
    jobs.kube.create(kinds.RAYJOB, selector_job("slow", entrypoint, activeDeadlineSeconds=6))
    running = wait_deployment(jobs, "slow", "Running")
    status = wait_deployment(jobs, "slow", "Complete", "Failed", timeout=60)

    assert status["jobDeploymentStatus"] == "Failed", status
    assert status["reason"] == "DeadlineExceeded"
    assert "activeDeadlineSeconds" in status["message"]
    headers = la.ray_headers(jobs.kube, running["rayClusterName"])
    client = JobSubmissionClient(running["dashboardURL"], headers=headers)
    wait_for(
        lambda: client.get_job_status(running["jobId"]) == JobStatus.STOPPED,
        30,
        0.5,
        what="the Ray job to be stopped",
    )


def _cluster_spec() -> dict[str, Any]:
    spec: dict[str, Any] = la.raycluster("unused", workers=0)["spec"]
    spec.pop("suspend")
    return spec


def test_suspend_resume_and_shutdown_after_finish_of_an_own_cluster(jobs: LocalPlane) -> None:
    kube = jobs.kube
    entrypoint = "python -c \"import time; print('working', flush=True); time.sleep(6); print('done')\""
    kube.create(
        kinds.RAYJOB,
        rayjob(
            "own",
            entrypoint,
            rayClusterSpec=_cluster_spec(),
            shutdownAfterJobFinishes=True,
            ttlSecondsAfterFinished=3,
        ),
    )
    first = wait_deployment(jobs, "own", "Running", timeout=120)
    cluster = first["rayClusterName"]
    owned = kube.get(kinds.RAYCLUSTER, cluster, "default")
    assert owned["metadata"]["ownerReferences"][0]["kind"] == "RayJob"
    jobs.seen.extend(first_procs := la.cluster_processes(kube, cluster))

    # Suspend: the Ray job stops, its cluster and every process of it go away.
    kube.patch(kinds.RAYJOB, "own", {"spec": {"suspend": True}}, "default")
    suspended = wait_deployment(jobs, "own", "Suspended")
    assert "jobId" not in suspended and "jobStatus" not in suspended

    # Resume at once, while the old cluster may still be shutting down: the job must wait for
    # it to go and run on a fresh cluster, never on the dying one.
    kube.patch(kinds.RAYJOB, "own", {"spec": {"suspend": False}}, "default")
    wait_for(lambda: not la.alive(first_procs), 30, 0.1, what="the suspended cluster's processes to exit")
    # The new attempt's id is recorded at once (as KubeRay does); it is submitted (jobStatus set)
    # only once its fresh cluster is ready.
    jobs.wait(
        lambda: job_status(jobs, "own").get("jobId") not in (None, first["jobId"])
        and bool(job_status(jobs, "own").get("jobStatus")),
        120,
        "a second submission",
    )
    fresh = kube.get(kinds.RAYCLUSTER, cluster, "default")
    assert fresh["metadata"]["uid"] != owned["metadata"]["uid"], "submitted to the dying cluster"
    jobs.seen.extend(second_procs := la.cluster_processes(kube, cluster))
    done = wait_deployment(jobs, "own", "Complete", "Failed", timeout=90)
    assert done["jobDeploymentStatus"] == "Complete", done
    assert done["jobStatus"] == "SUCCEEDED"
    assert "done" in logs_of(jobs, "own")

    # shutdownAfterJobFinishes: the cluster goes, but not before ttlSecondsAfterFinished.
    wait_for(lambda: kube.find(kinds.RAYCLUSTER, cluster, "default") is None, 60, 0.2, what="cluster deleted")
    gone_at = datetime.datetime.now(datetime.UTC)
    ended = datetime.datetime.fromisoformat(done["endTime"].replace("Z", "+00:00"))
    assert (gone_at - ended).total_seconds() >= 3 - 1  # endTime has 1 s resolution
    wait_for(lambda: not la.alive(second_procs), 15, 0.1, what="the finished cluster's processes to exit")
    assert job_status(jobs, "own")["jobDeploymentStatus"] == "Complete"
    assert la.is_ready(kube, SHARED)
