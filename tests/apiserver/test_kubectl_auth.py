"""kubectl under RBAC: ``--token`` as a user bound to ``edit`` in team-a, ``auth can-i``,
``auth whoami`` and ``create token``. Skipped when no kubectl binary is installed."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.apiserver.http_support import alice_edits_team_a, client, ok
from tests.support.apiserver import ServerProcess, serving_with_tokens
from tests.support.kubectl import KUBECTL, NEEDS_KUBECTL

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"
TOKENS = 'alice-token,alice,1001,"ml"\n'

pytestmark = NEEDS_KUBECTL


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("kubectl-auth"), TOKENS) as proc:
        yield proc


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    workdir = tmp_path_factory.mktemp("kubectl-home")
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig), "HOME": str(workdir)}

    def run(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        extra = ["--token", token] if token else []
        return subprocess.run(
            [str(KUBECTL), "--cache-dir", str(workdir / "cache"), *extra, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )

    first = run("apply", "-f", str(CRDS / "ray.io_rayclusters.yaml"))
    assert first.returncode == 0, first.stderr
    with client(server) as c:
        alice_edits_team_a(c)
        ok(c.post("/api/v1/namespaces", json={"metadata": {"name": "team-b"}}), 201)
    assert run("wait", "--for=condition=Established", "crd/rayclusters.ray.io").returncode == 0
    yield run


def test_can_i_answers_for_the_token_user(kubectl) -> None:  # type: ignore[no-untyped-def]
    yes = kubectl("auth", "can-i", "create", "rayclusters.ray.io", "-n", "team-a", token="alice-token")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes"), yes.stderr
    no = kubectl("auth", "can-i", "create", "rayclusters.ray.io", "-n", "team-b", token="alice-token")
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    no = kubectl("auth", "can-i", "create", "clusterrolebindings", token="alice-token")
    assert no.stdout.strip() == "no"
    admin = kubectl("auth", "can-i", "*", "*", "--all-namespaces")
    assert admin.stdout.strip() == "yes"
    listing = kubectl("auth", "can-i", "--list", "-n", "team-a", token="alice-token")
    assert listing.returncode == 0 and "rayclusters.ray.io" in listing.stdout


def test_forbidden_requests_show_the_kubernetes_message(kubectl) -> None:  # type: ignore[no-untyped-def]
    denied = kubectl("get", "configmaps", "-n", "team-b", token="alice-token")
    assert denied.returncode == 1
    assert (
        'Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource '
        '"configmaps" in API group "" in the namespace "team-b"'
    ) in denied.stderr
    grant = kubectl(
        "create",
        "clusterrolebinding",
        "mine",
        "--clusterrole=cluster-admin",
        "--user=alice",
        token="alice-token",
    )
    assert grant.returncode == 1
    assert (
        'cannot create resource "clusterrolebindings" in API group "rbac.authorization.k8s.io"'
        in grant.stderr
    )


def test_edit_user_applies_a_raycluster(kubectl, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    container = {"name": "ray", "image": "rayproject/ray:2.9.0"}
    rc = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "alices", "namespace": "team-a"},
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}}},
    }
    path = tmp_path / "rc.yaml"
    path.write_text(yaml.safe_dump(rc))
    applied = kubectl("apply", "-f", str(path), token="alice-token")
    assert applied.returncode == 0, applied.stderr
    assert "raycluster.ray.io/alices created" in applied.stdout
    got = kubectl("get", "raycluster", "alices", "-n", "team-a", token="alice-token")
    assert got.returncode == 0
    assert kubectl("delete", "raycluster", "alices", "-n", "team-a", token="alice-token").returncode == 0


def test_create_token_and_whoami(kubectl, server: ServerProcess) -> None:  # type: ignore[no-untyped-def]
    issued = kubectl("create", "token", "robot", "-n", "team-a", "--duration=1h")
    assert issued.returncode == 0, issued.stderr
    token = issued.stdout.strip()
    who = kubectl("auth", "whoami", "-o", "json", token=token)
    assert who.returncode == 0, who.stderr
    assert '"username": "system:serviceaccount:team-a:robot"' in who.stdout
    denied = kubectl("get", "pods", "-n", "team-a", token=token)
    assert "Forbidden" in denied.stderr
    with client(server) as c:  # the same token works for any HTTP client
        ok(c.get("/version"))
