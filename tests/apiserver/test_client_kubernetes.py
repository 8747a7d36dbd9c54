"""The official ``kubernetes`` client against a real server process.

CoreV1Api and CustomObjectsApi CRUD (custom resources from our CRDs), DynamicClient discovery
and server-side apply (managedFields, conflicts, forced takeover), and ``watch.Watch`` from a
resourceVersion, which must deliver exactly the later events, and answer 410 once too old.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException

from tests.support.apiserver import ServerProcess
from tests.support.polling import wait_for

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"
NS = "k8s-client"


def raycluster(name: str, replicas: int = 1, labels: dict[str, str] | None = None) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.9.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "rayVersion": "2.9.0",
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": replicas,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container]}},
                }
            ],
        },
    }


def install_crds(api_client: client.ApiClient, *files: str) -> None:
    ext = client.ApiextensionsV1Api(api_client)
    for name in files:
        body = yaml.safe_load((CRDS / name).read_text())
        try:
            ext.create_custom_resource_definition(body)
        except ApiException as exc:
            if exc.status != 409:
                raise
    wanted = {yaml.safe_load((CRDS / f).read_text())["spec"]["group"] for f in files}
    wait_for(lambda: wanted <= {g.name for g in client.ApisApi(api_client).get_api_versions().groups},
             10, what=f"CRD groups {wanted} discoverable")


@pytest.fixture(scope="module")
def api_client(apiserver: ServerProcess) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(str(apiserver.kubeconfig))
    install_crds(api, "ray.io_rayclusters.yaml")
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    yield api
    api.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


@pytest.fixture(scope="module")
def dyn(api_client: client.ApiClient) -> dynamic.DynamicClient:
    return dynamic.DynamicClient(api_client)


# -- CoreV1Api ---------------------------------------------------------------------------------------


def test_core_crud_with_optimistic_concurrency(core: client.CoreV1Api) -> None:
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm-crud"), data={"a": "1"})
    created = core.create_namespaced_config_map(NS, body)
    assert created.metadata.uid and created.metadata.resource_version
    with pytest.raises(ApiException) as exists:
        core.create_namespaced_config_map(NS, body)
    assert exists.value.status == 409

    created.data["a"] = "2"
    replaced = core.replace_namespaced_config_map("cm-crud", NS, created)
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    with pytest.raises(ApiException) as stale:
        core.replace_namespaced_config_map("cm-crud", NS, created)  # old resourceVersion
    assert stale.value.status == 409

    patched = core.patch_namespaced_config_map("cm-crud", NS, {"metadata": {"labels": {"p": "q"}}})
    assert patched.metadata.labels == {"p": "q"} and patched.data == {"a": "2"}
    listed = core.list_namespaced_config_map(NS, label_selector="p=q")
    assert [c.metadata.name for c in listed.items] == ["cm-crud"]
    everywhere = core.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={NS}")
    assert "cm-crud" in {c.metadata.name for c in everywhere.items}

    status = core.delete_namespaced_config_map("cm-crud", NS)  # this client version returns a dict
    assert status["kind"] == "Status" and status["status"] == "Success"
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_config_map("cm-crud", NS)
    assert gone.value.status == 404


def test_core_pagination(core: client.CoreV1Api) -> None:
    for i in range(5):
        core.create_namespaced_secret(
            NS, client.V1Secret(metadata=client.V1ObjectMeta(name=f"page-{i}", labels={"page": "yes"}))
        )
    names: list[str] = []
    token = None
    while True:
        page = core.list_namespaced_secret(NS, label_selector="page=yes", limit=2, _continue=token)
        names += [s.metadata.name for s in page.items]
        assert len(page.items) <= 2
        token = page.metadata._continue
        if not token:
            break
    assert sorted(names) == [f"page-{i}" for i in range(5)]


# -- CustomObjectsApi --------------------------------------------------------------------------------


def test_custom_objects_crud_and_status(custom: client.CustomObjectsApi) -> None:
    args = ("ray.io", "v1", NS, "rayclusters")
    created = custom.create_namespaced_custom_object(*args, raycluster("rc-crud", labels={"team": "a"}))
    assert created["metadata"]["generation"] == 1
    assert created["spec"]["workerGroupSpecs"][0]["numOfHosts"] == 1  # CRD default applied

    got = custom.get_namespaced_custom_object(*args, "rc-crud")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    listed = custom.list_namespaced_custom_object(*args, label_selector="team=a")
    assert [o["metadata"]["name"] for o in listed["items"]] == ["rc-crud"]

    patched = custom.patch_namespaced_custom_object(*args, "rc-crud", {"spec": {"suspend": True}})
    assert patched["spec"]["suspend"] is True and patched["metadata"]["generation"] == 2

    status = custom.patch_namespaced_custom_object_status(*args, "rc-crud", {"status": {"state": "ready"}})
    assert status["status"]["state"] == "ready"
    assert status["metadata"]["generation"] == 2  # status writes do not bump generation
    ignored = custom.patch_namespaced_custom_object(*args, "rc-crud", {"status": {"state": "failed"}})
    assert ignored["status"]["state"] == "ready"  # status is only written through /status

    with pytest.raises(ApiException) as invalid:
        bad = raycluster("rc-bad")
        bad["spec"]["workerGroupSpecs"][0]["replicas"] = "many"
        custom.create_namespaced_custom_object(*args, bad)
    assert invalid.value.status == 422

    custom.delete_namespaced_custom_object(*args, "rc-crud")
    with pytest.raises(ApiException) as gone:
        custom.get_namespaced_custom_object(*args, "rc-crud")
    assert gone.value.status == 404


# -- DynamicClient -----------------------------------------------------------------------------------


def test_dynamic_client_discovers_and_crud(dyn: dynamic.DynamicClient) -> None:
    clusters = dyn.resources.get(api_version="ray.io/v1", kind="RayCluster")
    assert clusters.namespaced and clusters.name == "rayclusters"
    created = clusters.create(body=raycluster("rc-dyn"), namespace=NS)
    assert created.metadata.name == "rc-dyn"
    got = clusters.get(name="rc-dyn", namespace=NS)
    assert got.spec.workerGroupSpecs[0].replicas == 1
    patched = clusters.patch(
        name="rc-dyn",
        namespace=NS,
        body={"spec": {"rayVersion": "2.10.0"}},
        content_type="application/merge-patch+json",
    )
    assert patched.spec.rayVersion == "2.10.0"
    names = [o.metadata.name for o in clusters.get(namespace=NS).items]
    assert "rc-dyn" in names
    clusters.delete(name="rc-dyn", namespace=NS)
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    assert pods.namespaced and "po" in pods.short_names


def _managers(obj: Any) -> dict[str, Any]:
    return {entry["manager"]: entry for entry in obj["metadata"]["managedFields"]}


def test_dynamic_server_side_apply_tracks_owners_and_conflicts(dyn: dynamic.DynamicClient) -> None:
    clusters = dyn.resources.get(api_version="ray.io/v1", kind="RayCluster")
    first = dyn.server_side_apply(
        clusters, body=raycluster("rc-ssa", replicas=1), namespace=NS, field_manager="alice"
    ).to_dict()
    entry = _managers(first)["alice"]
    assert entry["operation"] == "Apply" and entry["fieldsType"] == "FieldsV1"
    assert "f:spec" in entry["fieldsV1"]

    again = dyn.server_side_apply(
        clusters, body=raycluster("rc-ssa", replicas=1), namespace=NS, field_manager="alice"
    ).to_dict()
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]  # no-op

    with pytest.raises(ApiException) as conflict:
        dyn.server_side_apply(
            clusters, body=raycluster("rc-ssa", replicas=3), namespace=NS, field_manager="bob"
        )
    assert conflict.value.status == 409
    assert "alice" in conflict.value.body and "replicas" in conflict.value.body

    forced = dyn.server_side_apply(
        clusters,
        body=raycluster("rc-ssa", replicas=3),
        namespace=NS,
        field_manager="bob",
        force_conflicts=True,
    ).to_dict()
    assert forced["spec"]["workerGroupSpecs"][0]["replicas"] == 3
    assert "bob" in _managers(forced)

    updater = dyn.patch(
        clusters,
        name="rc-ssa",
        namespace=NS,
        body={"metadata": {"labels": {"touched": "yes"}}},
        content_type="application/merge-patch+json",
        field_manager="carol",
    ).to_dict()
    assert _managers(updater)["carol"]["operation"] == "Update"
    clusters.delete(name="rc-ssa", namespace=NS)


# -- watch.Watch ---------------------------------------------------------------------------------------


def test_watch_resumes_from_resource_version_with_exactly_later_events(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w-before", labels={"w": "1"}))
    )
    mark = core.list_namespaced_config_map(NS, label_selector="w=1").metadata.resource_version
    core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w-after", labels={"w": "1"}))
    )
    core.patch_namespaced_config_map("w-after", NS, {"data": {"x": "y"}})
    core.delete_namespaced_config_map("w-before", NS)

    seen: list[tuple[str, str]] = []
    stream = watch.Watch()
    for event in stream.stream(
        core.list_namespaced_config_map, NS, label_selector="w=1", resource_version=mark, timeout_seconds=5
    ):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 3:
            stream.stop()
    assert seen == [("ADDED", "w-after"), ("MODIFIED", "w-after"), ("DELETED", "w-before")]


def test_watch_delivers_live_events_with_typed_objects(core: client.CoreV1Api) -> None:
    start = core.list_namespaced_config_map(NS).metadata.resource_version
    core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w-live")))
    stream = watch.Watch()
    for event in stream.stream(
        core.list_namespaced_config_map,
        NS,
        field_selector="metadata.name=w-live",
        resource_version=start,
        timeout_seconds=5,
    ):
        assert isinstance(event["object"], client.V1ConfigMap)
        assert event["type"] == "ADDED" and event["object"].metadata.name == "w-live"
        stream.stop()
    assert stream.resource_version is not None and int(stream.resource_version) > int(start)


def test_watch_from_a_compacted_version_is_gone(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "state", extra_args=["--history", "5"]).start()
    try:
        api = config.new_client_from_config(str(server.kubeconfig))
        core = client.CoreV1Api(api)
        first = core.create_namespaced_config_map(
            "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="old"))
        )
        for i in range(10):
            core.patch_namespaced_config_map("old", "default", {"data": {"i": str(i)}})
        with pytest.raises(ApiException) as gone:
            for _ in watch.Watch().stream(
                core.list_namespaced_config_map,
                "default",
                resource_version=first.metadata.resource_version,
                timeout_seconds=3,
            ):
                pass
        assert gone.value.status == 410
        api.close()
    finally:
        server.stop()
