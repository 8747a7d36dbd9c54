"""The checks Kueue's admission webhooks make on its own kinds, as pure functions over manifests.

Kueue validates its objects in two places (the same rules for v1beta2 and v1beta1, whose ``cohort``
is v1beta2's ``cohortName``): the CRD schemas (bounds, enums and CEL rules, which our bundled CRDs
carry, so the API server refuses those with a 422) and its validating webhooks
(``pkg/webhooks/clusterqueue_webhook.go``, ``cohort_webhook.go``, ``resourceflavor_webhook.go``,
``workload_webhook.go``), whose rules are here: non-negative quotas, borrowing and lending limits
only in a cohort (a Cohort's only under a parent), fair-sharing weights, each
flavor's resources equal to ``coveredResources`` in order, no resource or flavor in two groups,
totals, label selectors, node labels and taints, pods requests, admission and reclaimable pods
against the pod sets, pod sets frozen while quota is reserved. The operator's webhooks
(``operator/webhooks/kueue.py``) refuse with these; the builders of :mod:`codeflare.api.kueue` run
them too, so the SDK refuses first. Each function returns Kubernetes field errors and never raises
on malformed input (the schema has already refused wrong types when the API server calls a webhook).
LocalQueue and WorkloadPriorityClass have no webhook in Kueue: their rules are all in the CRDs. No
I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from codeflare.api.raycluster import is_elastic_job
from codeflare.k8s.conditions import is_condition_true
from codeflare.k8s.names import is_label_value, is_qualified_name
from codeflare.k8s.quantity import QuantityError, canonical, milli_value, parse_quantity
from codeflare.k8s.schema.field import ErrorType, FieldError

__all__ = ["VALIDATORS", "cluster_queue_errors", "cohort_errors", "resource_flavor_errors", "workload_errors"]

Obj = Mapping[str, Any]
NEGATIVE = "must be greater than or equal to 0"  # apimachinery's IsNegativeErrorMsg
IMMUTABLE = "field is immutable"  # apimachinery's FieldImmutableErrorMsg
MAX_TOTAL_FLAVORS = 256
MAX_TOTAL_COVERED_RESOURCES = 256
MAX_FLAVOR_RESOURCES_PER_GROUP = 512
# clusterqueue_webhook.go limitIsEmptyErrorMsgTemplate, worded for each kind's link upwards
LIMIT_WITHOUT_COHORT = "must be nil when cohort is empty"
LIMIT_WITHOUT_PARENT = "must be nil when parent is empty"
MIN_FAIR_WEIGHT = parse_quantity("1n")  # common.go validateFairSharing: a weight <= 10^-9 collapses


def _dict(value: Any) -> Obj:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _negative(value: Any) -> bool:
    try:
        return parse_quantity(value) < 0
    except (QuantityError, TypeError, ValueError):
        return False  # not a quantity: the schema's pattern reports it


# --- ClusterQueue (clusterqueue_webhook.go ValidateClusterQueue) -----------------------------------


def cluster_queue_errors(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """Why Kueue's ClusterQueue webhook would refuse ``obj`` (the same checks on create and update):
    the resource groups, the namespace selector, the fair-sharing weight, then the totals."""
    spec = _dict(obj.get("spec"))
    groups = [_dict(group) for group in _list(spec.get("resourceGroups"))]
    # v1beta2's cohortName, or v1beta1's cohort (both versions are validated alike)
    in_cohort = bool(spec.get("cohortName") or spec.get("cohort"))
    errors = _resource_group_errors(groups, in_cohort, LIMIT_WITHOUT_COHORT, lending_within_nominal=True)
    selector = spec.get("namespaceSelector")
    if selector is not None:
        errors += _selector_errors(selector, "spec.namespaceSelector")
    errors += _fair_sharing_errors(spec.get("fairSharing"), "spec.fairSharing")
    errors += _total_errors(groups)
    return errors


# --- Cohort (cohort_webhook.go validateCohort) ----------------------------------------------


def cohort_errors(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """Why Kueue's Cohort webhook would refuse ``obj`` (the same checks on create and update): the
    fair-sharing weight, then the ClusterQueue's quota rules with limits allowed only under a
    parent. Unlike a ClusterQueue's, a Cohort's lendingLimit may exceed its nominalQuota, and the
    totals over all groups are not checked. A cycle is not refused: it makes the tree's queues
    inactive (the engine reports it)."""
    spec = _dict(obj.get("spec"))
    groups = [_dict(group) for group in _list(spec.get("resourceGroups"))]
    errors = _fair_sharing_errors(spec.get("fairSharing"), "spec.fairSharing")
    in_cohort = bool(spec.get("parentName"))
    return errors + _resource_group_errors(
        groups, in_cohort, LIMIT_WITHOUT_PARENT, lending_within_nominal=False
    )


def _fair_sharing_errors(fair_sharing: Any, path: str) -> list[FieldError]:
    """common.go validateFairSharing: a weight is not negative and, when not 0, above 1n (a smaller
    one would collapse to 0 in the share computation). Reported at ``path``, not at its weight."""
    weight = _dict(fair_sharing).get("weight")
    if weight is None:
        return []
    try:
        value = parse_quantity(weight)
    except (QuantityError, TypeError, ValueError):
        return []  # not a quantity: the schema's pattern reports it
    shown = canonical(weight)  # as Kueue's Quantity.String() writes it: "0.0000000001" is "1n"
    errors: list[FieldError] = []
    if value < 0:
        errors.append(FieldError(ErrorType.INVALID, path, NEGATIVE, shown))
    if 0 < value <= MIN_FAIR_WEIGHT:
        errors.append(FieldError(ErrorType.INVALID, path, "When not 0, weight must be > 10e-9", shown))
    return errors


def _resource_group_errors(
    groups: list[Obj], in_cohort: bool, no_limits: str, lending_within_nominal: bool
) -> list[FieldError]:
    errors: list[FieldError] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for i, group in enumerate(groups):
        path = f"spec.resourceGroups[{i}]"
        covered = [str(name) for name in _list(group.get("coveredResources"))]
        for j, name in enumerate(covered):
            where = f"{path}.coveredResources[{j}]"
            errors += [FieldError(ErrorType.INVALID, where, m, name) for m in is_qualified_name(name)]
            if name in seen_resources:
                errors.append(FieldError(ErrorType.DUPLICATE, where, value=name))
            seen_resources.add(name)
        for j, flavor in enumerate(_dict(f) for f in _list(group.get("flavors"))):
            where = f"{path}.flavors[{j}]"
            errors += _flavor_quota_errors(
                flavor, covered, in_cohort, no_limits, lending_within_nominal, where
            )
            name = str(flavor.get("name", ""))
            if name in seen_flavors:
                errors.append(FieldError(ErrorType.DUPLICATE, f"{path}.flavors[{j}].name", value=name))
            seen_flavors.add(name)
    return errors


def _flavor_quota_errors(
    flavor: Obj, covered: list[str], in_cohort: bool, no_limits: str, lending_within_nominal: bool, path: str
) -> list[FieldError]:
    errors: list[FieldError] = []
    # Kueue checks only as many entries as there are covered resources; the CRD rule refuses a
    # different count.
    for k, quota in enumerate(_dict(r) for r in _list(flavor.get("resources"))[: len(covered)]):
        where = f"{path}.resources[{k}]"
        if quota.get("name") != covered[k]:
            detail = "must match the name in coveredResources"
            errors.append(FieldError(ErrorType.INVALID, f"{where}.name", detail, quota.get("name")))
        nominal = quota.get("nominalQuota", 0)
        if _negative(nominal):
            errors.append(FieldError(ErrorType.INVALID, f"{where}.nominalQuota", NEGATIVE, str(nominal)))
        for limit in ("borrowingLimit", "lendingLimit"):
            if quota.get(limit) is not None:
                check_nominal = lending_within_nominal and limit == "lendingLimit"
                errors += _limit_errors(
                    quota[limit], nominal, in_cohort, no_limits, check_nominal, f"{where}.{limit}"
                )
    return errors


def _limit_errors(
    amount: Any, nominal: Any, in_cohort: bool, no_limits: str, check_nominal: bool, where: str
) -> list[FieldError]:
    errors: list[FieldError] = []
    if not in_cohort:
        errors.append(FieldError(ErrorType.INVALID, where, no_limits, str(amount)))
    if _negative(amount):
        errors.append(FieldError(ErrorType.INVALID, where, NEGATIVE, str(amount)))
    elif check_nominal and _exceeds(amount, nominal):
        detail = "must be less than or equal to the nominalQuota"
        errors.append(FieldError(ErrorType.INVALID, where, detail, str(amount)))
    return errors


def _exceeds(amount: Any, nominal: Any) -> bool:
    try:
        return parse_quantity(amount) > parse_quantity(nominal)
    except (QuantityError, TypeError, ValueError):
        return False


def _total_errors(groups: list[Obj]) -> list[FieldError]:
    path = "spec.resourceGroups"
    flavors = [_list(group.get("flavors")) for group in groups]
    errors: list[FieldError] = []
    total = sum(len(f) for f in flavors)
    if total > MAX_TOTAL_FLAVORS:
        detail = (
            f"total number of flavors across all resourceGroups must be ≤ {MAX_TOTAL_FLAVORS}, got {total}"
        )
        errors.append(FieldError(ErrorType.INVALID, path, detail, total))
    total = sum(len(_list(group.get("coveredResources"))) for group in groups)
    if total > MAX_TOTAL_COVERED_RESOURCES:
        detail = (
            "total number of covered resources across all resourceGroups must be "
            f"≤ {MAX_TOTAL_COVERED_RESOURCES}, got {total}"
        )
        errors.append(FieldError(ErrorType.INVALID, path, detail, total))
    for i, group_flavors in enumerate(flavors):
        combinations = sum(len(_list(_dict(f).get("resources"))) for f in group_flavors)
        if combinations > MAX_FLAVOR_RESOURCES_PER_GROUP:
            detail = (
                "number of flavor-resource combinations in a resourceGroup must be "
                f"≤ {MAX_FLAVOR_RESOURCES_PER_GROUP}, got {combinations}"
            )
            errors.append(FieldError(ErrorType.INVALID, f"{path}[{i}]", detail, combinations))
    return errors


def _selector_errors(selector: Any, path: str) -> list[FieldError]:
    # metav1 validation.ValidateLabelSelector; the API server's copy of that rule is the one home.
    from codeflare.apiserver.registry.selectors import validate_label_selector_dict

    return validate_label_selector_dict(selector, path)


# --- ResourceFlavor (resourceflavor_webhook.go ValidateResourceFlavor) -----------------------------


def resource_flavor_errors(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """Why Kueue's ResourceFlavor webhook would refuse ``obj``: node labels and taints."""
    spec = _dict(obj.get("spec"))
    errors = _label_errors(_dict(spec.get("nodeLabels")), "spec.nodeLabels")
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(_dict(t) for t in _list(spec.get("nodeTaints"))):
        path = f"spec.nodeTaints[{i}]"
        key, value = str(taint.get("key", "")), taint.get("value", "")
        errors += [FieldError(ErrorType.INVALID, f"{path}.key", m, key) for m in is_qualified_name(key)]
        if isinstance(value, str) and (problems := is_label_value(value)):
            errors.append(FieldError(ErrorType.INVALID, f"{path}.value", ";".join(problems), value))
        pair = (key, str(taint.get("effect", "")))
        if pair in seen:
            detail = "taints must be unique by key and effect pair"
            errors.append(FieldError(ErrorType.DUPLICATE, path, detail, dict(taint)))
            continue
        seen.add(pair)
    return errors


def _label_errors(labels: Obj, path: str) -> list[FieldError]:
    """metav1 validation.ValidateLabels: qualified keys, label values."""
    errors: list[FieldError] = []
    for key, value in labels.items():
        errors += [FieldError(ErrorType.INVALID, path, m, key) for m in is_qualified_name(str(key))]
        if isinstance(value, str):
            errors += [FieldError(ErrorType.INVALID, path, m, value) for m in is_label_value(value)]
    return errors


# --- Workload (workload_webhook.go ValidateWorkload, ValidateWorkloadUpdate) -----------------------


def workload_errors(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """Why Kueue's Workload webhook would refuse ``obj`` (``old``: the stored Workload on update)."""
    spec = _dict(obj.get("spec"))
    pod_sets = [_dict(p) for p in _list(spec.get("podSets"))]
    errors: list[FieldError] = []
    for i, pod_set in enumerate(pod_sets):
        errors += _pods_request_errors(pod_set, f"spec.podSets[{i}].template.spec")
    variable = sum(1 for p in pod_sets if p.get("minCount") is not None)
    if variable > 1:
        errors.append(
            FieldError(ErrorType.INVALID, "spec.podSets", "at most one podSet can use minCount", variable)
        )
    if _quota_reserved(obj):
        errors += _admission_errors(obj, pod_sets)
    errors += _reclaimable_errors(obj, pod_sets)
    if old is not None:
        errors += _update_errors(obj, old)
    return errors


def _quota_reserved(obj: Obj) -> bool:
    return is_condition_true(_list(_dict(obj.get("status")).get("conditions")), "QuotaReserved")


def _pods_request_errors(pod_set: Obj, path: str) -> list[FieldError]:
    pod_spec = _dict(_dict(pod_set.get("template")).get("spec"))
    errors: list[FieldError] = []
    for containers in ("initContainers", "containers"):
        for c, container in enumerate(_dict(x) for x in _list(pod_spec.get(containers))):
            requests = _dict(_dict(container.get("resources")).get("requests"))
            if "pods" in requests:
                where = f"{path}.{containers}[{c}].resources.requests[pods]"
                errors.append(
                    FieldError(ErrorType.INVALID, where, "the key is reserved for internal kueue use", "pods")
                )
    return errors


def _admission_errors(obj: Obj, pod_sets: list[Obj]) -> list[FieldError]:
    admission = _dict(_dict(obj.get("status")).get("admission"))
    names = {p.get("name") for p in pod_sets}
    errors: list[FieldError] = []
    for i, assignment in enumerate(_dict(a) for a in _list(admission.get("podSetAssignments"))):
        path = f"status.admission.podSetAssignments[{i}]"
        if assignment.get("name") not in names:
            detail = "not found among spec.podSets"
            errors.append(FieldError(ErrorType.INVALID, f"{path}.name", detail, assignment.get("name")))
        count = assignment.get("count")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            for resource, amount in _dict(assignment.get("resourceUsage")).items():
                if _resource_value(str(resource), amount) % count:
                    where = f"{path}.resourceUsage[{resource}]"
                    errors.append(
                        FieldError(ErrorType.INVALID, where, f"is not a multiple of {count}", amount)
                    )
    return errors


def _resource_value(resource: str, amount: Any) -> int:
    """Kueue's resources.ResourceValue: milli-units for cpu, whole units otherwise."""
    try:
        return milli_value(amount) if resource == "cpu" else -(-milli_value(amount) // 1000)
    except (QuantityError, TypeError, ValueError):
        return 0


def _reclaimable_errors(obj: Obj, pod_sets: list[Obj]) -> list[FieldError]:
    counts = {p.get("name"): p.get("count", 1) for p in pod_sets}
    errors: list[FieldError] = []
    for entry in (_dict(r) for r in _list(_dict(obj.get("status")).get("reclaimablePods"))):
        name, count = entry.get("name"), entry.get("count", 0)
        path = f"status.reclaimablePods[{name}]"
        if name not in counts:
            detail = "supported values: " + ", ".join(f'"{n}"' for n in counts)
            errors.append(FieldError(ErrorType.NOT_SUPPORTED, f"{path}.name", detail, name))
        elif isinstance(count, int) and isinstance(counts[name], int) and count > counts[name]:
            detail = f"should be less or equal to {counts[name]}"
            errors.append(FieldError(ErrorType.INVALID, f"{path}.count", detail, count))
    return errors


def _update_errors(obj: Obj, old: Obj) -> list[FieldError]:
    errors: list[FieldError] = []
    # an elastic job's Workload slice is resized in place (Kueue's workload slices): its counts
    # and its admission's counts and usage may change while reserved, nothing else of them
    resizable = is_elastic_job(obj) and is_elastic_job(old)
    new_pod_sets = _list(_dict(obj.get("spec")).get("podSets"))
    old_pod_sets = _list(_dict(old.get("spec")).get("podSets"))
    if _quota_reserved(old):
        if resizable:
            new_pod_sets, old_pod_sets = _without_counts(new_pod_sets), _without_counts(old_pod_sets)
        errors += _immutable_pod_sets(new_pod_sets, old_pod_sets)
    if _quota_reserved(obj) and _quota_reserved(old):
        errors += _reclaimable_update_errors(obj, old)
    new_admission = _dict(obj.get("status")).get("admission")
    old_admission = _dict(old.get("status")).get("admission")
    changed = new_admission is not None and old_admission is not None and new_admission != old_admission
    if changed and (not resizable or _admission_frame(new_admission) != _admission_frame(old_admission)):
        errors.append(FieldError(ErrorType.INVALID, "status.admission", IMMUTABLE, new_admission))
    return errors


def _without_counts(pod_sets: list[Any]) -> list[Any]:
    return [{k: v for k, v in _dict(ps).items() if k != "count"} for ps in pod_sets]


def _admission_frame(admission: Any) -> tuple[Any, list[Any]]:
    """What a resize leaves of an admission: its ClusterQueue and pod set names."""
    psas = _list(_dict(admission).get("podSetAssignments"))
    return _dict(admission).get("clusterQueue"), [_dict(p).get("name") for p in psas]


def _immutable_pod_sets(new: list[Any], old: list[Any]) -> list[FieldError]:
    if len(new) != len(old):
        return [FieldError(ErrorType.INVALID, "spec.podSets", IMMUTABLE, new)]
    return [
        FieldError(ErrorType.INVALID, f"spec.podSets[{i}]", IMMUTABLE, after)
        for i, (after, before) in enumerate(zip(new, old, strict=True))
        if after != before
    ]


def _reclaimable_update_errors(obj: Obj, old: Obj) -> list[FieldError]:
    """While quota stays reserved, reclaimable pod counts may not go down nor entries go away."""
    before = {
        r.get("name"): r.get("count", 0)
        for r in map(_dict, _list(_dict(old.get("status")).get("reclaimablePods")))
    }
    after = {
        r.get("name"): r.get("count", 0)
        for r in map(_dict, _list(_dict(obj.get("status")).get("reclaimablePods")))
    }
    errors: list[FieldError] = []
    for name, count in after.items():
        if (
            name in before
            and isinstance(count, int)
            and isinstance(before[name], int)
            and count < before[name]
        ):
            detail = f"cannot be less then {before[name]}"
            errors.append(
                FieldError(ErrorType.INVALID, f"status.reclaimablePods[{name}].count", detail, count)
            )
    errors += [
        FieldError(ErrorType.REQUIRED, f"status.reclaimablePods[{name}]", "cannot be removed")
        for name in before
        if name not in after
    ]
    return errors


#: kind -> its webhook's check, ``(object, stored object or None) -> field errors``.
VALIDATORS: dict[str, Callable[[Obj, Obj | None], list[FieldError]]] = {
    "ClusterQueue": cluster_queue_errors,
    "Cohort": cohort_errors,
    "ResourceFlavor": resource_flavor_errors,
    "Workload": workload_errors,
}
