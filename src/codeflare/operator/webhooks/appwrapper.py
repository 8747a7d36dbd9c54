"""Admission rules for AppWrappers.

Mutation on create: the default queue label when none is given, ``workload.codeflare.dev/user``
and ``workload.codeflare.dev/userid`` labels naming the creator, and ``spec.suspend: true`` for
queued AppWrappers. Validation: at least one component, no nested AppWrappers, components only in
the AppWrapper's namespace, pod-set paths that resolve, 1 to 8 pod sets in all, component
templates immutable after create, and (with ``userRBACAdmissionCheck``) the creator may create
every wrapped object - :func:`access_checks` says what to ask, given the resources the API's
discovery found for the :func:`wrapped_types`; the caller asks the API with SubjectAccessReviews
and passes the refusals to :func:`validate_appwrapper`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from codeflare.k8s.constants import APPWRAPPER_USER_ID_LABEL, APPWRAPPER_USER_LABEL, QUEUE_NAME_LABEL
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind
from codeflare.operator.appwrapper.podsets import PodSetError, pod_sets, resolve
from codeflare.operator.queueing.jobs import queue_name
from codeflare.operator.webhooks.admission import (
    AccessCheck,
    AdmissionRequest,
    AdmissionSettings,
    Verdict,
    allowed,
    denied,
)
from codeflare.operator.webhooks.jobrules import job_label_problems

MAX_POD_SETS = 8
_NOT_LABEL_CHAR = re.compile(r"[^A-Za-z0-9._-]")


def label_value(text: str) -> str:
    """``text`` made a valid label value: other characters become "_", 63 characters at most."""
    value = _NOT_LABEL_CHAR.sub("_", text)[:63]
    return value.strip("._-")


def mutate_appwrapper(request: AdmissionRequest, settings: AdmissionSettings) -> Verdict:
    if request.operation != "CREATE":
        return allowed()
    aw = copy.deepcopy(request.obj)
    meta = aw.setdefault("metadata", {})
    labels = dict(meta.get("labels") or {})
    if not labels.get(QUEUE_NAME_LABEL) and settings.default_queue_name:
        labels[QUEUE_NAME_LABEL] = settings.default_queue_name
    if request.username:
        labels[APPWRAPPER_USER_LABEL] = label_value(request.username)
    if request.user_uid:
        labels[APPWRAPPER_USER_ID_LABEL] = label_value(request.user_uid)
    meta["labels"] = labels
    if queue_name(aw) is not None:
        aw.setdefault("spec", {})["suspend"] = True
    return allowed(aw)


def _components(obj: Mapping[str, Any]) -> list[Any]:
    components = (obj.get("spec") or {}).get("components")
    return components if isinstance(components, list) else []


def _templates(obj: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    found: list[tuple[int, Mapping[str, Any]]] = []
    for index, component in enumerate(_components(obj)):
        template = component.get("template") if isinstance(component, dict) else None
        if isinstance(template, dict):
            found.append((index, template))
    return found


def _type_of(template: Mapping[str, Any]) -> tuple[str, str]:
    return str(template.get("apiVersion", "")), str(template.get("kind", ""))


def wrapped_types(request: AdmissionRequest, settings: AdmissionSettings) -> list[tuple[str, str]]:
    """The (apiVersion, kind) pairs whose resources :func:`access_checks` needs (discovery asks)."""
    if request.operation != "CREATE" or not settings.user_rbac_admission_check:
        return []
    return sorted({_type_of(template) for _, template in _templates(request.obj)})


def access_checks(
    request: AdmissionRequest, settings: AdmissionSettings, served: Mapping[tuple[str, str], Kind | None]
) -> list[AccessCheck]:
    """The SubjectAccessReviews to make before validating (none unless creating with the check on).

    ``served`` maps each of :func:`wrapped_types` to the resource discovery found (None: not
    served); a component of a kind the API does not serve gets a check without a resource, which
    the caller refuses without asking.
    """
    if request.operation != "CREATE" or not settings.user_rbac_admission_check:
        return []
    checks = []
    for index, template in _templates(request.obj):
        api_version, kind_name = _type_of(template)
        kind = served.get((api_version, kind_name))
        group, _, version = api_version.rpartition("/")
        resource = kind.plural if kind is not None else ""
        name = str((template.get("metadata") or {}).get("name", ""))
        checks.append(AccessCheck(index, group, version, resource, request.namespace, name, kind=kind_name))
    return checks


def _component_problems(index: int, component: Any, namespace: str) -> tuple[list[str], int]:
    """Problems of one component and how many pod sets it has."""
    where = f"spec.components[{index}]"
    template = component.get("template") if isinstance(component, dict) else None
    if not isinstance(template, dict) or not template.get("kind") or not template.get("apiVersion"):
        return [f"{where}.template: must be an object with apiVersion and kind"], 0
    problems = []
    group = str(template.get("apiVersion", "")).rpartition("/")[0]
    if group == kinds.APPWRAPPER.group and template.get("kind") == kinds.APPWRAPPER.kind:
        problems.append(f"{where}.template: AppWrappers cannot be nested")
    own_ns = (template.get("metadata") or {}).get("namespace")
    if own_ns and own_ns != namespace:
        problems.append(
            f"{where}.template.metadata.namespace: must be the AppWrapper's namespace {namespace!r}, "
            f"got {own_ns!r}"
        )
    sets = pod_sets(component)
    for position, pod_set in enumerate(sets):
        try:
            resolve(component, str(pod_set.get("path", "")))
        except PodSetError as error:
            problems.append(f"{where}.podSets[{position}].path: {error}")
    return problems, len(sets)


def _immutable_problems(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    before, after = _components(old), _components(new)
    if len(before) != len(after):
        return [
            "spec.components: cannot add or remove components after creation "
            f"({len(before)} -> {len(after)})"
        ]
    problems = []
    for index, (was, now) in enumerate(zip(before, after, strict=True)):
        for key in ("template", "podSets"):
            if (was or {}).get(key) != (now or {}).get(key):
                problems.append(f"spec.components[{index}].{key}: cannot be changed after creation")
    return problems


def validate_appwrapper(
    request: AdmissionRequest, settings: AdmissionSettings, refusals: Sequence[tuple[AccessCheck, str]] = ()
) -> Verdict:
    """Every problem of the AppWrapper in one message; ``refusals``: failed access checks."""
    if request.operation not in ("CREATE", "UPDATE"):
        return allowed()
    components = _components(request.obj)
    problems: list[str] = []
    if not components:
        problems.append("spec.components: must list at least one component")
    total = 0
    for index, component in enumerate(components):
        found, count = _component_problems(index, component, request.namespace)
        problems += found
        total += count
    if components and not 1 <= total <= MAX_POD_SETS:
        problems.append(
            f"spec.components: must have between 1 and {MAX_POD_SETS} pod sets in all, found {total}"
        )
    if request.operation == "UPDATE" and request.old is not None:
        problems += _immutable_problems(request.old, request.obj)
    problems += job_label_problems(request.operation, request.obj, request.old)
    for check, reason in refusals:
        detail = f": {reason}" if reason else ""
        who = f"user {request.username!r}"
        problems.append(f"spec.components[{check.component}]: {who} may not {check.describe()}{detail}")
    return denied(*problems) if problems else allowed()


def subject_access_review(request: AdmissionRequest, check: AccessCheck) -> Obj:
    """The ``authorization.k8s.io/v1`` SubjectAccessReview asking ``check`` for the requester."""
    spec: Obj = {
        "user": request.username,
        "groups": list(request.groups),
        "resourceAttributes": {
            "namespace": check.namespace,
            "verb": check.verb,
            "group": check.group,
            "version": check.version,
            "resource": check.resource,
            "name": check.name,
        },
    }
    if request.user_uid:
        spec["uid"] = request.user_uid
    if request.extra:
        spec["extra"] = {key: list(values) for key, values in request.extra.items()}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
