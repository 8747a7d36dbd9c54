"""Type-specific rules of the built-in resources that are more than documents.

Namespaces (finalizer ``kubernetes``, phase Active/Terminating, the name label), Pods (phase
Pending on create), Services (a cluster IP), and CustomResourceDefinitions (validation of the
definition, accepted names and conditions, and registration of the served resource with its
compiled schema). Every built-in kind also gets kube-apiserver's hand-written rules
(:mod:`~codeflare.apiserver.registry.builtin_validation`). No I/O beyond the store handed in.
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import re
from typing import Any

from codeflare.apiserver.registry import builtin_validation
from codeflare.apiserver.registry.conversion import deprecation_warning, parse_conversion, validate_conversion
from codeflare.apiserver.registry.resources import (
    ALL_VERBS,
    BASE_FIELD_SELECTORS,
    CRD_KEY,
    PrinterColumn,
    ResourceRegistry,
    ResourceType,
)
from codeflare.apiserver.registry.webhook_configurations import validate_configuration
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s.names import is_dns1035_label, is_dns1123_label
from codeflare.k8s.schema import CompiledSchema, check_structural
from codeflare.k8s.schema.field import ErrorType, FieldError

log = logging.getLogger(__name__)

NAMESPACE_FINALIZER = "kubernetes"
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")
_SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/16")


def _condition(type_: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}


def _fold_string_data(secret: dict[str, Any]) -> None:
    """Merge a Secret's write-only ``stringData`` into ``data`` (base64), as Kubernetes does."""
    string_data = secret.get("stringData")
    if not isinstance(string_data, dict) or not all(isinstance(v, str) for v in string_data.values()):
        return  # mistyped: left for validation to refuse
    data = secret.get("data")
    if not isinstance(data, dict):
        data = {}
    for key, value in string_data.items():
        if isinstance(value, str):
            data[key] = base64.b64encode(value.encode()).decode()
    secret["data"] = data
    del secret["stringData"]


class Strategies:
    """Dispatches the create/update/delete hooks to the rules of each resource kind."""

    def __init__(self, registry: ResourceRegistry, store: ObjectStore, clock: Any) -> None:
        self.registry = registry
        self.store = store
        self.clock = clock

    # -- hooks called by ObjectAPI ----------------------------------------------------------------
    def prepare_create(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        if not rt.custom:
            builtin_validation.default(rt.key, obj)
        if rt.key == "core/namespaces":
            if obj.get("spec") is None:
                obj["spec"] = {}
            spec = obj["spec"]  # a mistyped spec is left for validation to refuse
            finalizers = spec.get("finalizers") if isinstance(spec, dict) else None
            if isinstance(spec, dict) and (finalizers is None or isinstance(finalizers, list)):
                finalizers = list(finalizers or [])
                if NAMESPACE_FINALIZER not in finalizers:
                    finalizers.append(NAMESPACE_FINALIZER)
                spec["finalizers"] = finalizers
            obj["status"] = {"phase": "Active"}
            labels = obj["metadata"].setdefault("labels", {})
            if isinstance(labels, dict):
                labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
        elif rt.key == "core/pods":
            obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
        elif rt.key == "core/secrets":
            _fold_string_data(obj)
        elif rt.key == "core/services":
            self._allocate_cluster_ip(obj)
        elif rt.key == CRD_KEY:
            self._prepare_crd(obj, None)

    def prepare_update(self, rt: ResourceType, new: dict[str, Any], old: dict[str, Any]) -> None:
        if not rt.custom:
            builtin_validation.default(rt.key, new)
        if rt.key == "core/namespaces":
            labels = new["metadata"].setdefault("labels", {})
            if isinstance(labels, dict):
                labels["kubernetes.io/metadata.name"] = new["metadata"]["name"]
        elif rt.key == "core/services":
            spec, old_spec = new.get("spec"), old.get("spec") or {}
            if isinstance(spec, dict) and spec.get("clusterIP") in (None, "") and old_spec.get("clusterIP"):
                spec["clusterIP"] = old_spec["clusterIP"]
                spec["clusterIPs"] = [old_spec["clusterIP"]]
        elif rt.key == "core/secrets":
            _fold_string_data(new)
        elif rt.key == CRD_KEY:
            self._prepare_crd(new, old)

    def prepare_delete(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        if rt.key == "core/namespaces":
            obj["status"] = {
                "phase": "Terminating",
                "conditions": [
                    _condition(
                        "NamespaceDeletionContentFailure",
                        "False",
                        "ContentDeleted",
                        "All content successfully deleted, may be waiting on finalization",
                        self.clock(),
                    )
                ],
            }
        elif rt.key == CRD_KEY:
            conditions = [
                c for c in (obj.get("status") or {}).get("conditions", []) if c.get("type") != "Terminating"
            ]
            conditions.append(
                _condition(
                    "Terminating",
                    "True",
                    "InstanceDeletionInProgress",
                    "CustomResource deletion is in progress",
                    self.clock(),
                )
            )
            obj.setdefault("status", {})["conditions"] = conditions

    def may_remove(self, rt: ResourceType, obj: dict[str, Any]) -> bool:
        """Whether nothing but metadata.finalizers keeps ``obj`` (namespaces have spec.finalizers too)."""
        if rt.key == "core/namespaces":
            return not (obj.get("spec") or {}).get("finalizers")
        return True

    def validate(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        if rt.key == CRD_KEY:
            return validate_crd(obj, old, self.registry)
        if rt.key.startswith("admissionregistration.k8s.io/") and rt.plural.endswith("webhookconfigurations"):
            return validate_configuration(obj, mutating=rt.plural.startswith("mutating"))
        return [] if rt.custom else builtin_validation.validate(rt.key, obj, old)

    def after_write(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if rt.key == CRD_KEY:
            register_crd(self.registry, obj)

    def after_delete(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        if rt.key == CRD_KEY:
            spec = obj.get("spec") or {}
            self.registry.remove_crd(spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))

    # -- helpers --------------------------------------------------------------------------------
    def _allocate_cluster_ip(self, obj: dict[str, Any]) -> None:
        if obj.get("spec") is None:
            obj["spec"] = {}
        spec = obj["spec"]
        if not isinstance(spec, dict):
            return  # mistyped: validation refuses it
        spec.setdefault("type", "ClusterIP")
        # only an absent or empty clusterIP is allocated; a mistyped one is left for the schema to refuse
        if spec.get("type") == "ExternalName" or spec.get("clusterIP") not in (None, ""):
            return
        used = {(s.get("spec") or {}).get("clusterIP") for s in self.store.iter("core/services")}
        for host in _SERVICE_CIDR.hosts():
            candidate = str(host)
            if candidate.endswith(".0") or candidate == "10.96.0.1" or candidate in used:
                continue
            spec["clusterIP"] = candidate
            if spec.get("clusterIPs") in (None, []):  # a given (or mistyped) list is kept
                spec["clusterIPs"] = [candidate]
            return

    def _prepare_crd(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        names = spec.get("names")
        if isinstance(names, dict) and isinstance(names.get("kind"), str):
            names.setdefault("singular", names["kind"].lower())
            names.setdefault("listKind", names["kind"] + "List")
        for version in spec.get("versions") or []:
            if isinstance(version, dict):
                version.setdefault("served", True)
                version.setdefault("storage", False)
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if (
            isinstance(finalizers, list)
            and CRD_CLEANUP_FINALIZER not in finalizers
            and not obj["metadata"].get("deletionTimestamp")
        ):
            finalizers.append(CRD_CLEANUP_FINALIZER)
        status = dict((old or {}).get("status") or {})
        now = self.clock()
        status["acceptedNames"] = {k: v for k, v in (names or {}).items()} if isinstance(names, dict) else {}
        status["conditions"] = [
            _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now),
            _condition(
                "Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now
            ),
        ]
        stored = list(status.get("storedVersions") or [])
        for version in spec.get("versions") or []:
            if isinstance(version, dict) and version.get("storage") and version.get("name") not in stored:
                stored.append(version.get("name"))
        status["storedVersions"] = stored
        obj["status"] = status


def validate_crd(
    obj: dict[str, Any], old: dict[str, Any] | None, registry: ResourceRegistry
) -> list[FieldError]:
    """The checks the real API server makes on a CustomResourceDefinition."""
    out: list[FieldError] = []
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [FieldError(ErrorType.REQUIRED, "spec", "")]
    group = spec.get("group")
    if not isinstance(group, str) or not group:
        out.append(FieldError(ErrorType.REQUIRED, "spec.group", ""))
    elif "." not in group:
        out.append(
            FieldError(ErrorType.INVALID, "spec.group", "should be a domain with at least one dot", group)
        )
    names = spec.get("names")
    plural = kind = ""
    if not isinstance(names, dict):
        out.append(FieldError(ErrorType.REQUIRED, "spec.names", ""))
    else:
        plural, kind = names.get("plural", ""), names.get("kind", "")
        if not isinstance(plural, str) or not plural:
            out.append(FieldError(ErrorType.REQUIRED, "spec.names.plural", ""))
        elif is_dns1123_label(plural):
            out.append(
                FieldError(
                    ErrorType.INVALID,
                    "spec.names.plural",
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                    "'-', and must start and end with an alphanumeric character",
                    plural,
                )
            )
        if not isinstance(kind, str) or not kind:
            out.append(FieldError(ErrorType.REQUIRED, "spec.names.kind", ""))
        elif not _KIND.match(kind):
            out.append(
                FieldError(
                    ErrorType.INVALID,
                    "spec.names.kind",
                    "may have mixed case, but should otherwise match: ^[A-Z][a-zA-Z0-9]*$",
                    kind,
                )
            )
        for i, short in enumerate(names.get("shortNames") or []):
            if not isinstance(short, str) or is_dns1123_label(short):
                out.append(
                    FieldError(
                        ErrorType.INVALID,
                        f"spec.names.shortNames[{i}]",
                        "must be a lowercase RFC 1123 label",
                        short,
                    )
                )
    if isinstance(group, str) and isinstance(plural, str) and group and plural:
        expected = f"{plural}.{group}"
        if obj["metadata"].get("name") != expected:
            out.append(
                FieldError(
                    ErrorType.INVALID,
                    "metadata.name",
                    'must be spec.names.plural+"."+spec.group',
                    obj["metadata"].get("name"),
                )
            )
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        out.append(
            FieldError(
                ErrorType.NOT_SUPPORTED, "spec.scope", 'supported values: "Cluster", "Namespaced"', scope
            )
        )
    out += _validate_versions(spec.get("versions"))
    out += validate_conversion(spec)
    if old is not None:
        old_spec = old.get("spec") or {}
        if old_spec.get("group") != spec.get("group"):
            out.append(FieldError(ErrorType.INVALID, "spec.group", "field is immutable", spec.get("group")))
        if old_spec.get("scope") != spec.get("scope"):
            out.append(FieldError(ErrorType.INVALID, "spec.scope", "field is immutable", spec.get("scope")))
    elif isinstance(group, str) and isinstance(plural, str) and not out:
        # A CRD's name is plural.group, so one already serving these names has this object's name:
        # storage answers that create with 409 AlreadyExists, as kube-apiserver does.
        for res in registry.all():
            if res.group == group and res.plural == plural and not res.custom:
                out.append(
                    FieldError(
                        ErrorType.DUPLICATE,
                        "spec.names.plural",
                        f"{plural}.{group} is already served",
                        plural,
                    )
                )
                break
    return out


def _validate_versions(versions: Any) -> list[FieldError]:
    out: list[FieldError] = []
    if not isinstance(versions, list) or not versions:
        return [
            FieldError(
                ErrorType.INVALID,
                "spec.versions",
                "must have exactly one version marked as storage version",
                versions,
            )
        ]
    seen: set[str] = set()
    storage = 0
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(version, dict):
            out.append(FieldError(ErrorType.TYPE_INVALID, path, "must be an object", version))
            continue
        name = version.get("name")
        if not isinstance(name, str) or is_dns1035_label(name):
            out.append(FieldError(ErrorType.INVALID, f"{path}.name", "must be a DNS-1035 label", name))
        elif name in seen:
            out.append(FieldError(ErrorType.DUPLICATE, f"{path}.name", "", name))
        else:
            seen.add(name)
        if version.get("storage") is True:
            storage += 1
        schema = (
            (version.get("schema") or {}).get("openAPIV3Schema")
            if isinstance(version.get("schema"), dict)
            else None
        )
        if not isinstance(schema, dict):
            out.append(
                FieldError(ErrorType.REQUIRED, f"{path}.schema.openAPIV3Schema", "schemas are required")
            )
        else:
            out += check_structural(schema, f"{path}.schema.openAPIV3Schema")
        for j, column in enumerate(version.get("additionalPrinterColumns") or []):
            cpath = f"{path}.additionalPrinterColumns[{j}]"
            if not isinstance(column, dict):
                out.append(FieldError(ErrorType.TYPE_INVALID, cpath, "must be an object", column))
                continue
            if not column.get("name"):
                out.append(FieldError(ErrorType.REQUIRED, f"{cpath}.name", ""))
            if column.get("type") not in _COLUMN_TYPES:
                out.append(
                    FieldError(
                        ErrorType.NOT_SUPPORTED,
                        f"{cpath}.type",
                        "supported values: " + ", ".join(f'"{t}"' for t in _COLUMN_TYPES),
                        column.get("type"),
                    )
                )
            if not isinstance(column.get("jsonPath"), str) or not column.get("jsonPath"):
                out.append(FieldError(ErrorType.REQUIRED, f"{cpath}.jsonPath", ""))
    if storage != 1:
        out.append(
            FieldError(
                ErrorType.INVALID,
                "spec.versions",
                "must have exactly one version marked as storage version",
                storage,
            )
        )
    return out


def register_crd(registry: ResourceRegistry, crd: dict[str, Any]) -> None:
    """Serve every served version of ``crd`` (replacing what was served before)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural = spec.get("group", ""), names.get("plural", "")
    registry.remove_crd(group, plural)
    storage_version = next((v["name"] for v in spec.get("versions", []) if v.get("storage")), "")
    webhook = parse_conversion(spec)
    for version in spec.get("versions", []):
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        columns = tuple(
            PrinterColumn(
                c["name"],
                c["type"],
                c["jsonPath"],
                c.get("description", ""),
                int(c.get("priority", 0)),
                c.get("format", ""),
            )
            for c in version.get("additionalPrinterColumns") or []
        ) or (PrinterColumn("Age", "date", ".metadata.creationTimestamp"),)
        raw_schema = (version.get("schema") or {}).get("openAPIV3Schema")
        selectable = {f.get("jsonPath", "").lstrip(".") for f in version.get("selectableFields") or []}
        registry.add(
            ResourceType(
                group=group,
                version=version["name"],
                plural=plural,
                kind=names.get("kind", ""),
                namespaced=spec.get("scope") == "Namespaced",
                singular=names.get("singular", ""),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                verbs=ALL_VERBS,
                status_subresource="status" in subresources,
                scale=subresources.get("scale"),
                columns=columns,
                field_selectors=BASE_FIELD_SELECTORS | frozenset(selectable),
                storage_version=storage_version,
                schema=CompiledSchema(raw_schema) if isinstance(raw_schema, dict) else None,
                raw_schema=raw_schema if isinstance(raw_schema, dict) else None,
                custom=True,
                list_map_keys=_list_map_keys(raw_schema),
                conversion=webhook,
                deprecation_warning=deprecation_warning(group, names.get("kind", ""), version),
            )
        )
    log.info(
        "serving %s.%s (%s)", plural, group, ", ".join(v.get("name", "") for v in spec.get("versions", []))
    )


def _list_map_keys(schema: Any, path: str = "") -> dict[str, tuple[str, ...]]:
    """Dotted path -> x-kubernetes-list-map-keys for every map-typed list in a schema."""
    out: dict[str, tuple[str, ...]] = {}
    if not isinstance(schema, dict):
        return out
    if schema.get("x-kubernetes-list-type") == "map" and schema.get("x-kubernetes-list-map-keys"):
        out[path] = tuple(schema["x-kubernetes-list-map-keys"])
    for name, sub in (schema.get("properties") or {}).items():
        out.update(_list_map_keys(sub, f"{path}.{name}" if path else name))
    if isinstance(schema.get("items"), dict):
        out.update(_list_map_keys(schema["items"], path))
    return out
