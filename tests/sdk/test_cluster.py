"""``Cluster`` end to end on local mode: apply, queue, scale, wait, run a job, tear down.

The module shares one local mode and one cluster, ``alpha``, whose life the tests follow in
order: applied twice (nothing changes), a second cluster queued behind it (the reason names the
shortage), ready with a job through ``job_client``, scaled, and finally ``down`` (nothing left).
Each test applies alpha again (which changes nothing when it exists), so each also runs alone.
Quota ``sdk-cq`` is 3 CPUs: alpha (2 CPUs) fits and may grow to 3; a second tiny cluster does not.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from codeflare.kube import kinds
from codeflare.sdk import Cluster, CodeFlareClusterStatus, get_cluster, list_all_clusters, list_all_queued
from tests.sdk.conftest import QUEUE, Local, tiny
from tests.support import local_agent as la
from tests.support.control_plane import wait_for

pytestmark = pytest.mark.ray

READY_TIMEOUT = 180


@pytest.fixture(scope="module")
def alpha(local: Local) -> Cluster:
    return Cluster(tiny("alpha"), local.client)


def _ours(obj: dict[str, Any]) -> list[Any]:
    """What manager ``codeflare`` owns, less ``spec.suspend`` (the admission takes that over)."""
    managed = obj["metadata"].get("managedFields") or []
    owned = [m.get("fieldsV1") or {} for m in managed if m.get("manager") == "codeflare"]
    for fields in owned:
        fields.get("f:spec", {}).pop("f:suspend", None)
    return owned


def test_apply_twice_is_idempotent(alpha: Cluster) -> None:
    first = alpha.apply()
    second = alpha.apply()

    # the operator may admit alpha between the two applies (one spec change: suspend -> false);
    # the second apply itself changes nothing and never suspends it again
    admitted_between = bool(first["spec"].get("suspend")) and not second["spec"].get("suspend")
    assert second["metadata"]["generation"] == first["metadata"]["generation"] + admitted_between
    assert not (second["spec"].get("suspend") and not first["spec"].get("suspend"))
    assert second["metadata"]["uid"] == first["metadata"]["uid"]
    assert _ours(second) == _ours(first)
    assert alpha.status() in (CodeFlareClusterStatus.QUEUED, CodeFlareClusterStatus.STARTING)


def test_apply_after_admission_keeps_the_cluster_admitted(alpha: Cluster) -> None:
    wait_for(lambda: alpha.why_pending() is None and alpha.status() != CodeFlareClusterStatus.QUEUED, 60, 0.3,
             what="alpha admitted")
    generation = alpha.client.kube.get(kinds.RAYCLUSTER, "alpha", "default")["metadata"]["generation"]

    again = alpha.apply()

    assert not again["spec"].get("suspend")
    assert again["metadata"]["generation"] == generation


def test_a_queued_cluster_says_which_resource_is_short(local: Local, alpha: Cluster) -> None:
    alpha.apply()
    wait_for(lambda: alpha.why_pending() is None, 60, 0.3, what="alpha admitted")
    beta = Cluster(tiny("beta"), local.client)
    beta.apply()
    try:
        reason = wait_for(lambda: (r := beta.why_pending()) and "insufficient" in r and r, 60, 0.3,
                          what="beta's pending reason")

        assert beta.status() == CodeFlareClusterStatus.QUEUED
        assert "insufficient quota for cpu" in reason
        assert "sdk-cq" in reason
        queued = {q["name"]: q for q in list_all_queued("default", local.client)}
        assert queued["beta"]["queue"] == QUEUE
        assert queued["beta"]["reason"] == reason
        assert "alpha" not in queued
    finally:
        beta.down()


def test_wait_ready_then_a_job_through_job_client_succeeds(local: Local, alpha: Cluster) -> None:
    alpha.apply()  # idempotent (first test): each test also runs alone
    alpha.wait_ready(timeout=READY_TIMEOUT, progress=False)
    local.remember("alpha")

    assert alpha.status() == CodeFlareClusterStatus.READY
    assert alpha.cluster_dashboard_uri()
    client = alpha.job_client
    job_id = client.submit_job(entrypoint="python -c \"print('sum', sum(range(10)))\"")
    deadline = time.monotonic() + 120
    while str(client.get_job_status(job_id).value) not in ("SUCCEEDED", "FAILED", "STOPPED"):
        assert time.monotonic() < deadline, "job did not finish in 120s"
        time.sleep(1)
    assert str(client.get_job_status(job_id).value) == "SUCCEEDED"
    assert "sum 45" in client.get_job_logs(job_id)
    listed = {c.name: c for c in list_all_clusters("default", local.client)}
    assert listed["alpha"].workers == 1
    assert listed["alpha"].dashboard == alpha.cluster_dashboard_uri()


def test_changing_num_workers_scales(local: Local, alpha: Cluster) -> None:
    alpha.apply()  # idempotent (first test): each test also runs alone
    alpha.wait_ready(timeout=READY_TIMEOUT, progress=False)
    bigger = Cluster(tiny("alpha", workers=2), local.client)
    bigger.apply()

    def running_pods() -> int:
        pods = local.client.kube.list(kinds.POD, "default", labels={"ray.io/cluster": "alpha"})
        return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")

    wait_for(lambda: running_pods() == 3, READY_TIMEOUT, 0.5, what="head + 2 workers running")
    bigger.wait_ready(timeout=READY_TIMEOUT, progress=False)
    local.remember("alpha")
    assert get_cluster("alpha", "default", local.client).config.num_workers == 2


def test_down_removes_everything(local: Local, alpha: Cluster) -> None:
    alpha.apply()  # idempotent (first test): each test also runs alone
    alpha.wait_ready(timeout=READY_TIMEOUT, progress=False)
    processes = la.cluster_processes(local.client.kube, "alpha")
    local.seen.extend(processes)
    uid = local.client.kube.get(kinds.RAYCLUSTER, "alpha", "default")["metadata"]["uid"]
    assert processes

    alpha.down()

    kube = local.client.kube
    wait_for(lambda: kube.find(kinds.RAYCLUSTER, "alpha", "default") is None, 90, 0.3, what="RayCluster gone")
    wait_for(lambda: not kube.list(kinds.POD, "default", labels={"ray.io/cluster": "alpha"}), 60, 0.3,
             what="Pods gone")
    wait_for(lambda: not kube.list(kinds.WORKLOAD, "default", labels={"kueue.x-k8s.io/job-uid": uid}), 60,
             0.3, what="Workload gone")
    wait_for(lambda: not la.alive(processes), 60, 0.3, what="Ray processes stopped")
    assert alpha.status() == CodeFlareClusterStatus.UNKNOWN
