"""SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview,
TokenReview and TokenRequest: answered from the same rules and tokens as real requests; bad review
bodies are 400/422, never 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.apiserver.http_support import alice_edits_team_a, client, ok, status_of
from tests.support.apiserver import ServerProcess, serving_with_tokens

AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"
TOKENS = 'alice-token,alice,1001,"ml"\n'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("reviews"), TOKENS) as proc:
        with client(proc) as c:
            alice_edits_team_a(c)
        yield proc


def sar(
    user: str, verb: str, resource: str, namespace: str = "", group: str = "", **extra: Any
) -> dict[str, Any]:
    attrs = {"verb": verb, "resource": resource, "namespace": namespace, "group": group, **extra}
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": ["ml"], "resourceAttributes": attrs},
    }


def test_subject_access_review_answers_from_the_rules(server: ServerProcess) -> None:
    with client(server) as c:
        answer = ok(
            c.post(
                f"{AUTHZ}/subjectaccessreviews",
                json=sar("alice", "create", "rayclusters", "team-a", "ray.io"),
            ),
            201,
        )
        assert answer["status"]["allowed"] is True
        assert (
            'RoleBinding "alice-edit" in namespace "team-a" of ClusterRole "edit"'
            in answer["status"]["reason"]
        )
        assert answer["kind"] == "SubjectAccessReview" and answer["spec"]["user"] == "alice"
        denied = ok(c.post(f"{AUTHZ}/subjectaccessreviews", json=sar("alice", "list", "pods", "team-b")), 201)
        assert denied["status"]["allowed"] is False
        sub = ok(
            c.post(
                f"{AUTHZ}/subjectaccessreviews", json=sar("alice", "get", "pods", "team-a", subresource="log")
            ),
            201,
        )
        assert sub["status"]["allowed"] is True
        nonres = {"spec": {"user": "alice", "nonResourceAttributes": {"verb": "get", "path": "/apis"}}}
        assert ok(c.post(f"{AUTHZ}/subjectaccessreviews", json=nonres), 201)["status"]["allowed"] is False
        nonres["spec"]["groups"] = ["system:authenticated"]
        assert ok(c.post(f"{AUTHZ}/subjectaccessreviews", json=nonres), 201)["status"]["allowed"] is True


def test_local_review_is_pinned_to_its_namespace(server: ServerProcess) -> None:
    with client(server) as c:
        body = sar("alice", "get", "configmaps", "team-a")
        body["kind"] = "LocalSubjectAccessReview"
        answer = ok(c.post(f"{AUTHZ}/namespaces/team-a/localsubjectaccessreviews", json=body), 201)
        assert answer["status"]["allowed"] is True and answer["metadata"]["namespace"] == "team-a"
        body["spec"]["resourceAttributes"]["namespace"] = "team-b"
        status_of(c.post(f"{AUTHZ}/namespaces/team-a/localsubjectaccessreviews", json=body), 422, "Invalid")


def test_self_reviews(server: ServerProcess) -> None:
    with client(server, token="alice-token") as c:
        review = {
            "spec": {"resourceAttributes": {"verb": "delete", "resource": "secrets", "namespace": "team-a"}}
        }
        assert ok(c.post(f"{AUTHZ}/selfsubjectaccessreviews", json=review), 201)["status"]["allowed"] is True
        review["spec"]["resourceAttributes"]["namespace"] = "kube-system"
        assert ok(c.post(f"{AUTHZ}/selfsubjectaccessreviews", json=review), 201)["status"]["allowed"] is False
        rules = ok(c.post(f"{AUTHZ}/selfsubjectrulesreviews", json={"spec": {"namespace": "team-a"}}), 201)
        status = rules["status"]
        assert status["incomplete"] is False
        assert any(
            "rayclusters" in r["resources"] and "create" in r["verbs"] for r in status["resourceRules"]
        )
        assert any("/apis" in r["nonResourceURLs"] for r in status["nonResourceRules"])
        who = ok(c.post(f"{AUTHN}/selfsubjectreviews", json={}), 201)["status"]["userInfo"]
        assert who == {"username": "alice", "uid": "1001", "groups": ["ml", "system:authenticated"]}
        # a SubjectAccessReview about others needs its own permission
        status_of(c.post(f"{AUTHZ}/subjectaccessreviews", json=sar("bob", "get", "pods")), 403)


def test_token_review_and_token_request(server: ServerProcess) -> None:
    with client(server) as c:
        issued = ok(
            c.post(
                "/api/v1/namespaces/team-a/serviceaccounts/robot/token",
                json={
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenRequest",
                    "spec": {"expirationSeconds": 7200},
                },
            ),
            201,
        )
        assert issued["kind"] == "TokenRequest" and issued["spec"]["expirationSeconds"] == 7200
        assert issued["status"]["expirationTimestamp"].endswith("Z")
        token = issued["status"]["token"]
        review = ok(c.post(f"{AUTHN}/tokenreviews", json={"spec": {"token": token}}), 201)["status"]
        assert review["authenticated"] is True
        assert review["user"]["username"] == "system:serviceaccount:team-a:robot"
        assert set(review["user"]["groups"]) == {
            "system:serviceaccounts",
            "system:serviceaccounts:team-a",
            "system:authenticated",
        }
        assert (
            ok(c.post(f"{AUTHN}/tokenreviews", json={"spec": {"token": "alice-token"}}), 201)["status"][
                "user"
            ]["username"]
            == "alice"
        )
        bad = ok(c.post(f"{AUTHN}/tokenreviews", json={"spec": {"token": "nope"}}), 201)["status"]
        assert bad["authenticated"] is False
        # TokenRequest errors
        status_of(c.post("/api/v1/namespaces/team-a/serviceaccounts/ghost/token", json={}), 404, "NotFound")
        err = status_of(
            c.post(
                "/api/v1/namespaces/team-a/serviceaccounts/robot/token",
                json={"spec": {"expirationSeconds": 60}},
            ),
            422,
            "Invalid",
        )
        assert "spec.expirationSeconds" in err["message"]
        status_of(c.get("/api/v1/namespaces/team-a/serviceaccounts/robot/token"), 405)
    with client(server, token="alice-token") as c:  # edit may mint tokens in its namespace
        ok(c.post("/api/v1/namespaces/team-a/serviceaccounts/robot/token", json={}), 201)
        status_of(c.post("/api/v1/namespaces/default/serviceaccounts/default/token", json={}), 403)


@pytest.mark.parametrize(
    ("path", "body", "code"),
    [
        (f"{AUTHZ}/subjectaccessreviews", [], 400),
        (f"{AUTHZ}/subjectaccessreviews", {"spec": "x"}, 422),
        (f"{AUTHZ}/subjectaccessreviews", {"spec": {"user": "a"}}, 422),
        (f"{AUTHZ}/subjectaccessreviews", {"spec": {"resourceAttributes": {"verb": "get"}}}, 422),
        (
            f"{AUTHZ}/subjectaccessreviews",
            {"spec": {"user": "a", "resourceAttributes": {}, "nonResourceAttributes": {}}},
            422,
        ),
        (f"{AUTHZ}/subjectaccessreviews", {"spec": {"user": 3, "resourceAttributes": {}}}, 422),
        (
            f"{AUTHZ}/subjectaccessreviews",
            {"spec": {"user": "a", "groups": "g", "resourceAttributes": {}}},
            422,
        ),
        (
            f"{AUTHZ}/subjectaccessreviews",
            {"spec": {"user": "a", "resourceAttributes": {"verb": ["get"]}}},
            422,
        ),
        (f"{AUTHZ}/subjectaccessreviews", {"kind": "Pod", "spec": {}}, 400),
        (f"{AUTHZ}/selfsubjectaccessreviews", {"spec": {"resourceAttributes": "pods"}}, 422),
        (f"{AUTHZ}/selfsubjectrulesreviews", {"spec": {"namespace": 1}}, 422),
        (f"{AUTHN}/tokenreviews", {"spec": {}}, 422),
        (f"{AUTHN}/tokenreviews", {"spec": {"token": "x", "audiences": "api"}}, 422),
        ("/api/v1/namespaces/team-a/serviceaccounts/robot/token", {"spec": {"expirationSeconds": "1h"}}, 422),
        ("/api/v1/namespaces/team-a/serviceaccounts/robot/token", {"spec": {"audiences": [1]}}, 422),
        ("/api/v1/namespaces/team-a/serviceaccounts/robot/token", "text", 400),
    ],
)
def test_bad_review_bodies_are_client_errors(server: ServerProcess, path: str, body: Any, code: int) -> None:
    with client(server) as c:
        status_of(c.post(path, json=body), code)


def test_reviews_are_create_only(server: ServerProcess) -> None:
    with client(server) as c:
        status_of(c.get(f"{AUTHZ}/subjectaccessreviews"), 405)
        resources = {r["name"]: r for r in ok(c.get(AUTHZ))["resources"]}
        assert resources["selfsubjectaccessreviews"]["verbs"] == ["create"]
        core = {r["name"]: r for r in ok(c.get("/api/v1"))["resources"]}
        assert core["serviceaccounts/token"]["verbs"] == ["create"]
