"""The aggregation layer against a real server process and a small aggregated server in the test.

The backend trusts only the front-proxy CA the API server publishes in
``kube-system/extension-apiserver-authentication`` (it requires a client certificate signed by
it, with the allowed name) and echoes the ``X-Remote-*`` headers it receives. Cases follow
kube-aggregator (pkg/apiserver/handler_proxy.go: the identity headers, 503 when the backend
cannot be reached; the APIService kind). Where we differ: the ``Available`` condition is not
maintained yet, and aggregated discovery (``/apis`` as APIGroupDiscoveryList) is not served.
"""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from codeflare.k8s import certs
from tests.apiserver.http_support import client, ok, status_of
from tests.support.apiserver import ServerProcess, serving_with_tokens
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl
from tests.support.tls_app import ThreadedTLSApp

GROUP, VERSION = "echo.example.com", "v1beta2"
TOKENS = 'alice-token,alice,1001,"ml,team-a"\n'
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"


class EchoBackend(ThreadedTLSApp):
    """An HTTPS server requiring a front-proxy client certificate; echoes what it was told."""

    def __init__(self, workdir: Path, front_proxy_ca: str, allowed: list[str]) -> None:
        self.ca = certs.new_ca("echo-ca")
        leaf = certs.issue(self.ca, "echo", ["127.0.0.1", "echo.echo-system.svc"])
        (workdir / "tls.crt").write_bytes(leaf.cert_pem)
        (workdir / "tls.key").write_bytes(leaf.key_pem)
        (workdir / "front-proxy-ca.crt").write_text(front_proxy_ca)
        self.workdir, self.allowed = workdir, allowed
        super().__init__()

    async def _handle(self, request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(x[0] for x in (peer or {}).get("subject", ()))
        if subject.get("commonName") not in self.allowed:
            return web.json_response({"error": "not the front proxy"}, status=401)
        return web.json_response(
            {
                "path": request.path_qs,
                "method": request.method,
                "user": request.headers.get("X-Remote-User"),
                "groups": request.headers.getall("X-Remote-Group", []),
                "authorization": request.headers.get("Authorization"),
            }
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return app

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(
            ssl.Purpose.CLIENT_AUTH, cafile=str(self.workdir / "front-proxy-ca.crt")
        )
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_cert_chain(str(self.workdir / "tls.crt"), str(self.workdir / "tls.key"))
        return ctx


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("aggregation"), TOKENS) as proc:
        yield proc


@pytest.fixture(scope="module")
def auth_config(server: ServerProcess) -> dict[str, Any]:
    with client(server) as c:
        return dict(
            ok(c.get("/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"))["data"]
        )


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory, auth_config: dict[str, Any]) -> Iterator[EchoBackend]:
    allowed = json.loads(auth_config["requestheader-allowed-names"])
    srv = EchoBackend(
        tmp_path_factory.mktemp("echo"), auth_config["requestheader-client-ca-file"], allowed
    ).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def registered(server: ServerProcess, backend: EchoBackend) -> httpx.Client:
    c = client(server)
    ok(c.post("/api/v1/namespaces", json={"metadata": {"name": "echo-system"}}))
    svc = {
        "metadata": {"name": "echo", "annotations": {"codeflare.dev/loopback-port": str(backend.port)}},
        "spec": {"ports": [{"port": 443}]},
    }
    ok(c.post("/api/v1/namespaces/echo-system/services", json=svc))
    apiservice = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{VERSION}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "version": VERSION,
            "service": {"namespace": "echo-system", "name": "echo", "port": 443},
            "caBundle": base64.b64encode(backend.ca.cert_pem).decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    ok(c.post(APISERVICES, json=apiservice))
    return c


def test_the_front_proxy_ca_is_published_with_kube_names(auth_config: dict[str, Any]) -> None:
    assert "BEGIN CERTIFICATE" in auth_config["requestheader-client-ca-file"]
    assert "BEGIN CERTIFICATE" in auth_config["client-ca-file"]
    assert json.loads(auth_config["requestheader-username-headers"]) == ["X-Remote-User"]
    assert json.loads(auth_config["requestheader-group-headers"]) == ["X-Remote-Group"]
    assert json.loads(auth_config["requestheader-extra-headers-prefix"]) == ["X-Remote-Extra-"]
    assert json.loads(auth_config["requestheader-allowed-names"]) == ["front-proxy-client"]


def test_requests_are_proxied_with_the_callers_identity(
    server: ServerProcess, registered: httpx.Client
) -> None:
    path = f"/apis/{GROUP}/{VERSION}/namespaces/team-a/localqueues/lq/pendingworkloads"
    echoed = ok(registered.get(path, params={"limit": "2"}))
    assert echoed["path"] == f"{path}?limit=2" and echoed["method"] == "GET"
    assert echoed["user"] == "admin" and "system:masters" in echoed["groups"]
    assert echoed["authorization"] is None  # the bearer token stays with the API server
    with client(server, "alice-token") as alice:
        denied = alice.get(path)
        status_of(denied, 403, "Forbidden")  # authorized here first, as kube-apiserver does
        ok(
            registered.post(
                "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                json={
                    "metadata": {"name": "echo-reader"},
                    "rules": [{"apiGroups": [GROUP], "resources": ["*"], "verbs": ["get"]}],
                },
            )
        )
        ok(
            registered.post(
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                json={
                    "metadata": {"name": "echo-reader-alice"},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": "echo-reader",
                    },
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
                },
            )
        )
        echoed = ok(alice.get(path))
    assert echoed["user"] == "alice"
    assert set(echoed["groups"]) >= {"ml", "team-a", "system:authenticated"}


def test_discovery_lists_the_group_and_proxies_the_version(registered: httpx.Client) -> None:
    groups = {g["name"]: g for g in ok(registered.get("/apis"))["groups"]}
    assert groups[GROUP]["preferredVersion"]["groupVersion"] == f"{GROUP}/{VERSION}"
    assert ok(registered.get(f"/apis/{GROUP}"))["versions"][0]["version"] == VERSION
    assert ok(registered.get(f"/apis/{GROUP}/{VERSION}"))["path"] == f"/apis/{GROUP}/{VERSION}"


def test_a_backend_that_is_down_is_a_503(registered: httpx.Client) -> None:
    apiservice = {
        "metadata": {"name": "v1.down.example.com"},
        "spec": {
            "group": "down.example.com",
            "version": "v1",
            "service": {"namespace": "echo-system", "name": "nothing-here", "port": 443},
            "insecureSkipTLSVerify": True,
        },
    }
    ok(registered.post(APISERVICES, json=apiservice))
    status_of(registered.get("/apis/down.example.com/v1/things"), 503, "ServiceUnavailable")


@NEEDS_KUBECTL[0]
@NEEDS_KUBECTL[1]
def test_kubectl_get_raw(
    server: ServerProcess, registered: httpx.Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    kubectl = Kubectl(server, tmp_path_factory.mktemp("kubectl-agg"))
    path = f"/apis/{GROUP}/{VERSION}/namespaces/team-a/localqueues/lq/pendingworkloads"
    echoed = json.loads(kubectl.run("get", "--raw", path).stdout)
    assert echoed["path"] == path and echoed["user"] == "admin"
