"""Regenerates ``definitions.json``, the schemas of the built-in kinds, from the installed clients.

Run by a developer (``python -m codeflare.apiserver.registry.builtin_schemas.generate``) when
the served kinds or the Kubernetes version change; the server only reads the JSON it writes.
Both sources are generated from Kubernetes' published OpenAPI: lightkube-models gives each
type's JSON field names, which fields are required and which are IntOrString or Quantity; the
official ``kubernetes`` client gives the value types of maps (``Dict[str, str]``), which
lightkube types as a bare ``dict``. Times (``meta/v1`` Time, MicroTime) are RFC 3339 strings.
The two are walked in parallel from each kind, so a type is matched by the field that leads to
it, not by name. Quantity-valued maps are declared in
:data:`QUANTITY_MAPS` (neither client keeps that fact). Descriptions are not copied.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

# The served built-in kinds, as (group, version, kind); the server checks this list is complete.
KINDS = (
    ("", "v1", "Namespace"),
    ("", "v1", "Pod"),
    ("", "v1", "Service"),
    ("", "v1", "Endpoints"),
    ("", "v1", "ConfigMap"),
    ("", "v1", "Secret"),
    ("", "v1", "ServiceAccount"),
    ("", "v1", "Event"),
    ("", "v1", "Node"),
    ("", "v1", "ResourceQuota"),
    ("", "v1", "PersistentVolumeClaim"),
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "StatefulSet"),
    ("batch", "v1", "Job"),
    ("networking.k8s.io", "v1", "Ingress"),
    ("networking.k8s.io", "v1", "NetworkPolicy"),
    ("rbac.authorization.k8s.io", "v1", "Role"),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"),
    ("coordination.k8s.io", "v1", "Lease"),
    ("scheduling.k8s.io", "v1", "PriorityClass"),
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "v1", "APIService"),
    ("events.k8s.io", "v1", "Event"),
    # the create-only reviews (validated by codeflare.apiserver.security.reviews; published here)
    ("authorization.k8s.io", "v1", "SubjectAccessReview"),
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "LocalSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview"),
    ("authentication.k8s.io", "v1", "TokenReview"),
    ("authentication.k8s.io", "v1", "SelfSubjectReview"),
)

# Map-typed fields whose values are Quantities (lightkube: ``dict``; kubernetes: Dict[str, str]).
QUANTITY_MAPS = frozenset(
    (
        "core_v1.ResourceRequirements.limits",
        "core_v1.ResourceRequirements.requests",
        "core_v1.VolumeResourceRequirements.limits",
        "core_v1.VolumeResourceRequirements.requests",
        "core_v1.PodSpec.overhead",
        "core_v1.NodeStatus.capacity",
        "core_v1.NodeStatus.allocatable",
        "core_v1.ResourceQuotaSpec.hard",
        "core_v1.ResourceQuotaStatus.hard",
        "core_v1.ResourceQuotaStatus.used",
        "core_v1.PersistentVolumeClaimStatus.capacity",
        "core_v1.PersistentVolumeClaimStatus.allocatedResources",
        "core_v1.ContainerStatus.allocatedResources",
    )
)
# Fields that are ``[]byte`` in Go (base64 in JSON), which neither client records as such: a value
# that is not base64 would be stored and then break every typed client reading it.
BYTE_FIELDS = frozenset(
    (
        "admissionregistration_v1.WebhookClientConfig.caBundle",
        "apiextensions_v1.WebhookClientConfig.caBundle",
        "apiregistration_v1.APIServiceSpec.caBundle",
    )
)
BYTES: dict[str, Any] = {"type": "string", "format": "byte"}

# Types kept free-form: a CRD's own schema (validated by the CRD rules), raw embedded objects.
FREE_FORM = frozenset(("apiextensions_v1.JSONSchemaProps", "apiextensions_v1.JSON", "runtime.RawExtension"))

QUANTITY: dict[str, Any] = {"oneOf": [{"type": "string"}, {"type": "number"}], "x-codeflare-quantity": True}
INT_OR_STRING: dict[str, Any] = {"x-kubernetes-int-or-string": True}
DATE_TIME: dict[str, Any] = {"type": "string", "format": "date-time"}  # meta/v1 Time and MicroTime
_TIME = re.compile(r"\b(meta_v1\.)?(Micro)?Time\b")
_FREE: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
_SCALARS = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
}
_KCLIENT_SCALARS = {
    "str": {"type": "string"},
    "bytes": {"type": "string", "format": "byte"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "datetime": {"type": "string", "format": "date-time"},
    "object": _FREE,
}


def module_of(group: str, version: str) -> str:
    """lightkube's module for a group-version: ``core_v1``, ``rbac_v1``, ``networking_v1``."""
    return f"{(group or 'core').split('.')[0]}_{version}"


def _name(cls: type) -> str:
    return f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"


class _Generator:
    def __init__(self) -> None:
        self.definitions: dict[str, dict[str, Any]] = {}

    def kind(self, group: str, version: str, kind: str) -> str:
        lk = getattr(importlib.import_module(f"lightkube.models.{module_of(group, version)}"), kind)
        kc = _kubernetes_class(group, version, kind)
        self.struct(lk, kc)
        return _name(lk)

    def struct(self, lk: type, kc: type | None) -> str:
        import msgspec

        name = _name(lk)
        if name in self.definitions or name in FREE_FORM:
            return name
        schema: dict[str, Any] = {"type": "object", "properties": {}}
        self.definitions[name] = schema
        raw = typing.get_type_hints(lk, include_extras=False)
        annotations = {k: str(v) for k, v in getattr(lk, "__annotations__", {}).items()}
        json_to_kc = _kc_fields(kc)
        required = []
        for field in msgspec.structs.fields(lk):
            hint = raw.get(field.name, field.type)
            kc_type = json_to_kc.get(field.encode_name)
            where = f"{name}.{field.encode_name}"
            schema["properties"][field.encode_name] = self.value(
                hint, annotations.get(field.name, ""), kc_type, where
            )
            if field.required:
                required.append(field.encode_name)
        if required:
            schema["required"] = required
        return name

    def value(self, hint: Any, annotation: str, kc_type: str | None, where: str) -> dict[str, Any]:
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is typing.Union:
            rest = [a for a in args if a is not type(None)]
            if set(rest) == {int, str}:
                return dict(INT_OR_STRING)
            return self.value(rest[0], annotation, kc_type, where) if len(rest) == 1 else dict(_FREE)
        if "Quantity" in annotation and "List" not in annotation:
            return dict(QUANTITY)
        if _TIME.search(annotation) and "List" not in annotation:
            return dict(DATE_TIME)
        if where in BYTE_FIELDS:
            return dict(BYTES)
        if hint in _SCALARS:
            return dict(_SCALARS[hint])
        if origin in (list, typing.List):  # noqa: UP006
            inner = _strip_list(kc_type)
            return {"type": "array", "items": self.value(args[0], _strip_list_text(annotation), inner, where)}
        if hint is dict or origin is dict:
            if where in QUANTITY_MAPS:
                return {"type": "object", "additionalProperties": dict(QUANTITY)}
            return _kc_map(kc_type)
        if isinstance(hint, type) and hasattr(hint, "__struct_fields__"):
            if _name(hint) in FREE_FORM:
                return dict(_FREE)
            return {"$ref": self.struct(hint, _kc_model(kc_type))}
        return dict(_FREE)


def _strip_list(kc_type: str | None) -> str | None:
    if kc_type and kc_type.startswith("List[") and kc_type.endswith("]"):
        return kc_type[5:-1]
    return kc_type


def _strip_list_text(annotation: str) -> str:
    match = re.search(r"List\[(.*)\]", annotation)
    return match.group(1) if match else annotation


def _kc_map(kc_type: str | None) -> dict[str, Any]:
    """The schema of a map from the kubernetes client's type text (``Dict[str, str]``)."""
    if not kc_type or not kc_type.startswith("Dict[str, "):
        return {"type": "object", **_FREE}
    inner = kc_type[len("Dict[str, ") : -1]
    if inner in _KCLIENT_SCALARS:
        return {"type": "object", "additionalProperties": dict(_KCLIENT_SCALARS[inner])}
    if inner.startswith("List[") and inner[5:-1] in _KCLIENT_SCALARS:
        return {
            "type": "object",
            "additionalProperties": {"type": "array", "items": dict(_KCLIENT_SCALARS[inner[5:-1]])},
        }
    return {"type": "object", **_FREE}


def _kubernetes_class(group: str, version: str, kind: str) -> type | None:
    import kubernetes.client.models as models

    return getattr(models, f"{version.capitalize()}{kind}", None)


def _kc_model(kc_type: str | None) -> type | None:
    import kubernetes.client.models as models

    return getattr(models, kc_type, None) if kc_type else None


def _kc_fields(kc: type | None) -> dict[str, str]:
    """JSON field name -> the kubernetes client's type text, for one of its model classes."""
    if kc is None:
        return {}
    attribute_map = getattr(kc, "attribute_map", {})
    return {attribute_map.get(attr, attr): text for attr, text in getattr(kc, "openapi_types", {}).items()}


def main() -> None:
    gen = _Generator()
    roots = {f"{g}/{v}/{k}": gen.kind(g, v, k) for g, v, k in KINDS}
    import lightkube

    out = {
        "source": "lightkube-models and kubernetes client "
        f"(lightkube {getattr(lightkube, '__version__', '?')})",
        "kinds": roots,
        "definitions": dict(sorted(gen.definitions.items())),
    }
    path = Path(__file__).with_name("definitions.json")
    path.write_text(json.dumps(out, indent=None, sort_keys=False, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({len(gen.definitions)} definitions)", file=sys.stderr)  # noqa: T201


if __name__ == "__main__":
    main()
