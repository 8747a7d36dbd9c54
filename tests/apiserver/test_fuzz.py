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
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.apiserver import schema_bodies
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


# --- Issue 15: bodies drawn from each kind's schema -----------------------------------------------
# For every built-in kind the server serves (read from its discovery and its /openapi/v3), a
# mistyped body gets a 4xx naming the field; well-typed bodies written for real leave every kind
# listable by the official typed client in every namespace; the Kueue, Ray and AppWrapper CRDs
# answer fuzzed bodies below 500. Bounded for CI: BUILTIN_EXAMPLES (default 120) per test.

BUILTIN_SETTINGS = settings(
    max_examples=int(os.environ.get("BUILTIN_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
CRD_FILES = Path(__file__).resolve().parents[2] / "src" / "codeflare" / "api" / "crds"


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    schema: dict[str, Any]

    def collection(self, namespace: str = "default") -> str:
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return (
            f"{prefix}/namespaces/{namespace}/{self.plural}" if self.namespaced else f"{prefix}/{self.plural}"
        )


def served_kinds(c: httpx.Client, custom: bool) -> list[Kind]:
    """Every stored kind the server serves (created and listed), with the schema its
    /openapi/v3 publishes. The reviews are left out: they are create-only, answered by
    security/reviews.py, which checks their fields in its own order (a TokenReview with a
    mistyped spec.audiences is refused for its missing spec.token; 422, never 5xx: the
    hostile-body tests cover them)."""
    crd_groups = {
        crd["spec"]["group"]
        for crd in ok(c.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))["items"]
    }
    kinds = []
    for path in ok(c.get("/openapi/v3"))["paths"]:
        doc = ok(c.get(f"/openapi/v3/{path}"))
        discovery = ok(c.get(f"/{path}"))["resources"]
        for schema in doc["components"]["schemas"].values():
            for gvk in schema.get("x-kubernetes-group-version-kind", []):
                if (gvk["group"] in crd_groups) != custom:
                    continue
                res = [r for r in discovery if r["kind"] == gvk["kind"] and "/" not in r["name"]]
                if res and {"create", "list"} <= set(res[0]["verbs"]):
                    kinds.append(
                        Kind(
                            gvk["group"],
                            gvk["version"],
                            gvk["kind"],
                            res[0]["name"],
                            res[0]["namespaced"],
                            schema,
                        )
                    )
    return sorted(kinds, key=lambda k: (k.group, k.kind))


def named_in(resp: httpx.Response, path: str) -> bool:
    body = resp.json()
    fields = [c.get("field", "") for c in (body.get("details") or {}).get("causes") or []]
    return path in fields or path in body.get("message", "")


@pytest.fixture(scope="module")
def builtin_kinds(http: httpx.Client) -> list[Kind]:
    kinds = served_kinds(http, custom=False)
    assert len(kinds) == 27, [k.kind for k in kinds]  # every stored built-in kind of the registry
    return kinds


@BUILTIN_SETTINGS
@given(data=st.data())
def test_mistyped_builtin_bodies_name_the_field(
    http: httpx.Client, before: dict[str, Any], builtin_kinds: list[Kind], data: st.DataObject
) -> None:
    kind = data.draw(st.sampled_from(builtin_kinds), label="kind")
    body, path = data.draw(schema_bodies.mistyped(kind.schema), label="body")
    body["metadata"] = {"name": "fuzzed"}
    resp = http.post(kind.collection(), json=body, params={"dryRun": "All"})
    check(resp)
    assert 400 <= resp.status_code < 500, f"{kind.kind} {path}: {resp.status_code} {resp.text}"
    assert named_in(resp, path), f"{kind.kind}: {path} not named in {resp.text}"


TYPED_APIS = {
    "": "CoreV1Api",
    "apps": "AppsV1Api",
    "batch": "BatchV1Api",
    "networking.k8s.io": "NetworkingV1Api",
    "rbac.authorization.k8s.io": "RbacAuthorizationV1Api",
    "coordination.k8s.io": "CoordinationV1Api",
    "scheduling.k8s.io": "SchedulingV1Api",
    "admissionregistration.k8s.io": "AdmissionregistrationV1Api",
    "apiextensions.k8s.io": "ApiextensionsV1Api",
    "apiregistration.k8s.io": "ApiregistrationV1Api",
    "events.k8s.io": "EventsV1Api",
}


@pytest.fixture(scope="module")
def write_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server of its own: these writes are real."""
    proc = ServerProcess(tmp_path_factory.mktemp("fuzz-writes")).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def writable(write_server: ServerProcess) -> Iterator[httpx.Client]:
    with client(write_server, timeout=10) as c:
        yield c


@pytest.fixture(scope="module")
def writable_kinds(writable: httpx.Client) -> list[Kind]:
    return served_kinds(writable, custom=False)


def typed_list(api: Any, kind: Kind) -> Any:
    """List ``kind`` in every namespace with the official typed client's method for it."""
    from kubernetes import client as k8s

    snake = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", kind.kind).lower()  # APIService
    group_api = getattr(k8s, TYPED_APIS[kind.group])(api)
    method = f"list_{snake}_for_all_namespaces" if kind.namespaced else f"list_{snake}"
    return getattr(group_api, method)()


@BUILTIN_SETTINGS
@given(data=st.data())
def test_accepted_builtin_writes_stay_decodable(
    writable: httpx.Client, writable_kinds: list[Kind], data: st.DataObject
) -> None:
    kind = data.draw(st.sampled_from(writable_kinds), label="kind")
    props = {
        k: v for k, v in (kind.schema.get("properties") or {}).items() if k not in schema_bodies.SKIPPED_ROOT
    }
    body = data.draw(schema_bodies.well_typed({"type": "object", "properties": props}), label="body")
    body["metadata"] = {"generateName": "fz-", "labels": {"fuzz": "yes"}}
    check(writable.post(kind.collection(), json=body))


def test_typed_client_lists_every_builtin_kind_after_the_writes(
    write_server: ServerProcess, writable_kinds: list[Kind]
) -> None:
    from kubernetes import config

    api = config.new_client_from_config(str(write_server.kubeconfig))
    try:
        # raises if a stored object of the kind cannot be decoded into the client's typed model
        stored = {kind.kind: len(typed_list(api, kind).items) for kind in writable_kinds}
    finally:
        api.close()
    assert sum(stored.values()) > len(writable_kinds), stored  # writes were accepted, not all refused


@pytest.fixture(scope="module")
def crd_kinds(writable: httpx.Client) -> list[Kind]:
    """The Kueue, Ray and AppWrapper CRDs the project ships, installed and served."""
    import yaml

    for path in sorted(CRD_FILES.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        ok(writable.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 201)
    kinds = served_kinds(writable, custom=True)
    assert {"ClusterQueue", "LocalQueue", "Workload", "RayCluster", "RayJob", "AppWrapper"} <= {
        k.kind for k in kinds
    }
    return kinds


@BUILTIN_SETTINGS
@given(data=st.data(), typed=st.booleans())
def test_kueue_and_ray_crd_bodies_never_5xx(
    writable: httpx.Client, crd_kinds: list[Kind], data: st.DataObject, typed: bool
) -> None:
    kind = data.draw(st.sampled_from(crd_kinds), label="kind")
    if typed:
        props = {
            k: v
            for k, v in (kind.schema.get("properties") or {}).items()
            if k not in schema_bodies.SKIPPED_ROOT
        }
        body = data.draw(schema_bodies.well_typed({"type": "object", "properties": props}), label="body")
        path = None
    else:
        body, path = data.draw(schema_bodies.mistyped(kind.schema), label="body")
    body["metadata"] = {"name": "fuzzed"}
    resp = writable.post(kind.collection(), json=body, params={"dryRun": "All"})
    check(resp)
    if path is not None:
        assert 400 <= resp.status_code < 500 and named_in(resp, path), f"{kind.kind} {path}: {resp.text}"
