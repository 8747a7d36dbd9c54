"""The TokenRequest client of the kube layer against the embedded server: a token it gets
authenticates as the ServiceAccount, and a refusal is a kube error carrying the server's message."""

from __future__ import annotations

import pytest

from codeflare.kube import errors
from codeflare.kube.config import from_kubeconfig
from codeflare.kube.tokens import issue_service_account_token, request_token
from tests.apiserver.http_support import client, ok
from tests.support.apiserver import ServerProcess

AUTHN = "/apis/authentication.k8s.io/v1"


@pytest.fixture(scope="module")
def server(apiserver: ServerProcess) -> ServerProcess:
    with client(apiserver) as c:
        ok(c.post("/api/v1/namespaces", json={"metadata": {"name": "tokens"}}), 201)
        ok(c.post("/api/v1/namespaces/tokens/serviceaccounts", json={"metadata": {"name": "robot"}}), 201)
    return apiserver


def test_an_issued_token_authenticates_as_the_service_account(server: ServerProcess) -> None:
    token = issue_service_account_token(
        server.url, server.token, "tokens", "robot", ca_file=server.ca_file, expiration_seconds=900
    )
    with client(server, token=token) as as_robot:
        me = ok(as_robot.post(f"{AUTHN}/selfsubjectreviews", json={}), 201)
    assert me["status"]["userInfo"]["username"] == "system:serviceaccount:tokens:robot"


def test_the_kubeconfig_connection_is_reused(server: ServerProcess) -> None:
    token = request_token(from_kubeconfig(server.kubeconfig), "tokens", "robot", audiences=("api",))
    with client(server) as c:
        review = ok(c.post(f"{AUTHN}/tokenreviews", json={"spec": {"token": token}}), 201)["status"]
    assert review["authenticated"] is True


def test_refusals_are_kube_errors_with_the_servers_message(server: ServerProcess) -> None:
    connection = from_kubeconfig(server.kubeconfig)
    with pytest.raises(errors.NotFound, match='serviceaccounts "ghost" not found'):
        request_token(connection, "tokens", "ghost")
    with pytest.raises(errors.Invalid, match="may not specify a duration less than 10 minutes"):
        request_token(connection, "tokens", "robot", expiration_seconds=60)
