"""Point 4: CRUD on namespaced and cluster-scoped resources and the metadata the server owns.

uid, resourceVersion, generation (bumped by spec changes only), creationTimestamp, generateName,
and label/annotation validation; lists and watches across all namespaces.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator

import httpx
import pytest

from tests.apiserver.http_support import client, cm, delete, make_namespace, ok, patch, status_of
from tests.support.apiserver import ServerProcess

DEPLOY = "/apis/apps/v1/namespaces/default/deployments"


def deployment(name: str, replicas: int = 1) -> dict[str, object]:
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        make_namespace(c, "crud-a")
        make_namespace(c, "crud-b")
        yield c


def test_server_fills_uid_version_timestamp_and_generation(http: httpx.Client) -> None:
    body = cm("meta")
    body["metadata"].update(uid="mine", resourceVersion="123", creationTimestamp="2000-01-01T00:00:00Z")
    created = ok(http.post("/api/v1/namespaces/default/configmaps", json=body), 201)
    meta = created["metadata"]
    assert meta["uid"] != "mine" and len(meta["uid"]) == 36
    assert meta["namespace"] == "default"
    assert meta["generation"] == 1
    stamp = datetime.datetime.strptime(meta["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.UTC
    )
    assert abs((datetime.datetime.now(datetime.UTC) - stamp).total_seconds()) < 60
    other = ok(http.post("/api/v1/namespaces/default/configmaps", json=cm("meta2")), 201)
    assert int(other["metadata"]["resourceVersion"]) > int(meta["resourceVersion"])
    assert other["metadata"]["uid"] != meta["uid"]


def test_generation_bumps_on_spec_changes_only(http: httpx.Client) -> None:
    created = ok(http.post(DEPLOY, json=deployment("gen")), 201)
    assert created["metadata"]["generation"] == 1
    created["metadata"]["labels"] = {"new": "label"}
    relabeled = ok(http.put(f"{DEPLOY}/gen", json=created))
    assert relabeled["metadata"]["generation"] == 1
    relabeled["spec"]["replicas"] = 3
    scaled = ok(http.put(f"{DEPLOY}/gen", json=relabeled))
    assert scaled["metadata"]["generation"] == 2
    scaled["status"] = {"replicas": 3}
    with_status = ok(http.put(f"{DEPLOY}/gen/status", json=scaled))
    assert with_status["metadata"]["generation"] == 2
    patched = ok(patch(http, f"{DEPLOY}/gen", {"spec": {"replicas": 4}}, "application/merge-patch+json"))
    assert patched["metadata"]["generation"] == 3


def test_noop_update_keeps_resource_version(http: httpx.Client) -> None:
    created = ok(http.post("/api/v1/namespaces/default/configmaps", json=cm("noop", {"a": "1"})), 201)
    again = ok(http.put("/api/v1/namespaces/default/configmaps/noop", json=created))
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_generate_name(http: httpx.Client) -> None:
    body = {"metadata": {"generateName": "gen-"}, "data": {}}
    names = {
        ok(http.post("/api/v1/namespaces/default/configmaps", json=body), 201)["metadata"]["name"]
        for _ in range(5)
    }
    assert len(names) == 5
    assert all(n.startswith("gen-") and len(n) == len("gen-") + 5 for n in names)
    status_of(http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {}}), 422, "Invalid")


def test_cluster_scoped_crud(http: httpx.Client) -> None:
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    created = ok(http.post(path, json={"metadata": {"name": "high"}, "value": 100}), 201)
    assert "namespace" not in created["metadata"]
    created["value"] = 200
    assert ok(http.put(f"{path}/high", json=created))["value"] == 200
    status_of(http.get("/apis/scheduling.k8s.io/v1/namespaces/default/priorityclasses/high"), 404)
    ok(delete(http, f"{path}/high"))
    status_of(http.get(f"{path}/high"), 404, "NotFound")


def test_create_twice_is_already_exists(http: httpx.Client) -> None:
    ok(http.post("/api/v1/namespaces/default/configmaps", json=cm("twice")), 201)
    body = status_of(
        http.post("/api/v1/namespaces/default/configmaps", json=cm("twice")), 409, "AlreadyExists"
    )
    assert body["details"]["name"] == "twice" and body["details"]["kind"] == "configmaps"


def test_create_in_missing_namespace_is_not_found(http: httpx.Client) -> None:
    status_of(http.post("/api/v1/namespaces/nowhere/configmaps", json=cm("x")), 404, "NotFound")


def test_list_and_watch_across_all_namespaces(http: httpx.Client) -> None:
    listed = ok(http.get("/api/v1/configmaps"))
    rv = listed["metadata"]["resourceVersion"]
    ok(http.post("/api/v1/namespaces/crud-a/configmaps", json=cm("everywhere")), 201)
    ok(http.post("/api/v1/namespaces/crud-b/configmaps", json=cm("everywhere")), 201)
    listed = ok(http.get("/api/v1/configmaps"))
    where = {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]}
    assert {("crud-a", "everywhere"), ("crud-b", "everywhere"), ("default", "meta")} <= where
    seen = []
    params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "2"}
    with http.stream("GET", "/api/v1/configmaps", params=params) as resp:
        for line in resp.iter_lines():
            if line:
                event = json.loads(line)
                seen.append((event["type"], event["object"]["metadata"]["namespace"]))
            if len(seen) == 2:
                break
    assert seen == [("ADDED", "crud-a"), ("ADDED", "crud-b")]


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"name": "Bad_Name"}, "metadata.name"),
        ({"name": "x" * 254}, "metadata.name"),
        ({"name": "ok", "labels": {"bad key!": "v"}}, "metadata.labels"),
        ({"name": "ok", "labels": {"k": "bad value!"}}, "metadata.labels"),
        ({"name": "ok", "labels": {"k": "v" * 64}}, "metadata.labels"),
        ({"name": "ok", "labels": {"p" * 254 + "/k": "v"}}, "metadata.labels"),
        ({"name": "ok", "labels": {"k" * 64: "v"}}, "metadata.labels"),
        ({"name": "ok", "annotations": {"bad key!": "v"}}, "metadata.annotations"),
        ({"name": "ok", "annotations": {"k": "v" * (256 * 1024)}}, "metadata.annotations"),
    ],
)
def test_metadata_validation_names_the_field(http: httpx.Client, meta: dict[str, object], field: str) -> None:
    body = status_of(
        http.post("/api/v1/namespaces/default/configmaps", json={"metadata": meta}), 422, "Invalid"
    )
    fields = [c["field"] for c in body["details"]["causes"]]
    assert any(f.startswith(field) for f in fields), body


def test_valid_label_and_annotation_syntax(http: httpx.Client) -> None:
    meta = {
        "name": "labels-ok",
        "labels": {"example.com/app": "a-b_c.d", "empty": ""},
        "annotations": {"note": "anything: at all\n" * 10},
    }
    ok(http.post("/api/v1/namespaces/default/configmaps", json={"metadata": meta}), 201)


def test_name_is_immutable_and_must_match_the_url(http: httpx.Client) -> None:
    created = ok(http.post("/api/v1/namespaces/default/configmaps", json=cm("fixed")), 201)
    created["metadata"]["name"] = "other"
    status_of(http.put("/api/v1/namespaces/default/configmaps/fixed", json=created), 400, "BadRequest")
