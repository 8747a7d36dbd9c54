"""Admission webhooks against a real server process and a tiny HTTPS webhook server in the test.

Each test registers its own configuration, restricted by namespaceSelector to its own namespace,
so tests never see each other's webhooks. The webhook server records every AdmissionReview it
gets and answers according to the path it is called on.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from codeflare.k8s import certs
from tests.apiserver.http_support import MERGE, bind, client, delete, ok, patch, status_of, user
from tests.support.apiserver import ServerProcess, free_port, serving_with_tokens
from tests.support.tls_app import ThreadedTLSApp

TOKENS = 'alice-token,alice,1001,"ml"\n'
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1"


class WebhookServer(ThreadedTLSApp):
    """HTTPS admission webhooks on 127.0.0.1; behaviour chosen by path; reviews recorded."""

    def __init__(self, workdir: Path) -> None:
        self.ca = certs.new_ca("webhook-test-ca")
        leaf = certs.issue(self.ca, "webhook", ["127.0.0.1", "hooks.webhook-svc.svc"])
        (workdir / "tls.crt").write_bytes(leaf.cert_pem)
        (workdir / "tls.key").write_bytes(leaf.key_pem)
        self.cert, self.key = workdir / "tls.crt", workdir / "tls.key"
        super().__init__()
        self.reviews: list[tuple[str, dict[str, Any]]] = []

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca.cert_pem).decode()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}/{path}"

    def seen(self, path: str) -> list[dict[str, Any]]:
        return [req for p, req in self.reviews if p == path]

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        review = await request.json()
        req = review["request"]
        self.reviews.append((path, req))
        answer: dict[str, Any] = {"uid": req["uid"], "allowed": True}
        if path.startswith("slow"):
            await asyncio.sleep(3)
        if path.startswith("deny"):
            answer = {
                "uid": req["uid"],
                "allowed": False,
                "status": {"code": 403, "reason": "Forbidden", "message": "configs named bad-* are refused"},
            }
        if path.startswith("warn"):
            answer["warnings"] = ["spec.replicas is deprecated", "second warning"]
        if path.startswith("mutate") and req["object"] is not None:
            ops: list[dict[str, Any]] = [{"op": "add", "path": "/data/injected", "value": "yes"}]
            if not (req["object"]["metadata"].get("labels")):
                ops.insert(0, {"op": "add", "path": "/metadata/labels", "value": {}})
            ops.append({"op": "add", "path": "/metadata/labels/mutated-by", "value": "webhook"})
            answer["patchType"] = "JSONPatch"
            answer["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
        if path.startswith("wronguid"):
            answer["uid"] = "not-the-uid"
        return web.json_response(
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": answer}
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{path}", self._handle)
        return app

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(self.cert), str(self.key))
        return ctx


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("webhooks"), TOKENS) as proc:
        yield proc


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebhookServer]:
    srv = WebhookServer(tmp_path_factory.mktemp("webhook-certs")).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def ns(server: ServerProcess) -> Iterator[str]:
    name = f"wh-{uuid.uuid4().hex[:8]}"
    with client(server) as c:
        ok(c.post("/api/v1/namespaces", json={"metadata": {"name": name, "labels": {"team": "x"}}}))
        yield name
        unregister(c, name, "mutating", "validating")


def webhook(ns: str, name: str, url: str | None, ca: str, **fields: Any) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "name": f"{name}.test.codeflare.dev",
        "clientConfig": {"url": url, "caBundle": ca} if url else {"caBundle": ca},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 5,
    }
    hook.update(fields)
    return hook


def register(c: httpx.Client, ns: str, kind: str, *hooks: dict[str, Any]) -> None:
    body = {"metadata": {"name": f"{ns}-{kind}-{uuid.uuid4().hex[:4]}"}, "webhooks": list(hooks)}
    ok(c.post(f"{WEBHOOKS}/{kind}webhookconfigurations", json=body), 201)


def unregister(c: httpx.Client, ns: str, *kinds: str) -> None:
    """Delete the webhook configurations of ``kinds`` (mutating, validating) registered for ``ns``."""
    for kind in kinds:
        for item in ok(c.get(f"{WEBHOOKS}/{kind}webhookconfigurations"))["items"]:
            if item["metadata"]["name"].startswith(ns):
                delete(c, f"{WEBHOOKS}/{kind}webhookconfigurations/{item['metadata']['name']}")


def cm(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def test_mutating_webhook_patch_is_applied_and_warnings_reach_the_client(
    server: ServerProcess, hooks: WebhookServer, ns: str
) -> None:
    with client(server) as c:
        register(c, ns, "mutating", webhook(ns, "mutate", hooks.url("mutate"), hooks.ca_bundle))
        register(c, ns, "validating", webhook(ns, "warn", hooks.url("warn"), hooks.ca_bundle))
        resp = c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("one"))
        created = ok(resp, 201)
        assert created["data"] == {"k": "v", "injected": "yes"}
        assert created["metadata"]["labels"] == {"mutated-by": "webhook"}
        warnings = resp.headers.get_list("Warning")
        assert any("spec.replicas is deprecated" in w for w in warnings), warnings
        assert ok(c.get(f"/api/v1/namespaces/{ns}/configmaps/one"))["data"]["injected"] == "yes"
        # the validating webhook saw the mutated object
        assert hooks.seen("warn")[-1]["object"]["data"]["injected"] == "yes"
        # a merge patch is an UPDATE: mutated again, with the old object delivered
        patched = ok(patch(c, f"/api/v1/namespaces/{ns}/configmaps/one", {"data": {"k": "w"}}, MERGE))
        assert patched["data"] == {"k": "w", "injected": "yes"}
        update = hooks.seen("mutate")[-1]
        assert update["operation"] == "UPDATE" and update["oldObject"]["data"]["k"] == "v"
        assert update["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
        assert update["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}


def test_validating_webhook_refusal_names_the_webhook(
    server: ServerProcess, hooks: WebhookServer, ns: str
) -> None:
    with client(server) as c:
        register(
            c,
            ns,
            "validating",
            webhook(
                ns,
                "deny",
                hooks.url("deny"),
                hooks.ca_bundle,
                objectSelector={"matchLabels": {"check": "yes"}},
            ),
        )
        body = status_of(
            c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("bad-1", {"check": "yes"})), 403
        )
        assert body["message"] == (
            'admission webhook "deny.test.codeflare.dev" denied the request: configs named bad-* are refused'
        )
        status_of(c.get(f"/api/v1/namespaces/{ns}/configmaps/bad-1"), 404)
        # objectSelector: an unlabelled object is not sent to the webhook
        ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("bad-2")), 201)
        # a dry run is admitted too (sideEffects None) and refused the same way
        status_of(
            c.post(
                f"/api/v1/namespaces/{ns}/configmaps",
                params={"dryRun": "All"},
                json=cm("bad-3", {"check": "yes"}),
            ),
            403,
        )
        assert hooks.seen("deny")[-1]["dryRun"] is True


def test_user_info_is_delivered(server: ServerProcess, hooks: WebhookServer, ns: str) -> None:
    with client(server) as c:
        bind(c, ns, "alice-edit", "ClusterRole", "edit", [user("alice")])
        register(c, ns, "validating", webhook(ns, "allow-user", hooks.url("allow-user"), hooks.ca_bundle))
    with client(server, token="alice-token") as c:
        ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("from-alice")), 201)
    review = hooks.seen("allow-user")[-1]
    assert review["userInfo"]["username"] == "alice"
    assert review["userInfo"]["uid"] == "1001"
    assert set(review["userInfo"]["groups"]) == {"ml", "system:authenticated"}
    assert review["namespace"] == ns and review["name"] == "from-alice" and review["operation"] == "CREATE"


def test_rules_match_operations_and_resources(server: ServerProcess, hooks: WebhookServer, ns: str) -> None:
    rules = [
        {"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["configmaps"]},
        {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["secrets/*"]},
    ]
    with client(server) as c:
        ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("keep", {"check": "yes"})), 201)
        register(
            c, ns, "validating", webhook(ns, "deny-ops", hooks.url("deny-ops"), hooks.ca_bundle, rules=rules)
        )
        before = len(hooks.seen("deny-ops"))
        # CREATE/UPDATE of configmaps and writes of secrets themselves do not match
        ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("other")), 201)
        ok(patch(c, f"/api/v1/namespaces/{ns}/configmaps/other", {"data": {"a": "b"}}, MERGE))
        ok(c.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "s"}}), 201)
        assert len(hooks.seen("deny-ops")) == before
        # DELETE matches (the webhook path refuses everything): deletion is refused
        resp = delete(c, f"/api/v1/namespaces/{ns}/configmaps/keep")
        status_of(resp, 403)
        review = hooks.seen("deny-ops")[-1]
        assert review["operation"] == "DELETE" and review["object"] is None
        assert review["oldObject"]["metadata"]["name"] == "keep"
        ok(c.get(f"/api/v1/namespaces/{ns}/configmaps/keep"))


def test_namespace_selector_and_scope(server: ServerProcess, hooks: WebhookServer, ns: str) -> None:
    other = f"{ns}-other"
    with client(server) as c:
        hook = webhook(ns, "sel", hooks.url("sel"), hooks.ca_bundle)
        hook["namespaceSelector"] = {"matchLabels": {"webhooks": ns}}
        cluster_hook = webhook(
            ns,
            "scope",
            hooks.url("scope"),
            hooks.ca_bundle,
            rules=[
                {
                    "operations": ["CREATE"],
                    "apiGroups": ["*"],
                    "apiVersions": ["*"],
                    "resources": ["*"],
                    "scope": "Cluster",
                }
            ],
        )
        cluster_hook["namespaceSelector"] = {"matchLabels": {"webhooks": ns}}
        register(c, ns, "validating", hook, cluster_hook)
        ok(c.post("/api/v1/namespaces", json={"metadata": {"name": other, "labels": {"webhooks": ns}}}), 201)
        # the Namespace (cluster-scoped) is matched against its own labels by the Cluster-scope rule
        assert hooks.seen("scope")[-1]["object"]["metadata"]["name"] == other
        ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("unlabelled-ns")), 201)
        assert not [r for r in hooks.seen("sel") if r["namespace"] == ns]
        ok(c.post(f"/api/v1/namespaces/{other}/configmaps", json=cm("labelled-ns")), 201)
        assert hooks.seen("sel")[-1]["namespace"] == other
        # the namespaced configmap did not match the Cluster-scope rule
        assert all(r["kind"]["kind"] == "Namespace" for r in hooks.seen("scope"))
        delete(c, f"/api/v1/namespaces/{other}")


def test_failure_policy_with_the_webhook_down(server: ServerProcess, hooks: WebhookServer, ns: str) -> None:
    down = f"https://127.0.0.1:{free_port()}/nothing-listens"
    with client(server) as c:
        register(
            c, ns, "validating", webhook(ns, "down-ignore", down, hooks.ca_bundle, failurePolicy="Ignore")
        )
        ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("ignored")), 201)
        register(c, ns, "validating", webhook(ns, "down-fail", down, hooks.ca_bundle, failurePolicy="Fail"))
        body = status_of(
            c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("refused")), 500, "InternalError"
        )
        assert 'failed calling webhook "down-fail.test.codeflare.dev"' in body["message"]
        status_of(c.get(f"/api/v1/namespaces/{ns}/configmaps/refused"), 404)


def test_untrusted_certificate_and_bad_answers_are_call_failures(
    server: ServerProcess, hooks: WebhookServer, ns: str
) -> None:
    other_ca = base64.b64encode(certs.new_ca("someone-else").cert_pem).decode()
    with client(server) as c:
        register(c, ns, "validating", webhook(ns, "untrusted", hooks.url("allow"), other_ca))
        body = status_of(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("a")), 500)
        assert "untrusted.test.codeflare.dev" in body["message"]
    with client(server) as c:
        unregister(c, ns, "validating")
        register(c, ns, "validating", webhook(ns, "wronguid", hooks.url("wronguid"), hooks.ca_bundle))
        body = status_of(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("b")), 500)
        assert "response.uid" in body["message"]


def test_timeout_seconds(server: ServerProcess, hooks: WebhookServer, ns: str) -> None:
    with client(server) as c:
        register(
            c,
            ns,
            "validating",
            webhook(
                ns,
                "slow-ignore",
                hooks.url("slow-ignore"),
                hooks.ca_bundle,
                timeoutSeconds=1,
                failurePolicy="Ignore",
            ),
        )
        started = time.monotonic()
        ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("slow-but-ignored")), 201)
        assert time.monotonic() - started < 2.9  # cut off at 1 s, not the webhook's 3 s
        register(
            c,
            ns,
            "validating",
            webhook(ns, "slow-fail", hooks.url("slow-fail"), hooks.ca_bundle, timeoutSeconds=1),
        )
        body = status_of(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("too-slow")), 500)
        assert "deadline" in body["message"] and "slow-fail.test.codeflare.dev" in body["message"]


def test_service_reference_resolves_to_loopback_endpoints(
    server: ServerProcess, hooks: WebhookServer, ns: str
) -> None:
    with client(server) as c:
        if c.get("/api/v1/namespaces/webhook-svc").status_code == 404:
            ok(c.post("/api/v1/namespaces", json={"metadata": {"name": "webhook-svc"}}), 201)
            ok(
                c.post(
                    "/api/v1/namespaces/webhook-svc/services",
                    json={"metadata": {"name": "hooks"}, "spec": {"ports": [{"name": "https", "port": 443}]}},
                ),
                201,
            )
        hook = webhook(ns, "svc", None, hooks.ca_bundle)
        hook["clientConfig"]["service"] = {"namespace": "webhook-svc", "name": "hooks", "path": "/mutate-svc"}
        register(c, ns, "mutating", hook)
        # no Endpoints yet: the service cannot be reached, failurePolicy Fail refuses
        body = status_of(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("early")), 500)
        assert "no loopback endpoint" in body["message"]
        ok(
            c.post(
                "/api/v1/namespaces/webhook-svc/endpoints",
                json={
                    "metadata": {"name": "hooks"},
                    "subsets": [
                        {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": hooks.port}]}
                    ],
                },
            ),
            201,
        )
        created = ok(c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm("via-service")), 201)
        assert created["data"]["injected"] == "yes"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"clientConfig": {"url": "http://127.0.0.1:1/x"}}, "webhooks[0].clientConfig.url"),
        ({"clientConfig": {}}, "webhooks[0].clientConfig"),
        ({"sideEffects": "Some"}, "webhooks[0].sideEffects"),
        ({"timeoutSeconds": 31}, "webhooks[0].timeoutSeconds"),
        ({"failurePolicy": "Maybe"}, "webhooks[0].failurePolicy"),
        ({"name": "short"}, "webhooks[0].name"),
        ({"rules": [{"operations": ["READ"], "resources": ["pods"]}]}, "webhooks[0].rules[0].operations[0]"),
        ({"rules": "pods"}, "webhooks[0].rules"),
        ({"namespaceSelector": {"matchLabels": "x"}}, "webhooks[0].namespaceSelector.matchLabels"),
        ({"admissionReviewVersions": ["v1beta1"]}, "webhooks[0].admissionReviewVersions"),
        (
            {"clientConfig": {"url": "https://127.0.0.1:1/x", "caBundle": "%%%"}},
            "webhooks[0].clientConfig.caBundle",
        ),
    ],
)
def test_invalid_configurations_are_refused_field_by_field(
    server: ServerProcess, hooks: WebhookServer, change: dict[str, Any], field: str
) -> None:
    hook = webhook("none", "invalid", hooks.url("allow"), hooks.ca_bundle)
    hook.update(change)
    with client(server) as c:
        for kind in ("validating", "mutating"):
            body = {"metadata": {"name": "invalid-config"}, "webhooks": [hook]}
            err = status_of(c.post(f"{WEBHOOKS}/{kind}webhookconfigurations", json=body), 422, "Invalid")
            assert field in [cause["field"] for cause in err["details"]["causes"]], err


def _without_version(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
    return {**obj, "metadata": meta}


def test_a_validating_webhook_sees_exactly_the_object_stored(
    server: ServerProcess, hooks: WebhookServer, ns: str
) -> None:
    """As kube-apiserver: admission sees the object that is then stored (its uid, timestamps and
    managedFields), and a write's warnings reach the client once, whether webhooks ran or not."""
    with client(server) as c:
        register(c, ns, "validating", webhook(ns, "same", hooks.url("same"), hooks.ca_bundle))
        body = {**cm("exact"), "unknownTopLevel": 1}
        resp = c.post(f"/api/v1/namespaces/{ns}/configmaps", json=body)
        created = ok(resp, 201)
        unknown = [w for w in resp.headers.get_list("Warning") if "unknownTopLevel" in w]
        assert len(unknown) == 1, resp.headers.get_list("Warning")
        seen = hooks.seen("same")[-1]["object"]
        assert _without_version(seen) == _without_version(created)
        assert seen["metadata"]["uid"] == created["metadata"]["uid"]

        patched = ok(patch(c, f"/api/v1/namespaces/{ns}/configmaps/exact", {"data": {"k": "w"}}, MERGE))
        review = hooks.seen("same")[-1]
        assert review["operation"] == "UPDATE"
        assert _without_version(review["object"]) == _without_version(patched)
        assert review["oldObject"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]

        patched["data"]["k"] = "x"
        replaced = ok(c.put(f"/api/v1/namespaces/{ns}/configmaps/exact", json=patched))
        assert _without_version(hooks.seen("same")[-1]["object"]) == _without_version(replaced)
        assert ok(c.get(f"/api/v1/namespaces/{ns}/configmaps/exact")) == replaced
