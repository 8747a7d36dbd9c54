"""List and watch parameters answered as kube-apiserver answers them (issue 15, item 3).

Observed before: ``resourceVersion=abc`` or ``-5``, an invalid ``resourceVersionMatch``,
``resourceVersionMatch=Exact`` without a resourceVersion were all 200, and a watch from a future
resourceVersion waited silently. The rules ported, with their sources:
- k8s.io/apimachinery ``pkg/apis/meta/internalversion/validation/validation.go``
  (``ValidateListOptions``): invalid combinations are 422 ``ListOptions.meta.k8s.io``;
- k8s.io/apiserver ``pkg/storage/api_object_versioner.go`` (``ParseResourceVersion``) and
  ``pkg/storage/interfaces.go`` (``ValidateListOptions``): 400 for a malformed version, a bad
  continue token, a resourceVersion with continue;
- ``pkg/storage/cacher/watch_cache.go`` (``waitUntilFreshLocked``) and ``pkg/storage/errors.go``:
  a read at a version not reached waits 3 s, then 504 "Too large resource version" (retry after
  1 s); an Exact read goes to etcd upstream and fails at once (no retry advice);
- ``pkg/storage/cacher/cacher.go`` (``Watch``): a plain watch from a future version is accepted
  and sees only the changes after it; a watch-list (``sendInitialEvents``) at a future version
  ends with that 504 as an ERROR event;
- ``pkg/storage/etcd3/errors.go``: an expired continue token is 410 with a token to go on;
- ``limit`` is an int64 (Go's ``strconv.ParseInt``); kube-apiserver does not cap it, and a
  negative limit lists everything.
Deliberate difference: a malformed resourceVersion on a watch is 400 here; kube-apiserver's
cacher returns its storage error unconverted there (a 500).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.http_support import client, cm, ok, status_of
from tests.support.apiserver import ServerProcess

CMS = "/api/v1/namespaces/params/configmaps"
HISTORY = 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path_factory.mktemp("params"), extra_args=["--history", str(HISTORY)]).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with client(server) as c:
        ok(c.post("/api/v1/namespaces", json={"metadata": {"name": "params"}}), 201)
        for i in range(5):
            ok(c.post(CMS, json=cm(f"base-{i}")), 201)
        yield c


def current_rv(http: httpx.Client) -> int:
    return int(ok(http.get(CMS))["metadata"]["resourceVersion"])


@pytest.mark.parametrize("value", ["abc", "-5", "1.5"])
def test_a_malformed_resource_version_is_400(http: httpx.Client, value: str) -> None:
    expected = (
        f'invalid resource version: resourceVersion: Invalid value: "{value}": '
        f'strconv.ParseUint: parsing "{value}": invalid syntax'
    )
    for path in (CMS, f"{CMS}/base-0"):
        assert (
            status_of(http.get(path, params={"resourceVersion": value}), 400, "BadRequest")["message"]
            == expected
        )
    watch = http.get(CMS, params={"watch": "true", "resourceVersion": value})
    assert status_of(watch, 400, "BadRequest")["message"] == expected


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"resourceVersionMatch": "Exact"},
            "resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            {"resourceVersionMatch": "NotOlderThan"},
            "resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            {"resourceVersionMatch": "Sometimes", "resourceVersion": "1"},
            "resourceVersionMatch: Unsupported value: "
            '"Sometimes": supported values: "Exact", "NotOlderThan", ""',
        ),
        (
            {"resourceVersionMatch": "Exact", "resourceVersion": "0"},
            "resourceVersionMatch: Forbidden: "
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
        (
            {"sendInitialEvents": "true"},
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        ),
        (
            {"watch": "true", "sendInitialEvents": "true"},
            "resourceVersionMatch: Forbidden: "
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            {"watch": "true", "resourceVersionMatch": "NotOlderThan"},
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
            "sendInitialEvents is provided",
        ),
    ],
)
def test_invalid_option_combinations_are_422(
    http: httpx.Client, params: dict[str, str], message: str
) -> None:
    status = status_of(http.get(CMS, params=params), 422, "Invalid")
    assert status["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'
    assert status["details"]["kind"] == "ListOptions" and status["details"]["group"] == "meta.k8s.io"


def test_limits_are_int64_and_not_capped(http: httpx.Client) -> None:
    everything = ok(http.get(CMS))["items"]
    huge = ok(http.get(CMS, params={"limit": str(2**63 - 1)}))
    assert huge["items"] == everything and "continue" not in huge["metadata"]
    assert ok(http.get(CMS, params={"limit": "-3"}))["items"] == everything
    status = status_of(http.get(CMS, params={"limit": str(2**63)}), 400, "BadRequest")
    assert status["message"] == f'limit: strconv.ParseInt: parsing "{2**63}": value out of range'


def test_bad_continue_tokens_are_400(http: httpx.Client) -> None:
    status = status_of(http.get(CMS, params={"limit": "1", "continue": "bm90IGpzb24"}), 400, "BadRequest")
    assert status["message"].startswith("invalid continue token: continue key is not valid")
    token = ok(http.get(CMS, params={"limit": "1"}))["metadata"]["continue"]
    both = http.get(CMS, params={"limit": "1", "continue": token, "resourceVersion": "3"})
    assert status_of(both, 400, "BadRequest")["message"] == (
        "specifying resource version is not allowed when using continue"
    )


def test_an_expired_continue_token_is_410_with_a_token_to_go_on(http: httpx.Client) -> None:
    first = ok(http.get(CMS, params={"limit": "2"}))
    for i in range(HISTORY + 5):
        ok(http.post("/api/v1/namespaces/default/configmaps", json=cm(f"churn-{i}")), 201)
    expired = http.get(CMS, params={"limit": "2", "continue": first["metadata"]["continue"]})
    status = status_of(expired, 410, "Expired")
    assert status["message"].startswith(
        "The provided continue parameter is too old to display a consistent list"
    )
    rest = ok(http.get(CMS, params={"continue": status["metadata"]["continue"]}))
    names = [o["metadata"]["name"] for o in first["items"] + rest["items"]]
    assert names == [o["metadata"]["name"] for o in ok(http.get(CMS))["items"]]
    assert int(rest["metadata"]["resourceVersion"]) == current_rv(http)


def too_large(status: dict[str, Any], requested: int, retry: int | None) -> None:
    assert status["code"] == 504 and status["reason"] == "Timeout", status
    assert status["message"].startswith(f"Timeout: Too large resource version: {requested}, current: ")
    assert status["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    assert status["details"].get("retryAfterSeconds") == retry


def test_an_exact_list_at_a_future_version_is_504_at_once(http: httpx.Client) -> None:
    future = current_rv(http) + 1000
    resp = http.get(CMS, params={"resourceVersion": str(future), "resourceVersionMatch": "Exact"})
    too_large(status_of(resp, 504), future, None)
    paged = http.get(CMS, params={"resourceVersion": str(future), "limit": "10"})
    too_large(status_of(paged, 504), future, None)


def test_a_not_older_than_list_waits_then_is_504(http: httpx.Client) -> None:
    future = current_rv(http) + 1000
    for params in (
        {"resourceVersion": str(future)},
        {"resourceVersion": str(future), "resourceVersionMatch": "NotOlderThan"},
    ):
        too_large(status_of(http.get(CMS, params=params), 504), future, 1)
    status_of(http.get(f"{CMS}/base-0", params={"resourceVersion": str(future)}), 504, "Timeout")


def test_a_not_older_than_list_is_served_once_the_store_gets_there(
    server: ServerProcess, http: httpx.Client
) -> None:
    target = current_rv(http) + 1

    def write_soon() -> None:
        with client(server) as other:
            time.sleep(0.5)
            ok(other.post(CMS, json=cm("arrives")), 201)

    writer = threading.Thread(target=write_soon)
    writer.start()
    listed = ok(http.get(CMS, params={"resourceVersion": str(target)}))
    writer.join()
    assert int(listed["metadata"]["resourceVersion"]) >= target
    assert "arrives" in [o["metadata"]["name"] for o in listed["items"]]


def read_watch(http: httpx.Client, count: int, **params: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    with http.stream("GET", CMS, params={"watch": "true", "timeoutSeconds": "10", **params}) as resp:
        assert resp.status_code == 200, resp.read()
        for line in resp.iter_lines():
            if line.strip():
                events.append(json.loads(line))
            if len(events) >= count:
                break
    return events


def test_a_watch_from_a_future_version_sees_only_what_comes_after_it(
    server: ServerProcess, http: httpx.Client
) -> None:
    future = current_rv(http) + 3
    with client(server) as other:
        for i in range(4):  # versions future-2 .. future+1
            ok(other.post(CMS, json=cm(f"later-{i}")), 201)
    events = read_watch(http, 1, resourceVersion=str(future))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "later-3")]


def test_a_watch_list_at_a_future_version_ends_with_a_504_error_event(http: httpx.Client) -> None:
    future = current_rv(http) + 1000
    params = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    events = read_watch(http, 2, resourceVersion=str(future), **params)
    assert [e["type"] for e in events] == ["ERROR"]
    too_large(events[0]["object"], future, 1)


def test_a_watch_list_sends_the_state_then_the_end_bookmark(http: httpx.Client) -> None:
    params = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    count = len(ok(http.get(CMS))["items"])
    events = read_watch(http, count + 1, **params)
    assert [e["type"] for e in events] == ["ADDED"] * count + ["BOOKMARK"]
    assert events[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
