"""Point 10: deletion. Finalizers hold objects with deletionTimestamp; Background, Foreground and
Orphan propagation with owner-reference garbage collection; deletecollection; namespace deletion
empties the namespace while its phase is Terminating."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.http_support import MERGE, client, cm, delete, make_namespace, ok, patch, status_of
from tests.support.apiserver import ServerProcess
from tests.support.polling import wait_for

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        yield c


def gone(http: httpx.Client, path: str) -> Callable[[], bool]:
    return lambda: http.get(path).status_code == 404


def owned(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    return cm(name, ownerReferences=[ref])


def test_finalizer_holds_the_object_until_removed(http: httpx.Client) -> None:
    ok(http.post(CMS, json=cm("fin", finalizers=["example.com/hold"])), 201)
    held = ok(delete(http, f"{CMS}/fin"), 202)
    assert held["metadata"]["deletionTimestamp"]
    got = ok(http.get(f"{CMS}/fin"))
    assert got["metadata"]["deletionTimestamp"] and got["metadata"]["finalizers"] == ["example.com/hold"]
    # no new finalizers while deleting; other updates are fine
    add = {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}
    status_of(patch(http, f"{CMS}/fin", add, MERGE), 422, "Invalid")
    ok(patch(http, f"{CMS}/fin", {"data": {"still": "writable"}}, MERGE))
    ok(patch(http, f"{CMS}/fin", {"metadata": {"finalizers": None}}, MERGE))
    status_of(http.get(f"{CMS}/fin"), 404)


def test_delete_missing_is_not_found(http: httpx.Client) -> None:
    status_of(delete(http, f"{CMS}/never-was"), 404, "NotFound")


def test_background_propagation_deletes_dependents(http: httpx.Client) -> None:
    owner = ok(http.post(CMS, json=cm("bg-owner")), 201)
    ok(http.post(CMS, json=owned("bg-dep1", owner)), 201)
    ok(http.post(CMS, json=owned("bg-dep2", owner)), 201)
    ok(delete(http, f"{CMS}/bg-owner", {"propagationPolicy": "Background"}))
    status_of(http.get(f"{CMS}/bg-owner"), 404)
    wait_for(lambda: gone(http, f"{CMS}/bg-dep1")() and gone(http, f"{CMS}/bg-dep2")())


def test_foreground_waits_for_dependents(http: httpx.Client) -> None:
    owner = ok(http.post(CMS, json=cm("fg-owner")), 201)
    dependent = owned("fg-dep", owner)
    dependent["metadata"]["finalizers"] = ["example.com/slow"]
    ok(http.post(CMS, json=dependent), 201)
    held = ok(delete(http, f"{CMS}/fg-owner", propagationPolicy="Foreground"), 202)
    assert "foregroundDeletion" in held["metadata"]["finalizers"]
    wait_for(lambda: bool(ok(http.get(f"{CMS}/fg-dep"))["metadata"].get("deletionTimestamp")))
    time.sleep(0.3)
    assert ok(http.get(f"{CMS}/fg-owner"))["metadata"]["deletionTimestamp"]  # still waiting
    ok(patch(http, f"{CMS}/fg-dep", {"metadata": {"finalizers": None}}, MERGE))
    wait_for(gone(http, f"{CMS}/fg-owner"))


def test_orphan_releases_dependents(http: httpx.Client) -> None:
    owner = ok(http.post(CMS, json=cm("or-owner")), 201)
    ok(http.post(CMS, json=owned("or-dep", owner)), 201)
    ok(delete(http, f"{CMS}/or-owner", {"propagationPolicy": "Orphan"}), 200, 202)
    wait_for(gone(http, f"{CMS}/or-owner"))
    dep = ok(http.get(f"{CMS}/or-dep"))
    assert not dep["metadata"].get("ownerReferences")


def test_dependent_of_a_missing_owner_is_collected(http: httpx.Client) -> None:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "nobody",
        "uid": "00000000-dead-beef-0000-000000000000",
    }
    ok(http.post(CMS, json=cm("orphaned-at-birth", ownerReferences=[ref])), 201)
    wait_for(gone(http, f"{CMS}/orphaned-at-birth"))


def test_unknown_propagation_policy_is_bad_request(http: httpx.Client) -> None:
    ok(http.post(CMS, json=cm("pp")), 201)
    status_of(delete(http, f"{CMS}/pp", propagationPolicy="Sideways"), 400, "BadRequest")


def test_deletecollection_with_selector(http: httpx.Client) -> None:
    for i in range(3):
        ok(http.post(CMS, json=cm(f"dc-{i}", labels={"batch": "dc" if i < 2 else "keep"})), 201)
    ok(delete(http, CMS, labelSelector="batch=dc"))
    left = [i["metadata"]["name"] for i in ok(http.get(CMS, params={"labelSelector": "batch"}))["items"]]
    assert left == ["dc-2"]


def test_namespace_deletion_removes_everything_inside(http: httpx.Client) -> None:
    make_namespace(http, "doomed")
    base = "/api/v1/namespaces/doomed"
    ok(http.post(f"{base}/configmaps", json=cm("a", finalizers=["example.com/hold"])), 201)
    ok(http.post(f"{base}/secrets", json={"metadata": {"name": "s"}}), 201)
    ok(
        http.post(
            "/apis/apps/v1/namespaces/doomed/deployments",
            json={
                "metadata": {"name": "d"},
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {
                        "metadata": {"labels": {"a": "b"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    },
                },
            },
        ),
        201,
    )
    ok(delete(http, "/api/v1/namespaces/doomed"), 200, 202)
    ns = ok(http.get("/api/v1/namespaces/doomed"))
    assert ns["status"]["phase"] == "Terminating" and ns["metadata"]["deletionTimestamp"]
    forbidden = status_of(http.post(f"{base}/configmaps", json=cm("late")), 403, "Forbidden")
    assert "being terminated" in forbidden["message"]
    wait_for(gone(http, f"{base}/secrets/s"))
    wait_for(gone(http, "/apis/apps/v1/namespaces/doomed/deployments/d"))
    time.sleep(0.3)
    assert ok(http.get("/api/v1/namespaces/doomed"))["status"]["phase"] == "Terminating"  # held by "a"
    ok(patch(http, f"{base}/configmaps/a", {"metadata": {"finalizers": None}}, MERGE))
    wait_for(gone(http, "/api/v1/namespaces/doomed"))
