"""Point 13, hostile input: hypothesis throws malformed and hostile bodies, paths and query strings
at a live server. Every answer must be below 500, the server must stay up, and the stored data
(a full dump, including the global resourceVersion) must be unchanged afterwards.

Writes that could succeed are sent with ``dryRun=All`` or with bodies that cannot decode, so any
change to the dump means a request mutated state it should not have touched.
"""

from __future__ import annotations

import json
import os
import posixpath
import urllib.parse
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.apiserver.http_support import client, cm, ok
from tests.support.apiserver import ServerProcess

GROUP = "fuzz.example.com"
SEEDS = {
    "/api/v1/namespaces/default/configmaps": cm("seed-cm", {"k": "v"}, labels={"a": "b"}),
    "/api/v1/namespaces/default/pods": {
        "metadata": {"name": "seed-pod"},
        "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}]},
    },
    f"/apis/{GROUP}/v1/namespaces/default/fuzzes": {
        "metadata": {"name": "seed-cr"},
        "spec": {"n": 1, "s": "x"},
    },
}
DUMP_PATHS = [
    "/api/v1/namespaces",
    "/api/v1/configmaps",
    "/api/v1/pods",
    "/api/v1/secrets",
    "/apis/apps/v1/deployments",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    f"/apis/{GROUP}/v1/fuzzes",
]
SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    database=None,
)

SEGMENTS = st.sampled_from(
    [
        "api",
        "apis",
        "v1",
        "namespaces",
        "default",
        "configmaps",
        "pods",
        "status",
        "scale",
        "seed-cm",
        "seed-pod",
        "fuzzes",
        GROUP,
        "apps",
        "deployments",
        "..",
        ".",
        "%00",
        "%2F",
        "nodes",
        "watch",
        "finalize",
        "kube-system",
        "seed-cr",
        "openapi",
        "v2",
        "v3",
        "version",
        "healthz",
    ]
) | st.text(min_size=0, max_size=12)
QUERY_KEYS = st.sampled_from(
    [
        "labelSelector",
        "fieldSelector",
        "limit",
        "continue",
        "resourceVersion",
        "watch",
        "allowWatchBookmarks",
        "fieldManager",
        "force",
        "propagationPolicy",
        "includeObject",
        "sendInitialEvents",
        "fieldValidation",
        "resourceVersionMatch",
        "orphanDependents",
        "gracePeriodSeconds",
    ]
) | st.text(max_size=8)
QUERY_VALUES = st.sampled_from(
    [
        "",
        "true",
        "0",
        "-1",
        "99999999999999999999",
        "a=b",
        "a in (b",
        "!x",
        "metadata.name=seed-cm",
        "status.phase!=Running",
        "Strict",
        "Orphan",
        "Table",
        "Bogus",
        "x" * 300,
    ]
) | st.text(max_size=20)
CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/yaml",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "text/plain",
        "",
        "application/vnd.kubernetes.protobuf",
        "application/json; charset=utf-16",
        "multipart/form-data; boundary=x",
    ]
)
JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "metadata",
                    "name",
                    "spec",
                    "status",
                    "data",
                    "labels",
                    "op",
                    "path",
                    "value",
                    "from",
                    "containers",
                    "env",
                    "$patch",
                    "$retainKeys",
                    "$setElementOrder/containers",
                    "apiVersion",
                    "kind",
                    "finalizers",
                    "ownerReferences",
                    "managedFields",
                    "resourceVersion",
                    "generateName",
                    "namespace",
                    "n",
                    "s",
                    "uid",
                ]
            )
            | st.text(max_size=8),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)
RAW_BODIES = st.sampled_from(
    [
        b"{",
        b"[",
        b"NaN",
        b"Infinity",
        b"\xff\xfe",
        b"\x00" * 16,
        b"- - -\n:",
        b"!!python/object:os.system ls",
        b"&a [*a, *a]",
        b'{"a": 1e999999}',
        b"[" * 3000 + b"]" * 3000,
        b"{" + b'"a":{' * 2000 + b"}" * 2001,
        b"a: &x [*x]",
        b"---\n---\n",
    ]
) | st.binary(max_size=64)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path_factory.mktemp("fuzz")).start()
    try:
        with client(proc) as c:
            crd = {
                "metadata": {"name": f"fuzzes.{GROUP}"},
                "spec": {
                    "group": GROUP,
                    "scope": "Namespaced",
                    "names": {"plural": "fuzzes", "kind": "Fuzz"},
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": True,
                            "subresources": {"status": {}},
                            "schema": {
                                "openAPIV3Schema": {
                                    "type": "object",
                                    "properties": {
                                        "spec": {
                                            "type": "object",
                                            "properties": {
                                                "n": {"type": "integer", "minimum": 0},
                                                "s": {"type": "string", "pattern": "^[a-z]+$"},
                                                "free": {"x-kubernetes-preserve-unknown-fields": True},
                                                "ios": {"x-kubernetes-int-or-string": True},
                                            },
                                        }
                                    },
                                }
                            },
                        }
                    ],
                },
            }
            ok(c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 201)
            for path, body in SEEDS.items():
                ok(c.post(path, json=body), 201)
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with client(server, timeout=10) as c:
        yield c


def dump(http: httpx.Client) -> dict[str, Any]:
    return {path: ok(http.get(path)) for path in DUMP_PATHS}


@pytest.fixture(scope="module")
def before(http: httpx.Client) -> dict[str, Any]:
    return dump(http)


def check(resp: httpx.Response) -> None:
    assert resp.status_code < 500, (
        f"{resp.request.method} {resp.request.url} -> {resp.status_code}: {resp.text}"
    )


@SETTINGS
@given(
    method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]),
    segments=st.lists(SEGMENTS, max_size=8),
    query=st.lists(st.tuples(QUERY_KEYS, QUERY_VALUES), max_size=4),
    body=RAW_BODIES,
    content_type=CONTENT_TYPES,
)
def test_hostile_paths_and_queries(
    http: httpx.Client,
    before: dict[str, Any],
    method: str,
    segments: list[str],
    query: list[tuple[str, str]],
    body: bytes,
    content_type: str,
) -> None:
    path = "/" + "/".join(urllib.parse.quote(s, safe="%:@!$&'()*+,;=") for s in segments).lstrip("/")
    params = [("timeoutSeconds", "1"), *query]  # a fuzzed watch must end
    if method != "GET":
        # never a decodable body (invalid UTF-8 up front; a bare "{" prefix could meet a fuzzed
        # "}" and make "{}", which is valid DeleteOptions): a write must not succeed
        body = b"\xff{" + body
    resp = http.request(
        method,
        path,
        params=params,
        content=body if method not in ("GET", "HEAD") else None,
        headers={"Content-Type": content_type},
    )
    check(resp)
    # the client resolves "." and ".." segments (RFC 3986) before sending, as the server sees it
    health = posixpath.normpath(path).strip("/").split("/")[0] in ("healthz", "livez", "readyz")
    if method not in ("GET", "HEAD") and not health:
        assert resp.status_code >= 400, f"{method} {path} -> {resp.status_code}: {resp.text}"


@SETTINGS
@given(
    target=st.sampled_from(sorted(SEEDS)),
    item=st.booleans(),
    sub=st.sampled_from(["", "status", "scale"]),
    method=st.sampled_from(["POST", "PUT", "PATCH", "DELETE"]),
    content_type=CONTENT_TYPES,
    body=JSON_VALUES,
    extra=st.lists(st.tuples(QUERY_KEYS, QUERY_VALUES), max_size=2),
)
def test_hostile_json_bodies_in_dry_run(
    http: httpx.Client,
    before: dict[str, Any],
    target: str,
    item: bool,
    sub: str,
    method: str,
    content_type: str,
    body: Any,
    extra: list[tuple[str, str]],
) -> None:
    name = SEEDS[target]["metadata"]["name"]
    path = f"{target}/{name}" + (f"/{sub}" if sub else "") if item else target
    if method == "DELETE" and not item:
        return  # deletecollection with a valid body would delete for real without dryRun in the body
    params = [("dryRun", "All"), ("fieldManager", "fuzz"), *[(k, v) for k, v in extra if k != "dryRun"]]
    resp = http.request(
        method, path, params=params, content=json.dumps(body), headers={"Content-Type": content_type}
    )
    check(resp)


@SETTINGS
@given(body=JSON_VALUES, content_type=st.sampled_from(["application/json", "application/yaml"]))
def test_hostile_objects_with_invalid_names_are_rejected(
    http: httpx.Client, before: dict[str, Any], body: Any, content_type: str
) -> None:
    obj = body if isinstance(body, dict) else {"spec": body}
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    obj = {**obj, "metadata": {**meta, "name": "Invalid_Name!", "generateName": None}}
    for path in SEEDS:
        resp = http.post(path, content=json.dumps(obj), headers={"Content-Type": content_type})
        check(resp)
        assert 400 <= resp.status_code < 500, resp.text


def test_server_survived_and_data_is_unchanged(
    server: ServerProcess, http: httpx.Client, before: dict[str, Any]
) -> None:
    assert server.proc is not None and server.proc.poll() is None
    assert http.get("/healthz").status_code == 200
    after = dump(http)
    for path in DUMP_PATHS:
        assert after[path] == before[path], f"{path} changed"
    assert "InternalError" not in (server.state_dir / "server.log").read_text(errors="replace")
