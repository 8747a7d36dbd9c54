"""CRD version conversion through a webhook, against a real server process and real clients.

The CRD under test stores v2 (``spec.dimension``) and serves the deprecated v1 (``spec.size``);
the conversion webhook in the test (:mod:`tests.apiserver.conversion_support`) renames the field.
Cases follow kube-apiserver's webhook converter (apiextensions-apiserver
pkg/apiserver/conversion/webhook_converter.go: the response checks; test/integration/
conversion_test.go: read/list/watch/write through every served version, a failing webhook).
Where we differ: a watch event whose conversion fails ends the stream with an ERROR event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

from tests.apiserver.conversion_support import (
    GROUP,
    SERVICE_NAME,
    SERVICE_NS,
    ConversionWebhook,
    widget_crd,
)
from tests.apiserver.http_support import client, ok, status_of, watch_lines
from tests.support.apiserver import ServerProcess
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl
from tests.support.polling import wait_for

NS = "default"
V1, V2 = f"/apis/{GROUP}/v1/namespaces/{NS}/widgets", f"/apis/{GROUP}/v2/namespaces/{NS}/widgets"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConversionWebhook]:
    srv = ConversionWebhook(tmp_path_factory.mktemp("conv-certs")).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def webhook(hook: ConversionWebhook) -> Iterator[ConversionWebhook]:
    hook.mode = "ok"
    yield hook
    hook.mode = "ok"


def _serve(c: httpx.Client, crd: dict[str, Any]) -> None:
    ok(c.post(CRDS, json=crd))
    plural = crd["spec"]["names"]["plural"]
    wait_for(lambda: c.get(f"/apis/{GROUP}/v1/{plural}").status_code == 200, 10, what=f"{plural} served")


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess, hook: ConversionWebhook) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        _serve(c, widget_crd("widgets", {"url": hook.url, "caBundle": hook.ca_bundle}))
        yield c


def widget(name: str, size: int, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name, **meta},
        "spec": {"size": size},
    }


def test_created_in_v1_reads_in_both_versions_and_is_stored_at_v2(
    http: httpx.Client, webhook: ConversionWebhook
) -> None:
    created = ok(http.post(V1, json=widget("w-create", 3)))
    assert created["apiVersion"] == f"{GROUP}/v1" and created["spec"] == {"size": 3}
    assert ok(http.get(f"{V2}/w-create"))["spec"] == {"dimension": 3}
    assert ok(http.get(f"{V1}/w-create"))["spec"] == {"size": 3}
    # stored at v2: a v2 read needs no webhook at all, so it works while the webhook fails
    webhook.mode = "failed"
    before = len(webhook.reviews)
    assert ok(http.get(f"{V2}/w-create"))["spec"] == {"dimension": 3}
    assert len(webhook.reviews) == before


def test_stored_versions_name_the_storage_version(http: httpx.Client) -> None:
    crd = ok(http.get(f"{CRDS}/widgets.{GROUP}"))
    assert crd["status"]["storedVersions"] == ["v2"]


def test_update_in_v1_round_trips_through_v2(http: httpx.Client, webhook: ConversionWebhook) -> None:
    ok(
        http.post(
            V2,
            json={
                "apiVersion": f"{GROUP}/v2",
                "kind": "Widget",
                "metadata": {"name": "w-upd"},
                "spec": {"dimension": 1},
            },
        )
    )
    current = ok(http.get(f"{V1}/w-upd"))
    current["spec"]["size"] = 7
    updated = ok(http.put(f"{V1}/w-upd", json=current))
    assert updated["spec"] == {"size": 7} and updated["metadata"]["generation"] == 2
    assert ok(http.get(f"{V2}/w-upd"))["spec"] == {"dimension": 7}
    patched = ok(
        http.patch(
            f"{V1}/w-upd",
            json={"spec": {"size": 8}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
    )
    assert patched["spec"] == {"size": 8}
    assert ok(http.get(f"{V2}/w-upd"))["spec"] == {"dimension": 8}


def test_a_list_is_converted_in_one_review(http: httpx.Client, webhook: ConversionWebhook) -> None:
    for i in range(5):
        ok(http.post(V1, json=widget(f"w-list-{i}", i, labels={"batch": "list"})))
    before = len(webhook.reviews)
    items = ok(http.get(V1, params={"labelSelector": "batch=list"}))["items"]
    assert [o["spec"] for o in items] == [{"size": i} for i in range(5)]
    assert all(o["apiVersion"] == f"{GROUP}/v1" for o in items)
    assert len(webhook.reviews) == before + 1
    assert len(webhook.reviews[-1]["objects"]) == 5


def test_watch_events_are_converted(http: httpx.Client, webhook: ConversionWebhook) -> None:
    rv = ok(http.get(V1))["metadata"]["resourceVersion"]
    ok(
        http.post(
            V2,
            json={
                "apiVersion": f"{GROUP}/v2",
                "kind": "Widget",
                "metadata": {"name": "w-watch"},
                "spec": {"dimension": 4},
            },
        )
    )
    params = {
        "watch": "true",
        "resourceVersion": rv,
        "timeoutSeconds": "5",
        "fieldSelector": "metadata.name=w-watch",
    }
    with http.stream("GET", V1, params=params) as resp:
        event = next(watch_lines(resp))
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == f"{GROUP}/v1" and event["object"]["spec"] == {"size": 4}


def test_a_failing_conversion_ends_a_watch_with_an_error_event(
    http: httpx.Client, webhook: ConversionWebhook
) -> None:
    rv = ok(http.get(V2))["metadata"]["resourceVersion"]
    webhook.mode = "failed"
    body = {
        "apiVersion": f"{GROUP}/v2",
        "kind": "Widget",
        "metadata": {"name": "w-watch-fail"},
        "spec": {"dimension": 1},
    }
    ok(http.post(V2, json=body))
    params = {
        "watch": "true",
        "resourceVersion": rv,
        "timeoutSeconds": "5",
        "fieldSelector": "metadata.name=w-watch-fail",
    }
    with http.stream("GET", V1, params=params) as resp:
        events = list(watch_lines(resp))
    assert [e["type"] for e in events] == ["ERROR"]
    assert events[0]["object"]["code"] == 500 and "size must be even" in events[0]["object"]["message"]


# (webhook mode, what the Status message says) - webhook_converter.go's response checks
FAILURES = [
    ("failed", "size must be even"),
    ("wronguid", "expected response.uid="),
    ("rename", "must have the same name"),
    ("newuid", "must have the same uid"),
    ("wrongversion", "invalid apiVersion"),
    ("missing", "returned 0 objects, expected 1"),
    ("notjson", "the response is not JSON"),
]


@pytest.mark.parametrize(("mode", "why"), FAILURES)
def test_a_failing_webhook_is_a_500_and_writes_nothing(
    http: httpx.Client, webhook: ConversionWebhook, mode: str, why: str
) -> None:
    name = f"w-fail-{mode}"
    ok(
        http.post(
            V2,
            json={
                "apiVersion": f"{GROUP}/v2",
                "kind": "Widget",
                "metadata": {"name": name},
                "spec": {"dimension": 2},
            },
        )
    )
    rv = ok(http.get(f"{V2}/{name}"))["metadata"]["resourceVersion"]
    webhook.mode = mode
    body = status_of(http.get(f"{V1}/{name}"), 500, "InternalError")
    assert body["message"].startswith(
        f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind=Widget failed: "
    )
    assert why in body["message"]
    status_of(http.get(V1), 500, "InternalError")
    write = http.patch(
        f"{V1}/{name}", json={"spec": {"size": 5}}, headers={"Content-Type": "application/merge-patch+json"}
    )
    status_of(write, 500, "InternalError")
    status_of(http.post(V1, json=widget(f"{name}-new", 1)), 500, "InternalError")
    webhook.mode = "ok"
    after = ok(http.get(f"{V2}/{name}"))
    assert after["metadata"]["resourceVersion"] == rv and after["spec"] == {"dimension": 2}
    assert http.get(f"{V2}/{name}-new").status_code == 404


def test_unreachable_webhook_is_a_500(apiserver: ServerProcess, hook: ConversionWebhook) -> None:
    with client(apiserver) as c:
        _serve(c, widget_crd("gadgets", {"url": "https://127.0.0.1:1/convert", "caBundle": hook.ca_bundle}))
        path = f"/apis/{GROUP}/v1/namespaces/{NS}/gadgets"
        body = status_of(c.post(path, json=dict(widget("g", 1), kind="Gadget")), 500, "InternalError")
        assert "conversion webhook for conv.example.com/v2, Kind=Gadget failed: Post " in body["message"]
        assert ok(c.get(f"/apis/{GROUP}/v2/namespaces/{NS}/gadgets"))["items"] == []


def test_an_untrusted_certificate_is_a_500(apiserver: ServerProcess, hook: ConversionWebhook) -> None:
    with client(apiserver) as c:
        _serve(c, widget_crd("sprockets", {"url": hook.url}))  # no caBundle: system roots only
        body = status_of(
            c.post(f"/apis/{GROUP}/v1/namespaces/{NS}/sprockets", json=dict(widget("s", 1), kind="Sprocket")),
            500,
        )
        assert "CERTIFICATE_VERIFY_FAILED" in body["message"]


def test_webhook_may_change_only_labels_and_annotations(
    http: httpx.Client, webhook: ConversionWebhook
) -> None:
    ok(
        http.post(
            V2,
            json={
                "apiVersion": f"{GROUP}/v2",
                "kind": "Widget",
                "metadata": {"name": "w-meta"},
                "spec": {"dimension": 6},
            },
        )
    )
    webhook.mode = "metadata"
    seen = ok(http.get(f"{V1}/w-meta"))
    assert seen["metadata"]["labels"] == {"converted": "yes"}
    assert seen["metadata"]["generation"] == 1


def test_service_client_config_resolves_to_the_loopback_port(
    apiserver: ServerProcess, hook: ConversionWebhook
) -> None:
    with client(apiserver) as c:
        if c.get(f"/api/v1/namespaces/{SERVICE_NS}").status_code == 404:
            ok(c.post("/api/v1/namespaces", json={"metadata": {"name": SERVICE_NS}}))
        svc = {
            "metadata": {
                "name": SERVICE_NAME,
                "annotations": {"codeflare.dev/loopback-port": str(hook.port)},
            },
            "spec": {"ports": [{"port": 443}]},
        }
        ok(c.post(f"/api/v1/namespaces/{SERVICE_NS}/services", json=svc))
        ref = {
            "service": {"namespace": SERVICE_NS, "name": SERVICE_NAME, "path": "/convert"},
            "caBundle": hook.ca_bundle,
        }
        _serve(c, widget_crd("doodads", ref))
        path = f"/apis/{GROUP}/v1/namespaces/{NS}/doodads"
        ok(c.post(path, json=dict(widget("d", 5), kind="Doodad")))
        assert ok(c.get(f"/apis/{GROUP}/v2/namespaces/{NS}/doodads/d"))["spec"] == {"dimension": 5}


def test_deprecated_version_warns_on_every_request(http: httpx.Client, apiserver: ServerProcess) -> None:
    expected = f'299 - "{GROUP}/v1 Widget is deprecated"'
    ok(http.post(V1, json=widget("w-warn", 1)))
    for resp in (http.get(V1), http.get(f"{V1}/w-warn"), http.post(V1, json=widget("w-warn-2", 1))):
        assert resp.headers.get_list("Warning") == [expected]
    with http.stream("GET", V1, params={"watch": "true", "timeoutSeconds": "1"}) as resp:
        assert resp.headers.get_list("Warning") == [expected]
    assert http.get(V2).headers.get_list("Warning") == []
    with client(apiserver) as c:
        _serve(c, widget_crd("gizmos", None, warning="use v2, v1 goes away in 2.0"))
        resp = c.get(f"/apis/{GROUP}/v1/gizmos")
        assert resp.headers.get_list("Warning") == ['299 - "use v2, v1 goes away in 2.0"']


def test_strategy_none_rewrites_the_api_version_only(apiserver: ServerProcess) -> None:
    with client(apiserver) as c:
        _serve(c, widget_crd("tinkers", None))
        path = f"/apis/{GROUP}/v1/namespaces/{NS}/tinkers"
        ok(c.post(path, json=dict(widget("t", 2), kind="Tinker", spec={"size": 2})))
        seen = ok(c.get(f"/apis/{GROUP}/v2/namespaces/{NS}/tinkers/t"))
        assert seen["apiVersion"] == f"{GROUP}/v2" and seen["kind"] == "Tinker"


# (spec.conversion, the field the 422 names) - apiextensions validation.go ValidateCustomResourceConversion
BAD_CONVERSIONS = [
    ({"strategy": "Magic"}, "spec.conversion.strategy"),
    ({"strategy": "Webhook"}, "spec.conversion.webhook"),
    ({"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}}, "spec.conversion.webhook"),
    (
        {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}},
        "spec.conversion.webhook.clientConfig",
    ),
    (
        {
            "strategy": "Webhook",
            "webhook": {"clientConfig": {"url": "https://x/"}, "conversionReviewVersions": ["v7"]},
        },
        "spec.conversion.webhook.conversionReviewVersions",
    ),
    (
        {
            "strategy": "Webhook",
            "webhook": {"clientConfig": {"url": "http://x/"}, "conversionReviewVersions": ["v1"]},
        },
        "spec.conversion.webhook.clientConfig.url",
    ),
    (
        {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"url": "https://x/", "service": {"name": "a", "namespace": "b"}},
                "conversionReviewVersions": ["v1"],
            },
        },
        "spec.conversion.webhook.clientConfig",
    ),
]


@pytest.mark.parametrize(("conversion", "field"), BAD_CONVERSIONS)
def test_bad_conversion_spec_is_refused(http: httpx.Client, conversion: dict[str, Any], field: str) -> None:
    crd = widget_crd("badthings", None)
    crd["spec"]["conversion"] = conversion
    body = status_of(http.post(CRDS, json=crd), 422, "Invalid")
    assert field in [c["field"] for c in body["details"]["causes"]], body


def test_official_client_reads_both_versions(
    apiserver: ServerProcess, http: httpx.Client, webhook: ConversionWebhook
) -> None:
    api = k8s_config.new_client_from_config(str(apiserver.kubeconfig))
    try:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object(
            GROUP,
            "v2",
            NS,
            "widgets",
            {
                "apiVersion": f"{GROUP}/v2",
                "kind": "Widget",
                "metadata": {"name": "w-client"},
                "spec": {"dimension": 9},
            },
        )
        seen: Any = custom.get_namespaced_custom_object(GROUP, "v1", NS, "widgets", "w-client")
        assert seen["spec"] == {"size": 9}
        listing: Any = custom.list_namespaced_custom_object(GROUP, "v1", NS, "widgets")
        listed = listing["items"]
        assert {"size": 9} in [o["spec"] for o in listed]
        webhook.mode = "failed"
        with pytest.raises(ApiException) as err:
            custom.get_namespaced_custom_object(GROUP, "v1", NS, "widgets", "w-client")
        assert err.value.status == 500 and "size must be even" in json.loads(str(err.value.body))["message"]
    finally:
        api.close()


@NEEDS_KUBECTL[0]
@NEEDS_KUBECTL[1]
def test_kubectl_gets_each_version_and_prints_the_warning(
    apiserver: ServerProcess,
    http: httpx.Client,
    webhook: ConversionWebhook,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    kubectl = Kubectl(apiserver, tmp_path_factory.mktemp("kubectl-conv"))
    ok(http.post(V1, json=widget("w-kubectl", 11)))
    v1 = kubectl.run("get", f"widgets.v1.{GROUP}", "w-kubectl", "-n", NS, "-o", "json")
    assert json.loads(v1.stdout)["spec"] == {"size": 11}
    assert f"Warning: {GROUP}/v1 Widget is deprecated" in v1.stderr
    v2 = kubectl.run("get", f"widgets.v2.{GROUP}", "w-kubectl", "-n", NS, "-o", "json")
    assert json.loads(v2.stdout)["spec"] == {"dimension": 11}
    assert "deprecated" not in v2.stderr
