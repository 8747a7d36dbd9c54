"""What the SDK reports from one object: statuses, pending reasons, summaries, configs read back.

All of it is derived from objects without further API calls, so these tests build the objects
(through the real builders) and read them as the SDK would after a GET.
"""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.api.builders import build_cluster_manifest, build_raycluster
from codeflare.k8s.constants import DASHBOARD_URL_ANNOTATION
from codeflare.kube.config import from_token
from codeflare.sdk import ClusterConfiguration, CodeFlareClusterStatus, RayClusterStatus, RayJobStatus
from codeflare.sdk.client import Client
from codeflare.sdk.cluster import _config_from, dashboard_uri
from codeflare.sdk.status import AWAITING_DECISION, info_of, pending_reason, status_of


def config(**kwargs: Any) -> ClusterConfiguration:
    return ClusterConfiguration("demo", namespace="ns", **kwargs)


def with_status(obj: dict[str, Any], **status: Any) -> dict[str, Any]:
    return {**obj, "status": status}


def admitted(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "spec": {**obj["spec"], "suspend": False}}


@pytest.mark.parametrize(
    ("queue", "state", "suspended", "expected"),
    [
        ("lq", "", True, CodeFlareClusterStatus.QUEUED),
        (None, "suspended", True, CodeFlareClusterStatus.SUSPENDED),
        ("lq", "", False, CodeFlareClusterStatus.STARTING),
        ("lq", "ready", False, CodeFlareClusterStatus.READY),
        ("lq", "failed", False, CodeFlareClusterStatus.FAILED),
        ("lq", "unhealthy", False, CodeFlareClusterStatus.FAILED),
        ("lq", "something-new", False, CodeFlareClusterStatus.STARTING),
    ],
)
def test_a_rayclusters_status_as_users_see_it(
    queue: str | None, state: str, suspended: bool, expected: CodeFlareClusterStatus
) -> None:
    obj = build_raycluster(config(local_queue=queue), "ns")
    obj["spec"]["suspend"] = suspended

    assert status_of(with_status(obj, state=state)) == expected


@pytest.mark.parametrize(
    ("phase", "suspended", "expected"),
    [
        ("", True, CodeFlareClusterStatus.QUEUED),
        ("Suspended", False, CodeFlareClusterStatus.QUEUED),
        ("Resuming", False, CodeFlareClusterStatus.STARTING),
        ("Running", False, CodeFlareClusterStatus.STARTING),  # ready is the wrapped RayCluster's to say
        ("Failed", False, CodeFlareClusterStatus.FAILED),
    ],
)
def test_an_appwrappers_phase_as_users_see_it(
    phase: str, suspended: bool, expected: CodeFlareClusterStatus
) -> None:
    wrapper = build_cluster_manifest(config(appwrapper=True, local_queue="lq"), "ns")
    wrapper["spec"]["suspend"] = suspended

    assert status_of(with_status(wrapper, phase=phase)) == expected


def workload(*conditions: dict[str, str], admission: bool = False) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": list(conditions)}
    if admission:
        status["admission"] = {"clusterQueue": "cq"}
    return {"metadata": {"name": "wl"}, "status": status}


def test_the_pending_reason_is_the_quota_reserved_message_verbatim() -> None:
    message = "couldn't assign flavors to pod set head: insufficient quota for cpu in flavor f, 3 more needed"
    waiting = workload({"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message})
    unexplained = workload({"type": "QuotaReserved", "status": "False", "reason": "Pending"})

    assert pending_reason(waiting) == message
    assert pending_reason(unexplained) == "Pending"
    assert pending_reason(workload()) == AWAITING_DECISION


def test_admitted_or_finished_workloads_wait_for_nothing() -> None:
    assert pending_reason(workload({"type": "QuotaReserved", "status": "True"}, admission=True)) is None
    assert pending_reason(workload({"type": "Finished", "status": "True"})) is None


def test_details_summarise_the_clusters_resources() -> None:
    obj = build_raycluster(config(num_workers=3, local_queue="lq", head_cpu_limits=4, head_cpu_requests=4,
                                  worker_extended_resource_requests={"nvidia.com/gpu": 1}), "ns")

    info = info_of(with_status(admitted(obj), state="ready"), "http://dash")

    assert (info.name, info.namespace, info.status, info.dashboard) == ("demo", "ns", RayClusterStatus.READY,
                                                                        "http://dash")
    assert (info.head_cpus, info.head_memory) == ("4", "8Gi")
    assert (info.workers, info.worker_cpus, info.worker_memory, info.worker_gpus) == (3, "1", "2Gi", "1")
    assert info.local_queue == "lq"


def test_a_configuration_is_read_back_from_its_raycluster() -> None:
    original = config(num_workers=2, local_queue="lq", head_cpu_requests=1, head_cpu_limits=3,
                      head_memory_requests="2Gi", head_memory_limits="4Gi", worker_cpu_requests=2,
                      worker_cpu_limits=2, worker_memory_requests="3Gi", worker_memory_limits="3Gi")

    found = _config_from(build_raycluster(original, "ns"))

    for name in ("name", "namespace", "num_workers", "local_queue", "image", "head_cpu_requests",
                 "head_cpu_limits", "head_memory_requests", "head_memory_limits", "worker_cpu_limits",
                 "worker_memory_limits"):
        assert getattr(found, name) == getattr(original, name), name
    assert found.appwrapper is False


OFFLINE = Client(from_token("http://127.0.0.1:9", "token"))  # the listings below give it nothing to ask


def test_the_dashboard_url_prefers_the_recorded_one_then_ingress_route_and_head_service() -> None:
    rc = with_status(build_raycluster(config(), "ns"), endpoints={"dashboard": "8265"},
                     head={"serviceIP": "10.0.0.7"})
    ingress = {"spec": {"rules": [{"host": "ray-demo.apps.example.com"}], "tls": [{}]}}
    route = {"spec": {"host": "ray-demo.openshift.example.com"}}
    recorded = {**rc, "metadata": {**rc["metadata"], "annotations": {DASHBOARD_URL_ANNOTATION: "http://127.0.0.1:5"}}}

    assert dashboard_uri(OFFLINE, recorded, {}, {}) == "http://127.0.0.1:5"
    assert dashboard_uri(OFFLINE, rc, {"ray-dashboard-demo": ingress}, {}) == "https://ray-demo.apps.example.com"
    assert dashboard_uri(OFFLINE, rc, {}, {"ray-dashboard-demo": route}) == "https://ray-demo.openshift.example.com"
    assert dashboard_uri(OFFLINE, rc, {}, {}) == "http://10.0.0.7:8265"
    assert dashboard_uri(OFFLINE, build_raycluster(config(), "ns"), {}, {}) is None


@pytest.mark.parametrize(
    ("deployment", "job", "finished", "succeeded"),
    [
        ("", "", False, False),
        ("Running", "RUNNING", False, False),
        ("Complete", "SUCCEEDED", True, True),
        ("Complete", "STOPPED", True, False),
        ("Failed", "FAILED", True, False),
    ],
)
def test_a_jobs_status_says_whether_it_finished_and_succeeded(
    deployment: str, job: str, finished: bool, succeeded: bool
) -> None:
    status = RayJobStatus(deployment=deployment, job=job)

    assert (status.finished, status.succeeded) == (finished, succeeded)
