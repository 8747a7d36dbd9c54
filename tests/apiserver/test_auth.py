"""Point 11: bearer-token authentication, TLS with a generated CA, plain HTTP only on request,
and a loopback bind by default."""

from __future__ import annotations

import ssl
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.apiserver.http_support import client, ok, status_of
from tests.support.apiserver import ServerProcess, serving_with_tokens

TOKENS = 'alice-token,alice,1001,"devs,ml"\nbob-token,bob,1002\n'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("auth"), TOKENS) as proc:
        yield proc


def test_admin_token_is_private_and_stable(server: ServerProcess) -> None:
    token_file = server.state_dir / "admin.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = server.token
    assert len(token) >= 32
    config = yaml.safe_load(server.kubeconfig.read_text())
    assert config["users"][0]["user"]["token"] == token
    assert config["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic YWRtaW46YWRtaW4=", "Bearer", "Token abc"])
def test_missing_or_bad_token_is_401(server: ServerProcess, header: str | None) -> None:
    headers = {"Authorization": header} if header is not None else {}
    with httpx.Client(base_url=server.url, verify=str(server.ca_file), headers=headers) as c:
        for path in ("/api/v1/namespaces", "/api", "/apis", "/api/v1/namespaces/default/configmaps/x"):
            status_of(c.get(path), 401, "Unauthorized")
        status_of(c.post("/api/v1/namespaces", json={"metadata": {"name": "x"}}), 401, "Unauthorized")


def test_health_and_version_need_no_token(server: ServerProcess) -> None:
    with client(server, token=None) as c:
        assert c.get("/healthz").status_code == 200
        assert ok(c.get("/version"))["major"]


def test_users_from_the_tokens_file(server: ServerProcess) -> None:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {}}
    for token in ("alice-token", "bob-token"):
        with client(server, token=token) as c:
            # authenticated (not 401) but bound to no role: RBAC refuses the list
            status_of(c.get("/api/v1/namespaces"), 403, "Forbidden")
            resp = c.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review)
            info = ok(resp, 201)["status"]["userInfo"]
            assert info["username"] == token.split("-")[0]
            assert "system:authenticated" in info["groups"]
    with client(server, token="carol-token") as c:
        status_of(c.get("/api/v1/namespaces"), 401)


def test_tls_uses_the_generated_ca(server: ServerProcess) -> None:
    with httpx.Client(base_url=server.url, verify=True) as c, pytest.raises(httpx.ConnectError):
        c.get("/healthz")  # the system CAs do not know the server's CA
    ctx = ssl.create_default_context(cafile=str(server.ca_file))
    with httpx.Client(base_url=server.url, verify=ctx) as c:
        assert c.get("/healthz").status_code == 200
    with httpx.Client(base_url=server.url.replace("https", "http")) as c, pytest.raises(httpx.HTTPError):
        c.get("/healthz")


def test_binds_loopback_only(server: ServerProcess) -> None:
    import psutil

    assert server.proc is not None
    addresses = {
        c.laddr.ip for c in psutil.Process(server.proc.pid).net_connections() if c.status == "LISTEN"
    }
    assert addresses == {"127.0.0.1"}


def test_plain_http_only_with_flag(tmp_path: Path) -> None:
    proc = ServerProcess(tmp_path / "plain", extra_args=["--insecure-http"]).start()
    try:
        url = f"http://127.0.0.1:{proc.port}"
        config = yaml.safe_load(proc.kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == url
        headers = {"Authorization": f"Bearer {proc.token}"}
        with httpx.Client(base_url=url, headers=headers) as c:
            assert c.get("/api/v1/namespaces").status_code == 200
        with httpx.Client(base_url=url) as c:
            status_of(c.get("/api/v1/namespaces"), 401)
    finally:
        proc.stop()
