"""``Cluster`` and the listing calls against a real API server and operator, with no Ray at all.

What a user sees before anything runs: the objects ``apply()`` writes (and that a second apply
changes nothing), a queued cluster's status and the operator's reason verbatim, an admitted one
starting (no node agent runs it here), ``details()``, the three listings, and ``down()``.
Namespace ``team-a`` has LocalQueue ``small`` on ClusterQueue ``sdk-small`` (3 CPUs, 4Gi):
``fits`` (2 CPUs) is admitted, ``too-big`` (5 CPUs) can never be.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.k8s.constants import JOB_UID_LABEL, QUEUE_NAME_LABEL
from codeflare.kube import kinds
from codeflare.sdk import (
    Client,
    Cluster,
    CodeFlareClusterStatus,
    FlavorQuota,
    RayClusterStatus,
    create_cluster_queue,
    create_local_queue,
    create_resource_flavor,
    get_cluster,
    list_all_clusters,
    list_all_queued,
    list_local_queues,
)
from tests.sdk.conftest import tiny
from tests.support.control_plane import ensure_namespace, wait_for

NS = "team-a"
QUEUE = "small"
CLUSTER_QUEUE = "sdk-small"


@pytest.fixture(scope="module")
def client(control_plane: Client) -> Client:
    ensure_namespace(control_plane.kube, NS)
    create_resource_flavor("sdk-flavor", client=control_plane)
    create_cluster_queue(CLUSTER_QUEUE, [FlavorQuota("sdk-flavor", {"cpu": "3", "memory": "4Gi"})],
                         namespace_selector={}, client=control_plane)
    create_local_queue(QUEUE, CLUSTER_QUEUE, NS, client=control_plane)
    return control_plane


def cluster(client: Client, name: str, workers: int = 1, queue: str | None = QUEUE) -> Cluster:
    config = tiny(name, workers=workers, queue=queue)
    config.namespace = NS
    return Cluster(config, client)


@pytest.fixture(scope="module")
def fits(client: Client) -> Iterator[Cluster]:
    """Head and one worker: 2 CPUs, admitted by the operator (and then never started: no agent)."""
    created = cluster(client, "fits")
    created.apply()
    wait_for(lambda: created.status() == CodeFlareClusterStatus.STARTING, 30, 0.1, what="fits admitted")
    yield created
    created.down()


@pytest.fixture(scope="module")
def too_big(client: Client, fits: Cluster) -> Iterator[Cluster]:
    """Head and four workers: 5 CPUs in a 3-CPU queue; pending for as long as it exists."""
    created = cluster(client, "too-big", workers=4)
    created.apply()
    wait_for(lambda: "insufficient" in (created.why_pending() or ""), 30, 0.1, what="too-big's reason")
    yield created
    created.down()


def contains(live: Any, sent: Any) -> bool:
    """Whether every field ``sent`` carries is in ``live`` with the same value (the server may add)."""
    if isinstance(sent, dict):
        return isinstance(live, dict) and all(k in live and contains(live[k], v) for k, v in sent.items())
    if isinstance(sent, list):
        return isinstance(live, list) and len(live) == len(sent) and all(map(contains, live, sent))
    return bool(live == sent)


def owned_by_sdk(obj: dict[str, Any]) -> list[Any]:
    managed = obj["metadata"].get("managedFields") or []
    return [m.get("fieldsV1") for m in managed if m["manager"] == "codeflare"]


def test_apply_writes_the_one_queued_raycluster_and_a_second_apply_changes_nothing(
    client: Client, too_big: Cluster
) -> None:
    live = client.kube.get(kinds.RAYCLUSTER, "too-big", NS)

    assert contains(live, too_big.manifest())
    assert live["spec"]["suspend"] is True
    assert live["metadata"]["labels"][QUEUE_NAME_LABEL] == QUEUE
    assert client.kube.list(kinds.APPWRAPPER, NS) == []

    again = too_big.apply()

    assert again["metadata"]["generation"] == live["metadata"]["generation"]
    assert again["metadata"]["uid"] == live["metadata"]["uid"]
    assert owned_by_sdk(again) == owned_by_sdk(live)


def test_a_cluster_that_cannot_fit_is_queued_with_the_operators_reason_verbatim(
    client: Client, too_big: Cluster
) -> None:
    uid = client.kube.get(kinds.RAYCLUSTER, "too-big", NS)["metadata"]["uid"]
    [workload] = client.kube.list(kinds.WORKLOAD, NS, labels={JOB_UID_LABEL: uid})
    [condition] = [c for c in workload["status"]["conditions"] if c["type"] == "QuotaReserved"]

    assert too_big.status() == CodeFlareClusterStatus.QUEUED
    assert condition["status"] == "False"
    reason = too_big.why_pending()
    # the message verbatim, under Kueue 0.19's code (the text adds the queue position)
    assert reason is not None and reason.message == condition["message"]  # type: ignore[attr-defined]
    assert reason.reason == condition["reason"] == "ExceedsMaxQuota"  # type: ignore[attr-defined]
    assert "insufficient quota for cpu" in condition["message"]


def test_an_admitted_cluster_is_starting_and_pending_for_nothing(fits: Cluster) -> None:
    assert fits.status() == CodeFlareClusterStatus.STARTING
    assert fits.why_pending() is None


def test_a_cluster_suspended_outside_any_queue_is_suspended_not_queued(client: Client) -> None:
    solo = cluster(client, "solo", queue=None)
    try:
        applied = solo.apply()
        assert not applied["spec"].get("suspend") and solo.status() == CodeFlareClusterStatus.STARTING

        client.kube.patch(kinds.RAYCLUSTER, "solo", {"spec": {"suspend": True}}, NS)

        assert solo.status() == CodeFlareClusterStatus.SUSPENDED
    finally:
        solo.down()


def test_details_summarise_the_cluster_from_its_object(too_big: Cluster) -> None:
    info = too_big.details()

    assert (info.name, info.namespace, info.status) == ("too-big", NS, RayClusterStatus.SUSPENDED)
    assert (info.head_cpus, info.head_memory) == ("1", "1Gi")
    assert (info.workers, info.worker_cpus, info.worker_memory, info.worker_gpus) == (4, "1", "1Gi", "0")
    assert info.local_queue == QUEUE and info.dashboard == ""


def test_get_cluster_reads_the_configuration_back(client: Client, too_big: Cluster) -> None:
    found = get_cluster("too-big", NS, client)

    assert found.config.num_workers == 4 and found.config.local_queue == QUEUE
    assert found.config.worker_cpu_requests == too_big.config.worker_cpu_requests
    assert found.config.head_memory_limits == too_big.config.head_memory_limits
    assert found.status() == CodeFlareClusterStatus.QUEUED


def test_the_listings_show_clusters_queued_work_and_queues(
    client: Client, fits: Cluster, too_big: Cluster
) -> None:
    assert {info.name for info in list_all_clusters(NS, client)} == {"fits", "too-big"}

    [queued] = list_all_queued(NS, client)
    assert (queued["name"], queued["kind"], queued["queue"]) == ("too-big", "RayCluster", QUEUE)
    assert queued["reason"] == too_big.why_pending()

    def small_queue() -> dict[str, Any] | None:
        [queue] = list_local_queues(NS, client)
        return queue if (queue["pending"], queue["admitted"]) == (1, 1) else None

    queue = wait_for(small_queue, 30, 0.1, what="the queue's counters")
    assert (queue["name"], queue["cluster_queue"], queue["default"]) == (QUEUE, CLUSTER_QUEUE, False)


def test_down_deletes_the_cluster_and_its_workload(client: Client, fits: Cluster) -> None:
    doomed = cluster(client, "doomed")
    doomed.apply()
    uid = client.kube.get(kinds.RAYCLUSTER, "doomed", NS)["metadata"]["uid"]
    wait_for(lambda: client.kube.list(kinds.WORKLOAD, NS, labels={JOB_UID_LABEL: uid}), 30, 0.1,
             what="doomed's Workload")

    doomed.down()

    assert client.kube.find(kinds.RAYCLUSTER, "doomed", NS) is None
    assert doomed.status() == CodeFlareClusterStatus.UNKNOWN and doomed.why_pending() is None
    wait_for(lambda: not client.kube.list(kinds.WORKLOAD, NS, labels={JOB_UID_LABEL: uid}), 30, 0.1,
             what="doomed's Workload collected")
    doomed.down()  # already gone: nothing to do, no error
