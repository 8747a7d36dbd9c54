"""An AppWrapper is no way around RBAC: a user bound only to ``edit`` in team-a cannot create a
ClusterRoleBinding, neither directly nor wrapped in an AppWrapper, and can wrap what she may create.

Real API server process with RBAC and a tokens file, the operator with its webhooks, and the user
talking with her own bearer token; the refusals come from the API server's authorizer and from the
operator's AppWrapper webhook (one SubjectAccessReview per component), each with its reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import config, errors, kinds
from codeflare.kube.client import Kube
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace, wait_for

ALICE_TOKEN = "alice-secret-token"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f"{ALICE_TOKEN},alice,uid-alice\n")
    running = ServerProcess(tmp_path / "state", extra_args=["--tokens-file", str(tokens)]).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def operator(server: ServerProcess) -> Iterator[ThreadedOperator]:
    running = ThreadedOperator(server, {"queueing": {"enabled": False}}).start()
    try:
        yield running
    finally:
        running.stop()


def _wrapping(template: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": f"wrap-{template['kind'].lower()}", "namespace": "team-a"},
        "spec": {
            "suspend": True,
            "components": [
                {
                    "template": template,
                    "podSets": [] if template["kind"] != "Pod" else [{"path": "template", "replicas": 1}],
                }
            ],
        },
    }


def test_edit_user_cannot_wrap_what_she_may_not_create(
    server: ServerProcess, operator: ThreadedOperator
) -> None:
    with Kube(config.from_kubeconfig(server.kubeconfig)) as admin:
        ensure_namespace(admin, "team-a")
        admin.create(
            kinds.Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
            {
                "metadata": {"name": "alice-edit", "namespace": "team-a"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
                "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
            },
        )
        # the operator's webhooks are registered once it is ready
        wait_for(
            lambda: admin.find(
                kinds.Kind(
                    "admissionregistration.k8s.io",
                    "v1",
                    "ValidatingWebhookConfiguration",
                    "validatingwebhookconfigurations",
                    False,
                ),
                "codeflare-operator",
            ),
            what="webhook configuration",
        )
    alice = Kube(config.from_token(server.url, ALICE_TOKEN, ca_file=server.ca_file, namespace="team-a"))
    try:
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "alice-everywhere"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        }
        with pytest.raises(errors.Forbidden) as direct:
            alice.create(
                kinds.Kind(
                    "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False
                ),
                binding,
            )
        assert 'User "alice" cannot create resource "clusterrolebindings"' in direct.value.message

        with pytest.raises(errors.KubeError) as wrapped:
            alice.create(kinds.APPWRAPPER, _wrapping(binding))
        assert "clusterrolebindings" in wrapped.value.message, wrapped.value.message
        assert "alice" in wrapped.value.message, wrapped.value.message

        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "worker", "namespace": "team-a"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        created = alice.create(kinds.APPWRAPPER, _wrapping(pod))
        assert created["metadata"]["labels"].get("workload.codeflare.dev/user") == "alice"
        with pytest.raises(errors.Forbidden):
            alice.list(kinds.CONFIGMAP, "default")  # and she cannot read another namespace
    finally:
        alice.close()
