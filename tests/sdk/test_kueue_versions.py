"""The SDK on a Kueue serving only v1beta1 (0.13-0.14), only v1beta2, or both (0.15+).

Each case is a real API server with the Kueue CRDs registered in that variant (the bundled ones
cut down to the versions served, strategy None where one version is served, as Kueue's own CRDs
were then). The SDK builds v1beta2 objects; it asks once which version the cluster serves and,
on a v1beta1-only cluster, writes and reads v1beta1 through the same mapping module. What is
checked is what the server stores (read raw at the served version, with that version's field
names) and what the SDK hands back (always v1beta2 shapes).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeflare.api.crds import load_crds
from codeflare.kube import kinds
from codeflare.sdk import (
    Client,
    FlavorQuota,
    create_cluster_queue,
    create_local_queue,
    create_resource_flavor,
)
from codeflare.sdk.cluster import list_local_queues
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ensure_namespace, wait_for

Obj = dict[str, Any]
VARIANTS = {"v1beta1-only": ("v1beta1",), "v1beta2-only": ("v1beta2",), "both": ("v1beta1", "v1beta2")}


def kueue_crds(served: tuple[str, ...]) -> list[Obj]:
    """Our Kueue CRDs serving only ``served`` (the last one stored); strategy None when just one."""
    out = []
    for crd in load_crds():
        if crd["spec"]["group"] != "kueue.x-k8s.io":
            continue
        crd = copy.deepcopy(crd)
        versions = [v for v in crd["spec"]["versions"] if v["name"] in served]
        for version in versions:
            version["storage"] = version["name"] == served[-1]
            if len(served) == 1:
                version.pop("deprecated", None)
                version.pop("deprecationWarning", None)
        crd["spec"]["versions"] = versions
        if len(served) == 1:
            crd["spec"].pop("conversion", None)
        out.append(crd)
    return out


@pytest.fixture(params=sorted(VARIANTS))
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Client, tuple[str, ...]]]:
    served = VARIANTS[request.param]
    server = ServerProcess(tmp_path / "state").start()
    try:
        with Client.default(server.kubeconfig) as admin:
            for crd in kueue_crds(served):
                admin.kube.create(kinds.CRD, crd)
            for kind in (kinds.CLUSTER_QUEUE, kinds.LOCAL_QUEUE):
                wait_for(
                    lambda k=kind: _served(admin, k.at_version(served[-1])), 10, what=f"{kind.plural} served"
                )
            ensure_namespace(admin.kube, "team")
        with Client.default(server.kubeconfig) as client:
            yield client, served
    finally:
        server.stop()


def _served(client: Client, kind: kinds.Kind) -> bool:
    client.kube.list(kind)
    return True


def test_the_sdk_speaks_the_best_version_served_asking_once(cluster: tuple[Client, tuple[str, ...]]) -> None:
    client, served = cluster
    calls = []
    real = client.kube.api_groups

    def counted() -> dict[str, list[str]]:
        calls.append(1)
        return real()

    client.kube.api_groups = counted  # type: ignore[method-assign]  # a spy on the real call
    assert client.kueue_version() == ("v1beta2" if "v1beta2" in served else "v1beta1")
    assert client.kueue_kind(kinds.LOCAL_QUEUE).version == client.kueue_version()
    client.kueue_version()
    assert len(calls) == 1


def test_admin_objects_are_stored_in_the_served_versions_names(
    cluster: tuple[Client, tuple[str, ...]],
) -> None:
    client, served = cluster
    create_resource_flavor("rf", {"pool": "a"}, client=client)
    returned = create_cluster_queue("cq", [FlavorQuota("rf", {"cpu": 2})], cohort="research", client=client)
    assert returned["apiVersion"] == "kueue.x-k8s.io/v1beta2" and returned["spec"]["cohortName"] == "research"
    create_local_queue("lq", "cq", "team", default=True, client=client)
    raw = client.kube.get(kinds.CLUSTER_QUEUE.at_version(served[-1]), "cq")
    if served == ("v1beta1",):
        assert raw["spec"]["cohort"] == "research" and "cohortName" not in raw["spec"]
    else:
        assert raw["spec"]["cohortName"] == "research" and "cohort" not in raw["spec"]
    # what the SDK reads back is the same whatever the server speaks
    assert client.kueue_get(kinds.CLUSTER_QUEUE, "cq")["spec"]["cohortName"] == "research"
    assert [q["name"] for q in list_local_queues("team", client)] == ["lq"]
    assert client.default_local_queue("team") == "lq"


def test_local_queue_usage_reads_as_flavors_usage(cluster: tuple[Client, tuple[str, ...]]) -> None:
    client, served = cluster
    create_local_queue("lq-usage", "cq", "team", client=client)
    usage = [{"name": "rf", "resources": [{"name": "cpu", "total": "1"}]}]
    field = "flavorUsage" if served == ("v1beta1",) else "flavorsUsage"
    client.kube.patch(
        kinds.LOCAL_QUEUE.at_version(served[-1]), "lq-usage", {"status": {field: usage}}, "team", status=True
    )
    [summary] = [q for q in list_local_queues("team", client) if q["name"] == "lq-usage"]
    assert summary["flavors"] == ["rf"]
