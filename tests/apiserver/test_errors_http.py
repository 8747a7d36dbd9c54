"""Point 13: every error is a Kubernetes Status with the right code and reason.

400 for malformed bodies and queries, 404, 405, 409 AlreadyExists and Conflict, 410 (watch
history), 415 for unsupported patch types and 422 naming each bad field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.apiserver.http_support import JSON_PATCH, MERGE, client, cm, ok, patch, status_of
from tests.support.apiserver import ServerProcess

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver) as c:
        ok(c.post(CMS, json=cm("target")), 201)
        yield c


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"", "application/json"),
        (b"[1, 2]", "application/json"),
        (b'"a string"', "application/json"),
        (b"null", "application/json"),
        (b"\xff\xfe\x00", "application/json"),
        (b"key: [unclosed", "application/yaml"),
        (b'{"kind": "Secret", "metadata": {"name": "x"}}', "application/json"),
        (b'{"apiVersion": "v2", "metadata": {"name": "x"}}', "application/json"),
        (b'{"metadata": "not-an-object"}', "application/json"),
        (b'{"metadata": {"name": "x", "namespace": "other"}}', "application/json"),
        (b'{"a":' * 5000 + b"1" + b"}" * 5000, "application/json"),
        (b'{"metadata": {"name": "nan"}, "data": {"a": NaN}}', "application/json"),
        (b'{"metadata": {"name": "inf"}, "n": 1e999}', "application/json"),
        (b'{"metadata": {"name": "sur"}, "data": {"a": "\\ud800"}}', "application/json"),
        (b'{"metadata": {"name": "deep"}, "data": ' + b"[" * 150 + b"]" * 150 + b"}", "application/json"),
        (b"metadata: {name: selfref}\ndata: &x [*x]", "application/yaml"),
        (
            b"a: &a [1,1,1,1,1,1,1,1,1,1]\n"
            + b"".join(
                b"%c: &%c [%s]\n" % (c, c, b",".join([b"*%c" % (c - 1)] * 10)) for c in range(98, 106)
            ),
            "application/yaml",
        ),
    ],
)
def test_malformed_create_bodies_are_400(http: httpx.Client, body: bytes, content_type: str) -> None:
    status_of(http.post(CMS, content=body, headers={"Content-Type": content_type}), 400, "BadRequest")


PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}


def test_protobuf_body_of_a_kind_not_decoded_is_415(http: httpx.Client) -> None:
    ingresses = "/apis/networking.k8s.io/v1/namespaces/default/ingresses"
    status_of(http.post(ingresses, content=b"k8s\x00", headers=PROTOBUF), 415, "UnsupportedMediaType")


def test_protobuf_envelope_naming_no_kind_is_400(http: httpx.Client) -> None:
    status_of(http.post(CMS, content=b"k8s\x00", headers=PROTOBUF), 400, "BadRequest")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"{CMS}/missing"),
        ("GET", "/api/v1/nonsense"),
        ("GET", "/apis/nogroup.example.com/v1/things"),
        ("GET", "/api/v9/pods"),
        ("GET", "/api/v1/namespaces/default/configmaps/target/nosuchsub"),
        ("GET", "/api/v1/namespaces/default/nodes/n"),
        ("GET", "/nowhere"),
        ("PUT", f"{CMS}/missing"),
        ("DELETE", f"{CMS}/missing"),
        ("POST", "/api/v1/namespaces/missing-ns/configmaps"),
    ],
)
def test_not_found(http: httpx.Client, method: str, path: str) -> None:
    resp = http.request(method, path, json=cm("missing"))
    status_of(resp, 404, "NotFound")


def test_not_found_names_the_object(http: httpx.Client) -> None:
    body = status_of(http.get(f"{CMS}/missing"), 404, "NotFound")
    assert body["details"] == {"name": "missing", "kind": "configmaps"}
    assert body["message"] == 'configmaps "missing" not found'


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", f"{CMS}/target"),
        ("PUT", CMS),
        ("PATCH", CMS),
        ("POST", "/api/v1"),
        ("DELETE", "/apis"),
        ("PUT", "/version"),
        ("OPTIONS", CMS),
    ],
)
def test_method_not_allowed(http: httpx.Client, method: str, path: str) -> None:
    resp = http.request(method, path, content=b"{}", headers={"Content-Type": "application/json"})
    status_of(resp, 405, "MethodNotAllowed")


def test_already_exists_and_conflict(http: httpx.Client) -> None:
    status_of(http.post(CMS, json=cm("target")), 409, "AlreadyExists")
    current = ok(http.get(f"{CMS}/target"))
    current["metadata"]["resourceVersion"] = "1"
    status_of(http.put(f"{CMS}/target", json=current), 409, "Conflict")


def test_bad_resource_version_on_watch_is_400(http: httpx.Client) -> None:
    resp = http.get(CMS, params={"watch": "1", "resourceVersion": "abc"})
    status_of(resp, 400, "BadRequest")


@pytest.mark.parametrize("content_type", ["application/octet-stream", "text/html", "multipart/form-data"])
def test_unsupported_patch_media_type_is_415(http: httpx.Client, content_type: str) -> None:
    status_of(patch(http, f"{CMS}/target", b"{}", content_type), 415, "UnsupportedMediaType")


def test_malformed_patches_are_400(http: httpx.Client) -> None:
    status_of(patch(http, f"{CMS}/target", b"{broken", MERGE), 400, "BadRequest")
    status_of(patch(http, f"{CMS}/target", {"not": "a list"}, JSON_PATCH), 400, "BadRequest")


def test_invalid_names_each_bad_field(http: httpx.Client) -> None:
    body = {
        "metadata": {
            "name": "UPPER",
            "labels": {"bad key": "v", "good": "bad value!"},
            "annotations": {"also bad!": "x"},
            "finalizers": ["no slash allowed here"],
        }
    }
    status = status_of(http.post(CMS, json=body), 422, "Invalid")
    fields = {c["field"] for c in status["details"]["causes"]}
    assert "metadata.name" in fields
    assert any(f.startswith("metadata.labels") for f in fields)
    assert any(f.startswith("metadata.annotations") for f in fields)
    assert any(f.startswith("metadata.finalizers") for f in fields)
    assert len(status["details"]["causes"]) >= 5
    assert status["details"]["kind"] == "ConfigMap" and status["details"]["name"] == "UPPER"
    assert 'ConfigMap "UPPER" is invalid' in status["message"]


@pytest.mark.parametrize(
    "params",
    [
        {"labelSelector": "a in (b"},
        {"fieldSelector": "spec.nothing=1"},
        {"limit": "x"},
        {"continue": "%%%"},
        {"timeoutSeconds": "-5", "watch": "1"},
        {"watch": "maybe"},
        {"dryRun": "Some"},
        {"fieldValidation": "Loose"},
    ],
)
def test_bad_query_parameters_are_400(http: httpx.Client, params: dict[str, str]) -> None:
    status_of(http.get(CMS, params=params), 400, "BadRequest")


def test_too_large_body_is_413(http: httpx.Client) -> None:
    big = json.dumps(cm("big", {"k": "v" * (4 * 1024 * 1024)}))
    resp = http.post(CMS, content=big, headers={"Content-Type": "application/json"})
    status_of(resp, 413)


def test_errors_carry_json_content_type(http: httpx.Client) -> None:
    resp = http.get(f"{CMS}/missing")
    assert resp.headers["Content-Type"].startswith("application/json")


def test_a_long_url_is_served_as_kube_apiserver_serves_it(http: httpx.Client) -> None:
    """A 9,000-character URL (within Go's 1 MiB header limit) is an ordinary request: a list with
    a long selector, a Status 404 for a long path (aiohttp's 8,190 limit answered plain text)."""
    selector = "app in (" + ",".join(f"v{i}" for i in range(1700)) + ")"
    assert len(selector) > 9000
    listed = ok(http.get(CMS, params={"labelSelector": selector}))
    assert listed["kind"] == "ConfigMapList"
    status = status_of(http.get(f"{CMS}/{'x' * 9000}"), 404, "NotFound")
    assert status["details"]["name"] == "x" * 9000


def test_unsupported_body_media_types_on_writes_are_415(http: httpx.Client) -> None:
    """kube-apiserver's NegotiateInputSerializer: another media type is 415 naming the accepted
    ones; no Content-Type at all is taken as its first, JSON."""
    body = json.dumps(cm("typed")).encode()
    for content_type in ("text/plain", "text/yaml", "application/xml", "multipart/form-data"):
        status = status_of(http.post(CMS, content=body, headers={"Content-Type": content_type}), 415)
        assert status["reason"] == "UnsupportedMediaType"
        assert status["message"] == (
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml, application/vnd.kubernetes.protobuf"
        )
        put = http.put(f"{CMS}/target", content=body, headers={"Content-Type": content_type})
        status_of(put, 415, "UnsupportedMediaType")
    bare = http.build_request("POST", CMS, content=body)
    assert "Content-Type" not in bare.headers
    assert ok(http.send(bare), 201)["metadata"]["name"] == "typed"
