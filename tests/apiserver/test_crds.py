"""Point 3: CustomResourceDefinitions are served at once and their schemas govern every write.

A namespaced CRD with two versions, status and scale subresources and printer columns; a
cluster-scoped one; validation of types, required, enums, patterns, bounds, preserved unknown
fields and int-or-string; defaulting and pruning; deleting the CRD deletes its objects.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.http_support import client, delete, ok, patch, status_of
from tests.support.apiserver import ServerProcess

GROUP = "test.example.com"
BASE = f"/apis/{GROUP}/v1/namespaces/default/widgets"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                "code": {"type": "string", "pattern": "^[a-z]{3}$"},
                "replicas": {"type": "integer", "default": 1},
                "port": {"x-kubernetes-int-or-string": True},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "ratio": {"type": "number", "maximum": 1.5},
            },
        },
        "status": {
            "type": "object",
            "properties": {"phase": {"type": "string"}, "replicas": {"type": "integer"}},
        },
    },
}


def widget_crd(scope: str = "Namespaced", plural: str = "widgets", kind: str = "Widget") -> dict[str, Any]:
    version = {
        "served": True,
        "schema": {"openAPIV3Schema": SCHEMA},
        "subresources": {
            "status": {},
            "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
        },
        "additionalPrinterColumns": [
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {**version, "name": "v1", "storage": True},
                {**version, "name": "v1beta1", "storage": False},
            ],
        },
    }


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        ok(c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=widget_crd()), 201)
        yield c


def test_served_at_once_in_discovery_and_both_versions(http: httpx.Client) -> None:
    resources = ok(http.get(f"/apis/{GROUP}/v1"))["resources"]
    names = {r["name"] for r in resources}
    assert {"widgets", "widgets/status", "widgets/scale"} <= names
    created = ok(http.post(BASE, json=widget("v", size=2)), 201)
    via_beta = ok(http.get(f"/apis/{GROUP}/v1beta1/namespaces/default/widgets/v"))
    assert via_beta["apiVersion"] == f"{GROUP}/v1beta1"
    assert via_beta["metadata"]["uid"] == created["metadata"]["uid"]
    crd = ok(http.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}"))
    assert crd["status"]["storedVersions"] == ["v1"]
    assert {c["type"] for c in crd["status"]["conditions"]} >= {"Established", "NamesAccepted"}


def test_defaults_and_pruning(http: httpx.Client) -> None:
    body = widget("d", size=3, unknown="x", free={"anything": {"goes": 1}})
    body["extra"] = "top-level unknown"
    resp = http.post(BASE, json=body)
    created = ok(resp, 201)
    assert created["spec"]["color"] == "red" and created["spec"]["replicas"] == 1
    assert "unknown" not in created["spec"] and "extra" not in created
    assert created["spec"]["free"] == {"anything": {"goes": 1}}
    assert "unknown field" in resp.headers.get("Warning", "")
    strict = http.post(BASE, json=widget("strict", size=3, unknown="x"), params={"fieldValidation": "Strict"})
    status_of(strict, 400, "BadRequest")


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({}, "spec.size"),
        ({"size": "big"}, "spec.size"),
        ({"size": 0}, "spec.size"),
        ({"size": 11}, "spec.size"),
        ({"size": 1, "color": "green"}, "spec.color"),
        ({"size": 1, "code": "ABCD"}, "spec.code"),
        ({"size": 1, "port": [1]}, "spec.port"),
        ({"size": 1, "ratio": 2.5}, "spec.ratio"),
        ({"size": 1, "free": "not-an-object"}, "spec.free"),
    ],
)
def test_schema_rejects_bad_values_naming_the_field(
    http: httpx.Client, spec: dict[str, Any], field: str
) -> None:
    body = status_of(http.post(BASE, json=widget("bad", **spec)), 422, "Invalid")
    assert field in [c["field"] for c in body["details"]["causes"]], body


@pytest.mark.parametrize("port", [8080, "http"])
def test_int_or_string_accepts_both(http: httpx.Client, port: Any) -> None:
    created = ok(http.post(BASE, json=widget(f"port-{port}", size=1, port=port)), 201)
    assert created["spec"]["port"] == port


def test_schema_applies_to_updates_and_patches(http: httpx.Client) -> None:
    obj = ok(http.post(BASE, json=widget("upd", size=1)), 201)
    obj["spec"]["size"] = 99
    status_of(http.put(f"{BASE}/upd", json=obj), 422, "Invalid")
    status_of(patch(http, f"{BASE}/upd", {"spec": {"color": "pink"}}, "application/merge-patch+json"), 422)
    assert ok(http.get(f"{BASE}/upd"))["spec"]["size"] == 1


def test_status_and_scale_subresources(http: httpx.Client) -> None:
    obj = ok(http.post(BASE, json=widget("sc", size=1, replicas=2)), 201)
    obj["status"] = {"phase": "Ready", "replicas": 2}
    ok(http.put(f"{BASE}/sc/status", json=obj))
    scale = ok(http.get(f"{BASE}/sc/scale"))
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 2 and scale["status"]["replicas"] == 2
    scale["spec"]["replicas"] = 5
    ok(http.put(f"{BASE}/sc/scale", json=scale))
    assert ok(http.get(f"{BASE}/sc"))["spec"]["replicas"] == 5


def test_printer_columns_in_table_output(http: httpx.Client) -> None:
    ok(http.post(BASE, json=widget("tbl", size=7, color="blue")), 201)
    table = ok(http.get(f"{BASE}/tbl", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}))
    assert table["kind"] == "Table"
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert "Size" in columns and "Color" in columns
    row = table["rows"][0]["cells"]
    assert row[columns.index("Size")] == 7 and row[columns.index("Color")] == "blue"


def test_cluster_scoped_crd(http: httpx.Client) -> None:
    ok(
        http.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            json=widget_crd("Cluster", "gadgets", "Gadget"),
        ),
        201,
    )
    body = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g1"}, "spec": {"size": 2}}
    created = ok(http.post(f"/apis/{GROUP}/v1/gadgets", json=body), 201)
    assert "namespace" not in created["metadata"]
    assert ok(http.get(f"/apis/{GROUP}/v1/gadgets/g1"))["spec"]["color"] == "red"
    status_of(http.get(f"/apis/{GROUP}/v1/namespaces/default/gadgets/g1"), 404)


def test_creating_a_served_crd_again_is_already_exists(http: httpx.Client) -> None:
    # kube-apiserver: a CRD's name is plural.group, so the second create meets the stored object
    # (409 AlreadyExists), which is what operators starting against a prepared server rely on.
    status_of(
        http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=widget_crd()),
        409,
        "AlreadyExists",
    )


@pytest.mark.parametrize(("field", "value"), [("versions", 5), ("names", 5)])
def test_a_mistyped_crd_is_a_422_naming_the_field(http: httpx.Client, field: str, value: Any) -> None:
    # Found by tests/apiserver/test_fuzz.py: the CRD's own preparation ran on the mistyped value (500).
    crd = widget_crd("Namespaced", "mistypeds", "Mistyped")
    crd["spec"][field] = value
    resp = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    status_of(resp, 422, "Invalid")
    assert f"spec.{field}" in resp.text


def test_invalid_crd_is_rejected(http: httpx.Client) -> None:
    crd = widget_crd("Namespaced", "bads", "Bad")
    crd["spec"]["versions"][1]["storage"] = True  # two storage versions
    status_of(http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 422, "Invalid")


def test_deleting_the_crd_deletes_its_objects(http: httpx.Client) -> None:
    crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    ok(http.post(crd_path, json=widget_crd("Namespaced", "doomeds", "Doomed")), 201)
    path = f"/apis/{GROUP}/v1/namespaces/default/doomeds"
    for i in range(3):
        ok(http.post(path, json={"kind": "Doomed", "metadata": {"name": f"d{i}"}, "spec": {"size": 1}}), 201)
    ok(delete(http, f"{crd_path}/doomeds.{GROUP}"), 200, 202)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if http.get(f"{crd_path}/doomeds.{GROUP}").status_code == 404:
            break
        time.sleep(0.1)
    status_of(http.get(f"{crd_path}/doomeds.{GROUP}"), 404)
    status_of(http.get(path), 404)
    ok(http.post(crd_path, json=widget_crd("Namespaced", "doomeds", "Doomed")), 201)
    assert ok(http.get(path))["items"] == []


def test_deleting_the_crd_ends_the_watches_of_its_resource(http: httpx.Client) -> None:
    """After its objects' DELETED events, a watch of a deleted CRD's resource ends (the stream
    closes), as kube-apiserver's does when it stops serving the resource; no watch lingers."""
    crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    ok(http.post(crd_path, json=widget_crd("Namespaced", "fleetings", "Fleeting")), 201)
    path = f"/apis/{GROUP}/v1/namespaces/default/fleetings"
    for i in range(2):
        body = {"kind": "Fleeting", "metadata": {"name": f"f{i}"}, "spec": {"size": 1}}
        ok(http.post(path, json=body), 201)
    listed = ok(http.get(path))
    events: list[tuple[str, str]] = []
    params = {"watch": "true", "resourceVersion": listed["metadata"]["resourceVersion"]}
    with http.stream("GET", path, params=params, timeout=httpx.Timeout(30)) as resp:
        assert resp.status_code == 200
        ok(delete(http, f"{crd_path}/fleetings.{GROUP}"), 200, 202)
        for line in resp.iter_lines():  # ends when the server closes the stream
            if line:
                event = json.loads(line)
                events.append((event["type"], event["object"]["metadata"]["name"]))
    assert sorted(events) == [("DELETED", "f0"), ("DELETED", "f1")]
    status_of(http.get(path), 404)
