"""Point 5: list with label selectors, field selectors and limit/continue pagination over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.apiserver.http_support import client, cm, make_namespace, ok, patch, status_of
from tests.support.apiserver import ServerProcess

NS = "sel"
CMS = f"/api/v1/namespaces/{NS}/configmaps"
PODS = "/api/v1/namespaces/{ns}/pods"
LABELS = {
    "a": {"env": "prod", "tier": "web"},
    "b": {"env": "dev", "tier": "web"},
    "c": {"env": "test"},
    "d": {},
}


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        make_namespace(c, NS)
        make_namespace(c, "sel-other")
        for name, labels in LABELS.items():
            ok(c.post(CMS, json=cm(name, labels=labels)), 201)
        for ns, name, node, phase in [
            (NS, "p1", "n1", "Running"),
            (NS, "p2", "n2", "Pending"),
            ("sel-other", "p3", "n1", "Running"),
        ]:
            pod = {
                "metadata": {"name": name},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
            }
            path = PODS.format(ns=ns)
            ok(c.post(path, json=pod), 201)
            ok(
                patch(
                    c, f"{path}/{name}/status", {"status": {"phase": phase}}, "application/merge-patch+json"
                )
            )
        yield c


def names(http: httpx.Client, path: str, **params: str) -> list[str]:
    return [i["metadata"]["name"] for i in ok(http.get(path, params=params))["items"]]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("env=prod", ["a"]),
        ("env==prod", ["a"]),
        ("env!=prod", ["b", "c", "d"]),
        ("env in (prod,dev)", ["a", "b"]),
        ("env notin (prod,dev)", ["c", "d"]),
        ("tier", ["a", "b"]),
        ("!tier", ["c", "d"]),
        ("tier=web,env=dev", ["b"]),
        ("env,!tier", ["c"]),
    ],
)
def test_label_selectors(http: httpx.Client, selector: str, expected: list[str]) -> None:
    assert names(http, CMS, labelSelector=selector) == expected


@pytest.mark.parametrize("selector", ["env in prod", "=x", "env=(a", "a!!b", "k=" + "v" * 64])
def test_malformed_label_selector_is_bad_request(http: httpx.Client, selector: str) -> None:
    status_of(http.get(CMS, params={"labelSelector": selector}), 400, "BadRequest")


def test_field_selectors_on_metadata(http: httpx.Client) -> None:
    assert names(http, CMS, fieldSelector="metadata.name=b") == ["b"]
    assert names(http, CMS, fieldSelector="metadata.name!=b") == ["a", "c", "d"]
    every = ok(http.get("/api/v1/configmaps", params={"fieldSelector": f"metadata.namespace={NS}"}))["items"]
    assert {i["metadata"]["namespace"] for i in every} == {NS}
    assert len(every) == 4


def test_field_selectors_on_pods(http: httpx.Client) -> None:
    assert names(http, "/api/v1/pods", fieldSelector="spec.nodeName=n1") == ["p1", "p3"]
    assert names(http, "/api/v1/pods", fieldSelector="status.phase=Running,spec.nodeName=n1") == ["p1", "p3"]
    assert names(http, PODS.format(ns=NS), fieldSelector="status.phase!=Running") == ["p2"]


def test_unsupported_field_selector_is_bad_request(http: httpx.Client) -> None:
    status_of(http.get(CMS, params={"fieldSelector": "spec.nodeName=n1"}), 400, "BadRequest")
    status_of(http.get(CMS, params={"fieldSelector": "metadata.name"}), 400, "BadRequest")


def test_limit_and_continue_walk_every_item_once(http: httpx.Client) -> None:
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        params = {"limit": "3"}
        if token:
            params["continue"] = token
        page = ok(http.get("/api/v1/configmaps", params=params))
        assert len(page["items"]) <= 3
        seen += [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in page["items"]]
        pages += 1
        token = page["metadata"].get("continue", "")
        if not token:
            assert "remainingItemCount" not in page["metadata"]
            break
        assert page["metadata"]["remainingItemCount"] > 0
    full = ok(http.get("/api/v1/configmaps"))["items"]
    assert seen == [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in full]
    assert pages == -(-len(full) // 3)


def test_limit_with_selector(http: httpx.Client) -> None:
    page = ok(http.get(CMS, params={"limit": "1", "labelSelector": "tier"}))
    assert [i["metadata"]["name"] for i in page["items"]] == ["a"]
    rest = ok(
        http.get(
            CMS, params={"limit": "1", "labelSelector": "tier", "continue": page["metadata"]["continue"]}
        )
    )
    assert [i["metadata"]["name"] for i in rest["items"]] == ["b"]
    assert "continue" not in rest["metadata"]


# a negative limit lists everything, as in kube-apiserver (tests/apiserver/test_params.py)
@pytest.mark.parametrize("params", [{"continue": "garbage!"}, {"limit": "ten"}])
def test_bad_pagination_is_bad_request(http: httpx.Client, params: dict[str, str]) -> None:
    status_of(http.get(CMS, params=params), 400, "BadRequest")
