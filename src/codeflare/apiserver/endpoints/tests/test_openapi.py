"""OpenAPI documents: the shapes kubectl explain/apply rely on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codeflare.apiserver.endpoints.openapi import (
    LIST_META,
    OBJECT_META,
    ResourceDoc,
    definition_name,
    document_hash,
    openapi_v2,
    openapi_v3_group_version,
    openapi_v3_index,
)

APPWRAPPER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "suspend": {"type": "boolean"},
                "components": {
                    "type": "array",
                    "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
                "note": {"type": "string", "nullable": True, "anyOf": [{"minLength": 1}]},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}
APPWRAPPER = ResourceDoc(
    kind="AppWrapper",
    plural="appwrappers",
    namespaced=True,
    schema=APPWRAPPER_SCHEMA,
    subresources=("status",),
)
CLUSTER_QUEUE = ResourceDoc(kind="ClusterQueue", plural="clusterqueues", namespaced=False, schema=None)
CONFIGMAP = ResourceDoc(kind="ConfigMap", plural="configmaps", namespaced=True, strategic_merge=True)


@pytest.mark.parametrize(
    ("group", "version", "kind", "name"),
    [
        ("", "v1", "ConfigMap", "io.k8s.api.core.v1.ConfigMap"),
        ("apps", "v1", "Deployment", "io.k8s.api.apps.v1.Deployment"),
        ("coordination.k8s.io", "v1", "Lease", "io.k8s.api.coordination.v1.Lease"),
        ("rbac.authorization.k8s.io", "v1", "Role", "io.k8s.api.rbac.v1.Role"),
        (
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        ),
        ("workload.codeflare.dev", "v1beta2", "AppWrapper", "dev.codeflare.workload.v1beta2.AppWrapper"),
        ("kueue.x-k8s.io", "v1beta1", "ClusterQueue", "io.x-k8s.kueue.v1beta1.ClusterQueue"),
        ("ray.io", "v1", "RayCluster", "io.ray.v1.RayCluster"),
    ],
)
def test_definition_names_follow_kubernetes(group: str, version: str, kind: str, name: str) -> None:
    assert definition_name(group, version, kind) == name


def test_v3_index_lists_each_group_version_with_its_hash() -> None:
    index = openapi_v3_index(["ray.io/v1", "v1", "ray.io/v1"], lambda gv: f"H{len(gv)}")
    assert index == {
        "paths": {
            "api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=H2"},
            "apis/ray.io/v1": {"serverRelativeURL": "/openapi/v3/apis/ray.io/v1?hash=H9"},
        }
    }


def test_document_hash_changes_with_the_schema() -> None:
    before = openapi_v3_group_version("workload.codeflare.dev", "v1beta2", [APPWRAPPER])
    changed = ResourceDoc(kind="AppWrapper", plural="appwrappers", namespaced=True, schema={"type": "object"})
    after = openapi_v3_group_version("workload.codeflare.dev", "v1beta2", [changed])
    assert document_hash(before) == document_hash(json.loads(json.dumps(before)))
    assert document_hash(before) != document_hash(after)
    assert len(document_hash(before)) == 128


def test_v3_components_describe_the_kind_its_list_and_object_meta() -> None:
    doc = openapi_v3_group_version("workload.codeflare.dev", "v1beta2", [APPWRAPPER])
    assert doc["openapi"].startswith("3.0")
    schemas = doc["components"]["schemas"]
    aw = schemas["dev.codeflare.workload.v1beta2.AppWrapper"]
    assert aw["x-kubernetes-group-version-kind"] == [
        {"group": "workload.codeflare.dev", "version": "v1beta2", "kind": "AppWrapper"}
    ]
    assert aw["properties"]["metadata"] == {
        "allOf": [{"$ref": f"#/components/schemas/{OBJECT_META}"}],
        "default": {},
    }
    assert aw["properties"]["spec"]["properties"]["suspend"] == {"type": "boolean"}
    assert aw["properties"]["kind"]["type"] == "string"
    listing = schemas["dev.codeflare.workload.v1beta2.AppWrapperList"]
    assert listing["x-kubernetes-group-version-kind"][0]["kind"] == "AppWrapperList"
    assert listing["properties"]["items"]["items"] == {
        "$ref": "#/components/schemas/dev.codeflare.workload.v1beta2.AppWrapper"
    }
    assert {OBJECT_META, LIST_META} <= set(schemas)
    assert schemas[OBJECT_META]["properties"]["labels"]["additionalProperties"] == {"type": "string"}
    # The CRD's own schema object is not modified.
    assert "apiVersion" not in APPWRAPPER_SCHEMA["properties"]


def test_every_reference_resolves() -> None:
    doc = openapi_v3_group_version("", "v1", [CONFIGMAP])
    refs = {m for m in _refs(doc)}
    assert refs
    for ref in refs:
        assert ref.startswith("#/components/schemas/")
        assert ref.removeprefix("#/components/schemas/") in doc["components"]["schemas"], ref


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [node["$ref"]] if "$ref" in node else []
        return out + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_schemaless_kinds_are_free_form_objects() -> None:
    doc = openapi_v3_group_version("kueue.x-k8s.io", "v1beta1", [CLUSTER_QUEUE])
    cq = doc["components"]["schemas"]["io.x-k8s.kueue.v1beta1.ClusterQueue"]
    assert cq["type"] == "object"
    assert cq["x-kubernetes-preserve-unknown-fields"] is True


def test_namespaced_paths_and_actions() -> None:
    paths = openapi_v3_group_version("workload.codeflare.dev", "v1beta2", [APPWRAPPER])["paths"]
    base = "/apis/workload.codeflare.dev/v1beta2/namespaces/{namespace}/appwrappers"
    assert set(paths) == {
        base,
        base + "/{name}",
        base + "/{name}/status",
        "/apis/workload.codeflare.dev/v1beta2/appwrappers",
    }
    actions = {
        (path, method): op["x-kubernetes-action"]
        for path, item in paths.items()
        for method, op in item.items()
        if method != "parameters"
    }
    assert actions[(base, "get")] == "list"
    assert actions[(base, "post")] == "post"
    assert actions[(base, "delete")] == "deletecollection"
    assert actions[(base + "/{name}", "get")] == "get"
    assert actions[(base + "/{name}", "put")] == "put"
    assert actions[(base + "/{name}", "patch")] == "patch"
    assert actions[(base + "/{name}", "delete")] == "delete"
    assert actions[("/apis/workload.codeflare.dev/v1beta2/appwrappers", "get")] == "list"
    op_ids = [op["operationId"] for item in paths.values() for m, op in item.items() if m != "parameters"]
    assert len(op_ids) == len(set(op_ids))
    assert "patchWorkloadCodeflareDevV1beta2NamespacedAppWrapper" in op_ids


def test_cluster_scoped_paths_have_no_namespace() -> None:
    paths = openapi_v3_group_version("kueue.x-k8s.io", "v1beta1", [CLUSTER_QUEUE])["paths"]
    assert set(paths) == {
        "/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
        "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}",
    }
    item = paths["/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}"]
    assert [p["name"] for p in item["parameters"]] == ["name", "pretty"]


def test_patch_operations_advertise_server_side_field_validation_as_kubectl_checks() -> None:
    """kubectl: a PATCH op tagged with the GVK must carry an inline query parameter fieldValidation."""
    doc = openapi_v3_group_version("workload.codeflare.dev", "v1beta2", [APPWRAPPER])
    gvk = {"group": "workload.codeflare.dev", "version": "v1beta2", "kind": "AppWrapper"}
    patches = [item["patch"] for item in doc["paths"].values() if "patch" in item]
    assert patches
    for op in patches:
        assert op["x-kubernetes-group-version-kind"] == gvk
        names = {p["name"] for p in op["parameters"] if p["in"] == "query"}
        assert {"fieldValidation", "dryRun", "fieldManager", "force"} <= names
        assert "application/apply-patch+yaml" in op["requestBody"]["content"]
        assert "application/strategic-merge-patch+json" not in op["requestBody"]["content"]
    for method in ("post",):
        op = doc["paths"]["/apis/workload.codeflare.dev/v1beta2/namespaces/{namespace}/appwrappers"][method]
        assert {"fieldValidation", "dryRun", "fieldManager"} <= {p["name"] for p in op["parameters"]}
    put = doc["paths"]["/apis/workload.codeflare.dev/v1beta2/namespaces/{namespace}/appwrappers/{name}"][
        "put"
    ]
    assert "fieldValidation" in {p["name"] for p in put["parameters"]}


def test_builtins_offer_strategic_merge_patch() -> None:
    doc = openapi_v3_group_version("", "v1", [CONFIGMAP])
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}


def test_list_operation_takes_selectors_and_watch_parameters() -> None:
    doc = openapi_v3_group_version("", "v1", [CONFIGMAP])
    op = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["get"]
    names = {p["name"] for p in op["parameters"]}
    assert {"labelSelector", "fieldSelector", "limit", "continue", "watch", "resourceVersion"} <= names
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("io.k8s.api.core.v1.ConfigMapList")


def test_v2_document_uses_definitions_and_drops_v3_only_keywords() -> None:
    doc = openapi_v2(
        [("workload.codeflare.dev", "v1beta2", APPWRAPPER), ("kueue.x-k8s.io", "v1beta1", CLUSTER_QUEUE)]
    )
    assert doc["swagger"] == "2.0"
    defs = doc["definitions"]
    aw = defs["dev.codeflare.workload.v1beta2.AppWrapper"]
    assert aw["x-kubernetes-group-version-kind"][0]["kind"] == "AppWrapper"
    assert aw["properties"]["metadata"] == {"$ref": f"#/definitions/{OBJECT_META}"}
    note = aw["properties"]["spec"]["properties"]["note"]
    assert "nullable" not in note and "anyOf" not in note and "type" not in note
    assert "io.x-k8s.kueue.v1beta1.ClusterQueueList" in defs
    for ref in _refs(doc):
        assert ref.removeprefix("#/definitions/") in defs, ref
    patch = doc["paths"]["/apis/workload.codeflare.dev/v1beta2/namespaces/{namespace}/appwrappers/{name}"][
        "patch"
    ]
    assert {"fieldValidation"} <= {p["name"] for p in patch["parameters"] if p["in"] == "query"}
    assert "application/merge-patch+json" in patch["consumes"]
    assert all("schema" not in p for p in patch["parameters"] if p["in"] == "query")


def test_documents_are_json_serialisable() -> None:
    json.dumps(openapi_v3_group_version("", "v1", [CONFIGMAP]))
    json.dumps(openapi_v2([("", "v1", CONFIGMAP)]))
