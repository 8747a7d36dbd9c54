"""Point 6: watches resume from a resourceVersion, send bookmarks, end on timeoutSeconds, and
answer a 410 Gone ERROR event for versions older than the retained history.

The server of this module keeps a small history (``--history 20``) and sends bookmarks every
0.2 s (``--bookmark-interval 0.2``), so both behaviours show within a second.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.apiserver.http_support import client, cm, delete, ok, patch
from tests.support.apiserver import ServerProcess

CMS = "/api/v1/namespaces/default/configmaps"
HISTORY = 20


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(
        tmp_path_factory.mktemp("watch"), extra_args=["--history", str(HISTORY), "--bookmark-interval", "0.2"]
    ).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with client(server) as c:
        yield c


def read_events(http: httpx.Client, path: str, count: int, **params: Any) -> list[dict[str, Any]]:
    """Open a watch and read ``count`` events (or until it ends)."""
    events: list[dict[str, Any]] = []
    with http.stream("GET", path, params={"watch": "true", **params}) as resp:
        assert resp.status_code == 200, resp.read()
        for line in resp.iter_lines():
            if line.strip():
                events.append(json.loads(line))
            if len(events) >= count:
                break
    return events


def test_resume_from_resource_version_replays_every_change(http: httpx.Client) -> None:
    start = ok(http.get(CMS))["metadata"]["resourceVersion"]
    ok(http.post(CMS, json=cm("r1", {"a": "1"})), 201)
    ok(patch(http, f"{CMS}/r1", {"data": {"a": "2"}}, "application/merge-patch+json"))
    ok(delete(http, f"{CMS}/r1"))
    events = read_events(http, CMS, 3, resourceVersion=start, timeoutSeconds="5")
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > int(start)
    assert events[1]["object"]["data"] == {"a": "2"}
    # resuming from the middle sees only what came after
    later = read_events(http, CMS, 1, resourceVersion=str(versions[0]), timeoutSeconds="5")
    assert later[0]["type"] == "MODIFIED"


def test_watch_without_version_starts_with_current_state(http: httpx.Client) -> None:
    ok(http.post(CMS, json=cm("present")), 201)
    events = read_events(http, CMS, 1, fieldSelector="metadata.name=present", timeoutSeconds="5")
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "present"


def test_live_events_arrive(http: httpx.Client, server: ServerProcess) -> None:
    rv = ok(http.get(CMS))["metadata"]["resourceVersion"]

    def write_later() -> None:
        time.sleep(0.3)
        with client(server) as other:
            ok(other.post(CMS, json=cm("live")), 201)

    thread = threading.Thread(target=write_later)
    thread.start()
    events = read_events(http, CMS, 1, resourceVersion=rv, timeoutSeconds="10")
    thread.join()
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "live"


def test_selector_transitions_are_added_and_deleted(http: httpx.Client) -> None:
    rv = ok(http.post(CMS, json=cm("mover", labels={"watched": "no"})), 201)["metadata"]["resourceVersion"]
    ok(
        patch(
            http, f"{CMS}/mover", {"metadata": {"labels": {"watched": "yes"}}}, "application/merge-patch+json"
        )
    )
    ok(
        patch(
            http, f"{CMS}/mover", {"metadata": {"labels": {"watched": "no"}}}, "application/merge-patch+json"
        )
    )
    events = read_events(http, CMS, 2, resourceVersion=rv, labelSelector="watched=yes", timeoutSeconds="5")
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


def test_bookmarks_when_allowed(http: httpx.Client) -> None:
    rv = ok(http.get(CMS))["metadata"]["resourceVersion"]
    events = read_events(http, CMS, 2, resourceVersion=rv, allowWatchBookmarks="true", timeoutSeconds="5")
    assert [e["type"] for e in events] == ["BOOKMARK", "BOOKMARK"]
    obj = events[0]["object"]
    assert obj["kind"] == "ConfigMap" and int(obj["metadata"]["resourceVersion"]) >= int(rv)


def test_no_bookmarks_unless_allowed(http: httpx.Client) -> None:
    rv = ok(http.get(CMS))["metadata"]["resourceVersion"]
    events = read_events(http, CMS, 10, resourceVersion=rv, timeoutSeconds="1")
    assert events == []


def test_timeout_seconds_ends_the_stream(http: httpx.Client) -> None:
    rv = ok(http.get(CMS))["metadata"]["resourceVersion"]
    started = time.monotonic()
    assert read_events(http, CMS, 1, resourceVersion=rv, timeoutSeconds="1") == []
    assert 0.8 <= time.monotonic() - started < 5


def test_too_old_version_gets_410_error_event(http: httpx.Client) -> None:
    first = ok(http.post(CMS, json=cm("old-start")), 201)["metadata"]["resourceVersion"]
    for i in range(HISTORY + 5):
        ok(http.post(CMS, json=cm(f"churn-{i}")), 201)
    events = read_events(http, CMS, 1, resourceVersion=first, timeoutSeconds="5")
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["kind"] == "Status" and status["code"] == 410 and status["reason"] in ("Expired", "Gone")
    # a version inside the history still resumes
    recent = ok(http.get(CMS))["metadata"]["resourceVersion"]
    ok(http.post(CMS, json=cm("after-churn")), 201)
    assert read_events(http, CMS, 1, resourceVersion=recent, timeoutSeconds="5")[0]["type"] == "ADDED"


def test_410_persists_across_restart(tmp_path: Path) -> None:
    proc = ServerProcess(tmp_path / "s", extra_args=["--history", "5"]).start()
    try:
        with client(proc) as c:
            first = ok(c.post(CMS, json=cm("x0")), 201)["metadata"]["resourceVersion"]
            for i in range(10):
                ok(c.post(CMS, json=cm(f"x{i + 1}")), 201)
        proc.restart()
        with client(proc) as c:
            events = read_events(c, CMS, 1, resourceVersion=first, timeoutSeconds="3")
            assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
    finally:
        proc.stop()


def test_watch_single_object_by_name_path(http: httpx.Client) -> None:
    rv = ok(http.post(CMS, json=cm("single")), 201)["metadata"]["resourceVersion"]
    ok(http.post(CMS, json=cm("not-single")), 201)
    ok(patch(http, f"{CMS}/single", {"data": {"x": "y"}}, "application/merge-patch+json"))
    events = read_events(
        http, "/api/v1/watch/namespaces/default/configmaps/single", 1, resourceVersion=rv, timeoutSeconds="5"
    )
    assert events[0]["type"] == "MODIFIED" and events[0]["object"]["metadata"]["name"] == "single"
