"""Point 9: the status subresource. /status writes change only status; main writes keep status."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.http_support import APPLY, JSON_PATCH, MERGE, client, ok, patch
from tests.support.apiserver import ServerProcess

DEPLOY = "/apis/apps/v1/namespaces/default/deployments"


def deployment(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"v": "1"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
        "status": {"replicas": 99},
    }


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        yield c


def test_create_ignores_status(http: httpx.Client) -> None:
    created = ok(http.post(DEPLOY, json=deployment("st-create")), 201)
    assert "replicas" not in (created.get("status") or {})


def test_status_put_changes_only_status(http: httpx.Client) -> None:
    obj = ok(http.post(DEPLOY, json=deployment("st-put")), 201)
    obj["status"] = {"replicas": 1, "readyReplicas": 1}
    obj["spec"]["replicas"] = 7
    obj["metadata"]["labels"] = {"v": "2"}
    updated = ok(http.put(f"{DEPLOY}/st-put/status", json=obj))
    assert updated["status"] == {"replicas": 1, "readyReplicas": 1}
    assert updated["spec"]["replicas"] == 1
    assert updated["metadata"]["labels"] == {"v": "1"}
    assert updated["metadata"]["generation"] == 1


def test_main_put_and_patches_do_not_change_status(http: httpx.Client) -> None:
    obj = ok(http.post(DEPLOY, json=deployment("st-main")), 201)
    ok(patch(http, f"{DEPLOY}/st-main/status", {"status": {"replicas": 1}}, MERGE))
    obj = ok(http.get(f"{DEPLOY}/st-main"))
    obj["status"] = {"replicas": 50}
    obj["spec"]["replicas"] = 2
    updated = ok(http.put(f"{DEPLOY}/st-main", json=obj))
    assert updated["status"] == {"replicas": 1} and updated["spec"]["replicas"] == 2
    merged = ok(
        patch(http, f"{DEPLOY}/st-main", {"status": {"replicas": 60}, "spec": {"replicas": 3}}, MERGE)
    )
    assert merged["status"] == {"replicas": 1} and merged["spec"]["replicas"] == 3
    ops = [{"op": "replace", "path": "/status/replicas", "value": 70}]
    assert ok(patch(http, f"{DEPLOY}/st-main", ops, JSON_PATCH))["status"] == {"replicas": 1}


def test_status_patch_and_apply_change_only_status(http: httpx.Client) -> None:
    ok(http.post(DEPLOY, json=deployment("st-patch")), 201)
    body = {"status": {"replicas": 4}, "spec": {"replicas": 9}, "metadata": {"labels": {"x": "y"}}}
    patched = ok(patch(http, f"{DEPLOY}/st-patch/status", body, MERGE))
    assert patched["status"] == {"replicas": 4}
    assert patched["spec"]["replicas"] == 1 and patched["metadata"]["labels"] == {"v": "1"}
    applied_body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "st-patch"},
        "status": {"availableReplicas": 1},
    }
    applied = ok(patch(http, f"{DEPLOY}/st-patch/status", applied_body, APPLY, fieldManager="ctl"))
    assert applied["status"]["availableReplicas"] == 1 and applied["spec"]["replicas"] == 1
    managers = {(m["manager"], m.get("subresource", "")) for m in applied["metadata"]["managedFields"]}
    assert ("ctl", "status") in managers


def test_status_write_to_a_resource_without_status_is_not_found(http: httpx.Client) -> None:
    ok(http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "no-status"}}), 201)
    resp = http.put("/api/v1/namespaces/default/configmaps/no-status/status", json={"metadata": {}})
    assert resp.status_code == 404
