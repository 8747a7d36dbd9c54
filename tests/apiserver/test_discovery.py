"""Discovery and OpenAPI documents as clients read them, from a real server process.

Covers ``/version``, ``/api``, ``/api/v1``, ``/apis``, ``/apis/<group>``, ``/apis/<g>/<v>`` (with
a CRD registered at runtime) and the OpenAPI v3 index and group-version documents that kubectl
uses for ``explain`` and to decide that the server validates fields itself, plus ``/openapi/v2``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.support.apiserver import ServerProcess

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"


class Http:
    """A tiny authenticated HTTPS client for raw GETs."""

    def __init__(self, server: ServerProcess) -> None:
        self.base = server.url
        self.session = requests.Session()
        self.session.trust_env = False  # REQUESTS_CA_BUNDLE would override the session's CA
        self.session.verify = str(server.ca_file)
        self.session.headers["Authorization"] = f"Bearer {server.token}"

    def get(self, path: str, **kwargs: Any) -> Any:
        resp = self.session.get(self.base + path, timeout=10, **kwargs)
        assert resp.status_code == 200, (path, resp.status_code, resp.text[:300])
        return resp.json()


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[Http]:
    client = Http(apiserver)
    for name in ("ray.io_rayclusters.yaml", "kueue.x-k8s.io_clusterqueues.yaml"):
        crd = yaml.safe_load((CRDS / name).read_text())
        resp = client.session.post(
            client.base + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd, timeout=10
        )
        assert resp.status_code in (201, 409), resp.text
    yield client
    client.session.close()


def test_version_is_public_and_versioned(apiserver: ServerProcess) -> None:
    resp = requests.get(apiserver.url + "/version", verify=str(apiserver.ca_file), timeout=10)
    assert resp.status_code == 200
    body = resp.json()
    assert body["major"] == "1" and body["gitVersion"].startswith("v1.")


def test_resources_need_a_token(apiserver: ServerProcess) -> None:
    resp = requests.get(apiserver.url + "/api/v1/namespaces", verify=str(apiserver.ca_file), timeout=10)
    assert resp.status_code == 401
    assert resp.json()["kind"] == "Status"


def test_core_versions_and_resource_list(http: Http) -> None:
    api = http.get("/api")
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    v1 = http.get("/api/v1")
    assert v1["kind"] == "APIResourceList" and v1["groupVersion"] == "v1"
    by_name = {r["name"]: r for r in v1["resources"]}
    pods = by_name["pods"]
    assert pods["kind"] == "Pod" and pods["namespaced"] is True and "po" in pods["shortNames"]
    assert set(pods["verbs"]) >= {"create", "delete", "get", "list", "patch", "update", "watch"}
    assert by_name["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["namespaces"]["namespaced"] is False
    assert "ns" in by_name["namespaces"]["shortNames"]


def test_group_list_includes_builtin_and_crd_groups(http: Http) -> None:
    groups = {g["name"]: g for g in http.get("/apis")["groups"]}
    assert {"apps", "batch", "coordination.k8s.io", "apiextensions.k8s.io", "ray.io"} <= set(groups)
    ray = groups["ray.io"]
    assert ray["preferredVersion"] == {"groupVersion": "ray.io/v1", "version": "v1"}
    group = http.get("/apis/ray.io")
    assert group["kind"] == "APIGroup" and group["name"] == "ray.io"


def test_crd_resource_list_has_kind_scope_verbs_and_subresources(http: Http) -> None:
    ray = {r["name"]: r for r in http.get("/apis/ray.io/v1")["resources"]}
    clusters = ray["rayclusters"]
    assert clusters["kind"] == "RayCluster" and clusters["namespaced"] is True
    assert clusters["singularName"] == "raycluster" and "all" in clusters["categories"]
    assert "rayclusters/status" in ray
    queues = {r["name"]: r for r in http.get("/apis/kueue.x-k8s.io/v1beta1")["resources"]}
    assert queues["clusterqueues"]["namespaced"] is False
    assert queues["clusterqueues"]["shortNames"] == ["cq"]


def test_deployment_scale_subresource_is_discoverable(http: Http) -> None:
    apps = {r["name"]: r for r in http.get("/apis/apps/v1")["resources"]}
    scale = apps["deployments/scale"]
    assert scale["kind"] == "Scale" and scale["group"] == "autoscaling" and scale["version"] == "v1"


def test_unknown_group_is_404(http: Http) -> None:
    resp = http.session.get(http.base + "/apis/nope.example.com/v1", timeout=10)
    assert resp.status_code == 404 and resp.json()["reason"] == "NotFound"


def test_openapi_v3_index_lists_every_group_version(http: Http) -> None:
    paths = http.get("/openapi/v3")["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/ray.io/v1", "apis/kueue.x-k8s.io/v1beta1"} <= set(paths)
    url = paths["apis/ray.io/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/ray.io/v1?hash=")
    assert http.get(url)["openapi"].startswith("3.")


def test_openapi_v3_crd_document_carries_schema_and_field_validation(http: Http) -> None:
    doc = http.get("/openapi/v3/apis/ray.io/v1")
    schema = doc["components"]["schemas"]["io.ray.v1.RayCluster"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "ray.io", "version": "v1", "kind": "RayCluster"}
    ]
    workers = schema["properties"]["spec"]["properties"]["workerGroupSpecs"]
    assert workers["type"] == "array" and "groupName" in workers["items"]["properties"]
    item = doc["paths"]["/apis/ray.io/v1/namespaces/{namespace}/rayclusters/{name}"]
    assert "fieldValidation" in {p["name"] for p in item["patch"]["parameters"]}
    assert "/apis/ray.io/v1/namespaces/{namespace}/rayclusters/{name}/status" in doc["paths"]


def test_openapi_v3_hash_changes_when_a_crd_changes(http: Http) -> None:
    before = http.get("/openapi/v3")["paths"]["apis/kueue.x-k8s.io/v1beta1"]["serverRelativeURL"]
    crd = yaml.safe_load((CRDS / "kueue.x-k8s.io_localqueues.yaml").read_text())
    resp = http.session.post(
        http.base + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd, timeout=10
    )
    assert resp.status_code in (201, 409)
    after = http.get("/openapi/v3")["paths"]["apis/kueue.x-k8s.io/v1beta1"]["serverRelativeURL"]
    assert before != after
    doc = http.get("/openapi/v3/apis/kueue.x-k8s.io/v1beta1")
    assert "io.x-k8s.kueue.v1beta1.LocalQueue" in doc["components"]["schemas"]


def test_openapi_core_document_and_v2(http: Http) -> None:
    core = http.get("/openapi/v3/api/v1")
    assert "io.k8s.api.core.v1.ConfigMap" in core["components"]["schemas"]
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}" in core["paths"]
    v2 = http.get("/openapi/v2")
    assert v2["swagger"] == "2.0" and "io.ray.v1.RayCluster" in v2["definitions"]
    missing = http.session.get(http.base + "/openapi/v3/apis/nope.example.com/v1", timeout=10)
    assert missing.status_code == 404


def test_openapi_v2_in_protobuf_only_is_not_acceptable(http: Http) -> None:
    """client-go asks for protobuf only; the server answers 406 rather than JSON it cannot parse."""
    proto = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    resp = http.session.get(http.base + "/openapi/v2", headers={"Accept": proto}, timeout=10)
    assert resp.status_code == 406 and resp.json()["reason"] == "NotAcceptable"
    both = http.session.get(
        http.base + "/openapi/v2", headers={"Accept": f"{proto}, application/json"}, timeout=10
    )
    assert both.status_code == 200 and both.json()["swagger"] == "2.0"
