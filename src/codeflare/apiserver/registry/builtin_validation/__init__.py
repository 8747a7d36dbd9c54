"""kube-apiserver's hand-written rules for the built-in kinds, beyond what their schema says.

The schema (:mod:`..builtin_schemas`) checks types; these modules check what
``pkg/apis/*/validation`` checks and clients and controllers rely on, with its messages: pod
specs and containers (:mod:`.pods`), Services (:mod:`.services`), RBAC roles and bindings
(:mod:`.rbac`), ConfigMap and Secret keys (:mod:`.data`), events.k8s.io Events
(:mod:`.events`), plus the defaults those rules
assume (an RBAC subject's apiGroup). Metadata is checked elsewhere, for every kind
(:func:`codeflare.k8s.schema.objectmeta.validate_object_meta`). Every rule tolerates values of
the wrong type: the schema reports those. Pure functions over decoded objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codeflare.apiserver.registry.builtin_validation import data, events, pods, rbac, services
from codeflare.k8s.schema.field import FieldError

Rule = Callable[[dict[str, Any], dict[str, Any] | None], list[FieldError]]

_RULES: dict[str, Rule] = {
    "core/pods": pods.validate_pod,
    "apps/deployments": pods.validate_deployment,
    "apps/statefulsets": pods.validate_stateful_set,
    "batch/jobs": pods.validate_job,
    "core/services": services.validate_service,
    "core/configmaps": data.validate_config_map,
    "core/secrets": data.validate_secret,
    "events.k8s.io/events": events.validate_event,
    "rbac.authorization.k8s.io/roles": rbac.validate_role,
    "rbac.authorization.k8s.io/clusterroles": rbac.validate_cluster_role,
    "rbac.authorization.k8s.io/rolebindings": rbac.validate_role_binding,
    "rbac.authorization.k8s.io/clusterrolebindings": rbac.validate_cluster_role_binding,
}
_DEFAULTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "rbac.authorization.k8s.io/rolebindings": rbac.default_subjects,
    "rbac.authorization.k8s.io/clusterrolebindings": rbac.default_subjects,
}


def validate(key: str, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """The rule violations of ``obj`` (stored under ``key``), updating ``old`` when given."""
    rule = _RULES.get(key)
    return rule(obj, old) if rule is not None else []


def default(key: str, obj: dict[str, Any]) -> None:
    """Fill in, in place, the defaults the rules of ``key`` assume (before validation)."""
    fill = _DEFAULTS.get(key)
    if fill is not None:
        fill(obj)
