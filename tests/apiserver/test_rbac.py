"""RBAC over a real server process: users from a tokens file, roles and bindings made by the admin.

The central story: alice is bound only to ``edit`` in team-a; she works there (RayClusters
included), cannot read team-b and cannot grant herself more. Then one test per rule feature.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.apiserver.http_support import RBAC, bind, client, delete, ok, status_of, user
from tests.support.apiserver import ServerProcess, serving_with_tokens
from tests.support.polling import wait_for

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"
TOKENS = (
    'alice-token,alice,1001,"ml"\n'
    "dave-token,dave,1004\n"
    "erin-token,erin,1005\n"
    'root-token,root,1006,"system:masters"\n'
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("rbac"), TOKENS) as proc:
        with client(proc) as c:
            crd = yaml.safe_load((CRDS / "ray.io_rayclusters.yaml").read_text())
            ok(c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 201)
            for ns in ("team-a", "team-b"):
                ok(c.post("/api/v1/namespaces", json={"metadata": {"name": ns}}), 201)
            ok(c.post("/api/v1/namespaces/team-b/configmaps", json={"metadata": {"name": "secret-plans"}}))
            bind(c, "team-a", "alice-edit", "ClusterRole", "edit", [user("alice")])
            wait_for(lambda: c.get("/apis/ray.io/v1").status_code == 200, 10, what="ray.io/v1 served")
        yield proc


def group(name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def role(c: httpx.Client, ns: str, name: str, rules: list[dict[str, Any]], **extra: Any) -> Any:
    path = f"{RBAC}/namespaces/{ns}/roles" if ns else f"{RBAC}/clusterroles"
    return ok(c.post(path, json={"metadata": {"name": name, **extra}, "rules": rules}), 201)


def raycluster(name: str) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.9.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
        },
    }


def fresh_user(c: httpx.Client, server: ServerProcess) -> tuple[str, str]:
    """A new ServiceAccount in team-a (a user bound to nothing) and its token."""
    name = f"sa-{uuid.uuid4().hex[:6]}"
    ok(c.post("/api/v1/namespaces/team-a/serviceaccounts", json={"metadata": {"name": name}}), 201)
    answer = ok(c.post(f"/api/v1/namespaces/team-a/serviceaccounts/{name}/token", json={"spec": {}}), 201)
    return name, answer["status"]["token"]


# -- the issue's scenario ------------------------------------------------------------------------
def test_edit_in_team_a_only(server: ServerProcess) -> None:
    with client(server, token="alice-token") as c:
        ok(c.get("/api/v1/namespaces/team-a/pods"))
        ok(c.post("/api/v1/namespaces/team-a/configmaps", json={"metadata": {"name": "mine"}}), 201)
        err = status_of(c.get("/api/v1/namespaces/team-b/configmaps"), 403, "Forbidden")
        assert err["message"] == (
            'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" '
            'in the namespace "team-b"'
        )
        assert err["details"] == {"kind": "configmaps"}
        err = status_of(c.get("/api/v1/namespaces/team-b/configmaps/secret-plans"), 403)
        assert err["message"].startswith('configmaps "secret-plans" is forbidden: User "alice" cannot get')
        status_of(c.get("/api/v1/configmaps"), 403)  # listing across namespaces is cluster scope


def test_edit_user_cannot_grant_herself_cluster_admin(server: ServerProcess) -> None:
    body = {
        "metadata": {"name": "alice-everywhere"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [user("alice")],
    }
    with client(server, token="alice-token") as c:
        err = status_of(c.post(f"{RBAC}/clusterrolebindings", json=body), 403, "Forbidden")
        assert err["message"] == (
            'clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource '
            '"clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope'
        )
        status_of(c.post(f"{RBAC}/namespaces/team-a/rolebindings", json=body), 403)
    with client(server) as c:
        status_of(c.get(f"{RBAC}/clusterrolebindings/alice-everywhere"), 404)


def test_edit_user_runs_a_raycluster_in_team_a(server: ServerProcess) -> None:
    with client(server, token="alice-token") as c:
        created = ok(c.post("/apis/ray.io/v1/namespaces/team-a/rayclusters", json=raycluster("rc")), 201)
        assert created["metadata"]["namespace"] == "team-a"
        ok(c.get("/apis/ray.io/v1/namespaces/team-a/rayclusters/rc"))
        status_of(c.post("/apis/ray.io/v1/namespaces/team-b/rayclusters", json=raycluster("rc")), 403)
        ok(delete(c, "/apis/ray.io/v1/namespaces/team-a/rayclusters/rc"))


# -- escalation --------------------------------------------------------------------------------
def test_namespace_admin_may_only_grant_what_they_hold(server: ServerProcess) -> None:
    with client(server) as c:
        bind(c, "team-a", "dave-admin", "ClusterRole", "admin", [user("dave")])
    with client(server, token="dave-token") as c:
        bind(c, "team-a", "erin-view", "ClusterRole", "view", [user("erin")])  # held: allowed
        role(c, "team-a", "cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])
        body = {
            "metadata": {"name": "dave-root"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [user("dave")],
        }
        err = status_of(c.post(f"{RBAC}/namespaces/team-a/rolebindings", json=body), 403, "Forbidden")
        assert "attempting to grant RBAC permissions not currently held" in err["message"]
        nodes = {
            "metadata": {"name": "nodes"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["*"]}],
        }
        err = status_of(c.post(f"{RBAC}/namespaces/team-a/roles", json=nodes), 403)
        assert "not currently held" in err["message"]
    with client(server, token="erin-token") as c:
        ok(c.get("/api/v1/namespaces/team-a/configmaps"))
        status_of(c.post("/api/v1/namespaces/team-a/configmaps", json={"metadata": {"name": "x"}}), 403)


# -- one test per rule feature --------------------------------------------------------------------
def test_verbs_resource_names_and_subresources(server: ServerProcess) -> None:
    with client(server) as admin:
        name, token = fresh_user(admin, server)
        role(
            admin,
            "team-a",
            f"{name}-r",
            [
                {
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "verbs": ["get"],
                    "resourceNames": ["allowed"],
                },
                {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]},
                {"apiGroups": ["apps"], "resources": ["*"], "verbs": ["list"]},
            ],
        )
        bind(
            admin,
            "team-a",
            f"{name}-b",
            "Role",
            f"{name}-r",
            [{"kind": "ServiceAccount", "name": name, "namespace": "team-a"}],
        )
        for cm in ("allowed", "other"):
            ok(admin.post("/api/v1/namespaces/team-a/configmaps", json={"metadata": {"name": cm}}), 201)
        ok(
            admin.post(
                "/api/v1/namespaces/team-a/pods",
                json={"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
            ),
            201,
        )
    with client(server, token=token) as c:
        ok(c.get("/api/v1/namespaces/team-a/configmaps/allowed"))
        status_of(c.get("/api/v1/namespaces/team-a/configmaps/other"), 403)
        status_of(c.get("/api/v1/namespaces/team-a/configmaps"), 403)  # resourceNames never grant list
        status_of(c.delete("/api/v1/namespaces/team-a/configmaps/allowed"), 403)  # verb
        ok(c.get("/api/v1/namespaces/team-a/pods/p/status"))
        err = status_of(c.get("/api/v1/namespaces/team-a/pods/p"), 403)
        assert f'User "system:serviceaccount:team-a:{name}" cannot get resource "pods"' in err["message"]
        ok(c.get("/apis/apps/v1/namespaces/team-a/deployments"))  # "*" resources in group apps
        status_of(c.get("/apis/batch/v1/namespaces/team-a/jobs"), 403)  # not in group batch
        status_of(c.get("/apis/apps/v1/namespaces/team-b/deployments"), 403)  # a Role is one namespace


def test_groups_cluster_bindings_and_non_resource_urls(server: ServerProcess) -> None:
    with client(server) as admin:
        role(
            admin,
            "",
            "ml-reader",
            [
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]},
                {"nonResourceURLs": ["/logs", "/logs/*"], "verbs": ["get"]},
            ],
        )
        bind(admin, "", "ml-reader", "ClusterRole", "ml-reader", [group("ml")])
    with client(server, token="alice-token") as c:  # alice is in group ml
        ok(c.get("/api/v1/namespaces/team-b/configmaps"))
        ok(c.get("/api/v1/configmaps"))
        status_of(c.get("/logs/x"), 404)  # allowed, then not found
    with client(server, token="erin-token") as c:
        err = status_of(c.get("/logs/x"), 403)
        assert err["message"] == 'forbidden: User "erin" cannot get path "/logs/x"'
        ok(c.get("/apis"))  # discovery is open to every authenticated user
        ok(c.get("/version"))
    with client(server) as admin:
        ok(delete(admin, f"{RBAC}/clusterrolebindings/ml-reader"))
    with client(server, token="alice-token") as c:  # the index follows deletions
        status_of(c.get("/api/v1/namespaces/team-b/configmaps"), 403)


def test_aggregated_cluster_roles_pick_up_labelled_rules(server: ServerProcess) -> None:
    with client(server) as admin:
        name, token = fresh_user(admin, server)
        bind(
            admin,
            "team-a",
            f"{name}-view",
            "ClusterRole",
            "view",
            [{"kind": "ServiceAccount", "name": name, "namespace": "team-a"}],
        )
    with client(server, token=token) as c:
        status_of(c.get("/api/v1/namespaces/team-a/secrets"), 403)  # view never reads secrets
    with client(server) as admin:
        role(
            admin,
            "",
            f"{name}-extra",
            [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}],
            labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"},
        )
    with client(server, token=token) as c:
        ok(c.get("/api/v1/namespaces/team-a/secrets"))
    with client(server) as admin:
        ok(delete(admin, f"{RBAC}/clusterroles/{name}-extra"))


def test_system_masters_is_superuser(server: ServerProcess) -> None:
    with client(server, token="root-token") as c:
        ok(c.get("/api/v1/namespaces/team-b/configmaps"))
        ok(c.get("/api/v1/nodes"))


def test_default_roles_are_served(server: ServerProcess) -> None:
    with client(server) as c:
        names = {item["metadata"]["name"] for item in ok(c.get(f"{RBAC}/clusterroles"))["items"]}
        assert {"cluster-admin", "admin", "edit", "view", "system:basic-user", "system:discovery"} <= names
        binding = ok(c.get(f"{RBAC}/clusterrolebindings/cluster-admin"))
        assert binding["subjects"] == [group("system:masters")]


def test_service_account_tokens_are_revoked_with_the_account(server: ServerProcess) -> None:
    with client(server) as admin:
        name, token = fresh_user(admin, server)
    with client(server, token=token) as c:
        status_of(c.get("/api/v1/namespaces/team-a/pods"), 403)  # authenticated, unbound
    with client(server) as admin:
        ok(delete(admin, f"/api/v1/namespaces/team-a/serviceaccounts/{name}"))
    with client(server, token=token) as c:
        status_of(c.get("/api/v1/namespaces/team-a/pods"), 401)


def test_service_account_tokens_survive_a_restart(fresh_apiserver: ServerProcess) -> None:
    with client(fresh_apiserver) as c:
        ok(c.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "robot"}}), 201)
        bind(
            c,
            "default",
            "robot-view",
            "ClusterRole",
            "view",
            [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
        )
        token = ok(c.post("/api/v1/namespaces/default/serviceaccounts/robot/token", json={}), 201)["status"][
            "token"
        ]
    fresh_apiserver.restart()
    with client(fresh_apiserver, token=token) as c:
        ok(c.get("/api/v1/namespaces/default/pods"))
    assert token not in (fresh_apiserver.state_dir / "serviceaccount-tokens.db").read_bytes().decode(
        errors="replace"
    )


def test_always_allow_mode(tmp_path: Path) -> None:
    with (
        serving_with_tokens(tmp_path / "state", TOKENS, "--authorization", "always-allow") as proc,
        client(proc, token="erin-token") as c,
    ):
        ok(c.get("/api/v1/namespaces"))
        review = {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}
        assert ok(c.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review))["status"][
            "allowed"
        ]
