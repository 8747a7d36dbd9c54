"""lightkube (sync ``Client`` and ``AsyncClient``) against a real server process.

Typed built-in models and generic custom resources: create, get, list with selectors and
chunking, strategic/merge/JSON patches, server-side apply, status, watch from a
resourceVersion, delete, and the ApiError a missing object raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube import ApiError, AsyncClient, Client, KubeConfig
from lightkube.generic_resource import (
    create_namespaced_resource,
    get_generic_resource,
    load_in_cluster_generic_resources,
)
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.resources.core_v1 import ConfigMap, Namespace
from lightkube.types import PatchType

from tests.support.apiserver import ServerProcess

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"
NS = "lightkube"
RayCluster = create_namespaced_resource("ray.io", "v1", "RayCluster", "rayclusters")


def raycluster(name: str, replicas: int = 1) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.9.0"}
    group = {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "rayVersion": "2.9.0",
            "headGroupSpec": group,
            "workerGroupSpecs": [{"groupName": "w", "replicas": replicas, **group}],
        },
    }


@pytest.fixture(scope="module")
def config(apiserver: ServerProcess) -> KubeConfig:
    return KubeConfig.from_file(str(apiserver.kubeconfig))


@pytest.fixture(scope="module")
def kube(config: KubeConfig) -> Iterator[Client]:
    client = Client(config=config, field_manager="lightkube-test")
    crd = CustomResourceDefinition.from_dict(yaml.safe_load((CRDS / "ray.io_rayclusters.yaml").read_text()))
    client.apply(crd, field_manager="lightkube-test")
    client.create(Namespace(metadata=ObjectMeta(name=NS)))
    yield client
    client.close()


def test_typed_configmap_lifecycle(kube: Client) -> None:
    created = kube.create(
        ConfigMap(metadata=ObjectMeta(name="lk-cm", labels={"lk": "1"}), data={"a": "1"}), namespace=NS
    )
    assert created.metadata is not None and created.metadata.uid
    got = kube.get(ConfigMap, "lk-cm", namespace=NS)
    assert got.data == {"a": "1"}

    kube.patch(ConfigMap, "lk-cm", {"data": {"b": "2"}}, namespace=NS)  # strategic merge
    kube.patch(ConfigMap, "lk-cm", {"data": {"a": None}}, namespace=NS, patch_type=PatchType.MERGE)
    kube.patch(
        ConfigMap,
        "lk-cm",
        [{"op": "add", "path": "/data/c", "value": "3"}],
        namespace=NS,
        patch_type=PatchType.JSON,
    )
    assert kube.get(ConfigMap, "lk-cm", namespace=NS).data == {"b": "2", "c": "3"}

    names = [c.metadata.name for c in kube.list(ConfigMap, namespace=NS, labels={"lk": "1"}) if c.metadata]
    assert names == ["lk-cm"]
    kube.delete(ConfigMap, "lk-cm", namespace=NS)
    with pytest.raises(ApiError) as missing:
        kube.get(ConfigMap, "lk-cm", namespace=NS)
    assert missing.value.status.code == 404


def test_list_in_chunks_follows_continue_tokens(kube: Client) -> None:
    for i in range(5):
        kube.create(ConfigMap(metadata=ObjectMeta(name=f"lk-chunk-{i}", labels={"chunk": "y"})), namespace=NS)
    names = [
        c.metadata.name
        for c in kube.list(ConfigMap, namespace=NS, labels={"chunk": "y"}, chunk_size=2)
        if c.metadata
    ]
    assert sorted(n for n in names if n) == [f"lk-chunk-{i}" for i in range(5)]


def test_generic_custom_resource_apply_status_and_delete(kube: Client) -> None:
    applied = kube.apply(RayCluster.from_dict(raycluster("lk-rc")), field_manager="lk")
    assert applied.metadata is not None and applied.metadata.managedFields
    assert applied.spec["workerGroupSpecs"][0]["numOfHosts"] == 1  # CRD default

    kube.apply(RayCluster.from_dict(raycluster("lk-rc", replicas=2)), field_manager="lk")
    with pytest.raises(ApiError) as conflict:
        kube.apply(RayCluster.from_dict(raycluster("lk-rc", replicas=5)), field_manager="intruder")
    assert conflict.value.status.code == 409
    forced = kube.apply(
        RayCluster.from_dict(raycluster("lk-rc", replicas=5)), field_manager="intruder", force=True
    )
    assert forced.spec["workerGroupSpecs"][0]["replicas"] == 5

    kube.patch(
        RayCluster.Status, "lk-rc", {"status": {"state": "ready"}}, namespace=NS, patch_type=PatchType.MERGE
    )
    got = kube.get(RayCluster, "lk-rc", namespace=NS)
    assert got.status == {"state": "ready"}
    assert [r.metadata.name for r in kube.list(RayCluster, namespace="*") if r.metadata] == ["lk-rc"]
    kube.delete(RayCluster, "lk-rc", namespace=NS)
    with pytest.raises(ApiError):
        kube.get(RayCluster, "lk-rc", namespace=NS)


def test_generic_resources_loaded_from_discovery(kube: Client) -> None:
    load_in_cluster_generic_resources(kube)
    found = get_generic_resource("ray.io/v1", "RayCluster")
    assert found is not None and found._api_info.plural == "rayclusters"


def test_watch_from_resource_version(kube: Client) -> None:
    kube.create(ConfigMap(metadata=ObjectMeta(name="lk-w0", labels={"lkw": "1"})), namespace=NS)
    listing = kube.list(ConfigMap, namespace=NS, labels={"lkw": "1"})
    list(listing)
    mark = listing.resourceVersion
    kube.create(ConfigMap(metadata=ObjectMeta(name="lk-w1", labels={"lkw": "1"})), namespace=NS)
    kube.delete(ConfigMap, "lk-w0", namespace=NS)
    seen: list[tuple[str, str]] = []
    for event, obj in kube.watch(
        ConfigMap, namespace=NS, labels={"lkw": "1"}, resource_version=mark, server_timeout=5
    ):
        assert obj.metadata is not None and obj.metadata.name
        seen.append((event, obj.metadata.name))
        if len(seen) == 2:
            break
    assert seen == [("ADDED", "lk-w1"), ("DELETED", "lk-w0")]


def test_async_client_crud_and_watch(config: KubeConfig, kube: Client) -> None:
    async def scenario() -> list[tuple[str, str | None]]:
        client = AsyncClient(config=config, field_manager="lightkube-async")
        try:
            created = await client.create(
                ConfigMap(metadata=ObjectMeta(name="lk-async"), data={"x": "1"}), namespace=NS
            )
            assert created.metadata is not None
            rv = created.metadata.resourceVersion
            await client.patch(ConfigMap, "lk-async", {"data": {"x": "2"}}, namespace=NS)
            got = await client.get(ConfigMap, "lk-async", namespace=NS)
            assert got.data == {"x": "2"}
            names = [c.metadata.name async for c in client.list(ConfigMap, namespace=NS) if c.metadata]
            assert "lk-async" in names
            rc = await client.create(RayCluster.from_dict(raycluster("lk-async-rc")))
            assert rc.metadata is not None and rc.metadata.generation == 1
            await client.delete(ConfigMap, "lk-async", namespace=NS)
            seen: list[tuple[str, str | None]] = []
            async for event, obj in client.watch(
                ConfigMap,
                namespace=NS,
                fields={"metadata.name": "lk-async"},
                resource_version=rv,
                server_timeout=5,
            ):
                seen.append((event, obj.data.get("x") if obj.data else None))
                if len(seen) == 2:
                    break
            await client.delete(RayCluster, "lk-async-rc", namespace=NS)
            return seen
        finally:
            await client.close()

    assert asyncio.run(asyncio.wait_for(scenario(), 30)) == [("MODIFIED", "2"), ("DELETED", "2")]
