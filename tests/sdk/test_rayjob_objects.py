"""``RayJob`` against a real API server and operator, with no Ray: the objects, and a job that never ran.

Namespace ``jobs`` has LocalQueue ``tiny-q`` on ClusterQueue ``sdk-jobs`` (1 CPU): a job that
brings a 2-CPU cluster stays queued for as long as it exists, so its status, pending reason,
stop and delete are what a user sees before anything runs.
"""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.k8s.constants import JOB_UID_LABEL, QUEUE_NAME_LABEL, RAY_CLUSTER_LABEL
from codeflare.kube import errors, kinds
from codeflare.sdk import (
    Client,
    FlavorQuota,
    RayJob,
    create_cluster_queue,
    create_local_queue,
    create_resource_flavor,
)
from tests.sdk.conftest import tiny
from tests.support.control_plane import ensure_namespace, wait_for

NS = "jobs"
QUEUE = "tiny-q"


@pytest.fixture(scope="module")
def client(control_plane: Client) -> Client:
    ensure_namespace(control_plane.kube, NS)
    create_resource_flavor("jobs-flavor", client=control_plane)
    create_cluster_queue("sdk-jobs", [FlavorQuota("jobs-flavor", {"cpu": "1", "memory": "1Gi"})],
                         namespace_selector={}, client=control_plane)
    create_local_queue(QUEUE, "sdk-jobs", NS, client=control_plane)
    return control_plane


def queued_job(client: Client, name: str) -> RayJob:
    return RayJob(name, "python -c 'print(1)'", cluster_config=tiny(f"{name}-cluster", queue=QUEUE),
                  namespace=NS, client=client)


def workloads_of(client: Client, name: str) -> list[dict[str, Any]]:
    uid = client.kube.get(kinds.RAYJOB, name, NS)["metadata"]["uid"]
    return client.kube.list(kinds.WORKLOAD, NS, labels={JOB_UID_LABEL: uid})


def test_submit_writes_one_suspended_queued_rayjob_with_its_own_cluster(client: Client) -> None:
    job = queued_job(client, "own")
    job.submit()
    first = client.kube.get(kinds.RAYJOB, "own", NS)
    job.submit()
    second = client.kube.get(kinds.RAYJOB, "own", NS)

    assert first["spec"]["suspend"] is True
    assert first["metadata"]["labels"][QUEUE_NAME_LABEL] == QUEUE
    assert first["spec"]["entrypoint"] == "python -c 'print(1)'"
    assert first["spec"]["shutdownAfterJobFinishes"] is True
    assert "rayClusterSpec" in first["spec"] and "clusterSelector" not in first["spec"]
    assert second["metadata"]["generation"] == first["metadata"]["generation"]
    assert client.kube.list(kinds.RAYCLUSTER, NS) == []  # KubeRay's job: nothing here makes one


def test_a_job_that_never_ran_has_no_status_and_says_why_it_waits(client: Client) -> None:
    job = queued_job(client, "waiting").submit()
    reason = wait_for(lambda: (r := job.why_pending()) and "insufficient" in r and r, 30, 0.1,
                      what="the job's pending reason")

    status = job.status()

    assert (status.deployment, status.job, status.job_id, status.cluster) == ("", "", "", "")
    assert not status.finished and not status.succeeded
    assert "insufficient quota for cpu" in reason
    assert job.logs() == ""  # nothing kept, nothing running


def test_stop_deactivates_the_workload_and_suspends_the_job(client: Client) -> None:
    job = queued_job(client, "stopped").submit()
    wait_for(lambda: workloads_of(client, "stopped"), 30, 0.1, what="the job's Workload")

    job.stop()

    [workload] = workloads_of(client, "stopped")
    assert workload["spec"]["active"] is False
    assert client.kube.get(kinds.RAYJOB, "stopped", NS)["spec"]["suspend"] is True


def test_delete_removes_the_job_and_then_status_is_not_found(client: Client) -> None:
    job = queued_job(client, "deleted").submit()

    job.delete()

    assert client.kube.find(kinds.RAYJOB, "deleted", NS) is None
    with pytest.raises(errors.NotFound, match='"deleted" not found'):
        job.status()


def test_a_job_on_an_existing_cluster_selects_it_and_is_not_queued(client: Client) -> None:
    job = RayJob("shared-job", "python x.py", cluster_name="shared", namespace=NS, client=client).submit()

    live = client.kube.get(kinds.RAYJOB, "shared-job", NS)

    assert live["spec"]["clusterSelector"] == {RAY_CLUSTER_LABEL: "shared"}
    assert not live["spec"].get("suspend") and not live["spec"]["shutdownAfterJobFinishes"]
    assert QUEUE_NAME_LABEL not in (live["metadata"].get("labels") or {})
    assert job.why_pending() is None
