"""Serves OpenAPI v2/v3 documents for the registry's resources (built by :mod:`openapi`).

Translates the live :class:`ResourceRegistry` into :class:`ResourceDoc` descriptions and
answers ``/openapi/v2``, the ``/openapi/v3`` index and ``/openapi/v3/api/v1`` or
``/openapi/v3/apis/<group>/<version>``. Documents are rebuilt only when the resources of
their group-version change (a CRD is created, updated or removed); the cache holds the
:class:`ResourceType` objects it was built from and compares them by identity.
Custom resources publish their CRD schema; built-in kinds the schema they are validated with
(:mod:`codeflare.apiserver.registry.builtin_schemas`; kubectl still uses its compiled-in
types for their strategic merge).
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver.endpoints import openapi
from codeflare.apiserver.registry import builtin_schemas
from codeflare.apiserver.registry.resources import ResourceRegistry, ResourceType

_V3_PREFIX = "/openapi/v3/"


def resource_doc(rt: ResourceType) -> openapi.ResourceDoc:
    """The OpenAPI description of one served resource."""
    schema = rt.raw_schema if rt.custom else builtin_schemas.published_schema(rt.group, rt.version, rt.kind)
    return openapi.ResourceDoc(
        kind=rt.kind,
        plural=rt.plural,
        namespaced=rt.namespaced,
        schema=schema,
        subresources=tuple(s for s in rt.subresources() if s != "finalize"),
        description=(rt.raw_schema or {}).get("description", "") if rt.custom else "",
    )


class OpenAPIDocuments:
    """Answers ``/openapi/v2``, ``/openapi/v3`` and ``/openapi/v3/<api path>``."""

    def __init__(self, registry: ResourceRegistry) -> None:
        self.registry = registry
        # group-version -> (resource types it was built from, document, hash)
        self._v3: dict[str, tuple[list[ResourceType], dict[str, Any], str]] = {}
        self._v2: tuple[list[ResourceType], dict[str, Any]] | None = None

    def document(self, path: str, query: Any) -> dict[str, Any] | None:
        path = path.rstrip("/")
        if path == "/openapi/v2":
            return self._openapi_v2()
        if path == "/openapi/v3":
            return self._index()
        if path.startswith(_V3_PREFIX):
            return self._group_version_doc(path[len(_V3_PREFIX) :])
        return None

    def _by_group_version(self) -> dict[str, list[ResourceType]]:
        out: dict[str, list[ResourceType]] = {}
        for rt in self.registry.all():
            out.setdefault(rt.group_version, []).append(rt)
        return out

    def _cached_v3(self, group_version: str, types: list[ResourceType]) -> tuple[dict[str, Any], str]:
        cached = self._v3.get(group_version)
        if cached is not None and _same(cached[0], types):
            return cached[1], cached[2]
        group, _, version = group_version.rpartition("/")
        doc = openapi.openapi_v3_group_version(group, version, [resource_doc(rt) for rt in types])
        digest = openapi.document_hash(doc)
        self._v3[group_version] = (list(types), doc, digest)
        return doc, digest

    def _index(self) -> dict[str, Any]:
        by_gv = self._by_group_version()
        for stale in set(self._v3) - set(by_gv):
            del self._v3[stale]
        return openapi.openapi_v3_index(list(by_gv), lambda gv: self._cached_v3(gv, by_gv[gv])[1])

    def _group_version_doc(self, api_path: str) -> dict[str, Any] | None:
        parts = api_path.split("/")
        if len(parts) == 2 and parts[0] == "api":
            group_version = parts[1]
        elif len(parts) == 3 and parts[0] == "apis":
            group_version = f"{parts[1]}/{parts[2]}"
        else:
            return None
        types = self._by_group_version().get(group_version)
        if not types:
            return None
        return self._cached_v3(group_version, types)[0]

    def _openapi_v2(self) -> dict[str, Any]:
        types = self.registry.all()
        if self._v2 is not None and _same(self._v2[0], types):
            return self._v2[1]
        doc = openapi.openapi_v2([(rt.group, rt.version, resource_doc(rt)) for rt in types])
        self._v2 = (list(types), doc)
        return doc


def _same(old: list[ResourceType], new: list[ResourceType]) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))
