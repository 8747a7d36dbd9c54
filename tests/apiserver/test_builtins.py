"""Point 2: every built-in resource the issue lists is stored as a document over real HTTP.

Each resource is created, read, listed, replaced and deleted at its real REST path; pods and
nodes also take writes to their status subresource.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.http_support import client, delete, ok, status_of
from tests.support.apiserver import ServerProcess

NS = "default"
POD_SPEC = {"containers": [{"name": "c", "image": "busybox"}]}
SELECTOR = {"matchLabels": {"app": "x"}}
TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": POD_SPEC}
WEBHOOK = {
    "name": "w.example.com",
    "clientConfig": {"url": "https://example.com/hook"},
    "admissionReviewVersions": ["v1"],
    "sideEffects": "None",
}

# (collection path, kind, apiVersion, extra fields)
BUILTINS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("/api/v1/namespaces", "Namespace", "v1", {}),
    (f"/api/v1/namespaces/{NS}/pods", "Pod", "v1", {"spec": POD_SPEC}),
    (f"/api/v1/namespaces/{NS}/services", "Service", "v1", {"spec": {"ports": [{"port": 80}]}}),
    (f"/api/v1/namespaces/{NS}/endpoints", "Endpoints", "v1", {"subsets": []}),
    (f"/api/v1/namespaces/{NS}/configmaps", "ConfigMap", "v1", {"data": {"a": "b"}}),
    (f"/api/v1/namespaces/{NS}/secrets", "Secret", "v1", {"stringData": {"a": "b"}, "type": "Opaque"}),
    (f"/api/v1/namespaces/{NS}/serviceaccounts", "ServiceAccount", "v1", {}),
    (
        f"/api/v1/namespaces/{NS}/events",
        "Event",
        "v1",
        {"involvedObject": {"kind": "Pod", "name": "p", "namespace": NS}, "reason": "R", "message": "m"},
    ),
    (
        f"/apis/events.k8s.io/v1/namespaces/{NS}/events",
        "Event",
        "events.k8s.io/v1",
        {
            "regarding": {"kind": "Pod", "name": "p", "namespace": NS},
            "reason": "R",
            "note": "n",
            "action": "A",
            "reportingController": "x",
            "reportingInstance": "y",
            "eventTime": "2026-11-30T00:00:00.000000Z",
            "type": "Normal",
        },
    ),
    ("/api/v1/nodes", "Node", "v1", {}),
    (f"/api/v1/namespaces/{NS}/resourcequotas", "ResourceQuota", "v1", {"spec": {"hard": {"pods": "10"}}}),
    (
        f"/api/v1/namespaces/{NS}/persistentvolumeclaims",
        "PersistentVolumeClaim",
        "v1",
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    ),
    (
        f"/apis/apps/v1/namespaces/{NS}/deployments",
        "Deployment",
        "apps/v1",
        {"spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE}},
    ),
    (
        f"/apis/apps/v1/namespaces/{NS}/statefulsets",
        "StatefulSet",
        "apps/v1",
        {"spec": {"replicas": 1, "serviceName": "s", "selector": SELECTOR, "template": TEMPLATE}},
    ),
    (
        f"/apis/batch/v1/namespaces/{NS}/jobs",
        "Job",
        "batch/v1",
        {"spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}},
    ),
    (
        f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses",
        "Ingress",
        "networking.k8s.io/v1",
        {"spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}},
    ),
    (
        f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies",
        "NetworkPolicy",
        "networking.k8s.io/v1",
        {"spec": {"podSelector": {}}},
    ),
    (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
        "Role",
        "rbac.authorization.k8s.io/v1",
        {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    ),
    (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings",
        "RoleBinding",
        "rbac.authorization.k8s.io/v1",
        {
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "ClusterRole",
        "rbac.authorization.k8s.io/v1",
        {"rules": []},
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io/v1",
        {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}},
    ),
    (
        f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases",
        "Lease",
        "coordination.k8s.io/v1",
        {"spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}},
    ),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass", "scheduling.k8s.io/v1", {"value": 1000}),
    (
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        {"webhooks": [WEBHOOK]},
    ),
    (
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        {"webhooks": [WEBHOOK]},
    ),
    (
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "CustomResourceDefinition",
        "apiextensions.k8s.io/v1",
        {},
    ),
]

CRD_SPEC = {
    "group": "builtin.example.com",
    "scope": "Namespaced",
    "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
    "versions": [
        {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
    ],
}


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        yield c


def _body(kind: str, api_version: str, name: str, extra: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **extra}
    if kind == "CustomResourceDefinition":
        body["metadata"]["name"] = "things.builtin.example.com"
        body["spec"] = CRD_SPEC
    return body


@pytest.mark.parametrize(
    ("path", "kind", "api_version", "extra"), BUILTINS, ids=[b[1] + ":" + b[2] for b in BUILTINS]
)
def test_builtin_crud(
    http: httpx.Client, path: str, kind: str, api_version: str, extra: dict[str, Any]
) -> None:
    name = f"doc-{kind.lower()}"
    body = _body(kind, api_version, name, extra)
    name = body["metadata"]["name"]
    created = ok(http.post(path, json=body), 201)
    assert created["kind"] == kind and created["apiVersion"] == api_version
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    got = ok(http.get(f"{path}/{name}"))
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    listed = ok(http.get(path))
    assert listed["kind"] == f"{kind}List"
    assert name in [i["metadata"]["name"] for i in listed["items"]]
    got["metadata"].setdefault("labels", {})["touched"] = "yes"
    updated = ok(http.put(f"{path}/{name}", json=got))
    assert updated["metadata"]["labels"]["touched"] == "yes"
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    ok(delete(http, f"{path}/{name}"), 200, 202)
    if kind not in ("Namespace", "CustomResourceDefinition"):  # these finalize asynchronously
        status_of(http.get(f"{path}/{name}"), 404, "NotFound")


def test_secret_string_data_is_stored_as_base64(http: httpx.Client) -> None:
    created = ok(
        http.post(
            f"/api/v1/namespaces/{NS}/secrets", json={"metadata": {"name": "sd"}, "stringData": {"k": "v"}}
        ),
        201,
    )
    assert created["data"] == {"k": "dg=="}
    assert "stringData" not in created


@pytest.mark.parametrize("path", [f"/api/v1/namespaces/{NS}/pods", "/api/v1/nodes"])
def test_status_subresource_of_pods_and_nodes(http: httpx.Client, path: str) -> None:
    extra = {"spec": POD_SPEC} if "pods" in path else {}
    name = "st-" + path.rsplit("/", 1)[1]
    created = ok(http.post(path, json={"metadata": {"name": name}, **extra}), 201)
    created["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    updated = ok(http.put(f"{path}/{name}/status", json=created))
    assert updated["status"]["conditions"][0]["type"] == "Ready"
    assert ok(http.get(f"{path}/{name}/status"))["status"]["phase"] == "Running"


def test_discovery_lists_every_group(http: httpx.Client) -> None:
    groups = {g["name"] for g in ok(http.get("/apis"))["groups"]}
    assert {
        "apps",
        "batch",
        "networking.k8s.io",
        "rbac.authorization.k8s.io",
        "coordination.k8s.io",
        "scheduling.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "events.k8s.io",
    } <= groups
    core = {r["name"] for r in ok(http.get("/api/v1"))["resources"]}
    assert {
        "pods",
        "pods/status",
        "nodes",
        "nodes/status",
        "services",
        "endpoints",
        "configmaps",
        "secrets",
        "serviceaccounts",
        "events",
        "resourcequotas",
        "persistentvolumeclaims",
    } <= core
