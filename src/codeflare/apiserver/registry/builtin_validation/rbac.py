"""RBAC roles and bindings as kube-apiserver validates them (``pkg/apis/rbac/validation``).

Each rule needs verbs; resource rules need apiGroups and resources, non-resource rules may not
name resources and are cluster-only; a roleRef names the RBAC group, a kind a binding may use
(Role or ClusterRole; ClusterRole only for ClusterRoleBindings) and a name, and cannot change;
subjects have a name, a known kind and the apiGroup of that kind, and service accounts of a
ClusterRoleBinding a namespace. :func:`default_subjects` fills a subject's apiGroup as the v1
defaulting does, before validation.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver.registry.builtin_validation.common import objects, one_of
from codeflare.k8s.names import is_dns1123_subdomain, is_path_segment_name
from codeflare.k8s.schema.field import ErrorType, FieldError

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def validate_role(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _rules(obj, namespaced=True)


def validate_cluster_role(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _rules(obj, namespaced=False)


def _rules(obj: dict[str, Any], namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for path, rule in objects(obj.get("rules"), "rules"):
        errs += _policy_rule(rule, path, namespaced)
    return errs


def _policy_rule(rule: dict[str, Any], path: str, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if not rule.get("verbs"):
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs")
    if urls:
        where = f"{path}.nonResourceURLs"
        if namespaced:
            errs.append(
                FieldError(
                    ErrorType.INVALID, where, "namespaced rules cannot apply to non-resource URLs", urls
                )
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            message = "rules cannot apply to both regular resources and non-resource URLs"
            errs.append(FieldError(ErrorType.INVALID, where, message, urls))
        return errs
    if not rule.get("apiGroups"):
        message = "resource rules must supply at least one api group"
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.apiGroups", message))
    resources = rule.get("resources")
    if not resources:
        message = "resource rules must supply at least one resource"
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.resources", message))
    if rule.get("resourceNames") and isinstance(resources, list) and len(resources) > 1:
        message = "resource names cannot apply to multiple resources"
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.resourceNames", message))
    return errs


def validate_role_binding(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _binding(obj, old, ("Role", "ClusterRole"), namespaced=True)


def validate_cluster_role_binding(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _binding(obj, old, ("ClusterRole",), namespaced=False)


def _binding(
    obj: dict[str, Any], old: dict[str, Any] | None, kinds: tuple[str, ...], namespaced: bool
) -> list[FieldError]:
    ref = obj.get("roleRef")
    errs: list[FieldError] = []
    if isinstance(ref, dict):
        errs += _not_supported(ref.get("apiGroup"), "roleRef.apiGroup", (GROUP,))
        errs += _not_supported(ref.get("kind"), "roleRef.kind", kinds)
        name = ref.get("name")
        if not name:
            errs.append(FieldError(ErrorType.REQUIRED, "roleRef.name", ""))
        elif isinstance(name, str):
            errs += [
                FieldError(ErrorType.INVALID, "roleRef.name", m, name) for m in is_path_segment_name(name)
            ]
    elif ref is None:
        errs.append(FieldError(ErrorType.REQUIRED, "roleRef", ""))
    for path, subject in objects(obj.get("subjects"), "subjects"):
        errs += _subject(subject, path, namespaced)
    if old is not None and old.get("roleRef") != ref:
        errs.append(FieldError(ErrorType.INVALID, "roleRef", "cannot change roleRef", ref))
    return errs


def _not_supported(value: Any, path: str, allowed: tuple[str, ...]) -> list[FieldError]:
    """NotSupported also for an empty value (``one_of`` skips those)."""
    if isinstance(value, str) and value in allowed:
        return []
    if value in (None, ""):
        shown = ", ".join(f'"{a}"' for a in allowed)
        return [FieldError(ErrorType.NOT_SUPPORTED, path, f"supported values: {shown}", "")]
    return one_of(value, path, allowed)


def _subject(subject: dict[str, Any], path: str, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    name, kind, group = subject.get("name"), subject.get("kind"), subject.get("apiGroup") or ""
    if not name:
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.name", ""))
    if kind == "ServiceAccount":
        if isinstance(name, str) and name:
            errs += [
                FieldError(ErrorType.INVALID, f"{path}.name", m, name) for m in is_dns1123_subdomain(name)
            ]
        if group:
            errs += _not_supported(group, f"{path}.apiGroup", ("",))
        if not namespaced and not subject.get("namespace"):
            errs.append(FieldError(ErrorType.REQUIRED, f"{path}.namespace", ""))
    elif kind in ("User", "Group"):
        errs += _not_supported(group, f"{path}.apiGroup", (GROUP,))
    else:
        errs += _not_supported(kind, f"{path}.kind", SUBJECT_KINDS)
    return errs


def default_subjects(obj: dict[str, Any]) -> None:
    """A User or Group subject without apiGroup gets the RBAC group (v1 SetDefaults_Subject; a
    ServiceAccount's default is the empty group, which is not written)."""
    for _, subject in objects(obj.get("subjects"), "subjects"):
        if not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP
