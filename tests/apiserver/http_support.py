"""Plain-HTTP helpers for the API server tests: an authenticated httpx client and small shortcuts.

Tests assert at the HTTP level (status codes, Status bodies, headers), so they talk to the server
with httpx, trusting the server's own CA and sending the admin bearer token.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from tests.support.apiserver import ServerProcess

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def client(server: ServerProcess, token: str | None = "admin", timeout: float = 15.0) -> httpx.Client:
    """An httpx client for ``server``; ``token='admin'`` sends the admin token, None sends none."""
    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {server.token if token == 'admin' else token}"
    return httpx.Client(base_url=server.url, verify=str(server.ca_file), headers=headers, timeout=timeout)


def ok(resp: httpx.Response, *codes: int) -> Any:
    """The decoded body of a response whose status is one of ``codes`` (default 200/201)."""
    expected = codes or (200, 201)
    request = resp.request
    assert resp.status_code in expected, f"{request.method} {request.url}: {resp.status_code} {resp.text}"
    return resp.json()


def status_of(resp: httpx.Response, code: int, reason: str | None = None) -> dict[str, Any]:
    """Assert ``resp`` is a Kubernetes Status error with ``code`` (and ``reason``); return it."""
    assert resp.status_code == code, f"expected {code}, got {resp.status_code}: {resp.text}"
    body = resp.json()
    assert body["kind"] == "Status" and body["apiVersion"] == "v1", body
    assert body["status"] == "Failure" and body["code"] == code, body
    if reason is not None:
        assert body["reason"] == reason, body
    return dict(body)


def patch(c: httpx.Client, path: str, body: Any, content_type: str, **params: Any) -> httpx.Response:
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return c.patch(path, content=data, headers={"Content-Type": content_type}, params=params)


def delete(c: httpx.Client, path: str, body: Any = None, **params: Any) -> httpx.Response:
    content = json.dumps(body) if body is not None else None
    return c.request(
        "DELETE",
        path,
        content=content,
        params=params,
        headers={"Content-Type": "application/json"} if content else None,
    )


def watch_lines(resp: httpx.Response) -> Iterator[dict[str, Any]]:
    """Decode a streaming watch response line by line."""
    for line in resp.iter_lines():
        if line.strip():
            yield json.loads(line)


def cm(
    name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None, **meta: Any
) -> dict[str, Any]:
    """A ConfigMap body."""
    metadata: dict[str, Any] = {"name": name, **meta}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data or {}}


def make_namespace(c: httpx.Client, name: str) -> None:
    resp = c.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert resp.status_code in (201, 409), resp.text


def user(name: str) -> dict[str, str]:
    """The RBAC subject for user ``name``."""
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}


def bind(
    c: httpx.Client, ns: str, name: str, role_kind: str, role: str, subjects: list[dict[str, str]]
) -> Any:
    """Create RoleBinding ``name`` in ``ns`` (a ClusterRoleBinding when ``ns`` is empty) to ``subjects``."""
    body = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }
    path = f"{RBAC}/namespaces/{ns}/rolebindings" if ns else f"{RBAC}/clusterrolebindings"
    return ok(c.post(path, json=body), 201)


def alice_edits_team_a(c: httpx.Client) -> None:
    """Namespace team-a, user alice bound to ClusterRole ``edit`` there, and its ServiceAccount robot."""
    ok(c.post("/api/v1/namespaces", json={"metadata": {"name": "team-a"}}), 201)
    bind(c, "team-a", "alice-edit", "ClusterRole", "edit", [user("alice")])
    ok(c.post("/api/v1/namespaces/team-a/serviceaccounts", json={"metadata": {"name": "robot"}}), 201)
