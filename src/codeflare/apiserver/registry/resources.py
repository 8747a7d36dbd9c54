"""The resource types the embedded API server serves, built-in and CustomResourceDefinition-made.

A :class:`ResourceType` describes one served group/version/resource: kind, scope, verbs,
short names, subresources, printer columns and (for custom resources) the compiled schema.
:class:`ResourceRegistry` answers lookups by URL segment or by kind and is updated when CRDs
come and go. It holds descriptions only; objects live in :mod:`codeflare.apiserver.storage.store`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

BASE_FIELD_SELECTORS = frozenset({"metadata.name", "metadata.namespace"})


def storage_key(group: str, plural: str) -> str:
    """The key objects of resource ``group``/``plural`` are stored under (``core`` for "")."""
    return f"{group or 'core'}/{plural}"


CRD_KEY = storage_key("apiextensions.k8s.io", "customresourcedefinitions")


def crd_storage_key(crd: dict[str, Any]) -> str:
    """The storage key of the resource a CustomResourceDefinition serves."""
    spec = crd.get("spec") or {}
    return storage_key(spec.get("group") or "", (spec.get("names") or {}).get("plural", ""))


@dataclass(frozen=True)
class PrinterColumn:
    """One column of ``kubectl get`` output (CRD additionalPrinterColumns shape)."""

    name: str
    type: str
    json_path: str
    description: str = ""
    priority: int = 0
    format: str = ""


@dataclass
class ResourceType:
    """One served resource at one group/version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    status_subresource: bool = False
    scale: dict[str, str] | None = None  # specReplicasPath, statusReplicasPath, labelSelectorPath
    extra_subresources: tuple[str, ...] = ()
    columns: tuple[PrinterColumn, ...] = ()
    field_selectors: frozenset[str] = BASE_FIELD_SELECTORS
    storage_version: str = ""  # the version objects are stored at; "" = this version
    schema: Any = None  # a compiled CRD schema (codeflare.k8s.schema.CompiledSchema) or None
    raw_schema: dict[str, Any] | None = None
    custom: bool = False  # served from a CRD
    name_rule: str = "subdomain"
    preferred: bool = True
    list_map_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    conversion: Any = None  # a CRD's conversion webhook (registry.conversion.ConversionWebhook) or None
    deprecation_warning: str = ""  # a deprecated CRD version's Warning text; "" = not deprecated

    def __post_init__(self) -> None:
        if not self.singular:
            self.singular = self.kind.lower()
        if not self.storage_version:
            self.storage_version = self.version

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        return self.group_version

    @property
    def storage_api_version(self) -> str:
        return f"{self.group}/{self.storage_version}" if self.group else self.storage_version

    @property
    def key(self) -> str:
        """Storage key shared by every served version of this resource."""
        return storage_key(self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def qualified(self) -> str:
        """``plural.group`` as used in error messages (``rayclusters.ray.io``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def subresources(self) -> tuple[str, ...]:
        subs = list(self.extra_subresources)
        if self.status_subresource:
            subs.append("status")
        if self.scale is not None:
            subs.append("scale")
        return tuple(subs)

    def discovery(self) -> list[dict[str, Any]]:
        """APIResource entries for ``/api/v1`` or ``/apis/<g>/<v>``, subresources included."""
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        out = [entry]
        for sub in self.subresources():
            sub_kind = {"scale": "Scale", "token": "TokenRequest"}.get(sub, self.kind)
            sub_entry: dict[str, Any] = {
                "name": f"{self.plural}/{sub}",
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": sub_kind,
                "verbs": ["create"] if sub == "token" else ["get", "patch", "update"],
            }
            if sub == "token":
                sub_entry["group"] = "authentication.k8s.io"
                sub_entry["version"] = "v1"
            if sub == "scale":
                sub_entry["group"] = "autoscaling"
                sub_entry["version"] = "v1"
            out.append(sub_entry)
        return out


_AGE = PrinterColumn("Age", "date", ".metadata.creationTimestamp")


def _builtin(
    group: str,
    version: str,
    plural: str,
    kind: str,
    namespaced: bool,
    short: tuple[str, ...] = (),
    *,
    status: bool = False,
    columns: tuple[PrinterColumn, ...] = (),
    fields: Iterable[str] = (),
    name_rule: str = "subdomain",
    categories: tuple[str, ...] = (),
    verbs: tuple[str, ...] = ALL_VERBS,
    scale: dict[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> ResourceType:
    return ResourceType(
        group=group,
        version=version,
        plural=plural,
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        status_subresource=status,
        columns=(*columns, _AGE),
        field_selectors=BASE_FIELD_SELECTORS | frozenset(fields),
        name_rule=name_rule,
        categories=categories,
        verbs=verbs,
        scale=scale,
        extra_subresources=extra,
    )


_REPLICAS_SCALE = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".status.selector",
}

_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)


def builtin_resources() -> list[ResourceType]:
    """Every built-in resource the server stores as a document."""
    col = PrinterColumn
    return [
        _builtin(
            "",
            "v1",
            "namespaces",
            "Namespace",
            False,
            ("ns",),
            status=True,
            columns=(col("Status", "string", ".status.phase"),),
            name_rule="label",
            fields=("status.phase",),
            extra=("finalize",),
        ),
        _builtin(
            "",
            "v1",
            "pods",
            "Pod",
            True,
            ("po",),
            status=True,
            categories=("all",),
            columns=(
                col("Status", "string", ".status.phase"),
                col("Node", "string", ".spec.nodeName", priority=1),
                col("IP", "string", ".status.podIP", priority=1),
            ),
            fields=(
                "status.phase",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.podIP",
                "status.nominatedNodeName",
            ),
        ),
        _builtin(
            "",
            "v1",
            "services",
            "Service",
            True,
            ("svc",),
            status=True,
            categories=("all",),
            columns=(col("Type", "string", ".spec.type"), col("Cluster-IP", "string", ".spec.clusterIP")),
        ),
        _builtin("", "v1", "endpoints", "Endpoints", True, ("ep",)),
        _builtin("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
        _builtin(
            "", "v1", "secrets", "Secret", True, fields=("type",), columns=(col("Type", "string", ".type"),)
        ),
        _builtin("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), extra=("token",)),
        _builtin(
            "",
            "v1",
            "events",
            "Event",
            True,
            ("ev",),
            fields=_EVENT_FIELDS,
            columns=(
                col("Type", "string", ".type"),
                col("Reason", "string", ".reason"),
                col("Object", "string", ".involvedObject.name"),
                col("Message", "string", ".message"),
            ),
        ),
        _builtin(
            "",
            "v1",
            "nodes",
            "Node",
            False,
            ("no",),
            status=True,
            columns=(col("Status", "string", '.status.conditions[?(@.type=="Ready")].status'),),
            fields=("spec.unschedulable",),
        ),
        _builtin("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",), status=True),
        _builtin(
            "",
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            True,
            ("pvc",),
            status=True,
            columns=(col("Status", "string", ".status.phase"),),
        ),
        _builtin(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            True,
            ("deploy",),
            status=True,
            categories=("all",),
            scale=_REPLICAS_SCALE,
            columns=(
                col("Ready", "integer", ".status.readyReplicas"),
                col("Available", "integer", ".status.availableReplicas"),
            ),
        ),
        _builtin(
            "apps",
            "v1",
            "statefulsets",
            "StatefulSet",
            True,
            ("sts",),
            status=True,
            categories=("all",),
            scale=_REPLICAS_SCALE,
            columns=(col("Ready", "integer", ".status.readyReplicas"),),
        ),
        _builtin(
            "batch",
            "v1",
            "jobs",
            "Job",
            True,
            status=True,
            categories=("all",),
            columns=(
                col("Succeeded", "integer", ".status.succeeded"),
                col("Failed", "integer", ".status.failed"),
            ),
        ),
        _builtin(
            "networking.k8s.io",
            "v1",
            "ingresses",
            "Ingress",
            True,
            ("ing",),
            status=True,
            columns=(col("Hosts", "string", ".spec.rules[*].host"),),
        ),
        _builtin("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
        _builtin("rbac.authorization.k8s.io", "v1", "roles", "Role", True, name_rule="path"),
        _builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            True,
            name_rule="path",
            columns=(col("Role", "string", ".roleRef.name"),),
        ),
        _builtin("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, name_rule="path"),
        _builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            False,
            name_rule="path",
            columns=(col("Role", "string", ".roleRef.name"),),
        ),
        _builtin("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, status=True),
        _builtin(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            True,
            columns=(col("Holder", "string", ".spec.holderIdentity"),),
        ),
        _builtin(
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            "PriorityClass",
            False,
            ("pc",),
            columns=(col("Value", "integer", ".value"),),
        ),
        _builtin(
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            False,
        ),
        _builtin(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            False,
        ),
        _builtin(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            ("crd", "crds"),
            status=True,
            categories=("api-extensions",),
        ),
        _builtin(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            True,
            ("ev",),
            fields=preferred_events_fields(),
            columns=(
                col("Type", "string", ".type"),
                col("Reason", "string", ".reason"),
                col("Note", "string", ".note"),
            ),
        ),
    ]


def preferred_events_fields() -> tuple[str, ...]:
    """Field selectors of events.k8s.io/v1 Events (``regarding`` replaces ``involvedObject``)."""
    renamed = tuple(f.replace("involvedObject", "regarding") for f in _EVENT_FIELDS if f != "source")
    return (*renamed, "reportingController")


class ResourceRegistry:
    """Lookups over the served resources; updated as CRDs are established or removed."""

    def __init__(self, resources: Iterable[ResourceType] = ()) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._by_storage_key: dict[str, list[ResourceType]] | None = None  # built on first use
        for res in resources:
            self.add(res)

    def add(self, res: ResourceType) -> None:
        self._by_gvr[(res.group, res.version, res.plural)] = res
        self._by_storage_key = None

    def remove_crd(self, group: str, plural: str) -> None:
        """Forget every version of a custom resource."""
        for key in [k for k, r in self._by_gvr.items() if r.custom and k[0] == group and k[2] == plural]:
            del self._by_gvr[key]
        self._by_storage_key = None

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def by_key(self, key: str) -> list[ResourceType]:
        """Every served version of the resource stored under ``key`` (a lookup on each admitted
        write: indexed, where a scan of every resource was 3% of the server's time)."""
        if self._by_storage_key is None:
            index: dict[str, list[ResourceType]] = {}
            for res in self._by_gvr.values():
                index.setdefault(res.key, []).append(res)
            self._by_storage_key = index
        return list(self._by_storage_key.get(key, ()))

    def storage_type(self, key: str) -> ResourceType | None:
        """The served version that objects with storage key ``key`` are stored at."""
        for res in self.by_key(key):
            if res.version == res.storage_version:
                return res
        return None

    def all(self) -> list[ResourceType]:
        return sorted(self._by_gvr.values(), key=lambda r: (r.group, r.version, r.plural))

    def group_versions(self) -> dict[str, list[str]]:
        """group -> served versions, preferred (storage, else highest) first."""
        out: dict[str, list[str]] = {}
        for res in self.all():
            versions = out.setdefault(res.group, [])
            if res.version not in versions:
                versions.append(res.version)
        for group, versions in out.items():
            versions.sort(key=_version_priority, reverse=True)
            out[group] = versions
        return out


def _version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes version ordering: GA > beta > alpha, then by numbers."""
    import re

    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (-1, 0, 0)
    major = int(match.group(1))
    stage = {"alpha": 0, "beta": 1, None: 2}[match.group(2)]
    minor = int(match.group(3) or 0)
    return (stage, major, minor)
