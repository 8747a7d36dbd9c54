"""Point 7: optimistic concurrency. A write carrying a stale resourceVersion gets 409 Conflict."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator

import httpx
import pytest

from tests.apiserver.http_support import MERGE, client, cm, delete, ok, patch, status_of
from tests.support.apiserver import ServerProcess

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        yield c


def test_stale_update_is_conflict(http: httpx.Client) -> None:
    first = ok(http.post(CMS, json=cm("occ", {"v": "0"})), 201)
    second = dict(first, data={"v": "1"})
    ok(http.put(f"{CMS}/occ", json=second))
    stale = dict(first, data={"v": "2"})
    body = status_of(http.put(f"{CMS}/occ", json=stale), 409, "Conflict")
    assert body["details"]["name"] == "occ"
    assert "modified" in body["message"]
    assert ok(http.get(f"{CMS}/occ"))["data"] == {"v": "1"}


def test_update_without_version_is_unconditional_for_builtins(http: httpx.Client) -> None:
    created = ok(http.post(CMS, json=cm("uncond")), 201)
    del created["metadata"]["resourceVersion"]
    created["data"] = {"x": "y"}
    ok(http.put(f"{CMS}/uncond", json=created))


def test_stale_patch_and_status_write_are_conflicts(http: httpx.Client) -> None:
    created = ok(http.post(CMS, json=cm("occ-patch")), 201)
    rv = created["metadata"]["resourceVersion"]
    ok(patch(http, f"{CMS}/occ-patch", {"data": {"a": "1"}}, MERGE))
    stale = {"metadata": {"resourceVersion": rv}, "data": {"a": "2"}}
    status_of(patch(http, f"{CMS}/occ-patch", stale, MERGE), 409, "Conflict")
    pod = ok(
        http.post(
            "/api/v1/namespaces/default/pods",
            json={"metadata": {"name": "occ-pod"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        ),
        201,
    )
    ok(patch(http, "/api/v1/namespaces/default/pods/occ-pod", {"metadata": {"labels": {"a": "b"}}}, MERGE))
    pod["status"] = {"phase": "Running"}
    status_of(http.put("/api/v1/namespaces/default/pods/occ-pod/status", json=pod), 409, "Conflict")


def test_delete_precondition_on_stale_version_is_conflict(http: httpx.Client) -> None:
    created = ok(http.post(CMS, json=cm("occ-del")), 201)
    ok(patch(http, f"{CMS}/occ-del", {"data": {"a": "1"}}, MERGE))
    pre = {"preconditions": {"resourceVersion": created["metadata"]["resourceVersion"]}}
    status_of(delete(http, f"{CMS}/occ-del", pre), 409, "Conflict")
    ok(http.get(f"{CMS}/occ-del"))


def test_racing_writers_exactly_one_wins(apiserver: ServerProcess, http: httpx.Client) -> None:
    base = ok(http.post(CMS, json=cm("race", {"n": "0"})), 201)

    def write(i: int) -> int:
        with client(apiserver) as c:
            return c.put(f"{CMS}/race", json=dict(base, data={"n": str(i + 1)})).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(write, range(8)))
    assert sorted(codes) == [200] + [409] * 7
