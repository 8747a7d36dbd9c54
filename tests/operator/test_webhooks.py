"""The operator's webhooks over real HTTPS: registration with the CA bundle, readiness, and
AdmissionReviews POSTed the way the API server will post them.

Most requests go straight to the URL the operator registered, verified with the caBundle it
registered; one test goes through the embedded API server, which calls the registered webhooks on
create as kube-apiserver does.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.kube import errors, kinds
from codeflare.kube.client import Kube
from codeflare.operator.webhooks.server import CONFIGURATION_NAME, MUTATING, VALIDATING
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace, wait_for

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def operator(apiserver: ServerProcess) -> Iterator[ThreadedOperator]:
    running = ThreadedOperator(
        apiserver,
        {"queueing": {"enabled": False}, "appwrapper": {"enabled": False, "defaultQueueName": "team-queue"}},
    ).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def kube(operator: ThreadedOperator) -> Iterator[Kube]:
    with Kube(operator.connection) as client:
        yield client


def endpoint(kube: Kube, path_suffix: str) -> tuple[str, ssl.SSLContext]:
    """URL of the registered webhook whose path ends with ``path_suffix``, and an SSL context
    trusting exactly the registered caBundle."""
    for kind in (MUTATING, VALIDATING):
        for hook in kube.get(kind, CONFIGURATION_NAME)["webhooks"]:
            config = hook["clientConfig"]
            if config["url"].endswith(path_suffix):
                context = ssl.create_default_context(cadata=base64.b64decode(config["caBundle"]).decode())
                return config["url"], context
    raise AssertionError(f"no webhook registered for {path_suffix}")


def post(
    kube: Kube, path: str, obj: Obj, operation: str = "CREATE", old: Obj | None = None, user: str = "alice"
) -> Obj:
    url, context = endpoint(kube, path)
    uid = str(uuid.uuid4())
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "operation": operation,
            "namespace": obj["metadata"]["namespace"],
            "name": obj["metadata"]["name"],
            "object": obj,
            "oldObject": old,
            "userInfo": {"username": user, "uid": "42", "groups": ["system:authenticated"]},
        },
    }
    request = urllib.request.Request(url, json.dumps(review).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        response = json.loads(answer.read())["response"]
    assert response["uid"] == uid
    return dict(response)


def patch_ops(response: Obj) -> list[Obj]:
    assert response["patchType"] == "JSONPatch"
    return list(json.loads(base64.b64decode(response["patch"])))


def raycluster(enable_ingress: bool = False) -> Obj:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {
            "headGroupSpec": {
                "enableIngress": enable_ingress,
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.9"}]}},
            }
        },
    }


def appwrapper(namespace: str = "team") -> Obj:
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "team"},
        "spec": {
            "components": [
                {
                    "template": {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "p", "namespace": namespace},
                        "spec": {"containers": [{"name": "c"}]},
                    }
                }
            ]
        },
    }


def test_ready_only_with_configurations_carrying_the_serving_ca(
    operator: ThreadedOperator, kube: Kube
) -> None:
    assert operator.readyz() == (200, "ok")
    mutating = kube.get(MUTATING, CONFIGURATION_NAME)
    validating = kube.get(VALIDATING, CONFIGURATION_NAME)
    names = {h["name"] for h in mutating["webhooks"]} | {h["name"] for h in validating["webhooks"]}
    assert names == {
        "mraycluster.ray.openshift.ai",
        "vraycluster.ray.openshift.ai",
        "mrayjob.ray.openshift.ai",
        "vrayjob.ray.openshift.ai",
        "mappwrapper.workload.codeflare.dev",
        "vappwrapper.workload.codeflare.dev",
        "vclusterqueue.kb.io",
        "vcohort.kb.io",
        "vresourceflavor.kb.io",
        "vworkload.kb.io",
    }
    for hook in mutating["webhooks"] + validating["webhooks"]:
        assert hook["clientConfig"]["url"].startswith("https://127.0.0.1:")
        assert hook["failurePolicy"] == "Ignore" and hook["admissionReviewVersions"] == ["v1"]
    # Only the registered bundle verifies the server: a client trusting the system CAs is refused.
    url, _ = endpoint(kube, "/validate-ray-io-v1-raycluster")
    with pytest.raises(urllib.error.URLError):  # an untrusting client is refused the handshake
        urllib.request.urlopen(url, data=b"{}", context=ssl.create_default_context(), timeout=5)


def test_raycluster_mutation_suspends_and_injects_mtls(kube: Kube) -> None:
    response = post(kube, "/mutate-ray-io-v1-raycluster", raycluster())
    assert response["allowed"] is True
    ops = {op["path"]: op for op in patch_ops(response)}
    assert ops["/spec/suspend"]["value"] is True
    assert "/spec/headGroupSpec/template/spec/initContainers" in ops
    assert ops["/metadata/annotations"]["value"]["ray.openshift.ai/version"]


def test_raycluster_validation_accepts_and_refuses_enable_ingress(kube: Kube) -> None:
    assert post(kube, "/validate-ray-io-v1-raycluster", raycluster())["allowed"] is True
    refused = post(kube, "/validate-ray-io-v1-raycluster", raycluster(enable_ingress=True))
    assert refused["allowed"] is False
    assert refused["status"]["code"] == 403
    assert refused["status"]["message"].startswith("spec.headGroupSpec.enableIngress: must not be true")


def test_rayjob_mutation_suspends_queued_jobs(kube: Kube) -> None:
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "j", "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"entrypoint": "python -c 1"},
    }
    response = post(kube, "/mutate-ray-io-v1-rayjob", job)
    assert patch_ops(response) == [{"op": "add", "path": "/spec/suspend", "value": True}]


def test_appwrapper_mutation_adds_default_queue_and_user_labels(kube: Kube) -> None:
    response = post(kube, "/mutate-workload-codeflare-dev-v1beta2-appwrapper", appwrapper(), user="bob@corp")
    ops = {op["path"]: op for op in patch_ops(response)}
    assert ops["/metadata/labels"]["value"] == {
        "kueue.x-k8s.io/queue-name": "team-queue",
        "workload.codeflare.dev/user": "bob_corp",
        "workload.codeflare.dev/userid": "42",
    }
    assert ops["/spec/suspend"]["value"] is True


def test_appwrapper_validation_over_https(kube: Kube) -> None:
    path = "/validate-workload-codeflare-dev-v1beta2-appwrapper"
    # An update leaving the templates alone needs no access check.
    assert post(kube, path, appwrapper(), "UPDATE", old=appwrapper())["allowed"] is True
    refused = post(kube, path, appwrapper(namespace="other"), "UPDATE", old=appwrapper())
    assert refused["status"]["message"] == (
        "spec.components[0].template.metadata.namespace: "
        "must be the AppWrapper's namespace 'team', got 'other'; "
        "spec.components[0].template: cannot be changed after creation"
    )
    # On create the user's right to create each component is checked with a SubjectAccessReview:
    # alice has no RBAC (or, before the API server serves SubjectAccessReviews, it cannot be proven).
    refused = post(kube, path, appwrapper(), "CREATE")
    assert refused["allowed"] is False
    assert refused["status"]["message"].startswith(
        "spec.components[0]: user 'alice' may not create pods in namespace team"
    )


def test_not_an_admission_review_is_a_bad_request(kube: Kube) -> None:
    url, context = endpoint(kube, "/validate-ray-io-v1-raycluster")
    request = urllib.request.Request(url, b'{"kind": "Pod"}', {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, context=context, timeout=5)
    assert caught.value.code == 400


def test_through_the_api_server(kube: Kube) -> None:
    """End to end: the API server calls the registered webhooks (validation refuses, mutation suspends)."""
    ensure_namespace(kube, "team")
    with pytest.raises(errors.KubeError, match="enableIngress: must not be true"):
        kube.create(kinds.RAYCLUSTER, raycluster(enable_ingress=True))
    created = kube.create(kinds.RAYCLUSTER, raycluster())
    assert created["spec"]["suspend"] is True
    assert wait_for(
        lambda: kube.get(kinds.RAYCLUSTER, "rc", "team")["metadata"]["annotations"].get(
            "ray.openshift.ai/version"
        ),
        what="version annotation",
    )


def test_queueing_labels_are_checked_through_the_api_server(kube: Kube) -> None:
    """Kueue's job label rules (jobframework/validation.go): a bad maximum execution time is refused
    at create with the label and the rule named; the queue of a running job cannot change."""
    ensure_namespace(kube, "team")
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {
            "name": "limited",
            "namespace": "team",
            "labels": {"kueue.x-k8s.io/queue-name": "q", "kueue.x-k8s.io/max-exec-time-seconds": "ten"},
        },
        "spec": {"entrypoint": "python -c 1"},
    }
    with pytest.raises(errors.KubeError) as caught:
        kube.create(kinds.RAYJOB, job)
    assert caught.value.status == 403
    assert 'metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: "ten"' in str(caught.value)
    with pytest.raises(errors.KubeError, match="should be greater than 0"):
        kube.create(kinds.RAYJOB, {**job, "metadata": {**job["metadata"], "labels": {
            "kueue.x-k8s.io/max-exec-time-seconds": "0"}}})  # fmt: skip
    assert kube.list(kinds.RAYJOB, "team") == []  # nothing was half-created

    rc = raycluster()
    rc["metadata"]["name"] = "running"
    rc["spec"]["suspend"] = False
    del rc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]  # not queued: created running
    kube.create(kinds.RAYCLUSTER, rc)
    current = kube.get(kinds.RAYCLUSTER, "running", "team")
    current["metadata"].setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = "q"
    with pytest.raises(errors.KubeError, match=r"queue-name\]: Invalid value: \"q\": field is immutable"):
        kube.replace(kinds.RAYCLUSTER, current)
    kube.delete(kinds.RAYCLUSTER, "running", "team")
