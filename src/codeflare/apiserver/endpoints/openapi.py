"""OpenAPI documents describing the served resources, for ``kubectl explain`` and ``apply``.

kubectl reads ``/openapi/v3`` (an index of group-versions), then one document per
group-version, to explain fields and to learn that the server does field validation itself
(it looks for a ``fieldValidation`` query parameter on PATCH operations tagged with the kind's
``x-kubernetes-group-version-kind``); ``/openapi/v2`` is its fallback. This module builds
those documents as plain dicts from :class:`ResourceDoc` descriptions, naming schemas as
Kubernetes does (``io.k8s.api.core.v1.ConfigMap``, ``dev.codeflare.workload.v1beta2.AppWrapper``).
It does not serve, cache or cut documents by ETag: the server does that, using
:func:`document_hash`.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
OBJECT_META = META + "ObjectMeta"
LIST_META = META + "ListMeta"
STATUS = META + "Status"
PATCH = META + "Patch"
DELETE_OPTIONS = META + "DeleteOptions"

# Built-in groups whose Go package (and so schema name prefix) is io.k8s.api.<first label>.
_BUILTIN_GROUPS = frozenset(
    (
        "",
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "admissionregistration.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "rbac.authorization.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
    )
)
_SPECIAL_PREFIXES = {
    "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "apiregistration.k8s.io": "io.k8s.kube-aggregator.pkg.apis.apiregistration",
    "rbac.authorization.k8s.io": "io.k8s.api.rbac",
    "flowcontrol.apiserver.k8s.io": "io.k8s.api.flowcontrol",
}


@dataclass(frozen=True)
class ResourceDoc:
    """What the documents need to know about one served resource of a group-version.

    ``schema`` is the CRD version's openAPIV3Schema, or None for kinds stored schema-less
    (they are published as free-form objects). ``subresources`` are item subresources such
    as ``("status",)``; ``strategic_merge`` advertises strategic merge patch (built-ins only).
    """

    kind: str
    plural: str
    namespaced: bool
    schema: dict[str, Any] | None = None
    list_kind: str = ""
    subresources: tuple[str, ...] = ()
    description: str = ""
    strategic_merge: bool = False

    @property
    def list_kind_name(self) -> str:
        return self.list_kind or self.kind + "List"


def definition_prefix(group: str, version: str) -> str:
    """Schema name prefix: ``io.k8s.api.core.v1``, ``io.k8s.api.apps.v1``, ``io.ray.v1``."""
    if group in _SPECIAL_PREFIXES:
        return f"{_SPECIAL_PREFIXES[group]}.{version}"
    if group in _BUILTIN_GROUPS:
        return f"io.k8s.api.{group.split('.')[0] or 'core'}.{version}"
    return ".".join([*reversed(group.split(".")), version])


def definition_name(group: str, version: str, kind: str) -> str:
    """Kubernetes' name for a kind's schema, e.g. ``dev.codeflare.workload.v1beta2.AppWrapper``."""
    return f"{definition_prefix(group, version)}.{kind}"


def group_version_path(group_version: str) -> str:
    """``v1`` -> ``api/v1``; ``ray.io/v1`` -> ``apis/ray.io/v1`` (as keyed in the v3 index)."""
    return f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"


def document_hash(doc: dict[str, Any]) -> str:
    """A content hash of a document (upper-case SHA-512 hex, as Kubernetes publishes)."""
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha512(canonical.encode()).hexdigest().upper()


def openapi_v3_index(group_versions: list[str], hash_of: Callable[[str], str]) -> dict[str, Any]:
    """The ``GET /openapi/v3`` body: one entry per group-version ("v1", "ray.io/v1", ...).

    ``hash_of(group_version)`` returns the current hash of that group-version's document
    (normally :func:`document_hash` of it), so clients refetch exactly when it changed.
    """
    paths = {}
    for gv in sorted(set(group_versions)):
        path = group_version_path(gv)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={hash_of(gv)}"}
    return {"paths": paths}


def openapi_v3_group_version(group: str, version: str, resources: list[ResourceDoc]) -> dict[str, Any]:
    """The ``GET /openapi/v3/apis/<group>/<version>`` (or ``api/v1``) document."""
    ref = _ref_v3
    schemas = dict(_meta_schemas(ref))
    paths: dict[str, Any] = {}
    for res in resources:
        schemas.update(_kind_schemas(group, version, res, ref, v3=True))
        paths.update(_paths(group, version, res, v3=True))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": _SECURITY},
        "security": [{"BearerToken": []}],
    }


def openapi_v2(resources: list[tuple[str, str, ResourceDoc]]) -> dict[str, Any]:
    """The ``GET /openapi/v2`` (Swagger 2.0) document for ``(group, version, resource)`` triples."""
    definitions = dict(_meta_schemas(_ref_v2))
    paths: dict[str, Any] = {}
    for group, version, res in resources:
        for name, schema in _kind_schemas(group, version, res, _ref_v2, v3=False).items():
            definitions[name] = schema
        paths.update(_paths(group, version, res, v3=False))
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    }


_SECURITY = {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}}


def _ref_v3(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _ref_v2(name: str) -> dict[str, Any]:
    return {"$ref": f"#/definitions/{name}"}


# --- schemas --------------------------------------------------------------------------------------


def _gvk(group: str, version: str, kind: str) -> list[dict[str, str]]:
    return [{"group": group, "version": version, "kind": kind}]


_API_VERSION = {"type": "string", "description": "Versioned schema of this representation of an object."}
_KIND = {"type": "string", "description": "REST resource this object represents, in CamelCase."}
_STR = {"type": "string"}
_TIME = {"type": "string", "format": "date-time"}
_STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}}


def _meta_schemas(ref: Callable[[str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    owner_ref = META + "OwnerReference"
    managed = META + "ManagedFieldsEntry"
    return {
        OBJECT_META: {
            "description": "Metadata every persisted resource has: identity, labels, ownership, lifecycle.",
            "type": "object",
            "properties": {
                "name": {**_STR, "description": "Unique within a namespace; cannot be updated."},
                "generateName": {**_STR, "description": "Prefix the server completes into a unique name."},
                "namespace": {
                    **_STR,
                    "description": "Namespace of the object; empty for cluster-scoped kinds.",
                },
                "uid": {**_STR, "description": "Unique identity assigned by the server."},
                "resourceVersion": {
                    **_STR,
                    "description": "Opaque version for concurrency control and watch.",
                },
                "generation": {"type": "integer", "format": "int64", "description": "Spec generation."},
                "creationTimestamp": {**_TIME, "description": "When the object was created."},
                "deletionTimestamp": {**_TIME, "description": "When deletion was requested."},
                "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
                "labels": {**_STR_MAP, "description": "Keys and values used to select objects."},
                "annotations": {**_STR_MAP, "description": "Arbitrary non-identifying metadata."},
                "finalizers": {
                    "type": "array",
                    "items": {**_STR, "default": ""},
                    "x-kubernetes-list-type": "set",
                    "description": "Must be empty before the object is removed from storage.",
                },
                "ownerReferences": {
                    "type": "array",
                    "items": {"allOf": [ref(owner_ref)], "default": {}},
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["uid"],
                    "x-kubernetes-patch-merge-key": "uid",
                    "x-kubernetes-patch-strategy": "merge",
                },
                "managedFields": {"type": "array", "items": {"allOf": [ref(managed)], "default": {}}},
                "selfLink": _STR,
            },
        },
        owner_ref: {
            "type": "object",
            "required": ["apiVersion", "kind", "name", "uid"],
            "properties": {
                "apiVersion": {**_STR, "default": ""},
                "kind": {**_STR, "default": ""},
                "name": {**_STR, "default": ""},
                "uid": {**_STR, "default": ""},
                "controller": {"type": "boolean"},
                "blockOwnerDeletion": {"type": "boolean"},
            },
            "x-kubernetes-map-type": "atomic",
        },
        managed: {
            "type": "object",
            "properties": {
                "apiVersion": _STR,
                "fieldsType": _STR,
                "fieldsV1": {"type": "object"},
                "manager": _STR,
                "operation": _STR,
                "subresource": _STR,
                "time": _TIME,
            },
        },
        LIST_META: {
            "type": "object",
            "properties": {
                "continue": _STR,
                "remainingItemCount": {"type": "integer", "format": "int64"},
                "resourceVersion": _STR,
                "selfLink": _STR,
            },
        },
        STATUS: {
            "type": "object",
            "properties": {
                "apiVersion": _API_VERSION,
                "kind": _KIND,
                "metadata": {"allOf": [ref(LIST_META)], "default": {}},
                "code": {"type": "integer", "format": "int32"},
                "details": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "message": _STR,
                "reason": _STR,
                "status": _STR,
            },
        },
        PATCH: {"type": "object", "description": "A patch document (JSON, merge, strategic merge or apply)."},
        DELETE_OPTIONS: {
            "type": "object",
            "properties": {
                "apiVersion": _API_VERSION,
                "kind": _KIND,
                "dryRun": {"type": "array", "items": _STR},
                "gracePeriodSeconds": {"type": "integer", "format": "int64"},
                "propagationPolicy": _STR,
                "preconditions": {"type": "object", "properties": {"resourceVersion": _STR, "uid": _STR}},
            },
        },
    }


def _kind_schemas(
    group: str, version: str, res: ResourceDoc, ref: Callable[[str], dict[str, Any]], v3: bool
) -> dict[str, dict[str, Any]]:
    name = definition_name(group, version, res.kind)
    if res.schema is None:
        schema: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    else:
        schema = copy.deepcopy(res.schema) if v3 else _to_v2(res.schema)
        schema.setdefault("type", "object")
    props = schema.setdefault("properties", {})
    props["apiVersion"] = dict(_API_VERSION)
    props["kind"] = dict(_KIND)
    props["metadata"] = {"allOf": [ref(OBJECT_META)], "default": {}} if v3 else ref(OBJECT_META)
    if res.description and "description" not in schema:
        schema["description"] = res.description
    schema["x-kubernetes-group-version-kind"] = _gvk(group, version, res.kind)
    list_schema = {
        "description": f"{res.kind}List is a list of {res.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": dict(_API_VERSION),
            "kind": dict(_KIND),
            "items": {"type": "array", "items": ref(name)},
            "metadata": {"allOf": [ref(LIST_META)], "default": {}} if v3 else ref(LIST_META),
        },
        "x-kubernetes-group-version-kind": _gvk(group, version, res.list_kind_name),
    }
    return {name: schema, definition_name(group, version, res.list_kind_name): list_schema}


_V2_DROPPED = frozenset(("nullable", "allOf", "anyOf", "oneOf", "not", "x-kubernetes-validations"))


def _to_v2(schema: Any) -> Any:
    """Swagger 2.0 has no nullable and no junctors; a nullable node loses its type instead."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in _V2_DROPPED}
    if schema.get("nullable") is True:
        out.pop("type", None)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _to_v2(v) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = _to_v2(out[key])
    return copy.deepcopy(out)


# --- paths ----------------------------------------------------------------------------------------


def _query(name: str, description: str, kind: str = "string", v3: bool = True) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": "query", "description": description, "uniqueItems": True}
    if v3:
        param["schema"] = {"type": kind}
    else:
        param["type"] = kind
    return param


def _path_param(name: str, v3: bool) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": "path", "required": True, "uniqueItems": True}
    param["description"] = f"{name} of the resource" if name == "name" else "object name and auth scope"
    if v3:
        param["schema"] = {"type": "string"}
    else:
        param["type"] = "string"
    return param


_LIST_PARAMS = (
    ("allowWatchBookmarks", "Request BOOKMARK watch events.", "boolean"),
    ("continue", "Continue token from a previous paginated list.", "string"),
    ("fieldSelector", "Restrict results by their fields.", "string"),
    ("labelSelector", "Restrict results by their labels.", "string"),
    ("limit", "Maximum number of results per page.", "integer"),
    ("resourceVersion", "Resource version constraint for the list or watch start.", "string"),
    ("resourceVersionMatch", "How resourceVersion applies to the list.", "string"),
    ("sendInitialEvents", "Start a watch with synthetic ADDED events for existing objects.", "boolean"),
    ("timeoutSeconds", "Timeout for the list or watch call.", "integer"),
    ("watch", "Watch for changes instead of listing.", "boolean"),
)
_DRY_RUN = ("dryRun", "When present (All), the change is validated but not persisted.", "string")
_FIELD_MANAGER = ("fieldManager", "Name of the actor making the change, for field management.", "string")
_FIELD_VALIDATION = (
    "fieldValidation",
    "How to treat unknown or duplicate fields: Ignore, Warn or Strict (the server validates).",
    "string",
)
_WRITE_PARAMS = (_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION)
_PATCH_PARAMS = (*_WRITE_PARAMS, ("force", "Take ownership of conflicting fields on apply.", "boolean"))
_DELETE_PARAMS = (
    _DRY_RUN,
    ("gracePeriodSeconds", "Seconds before the object is deleted.", "integer"),
    ("propagationPolicy", "Orphan, Background or Foreground garbage collection.", "string"),
    ("orphanDependents", "Deprecated: use propagationPolicy.", "boolean"),
)


def _operation_id(verb: str, group: str, version: str, kind: str, namespaced: bool, suffix: str = "") -> str:
    words = [w for part in (group or "core").split(".") for w in part.split("-")]
    group_id = "".join(w[:1].upper() + w[1:] for w in words)
    scope = "Namespaced" if namespaced else ""
    return f"{verb}{group_id}{version[:1].upper()}{version[1:]}{scope}{kind}{suffix}"


def _paths(group: str, version: str, res: ResourceDoc, v3: bool) -> dict[str, Any]:
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    ref = _ref_v3 if v3 else _ref_v2
    kind_ref = ref(definition_name(group, version, res.kind))
    list_ref = ref(definition_name(group, version, res.list_kind_name))
    gvk = {"group": group, "version": version, "kind": res.kind}
    ns = res.namespaced
    builder = _OperationBuilder(v3, gvk, res, group, version)
    base = f"{prefix}/namespaces/{{namespace}}/{res.plural}" if ns else f"{prefix}/{res.plural}"
    scope_params = [_path_param("namespace", v3)] if ns else []
    paths: dict[str, Any] = {
        base: {
            "get": builder.op("list", "list", list_ref, _LIST_PARAMS, ns, suffix=""),
            "post": builder.op("create", "post", kind_ref, _WRITE_PARAMS, ns, body=kind_ref, codes=_CREATED),
            "delete": builder.op("deleteCollection", "deletecollection", ref(STATUS), _DELETE_PARAMS, ns),
            "parameters": [*scope_params, _query("pretty", "Pretty-print the output.", v3=v3)],
        },
        f"{base}/{{name}}": builder.item_ops(kind_ref, ref, scope_params),
    }
    for sub in res.subresources:
        paths[f"{base}/{{name}}/{sub}"] = builder.item_ops(kind_ref, ref, scope_params, sub)
    if ns:
        paths[f"{prefix}/{res.plural}"] = {
            "get": builder.op("list", "list", list_ref, _LIST_PARAMS, False, suffix="ForAllNamespaces"),
            "parameters": [_query("pretty", "Pretty-print the output.", v3=v3)],
        }
    return paths


_REASONS = {"200": "OK", "201": "Created", "202": "Accepted"}
_CREATED = ("200", "201", "202")
_REPLACED = ("200", "201")
_DELETED = ("200", "202")


class _OperationBuilder:
    """Builds operation objects for one resource in either OpenAPI dialect."""

    def __init__(self, v3: bool, gvk: dict[str, str], res: ResourceDoc, group: str, version: str) -> None:
        self.v3, self.gvk, self.res, self.group, self.version = v3, gvk, res, group, version

    def op(
        self,
        verb: str,
        action: str,
        response: dict[str, Any],
        params: tuple[tuple[str, str, str], ...],
        namespaced: bool,
        suffix: str = "",
        body: dict[str, Any] | None = None,
        codes: tuple[str, ...] = ("200",),
        patch: bool = False,
        sub: str = "",
    ) -> dict[str, Any]:
        kind = self.res.kind
        op: dict[str, Any] = {
            "operationId": _operation_id(
                verb, self.group, self.version, kind, namespaced, suffix + sub.title()
            ),
            "description": f"{verb} {sub + ' of ' if sub else ''}{kind}",
            "parameters": [_query(n, d, t, self.v3) for n, d, t in params],
            "responses": self._responses(response, codes),
            "tags": [self.group or "core"],
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": dict(self.gvk),
        }
        body_types = self._patch_types() if patch else ("*/*",)
        if patch:
            body = _ref_v3(PATCH) if self.v3 else _ref_v2(PATCH)
        if body is not None:
            if self.v3:
                op["requestBody"] = {"content": {t: {"schema": body} for t in body_types}, "required": True}
            else:
                op["parameters"].insert(0, {"name": "body", "in": "body", "required": True, "schema": body})
                op["consumes"] = list(body_types)
        if not self.v3:
            op["produces"] = ["application/json", "application/yaml"]
            op["schemes"] = ["https"]
        return op

    def _patch_types(self) -> tuple[str, ...]:
        types = [
            "application/apply-patch+yaml",
            "application/json-patch+json",
            "application/merge-patch+json",
        ]
        if self.res.strategic_merge:
            types.append("application/strategic-merge-patch+json")
        return tuple(types)

    def _responses(self, schema: dict[str, Any], codes: tuple[str, ...]) -> dict[str, Any]:
        def response(description: str) -> dict[str, Any]:
            if self.v3:
                content = {t: {"schema": schema} for t in ("application/json", "application/yaml")}
                return {"description": description, "content": content}
            return {"description": description, "schema": schema}

        out = {code: response(_REASONS[code]) for code in codes}
        out["401"] = {"description": "Unauthorized"}
        return out

    def item_ops(
        self,
        kind_ref: dict[str, Any],
        ref: Callable[[str], dict[str, Any]],
        scope_params: list[dict[str, Any]],
        sub: str = "",
    ) -> dict[str, Any]:
        ns = self.res.namespaced
        ops: dict[str, Any] = {
            "get": self.op("read", "get", kind_ref, (), ns, sub=sub),
            "put": self.op(
                "replace", "put", kind_ref, _WRITE_PARAMS, ns, body=kind_ref, codes=_REPLACED, sub=sub
            ),
            "patch": self.op(
                "patch", "patch", kind_ref, _PATCH_PARAMS, ns, codes=_REPLACED, patch=True, sub=sub
            ),
            "parameters": [
                _path_param("name", self.v3),
                *scope_params,
                _query("pretty", "Pretty-print the output.", v3=self.v3),
            ],
        }
        if not sub:
            ops["delete"] = self.op("delete", "delete", ref(STATUS), _DELETE_PARAMS, ns, codes=_DELETED)
        return ops
