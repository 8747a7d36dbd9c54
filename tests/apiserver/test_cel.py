"""CRD validation rules (``x-kubernetes-validations``) over HTTP, as kube-apiserver applies them.

A CRD's rules are compiled when it is written (a rule that does not compile refuses the write,
naming the rule), and every create, update, merge patch and server-side apply of its objects
is checked against them, transition rules against the stored object; a broken rule is a 422
naming the field and the message, which kubectl prints as it does for a real cluster. The
bundled LocalQueue CRD makes ``spec.clusterQueue`` immutable, as Kueue's does.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from codeflare.api.crds import crd_for
from tests.apiserver.http_support import APPLY, MERGE, client, ok, patch, status_of
from tests.support.apiserver import ServerProcess
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "cel.example.com"
GAUGES = f"/apis/{GROUP}/v1/namespaces/default/gauges"
QUEUES = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues"
RULE_PATH = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"

SPEC_RULES = [
    {
        "rule": "self.low <= self.high",
        "messageExpression": "'low (' + string(self.low) + ') must not exceed high ('"
        " + string(self.high) + ')'",
    },
    {"rule": "self.unit == oldSelf.unit", "message": "unit is immutable", "fieldPath": ".unit"},
    {"rule": "self.high - self.low <= 1000", "message": "range too wide", "reason": "FieldValueForbidden"},
]


def gauge_crd(spec_rules: list[dict[str, Any]] | None = None, plural: str = "gauges") -> dict[str, Any]:
    spec = {
        "type": "object",
        "required": ["low", "high", "unit"],
        "properties": {
            "low": {"type": "integer"},
            "high": {"type": "integer"},
            "unit": {"type": "string"},
            "samples": {"type": "array", "items": {"type": "integer"}},
        },
        "x-kubernetes-validations": SPEC_RULES if spec_rules is None else spec_rules,
    }
    kind = plural[:-1].capitalize()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


def gauge(name: str, low: int = 0, high: int = 10, unit: str = "C", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gauge",
        "metadata": {"name": name},
        "spec": {"low": low, "high": high, "unit": unit, **extra},
    }


def queue(name: str, cluster_queue: str = "cq-a") -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"clusterQueue": cluster_queue},
    }


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        ok(c.post(CRDS, json=gauge_crd()), 201)
        ok(c.post(CRDS, json=crd_for("kueue.x-k8s.io", "localqueues")), 201)
        yield c


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, field: message) of each cause, as kubectl prints them."""
    return [(c["field"], f"{c['field']}: {c['message']}") for c in body["details"]["causes"]]


# --- CRD writes ---------------------------------------------------------------------------------


def test_a_crd_whose_rule_does_not_compile_is_refused_naming_the_rule(http: httpx.Client) -> None:
    body = status_of(http.post(CRDS, json=gauge_crd([{"rule": "self.low <"}], "brokens")), 422, "Invalid")
    ((field, message),) = causes(body)
    assert field == RULE_PATH
    assert "compilation failed: ERROR: <input>:1:11: Syntax error" in message
    assert f"{RULE_PATH}: Invalid value" in body["message"]
    status_of(http.get(f"{CRDS}/brokens.{GROUP}"), 404)


def test_a_crd_update_with_a_broken_rule_is_refused_and_the_old_rules_stay(http: httpx.Client) -> None:
    crd = ok(http.get(f"{CRDS}/gauges.{GROUP}"))
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"] = [{"rule": "nosuch.thing"}]
    body = status_of(http.put(f"{CRDS}/gauges.{GROUP}", json=crd), 422, "Invalid")
    assert "undeclared reference to 'nosuch'" in causes(body)[0][1]
    status_of(http.post(GAUGES, json=gauge("still-checked", low=5, high=1)), 422, "Invalid")


def test_rules_are_dropped_from_openapi_v2_only(http: httpx.Client) -> None:
    v2 = http.get("/openapi/v2")
    assert v2.status_code == 200 and "x-kubernetes-validations" not in v2.text
    v3 = ok(http.get(f"/openapi/v3/apis/{GROUP}/v1"))
    assert "x-kubernetes-validations" in str(v3)


# --- objects --------------------------------------------------------------------------------------


def test_create_is_checked_with_message_expression_and_reason(http: httpx.Client) -> None:
    ok(http.post(GAUGES, json=gauge("fine")), 201)
    body = status_of(http.post(GAUGES, json=gauge("inverted", low=20, high=10)), 422, "Invalid")
    assert body["message"] == (
        'Gauge.cel.example.com "inverted" is invalid: '
        'spec: Invalid value: "object": low (20) must not exceed high (10)'
    )
    wide = status_of(http.post(GAUGES, json=gauge("wide", low=0, high=5000)), 422, "Invalid")
    assert wide["details"]["causes"] == [
        {"reason": "FieldValueForbidden", "message": "Forbidden: range too wide", "field": "spec"}
    ]


def test_update_patch_and_apply_are_checked_against_the_stored_object(http: httpx.Client) -> None:
    stored = ok(http.post(GAUGES, json=gauge("temp", unit="C")), 201)
    expected = ("spec.unit", 'spec.unit: Invalid value: "object": unit is immutable')

    changed = copy.deepcopy(stored)
    changed["spec"]["unit"] = "F"
    assert causes(status_of(http.put(f"{GAUGES}/temp", json=changed), 422, "Invalid")) == [expected]
    merge = patch(http, f"{GAUGES}/temp", {"spec": {"unit": "F"}}, MERGE)
    assert causes(status_of(merge, 422, "Invalid")) == [expected]
    applied = patch(http, f"{GAUGES}/temp", gauge("temp", unit="F"), APPLY, fieldManager="test", force="true")
    assert causes(status_of(applied, 422, "Invalid")) == [expected]

    ok(patch(http, f"{GAUGES}/temp", {"spec": {"high": 30}}, MERGE))
    ok(patch(http, f"{GAUGES}/temp", gauge("temp", high=40), APPLY, fieldManager="test", force="true"))
    final = ok(http.get(f"{GAUGES}/temp"))
    assert final["spec"]["unit"] == "C" and final["spec"]["high"] == 40


def test_a_rule_failing_at_runtime_is_a_422_naming_the_rule(http: httpx.Client) -> None:
    rules = [{"rule": "self.samples[0] > 0"}]
    ok(http.post(CRDS, json=gauge_crd(rules, "probes")), 201)
    path = f"/apis/{GROUP}/v1/namespaces/default/probes"
    probe = {**gauge("p"), "kind": "Probe", "spec": {"low": 0, "high": 1, "unit": "C", "samples": []}}
    body = status_of(http.post(path, json=probe), 422, "Invalid")
    assert causes(body) == [
        ("spec", 'spec: Invalid value: "object": index out of bounds: 0 evaluating rule: self.samples[0] > 0')
    ]


def test_a_rule_too_costly_for_the_object_is_refused_not_run(http: httpx.Client) -> None:
    cubic = "self.samples.all(x, self.samples.all(y, self.samples.all(z, x + y + z >= 0)))"
    ok(http.post(CRDS, json=gauge_crd([{"rule": cubic}], "sweeps")), 201)
    path = f"/apis/{GROUP}/v1/namespaces/default/sweeps"
    sweep = {**gauge("s"), "kind": "Sweep", "spec": {"low": 0, "high": 1, "unit": "C", "samples": [1] * 3000}}
    body = status_of(http.post(path, json=sweep), 422, "Invalid")
    assert "estimated cost limit exceeded" in causes(body)[0][1]
    sweep["spec"]["samples"] = [1] * 5
    ok(http.post(path, json=sweep), 201)


# --- LocalQueue.spec.clusterQueue ----------------------------------------------------------------

IMMUTABLE = ("spec.clusterQueue", 'spec.clusterQueue: Invalid value: "string": field is immutable')


def test_a_local_queue_cannot_move_to_another_cluster_queue(http: httpx.Client) -> None:
    stored = ok(http.post(QUEUES, json=queue("team")), 201)
    moved = copy.deepcopy(stored)
    moved["spec"]["clusterQueue"] = "cq-b"
    by_update = status_of(http.put(f"{QUEUES}/team", json=moved), 422, "Invalid")
    assert causes(by_update) == [IMMUTABLE]
    assert by_update["message"] == f'LocalQueue.kueue.x-k8s.io "team" is invalid: {IMMUTABLE[1]}'
    by_patch = patch(http, f"{QUEUES}/team", {"spec": {"clusterQueue": "cq-b"}}, MERGE)
    assert causes(status_of(by_patch, 422, "Invalid")) == [IMMUTABLE]
    by_apply = patch(http, f"{QUEUES}/team", queue("team", "cq-b"), APPLY, fieldManager="admin", force="true")
    assert causes(status_of(by_apply, 422, "Invalid")) == [IMMUTABLE]
    assert ok(http.get(f"{QUEUES}/team"))["spec"]["clusterQueue"] == "cq-a"


def test_other_local_queue_edits_still_succeed(http: httpx.Client) -> None:
    ok(http.post(QUEUES, json=queue("edits")), 201)
    ok(patch(http, f"{QUEUES}/edits", {"spec": {"stopPolicy": "Hold"}}, MERGE))
    applied = {**queue("edits"), "metadata": {"name": "edits", "namespace": "default", "labels": {"t": "x"}}}
    ok(patch(http, f"{QUEUES}/edits", applied, APPLY, fieldManager="admin", force="true"))
    current = ok(http.get(f"{QUEUES}/edits"))
    current["status"] = {"pendingWorkloads": 2, "admittedWorkloads": 1}
    ok(http.put(f"{QUEUES}/edits/status", json=current))
    final = ok(http.get(f"{QUEUES}/edits"))
    assert final["spec"] == {"clusterQueue": "cq-a", "stopPolicy": "Hold"}
    assert final["metadata"]["labels"] == {"t": "x"} and final["status"]["pendingWorkloads"] == 2


@pytest.mark.kubectl
@NEEDS_KUBECTL[1]
def test_kubectl_prints_the_rule_message(http: httpx.Client, apiserver: ServerProcess, tmp_path: Any) -> None:
    kubectl = Kubectl(apiserver, tmp_path)
    kubectl.run("apply", "-f", kubectl.write("q.yaml", queue("by-kubectl")))
    moved = kubectl.run("apply", "-f", kubectl.write("q2.yaml", queue("by-kubectl", "cq-b")), check=False)
    assert moved.returncode != 0
    assert f'The LocalQueue "by-kubectl" is invalid: {IMMUTABLE[1]}' in moved.stderr
