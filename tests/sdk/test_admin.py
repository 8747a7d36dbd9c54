"""The admin helpers against a real API server: the Kueue objects they write, idempotently.

No operator runs: what is checked is what an administrator's calls store, and that the SDK then
finds a namespace's default LocalQueue for a cluster that names none.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeflare.k8s.constants import DEFAULT_QUEUE_ANNOTATION, QUEUE_NAME_LABEL
from codeflare.kube import kinds
from codeflare.sdk import (
    Client,
    Cluster,
    FlavorQuota,
    create_cluster_queue,
    create_local_queue,
    create_priority_class,
    create_resource_flavor,
)
from tests.sdk.conftest import tiny
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ensure_namespace, install_crds

TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def client(apiserver: ServerProcess) -> Iterator[Client]:
    with Client.default(apiserver.kubeconfig) as admin:
        install_crds(admin.kube)
        ensure_namespace(admin.kube, "research")
        yield admin


def test_a_resource_flavor_names_its_nodes_and_tolerations(client: Client) -> None:
    create_resource_flavor("a100", {"gpu.example.com/model": "a100"}, [TOLERATION], client=client)

    spec = client.kube.get(kinds.RESOURCE_FLAVOR, "a100")["spec"]

    assert spec == {"nodeLabels": {"gpu.example.com/model": "a100"}, "tolerations": [TOLERATION]}


def test_a_cluster_queue_joins_its_cohort_with_every_flavor_covering_every_resource(client: Client) -> None:
    flavors = [
        FlavorQuota("a100", {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 2},
                    borrowing_limit={"cpu": "4"}),
        FlavorQuota("cpu-only", {"cpu": "16", "memory": "128Gi"}),
    ]
    create_cluster_queue("research-cq", flavors, cohort="research", queueing_strategy="StrictFIFO",
                         namespace_selector={}, client=client)

    spec = client.kube.get(kinds.CLUSTER_QUEUE, "research-cq")["spec"]

    assert spec["cohortName"] == "research" and spec["queueingStrategy"] == "StrictFIFO"
    [group] = spec["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    a100, cpu_only = group["flavors"]
    assert a100["name"] == "a100" and cpu_only["name"] == "cpu-only"
    assert a100["resources"][0] == {"name": "cpu", "nominalQuota": "8", "borrowingLimit": "4"}
    assert {r["name"]: r["nominalQuota"] for r in cpu_only["resources"]} == {
        "cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "0"}


def test_a_default_local_queue_is_found_for_a_cluster_that_names_none(client: Client) -> None:
    create_local_queue("research", "research-cq", "research", default=True, client=client)

    queue = client.kube.get(kinds.LOCAL_QUEUE, "research", "research")
    config = tiny("unnamed", queue=None)
    config.namespace = "research"
    cluster = Cluster(config, client)

    assert queue["spec"]["clusterQueue"] == "research-cq"
    assert queue["metadata"]["annotations"][DEFAULT_QUEUE_ANNOTATION] == "true"
    assert client.default_local_queue("research") == "research"
    assert cluster.manifest()["metadata"]["labels"][QUEUE_NAME_LABEL] == "research"


def test_a_priority_class_has_its_value(client: Client) -> None:
    create_priority_class("urgent", 1000, "jumps the queue", client=client)

    stored = client.kube.get(kinds.WORKLOAD_PRIORITY_CLASS, "urgent")

    assert (stored["value"], stored["description"]) == (1000, "jumps the queue")


def test_calling_a_helper_again_changes_nothing(client: Client) -> None:
    first = create_resource_flavor("again", {"zone": "a"}, client=client)
    second = create_resource_flavor("again", {"zone": "a"}, client=client)

    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert second["metadata"]["generation"] == first["metadata"]["generation"] == 1
