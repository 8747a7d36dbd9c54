"""Which lists merge item by item, and by which keys: one table for both kinds of merging patch.

Kubernetes publishes, in the OpenAPI schema of every built-in type, how each list field merges:
``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key`` for strategic merge patch, and
``x-kubernetes-list-type`` / ``x-kubernetes-list-map-keys`` for server-side apply. The two can
differ for the same field (``topologySpreadConstraints`` merges by ``topologyKey`` in a strategic
merge patch but is keyed by ``topologyKey`` and ``whenUnsatisfiable`` under apply), so this table
records the four extensions per field, spelled as the OpenAPI document spells them, and
:func:`strategic_merge_key` (used by :mod:`patch`) and :func:`apply_list_keys` (used by
:mod:`fieldsets` for server-side apply) both read their answer from it.

Built-in objects are stored without a schema here, so the table is keyed by field name. Where
one name means different lists upstream, the entries are alternatives told apart by the keys the
items carry (container ports carry ``containerPort``, Service ports ``port``); where upstream
differs by type and the table cannot tell (``imagePullSecrets`` merges by name in a PodSpec but
is atomic in a ServiceAccount), the PodSpec meaning is kept. Custom resources take their list
types from their CRD's schema (the caller passes those first); the entries marked "our CRDs"
repeat what our CRDs declare, for lists inside schema-free templates. A field not listed is
atomic: replaced whole by both kinds of patch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PATCH_STRATEGY = "x-kubernetes-patch-strategy"
PATCH_MERGE_KEY = "x-kubernetes-patch-merge-key"
LIST_TYPE = "x-kubernetes-list-type"
LIST_MAP_KEYS = "x-kubernetes-list-map-keys"

# Defaults of list-map key fields that items may leave out (ports default to TCP).
KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}


def _keyed(*keys: str, strategy: str = "merge") -> dict[str, Any]:
    """A list of maps that both patch kinds merge by ``keys`` (the first is the merge key)."""
    return {LIST_TYPE: "map", LIST_MAP_KEYS: list(keys), PATCH_MERGE_KEY: keys[0], PATCH_STRATEGY: strategy}


def _apply_only(*keys: str) -> dict[str, Any]:
    """A list of maps keyed under server-side apply only (custom resources: no strategic merge)."""
    return {LIST_TYPE: "map", LIST_MAP_KEYS: list(keys)}


# Checked against Kubernetes' published OpenAPI, ``api/openapi-spec/v3/api__v1_openapi.json`` in
# kubernetes/kubernetes at commit 001a778fa11f78082f945366a80e46d518b21309 (PodSpec:
# ``tolerations`` is ``x-kubernetes-list-type: atomic`` with no patch merge key;
# ``topologySpreadConstraints`` is map-keyed by ``topologyKey`` + ``whenUnsatisfiable`` with patch
# merge key ``topologyKey``; ``imagePullSecrets``, ``initContainers``, ``volumes``,
# ``resourceClaims`` as below), and for the other entries against the ``+patchMergeKey``,
# ``+patchStrategy``, ``+listType`` and ``+listMapKey`` markers those extensions are generated from:
# kubernetes/api ``core/v1/types.go`` at commit 10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2 and
# kubernetes/apimachinery ``pkg/apis/meta/v1/types.go`` at commit
# eed236ceee2c19c2753a3d93ac0631dc20750454 (ObjectMeta ``ownerReferences``, ``finalizers``).
#
# field name -> the OpenAPI extensions of the list(s) of that name, alternatives in order
LIST_EXTENSIONS: dict[str, tuple[dict[str, Any], ...]] = {
    # core/v1 PodSpec
    "containers": (_keyed("name"),),
    "initContainers": (_keyed("name"),),
    "ephemeralContainers": (_keyed("name"),),
    "volumes": (_keyed("name", strategy="merge,retainKeys"),),
    "imagePullSecrets": (_keyed("name"),),
    "hostAliases": (_keyed("ip"),),
    "resourceClaims": (_keyed("name", strategy="merge,retainKeys"),),
    "tolerations": ({LIST_TYPE: "atomic"},),
    "topologySpreadConstraints": (
        {
            LIST_TYPE: "map",
            LIST_MAP_KEYS: ["topologyKey", "whenUnsatisfiable"],
            PATCH_MERGE_KEY: "topologyKey",
            PATCH_STRATEGY: "merge",
        },
    ),
    # core/v1 Container
    "env": (_keyed("name"),),
    "volumeMounts": (_keyed("mountPath"),),
    "volumeDevices": (_keyed("devicePath"),),
    # core/v1 Container.ports, then ServiceSpec.ports
    "ports": (_keyed("containerPort", "protocol"), _keyed("port", "protocol")),
    # every core/v1 status condition list, and metav1.Condition lists
    "conditions": (_keyed("type"),),
    # meta/v1 ObjectMeta
    "ownerReferences": (_keyed("uid"),),
    "finalizers": ({LIST_TYPE: "set", PATCH_STRATEGY: "merge"},),
    # our CRDs (ray.io RayCluster, kueue.x-k8s.io, workload.codeflare.dev AppWrapper)
    "workerGroupSpecs": (_apply_only("groupName"),),
    "podSets": (_apply_only("name"),),
    "podSetAssignments": (_apply_only("name"),),
    "flavors": (_apply_only("name"),),
    "resources": (_apply_only("name"),),
}


@dataclass(frozen=True)
class ListExtensions:
    """The merge behaviour of one list field, read from its OpenAPI extensions."""

    patch_strategy: str = ""
    patch_merge_key: str = ""
    list_type: str = "atomic"
    list_map_keys: tuple[str, ...] = ()

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any]) -> ListExtensions:
        keys = schema.get(LIST_MAP_KEYS) or ()
        return cls(
            patch_strategy=str(schema.get(PATCH_STRATEGY) or ""),
            patch_merge_key=str(schema.get(PATCH_MERGE_KEY) or ""),
            list_type=str(schema.get(LIST_TYPE) or "atomic"),
            list_map_keys=tuple(str(k) for k in keys),
        )

    @property
    def strategic_merge(self) -> bool:
        """Whether a strategic merge patch merges this list instead of replacing it."""
        return "merge" in self.patch_strategy.split(",")


_TABLE: dict[str, tuple[ListExtensions, ...]] = {
    name: tuple(ListExtensions.from_schema(s) for s in alternatives)
    for name, alternatives in LIST_EXTENSIONS.items()
}


def _choose(alternatives: tuple[ListExtensions, ...], items: list[Any], key_of: str) -> ListExtensions:
    """The alternative whose key every (non-directive) map item carries, else the first one."""
    if len(alternatives) == 1:
        return alternatives[0]
    maps = [i for i in items if isinstance(i, dict) and i.get("$patch") is None]
    for ext in alternatives:
        key = ext.patch_merge_key if key_of == "merge" else (ext.list_map_keys or ("",))[0]
        if maps and key and all(key in i for i in maps):
            return ext
    return alternatives[0]


def strategic_merge_key(field: str, items: list[Any]) -> str | None:
    """The key a strategic merge patch merges list ``field`` by; None when the list is replaced."""
    alternatives = _TABLE.get(field)
    if not alternatives:
        return None
    ext = _choose(alternatives, items, "merge")
    return ext.patch_merge_key if ext.strategic_merge and ext.patch_merge_key else None


def strategic_merges_scalars(field: str) -> bool:
    """Whether a strategic merge patch unions list ``field`` of scalars (``patchStrategy: merge``
    without a merge key, as ``finalizers``) instead of replacing it."""
    return any(ext.strategic_merge and not ext.patch_merge_key for ext in _TABLE.get(field, ()))


def apply_list_keys(field: str, items: list[Any]) -> tuple[str, ...] | None:
    """The keys server-side apply identifies the items of list ``field`` by; None when atomic."""
    alternatives = _TABLE.get(field)
    if not alternatives:
        return None
    ext = _choose(alternatives, items, "apply")
    return ext.list_map_keys if ext.list_type == "map" and ext.list_map_keys else None


def apply_is_set(field: str) -> bool:
    """Whether server-side apply owns list ``field`` value by value (``x-kubernetes-list-type: set``)."""
    return any(ext.list_type == "set" for ext in _TABLE.get(field, ()))
