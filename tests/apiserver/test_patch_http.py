"""Point 8: PATCH over HTTP: JSON patch, merge patch, strategic merge patch (merge keys) and
server-side apply (field managers, force, managedFields, conflicts)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from tests.apiserver.http_support import APPLY, JSON_PATCH, MERGE, STRATEGIC, client, cm, ok, patch, status_of
from tests.support.apiserver import ServerProcess

CMS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"


def pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "initContainers": [{"name": "init", "image": "i1"}],
            "containers": [
                {
                    "name": "main",
                    "image": "m1",
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                },
                {"name": "side", "image": "s1"},
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        yield c


def test_json_patch_ops_and_failed_test(http: httpx.Client) -> None:
    ok(http.post(CMS, json=cm("jp", {"a": "1", "b": "2"})), 201)
    ops = [
        {"op": "add", "path": "/data/c", "value": "3"},
        {"op": "remove", "path": "/data/a"},
        {"op": "replace", "path": "/data/b", "value": "20"},
        {"op": "copy", "from": "/data/c", "path": "/data/d"},
        {"op": "move", "from": "/data/d", "path": "/data/e"},
        {"op": "test", "path": "/data/c", "value": "3"},
    ]
    assert ok(patch(http, f"{CMS}/jp", ops, JSON_PATCH))["data"] == {"b": "20", "c": "3", "e": "3"}
    failed = patch(http, f"{CMS}/jp", [{"op": "test", "path": "/data/c", "value": "nope"}], JSON_PATCH)
    assert failed.status_code in (409, 422), failed.text
    status_of(patch(http, f"{CMS}/jp", [{"op": "remove", "path": "/data/missing"}], JSON_PATCH), 422)
    status_of(patch(http, f"{CMS}/jp", {"op": "add"}, JSON_PATCH), 400, "BadRequest")
    status_of(patch(http, f"{CMS}/jp", [{"op": "explode", "path": "/data"}], JSON_PATCH), 400)


def test_merge_patch_sets_and_removes(http: httpx.Client) -> None:
    ok(http.post(CMS, json=cm("mp", {"a": "1", "b": "2"}, labels={"x": "1"})), 201)
    patched = ok(
        patch(http, f"{CMS}/mp", {"data": {"a": None, "c": "3"}, "metadata": {"labels": None}}, MERGE)
    )
    assert patched["data"] == {"b": "2", "c": "3"} and "labels" not in patched["metadata"]


def test_patch_of_missing_object_is_not_found(http: httpx.Client) -> None:
    status_of(patch(http, f"{CMS}/ghost", {"data": {}}, MERGE), 404, "NotFound")


def test_strategic_merge_uses_merge_keys(http: httpx.Client) -> None:
    ok(http.post(PODS, json=pod("smp")), 201)
    body = {
        "spec": {
            "initContainers": [{"name": "init", "image": "i2"}],
            "containers": [
                {
                    "name": "main",
                    "image": "m2",
                    "env": [{"name": "B", "value": "22"}, {"name": "C", "value": "3"}],
                    "ports": [{"containerPort": 443, "protocol": "TCP"}],
                    "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                }
            ],
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "tolerations": [{"key": "tpu", "operator": "Exists"}],
        }
    }
    spec = ok(patch(http, f"{PODS}/smp", body, STRATEGIC))["spec"]
    assert [(c["name"], c["image"]) for c in spec["containers"]] == [("main", "m2"), ("side", "s1")]
    assert spec["initContainers"] == [{"name": "init", "image": "i2"}]
    main = spec["containers"][0]
    assert {e["name"]: e["value"] for e in main["env"]} == {"A": "1", "B": "22", "C": "3"}
    assert sorted(p["containerPort"] for p in main["ports"]) == [80, 443]
    assert sorted(m["mountPath"] for m in main["volumeMounts"]) == ["/cache", "/data"]
    assert sorted(v["name"] for v in spec["volumes"]) == ["cache", "data"]
    # tolerations carry no patch merge key upstream (x-kubernetes-list-type: atomic): replaced whole
    assert [t["key"] for t in spec["tolerations"]] == ["tpu"]


def test_strategic_delete_directive(http: httpx.Client) -> None:
    ok(http.post(PODS, json=pod("smp-del")), 201)
    body = {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}
    spec = ok(patch(http, f"{PODS}/smp-del", body, STRATEGIC))["spec"]
    assert [c["name"] for c in spec["containers"]] == ["main"]


def test_strategic_merge_of_conditions_by_type(http: httpx.Client) -> None:
    ok(http.post(PODS, json=pod("smp-cond")), 201)
    first = {
        "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Init", "status": "True"}]}
    }
    ok(patch(http, f"{PODS}/smp-cond/status", first, STRATEGIC))
    second = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    conditions = ok(patch(http, f"{PODS}/smp-cond/status", second, STRATEGIC))["status"]["conditions"]
    assert {c["type"]: c["status"] for c in conditions} == {"Ready": "True", "Init": "True"}


def test_strategic_patch_on_custom_resource_is_415(http: httpx.Client) -> None:
    crd = {
        "metadata": {"name": "patchables.p.example.com"},
        "spec": {
            "group": "p.example.com",
            "scope": "Namespaced",
            "names": {"plural": "patchables", "kind": "Patchable"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }
    ok(http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 201)
    path = "/apis/p.example.com/v1/namespaces/default/patchables"
    ok(http.post(path, json={"metadata": {"name": "p"}, "spec": {"a": 1}}), 201)
    status_of(patch(http, f"{path}/p", {"spec": {"a": 2}}, STRATEGIC), 415, "UnsupportedMediaType")
    assert ok(patch(http, f"{path}/p", {"spec": {"a": 2}}, MERGE))["spec"] == {"a": 2}


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "", "application/json"])
def test_unsupported_patch_type_is_415(http: httpx.Client, content_type: str) -> None:
    if http.get(f"{CMS}/p415").status_code == 404:
        ok(http.post(CMS, json=cm("p415")), 201)
    status_of(patch(http, f"{CMS}/p415", {"data": {}}, content_type), 415, "UnsupportedMediaType")


def apply(http: httpx.Client, body: dict[str, Any], manager: str, **params: Any) -> httpx.Response:
    return patch(
        http, f"{CMS}/{body['metadata']['name']}", yaml.safe_dump(body), APPLY, fieldManager=manager, **params
    )


def test_server_side_apply_creates_records_and_conflicts(http: httpx.Client) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1"}}
    created = apply(http, body, "alice")
    assert created.status_code == 201, created.text
    managed = created.json()["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in managed] == [("alice", "Apply")]
    assert "f:a" in managed[0]["fieldsV1"]["f:data"]
    # bob owns a new field without conflict
    bob = dict(body, data={"b": "2"})
    both = ok(apply(http, bob, "bob"))
    assert both["data"] == {"a": "1", "b": "2"}
    assert {m["manager"] for m in both["metadata"]["managedFields"]} == {"alice", "bob"}
    # bob changing alice's field conflicts, naming the manager and the field
    grab = dict(body, data={"a": "9", "b": "2"})
    conflict = status_of(apply(http, grab, "bob"), 409, "Conflict")
    assert "alice" in conflict["message"] and ".data.a" in conflict["message"]
    causes = conflict["details"]["causes"]
    assert any(c["field"] == ".data.a" and c["reason"] == "FieldManagerConflict" for c in causes)
    # force takes ownership
    forced = ok(apply(http, grab, "bob", force="true"))
    assert forced["data"]["a"] == "9"
    owners = {m["manager"]: m["fieldsV1"] for m in forced["metadata"]["managedFields"]}
    assert "f:a" in owners["bob"]["f:data"] and "f:a" not in owners.get("alice", {}).get("f:data", {})
    # alice dropping a field she alone owns removes it
    alice_again = ok(apply(http, {**body, "data": {}}, "alice"))
    assert alice_again["data"] == {"a": "9", "b": "2"}


def test_apply_without_field_manager_and_force_on_merge_are_400(http: httpx.Client) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa-bad"}}
    status_of(patch(http, f"{CMS}/ssa-bad", yaml.safe_dump(body), APPLY), 400, "BadRequest")
    ok(http.post(CMS, json=cm("force-merge")), 201)
    status_of(patch(http, f"{CMS}/force-merge", {"data": {}}, MERGE, force="true"), 400, "BadRequest")


def test_update_records_update_operation(http: httpx.Client) -> None:
    created = ok(http.post(CMS, json=cm("mf", {"a": "1"}), params={"fieldManager": "writer"}), 201)
    entry = created["metadata"]["managedFields"][0]
    assert entry["manager"] == "writer" and entry["operation"] == "Update"
    assert entry["fieldsType"] == "FieldsV1" and "f:a" in entry["fieldsV1"]["f:data"]


# What a patch may not change, as kube-apiserver answers (k8s.io/apiserver
# pkg/endpoints/handlers/rest.go ``checkName``: name and namespace are 400 BadRequest;
# apimachinery ``ValidateObjectMetaUpdate``: uid and creationTimestamp are 422 "field is
# immutable"). Before, the change was dropped silently and the patch answered 200.
IDENTITY_PATCHES = [
    (
        JSON_PATCH,
        [{"op": "replace", "path": "/metadata/name", "value": "renamed"}],
        400,
        "the name of the object (renamed) does not match the name on the URL (ident)",
    ),
    (
        MERGE,
        {"metadata": {"name": "renamed"}},
        400,
        "the name of the object (renamed) does not match the name on the URL (ident)",
    ),
    (
        STRATEGIC,
        {"metadata": {"name": "renamed"}},
        400,
        "the name of the object (renamed) does not match the name on the URL (ident)",
    ),
    (
        JSON_PATCH,
        [{"op": "remove", "path": "/metadata/name"}],
        400,
        "the name of the object () does not match the name on the URL (ident)",
    ),
    (
        MERGE,
        {"metadata": {"namespace": "kube-system"}},
        400,
        "the namespace of the object (kube-system) does not match the namespace on the request (default)",
    ),
    (
        JSON_PATCH,
        [{"op": "replace", "path": "/metadata/uid", "value": "0000"}],
        422,
        'ConfigMap "ident" is invalid: metadata.uid: Invalid value: "0000": field is immutable',
    ),
    (
        MERGE,
        {"metadata": {"creationTimestamp": "2000-01-01T00:00:00Z"}},
        422,
        'ConfigMap "ident" is invalid: metadata.creationTimestamp: Invalid value: "2000-01-01T00:00:00Z": '
        "field is immutable",
    ),
]


@pytest.mark.parametrize(("content_type", "body", "code", "message"), IDENTITY_PATCHES)
def test_a_patch_may_not_change_what_identifies_the_object(
    http: httpx.Client, content_type: str, body: Any, code: int, message: str
) -> None:
    if http.get(f"{CMS}/ident").status_code == 404:
        ok(http.post(CMS, json=cm("ident", {"a": "1"})), 201)
    before = ok(http.get(f"{CMS}/ident"))
    status = status_of(patch(http, f"{CMS}/ident", body, content_type), code)
    assert status["message"] == message
    assert ok(http.get(f"{CMS}/ident")) == before
    status_of(http.get(f"{CMS}/renamed"), 404, "NotFound")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"kind": "ConfigMap", "metadata": {"name": "typeless"}},
            "Incorrect version specified in apply patch. Specified patch version: , expected: v1",
        ),
        (
            {"apiVersion": "v1", "metadata": {"name": "typeless"}},
            "Incorrect kind specified in apply patch. Specified patch kind: , expected: ConfigMap",
        ),
        (
            {"metadata": {"name": "typeless"}, "data": {"a": "1"}},
            "Incorrect version specified in apply patch. Specified patch version: , expected: v1",
        ),
    ],
)
def test_apply_without_api_version_or_kind_is_400(
    http: httpx.Client, body: dict[str, Any], message: str
) -> None:
    resp = patch(http, f"{CMS}/typeless", yaml.safe_dump(body), APPLY, fieldManager="m")
    assert status_of(resp, 400, "BadRequest")["message"] == message
    status_of(http.get(f"{CMS}/typeless"), 404, "NotFound")
