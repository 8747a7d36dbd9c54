"""Build the kueue.x-k8s.io/v1beta2 objects an administrator creates: flavors, queues, priorities.

ResourceFlavor, ClusterQueue (one resource group whose covered resources are the union of what
the flavors list), LocalQueue (optionally the namespace's default, which
:func:`is_default_local_queue` reads back) and WorkloadPriorityClass.
Names and quantities are checked here with messages naming the argument, then every manifest is
checked against our CRD and Kueue's webhook rules (:mod:`codeflare.api.kueue_validation`). A
flavor that does not list a covered resource gets a nominal quota of 0 for it (Kueue requires
every flavor of a group to list every covered resource). Objects are built at v1beta2 (Kueue's
stored version); :mod:`codeflare.api.kueue_conversion` turns them into v1beta1 for an older
Kueue. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from codeflare.api.validation import ManifestError, Problems, extended_resource_problems, validate_against_crd
from codeflare.k8s.constants import DEFAULT_LOCAL_QUEUE_NAME, DEFAULT_QUEUE_ANNOTATION
from codeflare.k8s.names import is_dns1123_label, is_dns1123_subdomain
from codeflare.k8s.quantity import QuantityError, QuantityInput, canonical, parse_quantity

__all__ = [
    "FlavorQuota",
    "build_cluster_queue",
    "build_local_queue",
    "build_resource_flavor",
    "build_workload_priority_class",
    "is_default_local_queue",
    "namespace_default_queue",
]

KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"
QUEUEING_STRATEGIES = ("BestEffortFIFO", "StrictFIFO")
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
ADMISSION_MODES = ("UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing")  # admissionScope.admissionMode
_BUILTIN_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class FlavorQuota:
    """Quota of one ResourceFlavor in a ClusterQueue: ``resources`` maps resource -> nominal quota.

    ``borrowing_limit``/``lending_limit`` map a subset of those resources to limits (None: unlimited).
    """

    name: str
    resources: dict[str, QuantityInput]
    borrowing_limit: dict[str, QuantityInput] | None = None
    lending_limit: dict[str, QuantityInput] | None = None


def build_resource_flavor(
    name: str,
    node_labels: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    taints: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ResourceFlavor: nodes with ``node_labels``; ``taints`` become ``spec.nodeTaints``."""
    _raise_if("ResourceFlavor", name, [("name", p) for p in is_dns1123_subdomain(name)])
    spec: dict[str, Any] = {}
    if node_labels:
        spec["nodeLabels"] = dict(node_labels)
    if taints:
        spec["nodeTaints"] = [dict(taint) for taint in taints]
    if tolerations:
        spec["tolerations"] = [dict(toleration) for toleration in tolerations]
    return _finish({"apiVersion": KUEUE_API_VERSION, "kind": "ResourceFlavor",
                    "metadata": {"name": name}, "spec": spec})


def weight_problems(weight: QuantityInput | None) -> Problems:
    """A fair-sharing ``weight`` (Cohort, LocalQueue): a quantity of at least 0 (0 ranks last)."""
    if weight is None:
        return []
    try:
        if parse_quantity(weight) < 0:
            return [("weight", "must be greater than or equal to 0")]
    except (QuantityError, TypeError, ValueError) as exc:
        return [("weight", str(exc))]
    return []


def build_cluster_queue(
    name: str,
    *,
    flavors: list[FlavorQuota],
    cohort: str | None = None,
    queueing_strategy: str = "BestEffortFIFO",
    namespace_selector: dict[str, Any] | None = None,
    preemption: dict[str, Any] | None = None,
    stop_policy: str | None = None,
    admission_mode: str | None = None,
) -> dict[str, Any]:
    """A ClusterQueue with one resource group over ``flavors`` (in order of preference).

    ``namespace_selector`` defaults to ``{}`` (every namespace); ``None`` is not offered because
    Kueue reads a null selector as "no namespace". Quantities are written canonically.
    ``admission_mode`` ``UsageBasedAdmissionFairSharing``: its LocalQueues take turns by recent
    usage (admission fair sharing, when the operator's configuration turns it on).
    """
    problems: Problems = [("name", p) for p in is_dns1123_subdomain(name)]
    if cohort is not None:
        problems += [("cohort", p) for p in is_dns1123_subdomain(cohort)]
    if queueing_strategy not in QUEUEING_STRATEGIES:
        problems.append(("queueing_strategy", f"{queueing_strategy!r} must be one of {QUEUEING_STRATEGIES}"))
    if stop_policy is not None and stop_policy not in STOP_POLICIES:
        problems.append(("stop_policy", f"{stop_policy!r} must be one of {STOP_POLICIES}"))
    if admission_mode is not None and admission_mode not in ADMISSION_MODES:
        problems.append(("admission_mode", f"{admission_mode!r} must be one of {ADMISSION_MODES}"))
    if not flavors:
        problems.append(("flavors", "must list at least one FlavorQuota"))
    covered: list[str] = []
    seen: set[str] = set()
    for index, flavor in enumerate(flavors):
        problems += _flavor_problems(f"flavors[{index}]", flavor)
        if flavor.name in seen:
            problems.append((f"flavors[{index}].name", f"duplicate flavor {flavor.name!r}"))
        seen.add(flavor.name)
        covered += [resource for resource in flavor.resources if resource not in covered]
    _raise_if("ClusterQueue", name, problems)

    spec: dict[str, Any] = {
        "resourceGroups": [{
            "coveredResources": covered,
            "flavors": [_flavor_entry(flavor, covered) for flavor in flavors],
        }],
    }
    if cohort is not None:
        spec["cohortName"] = cohort
    spec["queueingStrategy"] = queueing_strategy
    spec["namespaceSelector"] = {} if namespace_selector is None else dict(namespace_selector)
    if preemption is not None:
        spec["preemption"] = dict(preemption)
    if stop_policy is not None:
        spec["stopPolicy"] = stop_policy
    if admission_mode is not None:
        spec["admissionScope"] = {"admissionMode": admission_mode}
    return _finish({"apiVersion": KUEUE_API_VERSION, "kind": "ClusterQueue",
                    "metadata": {"name": name}, "spec": spec})


def build_local_queue(
    name: str, namespace: str, cluster_queue: str, default: bool = False, weight: QuantityInput | None = None
) -> dict[str, Any]:
    """A LocalQueue pointing at ``cluster_queue``; ``default`` marks it the namespace's default
    queue; ``weight``: its share under admission fair sharing (Kueue's default 1)."""
    problems: Problems = [("name", p) for p in is_dns1123_subdomain(name)]
    problems += [("namespace", p) for p in is_dns1123_label(namespace)]
    problems += [("cluster_queue", p) for p in is_dns1123_subdomain(cluster_queue)]
    problems += weight_problems(weight)
    _raise_if("LocalQueue", name, problems)
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if default:
        metadata["annotations"] = {DEFAULT_QUEUE_ANNOTATION: "true"}
    spec: dict[str, Any] = {"clusterQueue": cluster_queue}
    if weight is not None:
        spec["fairSharing"] = {"weight": canonical(weight)}
    return _finish(
        {"apiVersion": KUEUE_API_VERSION, "kind": "LocalQueue", "metadata": metadata, "spec": spec}
    )


def namespace_default_queue(local_queues: Iterable[dict[str, Any]]) -> str | None:
    """The default LocalQueue among one namespace's ``local_queues``: the one annotated
    ``kueue.x-k8s.io/default-queue: "true"`` (the first by name if several are), else the one named
    ``default`` (Kueue >= 0.17's convention), else None. The annotation wins: it is an explicit
    choice, and codeflare-sdk applies it before a job reaches any webhook."""
    queues = list(local_queues)
    marked = sorted(str(lq["metadata"]["name"]) for lq in queues if is_default_local_queue(lq))
    if marked:
        return marked[0]
    named = any((lq.get("metadata") or {}).get("name") == DEFAULT_LOCAL_QUEUE_NAME for lq in queues)
    return DEFAULT_LOCAL_QUEUE_NAME if named else None


def is_default_local_queue(local_queue: dict[str, Any]) -> bool:
    """Whether a LocalQueue is marked its namespace's default (annotation value ``true``, any case)."""
    annotations = (local_queue.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(DEFAULT_QUEUE_ANNOTATION, "")).lower() == "true"


def build_workload_priority_class(name: str, value: int, description: str = "") -> dict[str, Any]:
    """A WorkloadPriorityClass: workloads labelled with ``name`` get priority ``value`` (int32)."""
    problems: Problems = [("name", p) for p in is_dns1123_subdomain(name)]
    if isinstance(value, bool) or not isinstance(value, int) or not -_INT32_MAX - 1 <= value <= _INT32_MAX:
        problems.append(("value", f"{value!r} must be a 32-bit integer"))
    _raise_if("WorkloadPriorityClass", name, problems)
    obj: dict[str, Any] = {"apiVersion": KUEUE_API_VERSION, "kind": "WorkloadPriorityClass",
                           "metadata": {"name": name}, "value": value}
    if description:
        obj["description"] = description
    return _finish(obj)


# --- helpers -------------------------------------------------------------------------------------


def _flavor_problems(where: str, flavor: FlavorQuota) -> Problems:
    problems: Problems = [(f"{where}.name", p) for p in is_dns1123_subdomain(flavor.name)]
    if not flavor.resources:
        problems.append((f"{where}.resources", "must give a quota for at least one resource"))
    for resource, amount in flavor.resources.items():
        item = f"{where}.resources[{resource!r}]"
        if resource not in _BUILTIN_RESOURCES:
            problems += [(item, p) for p in extended_resource_problems(resource)]
        problems += _amount_problems(item, amount)
    limits = (("borrowing_limit", flavor.borrowing_limit), ("lending_limit", flavor.lending_limit))
    for field, amounts in limits:
        for resource, amount in (amounts or {}).items():
            item = f"{where}.{field}[{resource!r}]"
            if resource not in flavor.resources:
                problems.append((item, f"{resource!r} has no nominal quota in this flavor"))
                continue
            found = _amount_problems(item, amount)
            problems += found
            nominal = flavor.resources[resource]
            if (not found and field == "lending_limit" and not _amount_problems("", nominal)
                    and parse_quantity(amount) > parse_quantity(nominal)):
                above = f"{canonical(amount)!r} is above the nominal quota {canonical(nominal)!r}"
                problems.append((item, above))
    return problems


def _amount_problems(where: str, amount: QuantityInput) -> Problems:
    try:
        value = parse_quantity(amount)
    except QuantityError as error:
        return [(where, str(error))]
    return [(where, f"{amount!r} must not be negative")] if value < 0 else []


def _flavor_entry(flavor: FlavorQuota, covered: list[str]) -> dict[str, Any]:
    resources = []
    for resource in covered:
        nominal = canonical(flavor.resources.get(resource, 0))
        entry: dict[str, Any] = {"name": resource, "nominalQuota": nominal}
        if flavor.borrowing_limit and resource in flavor.borrowing_limit:
            entry["borrowingLimit"] = canonical(flavor.borrowing_limit[resource])
        if flavor.lending_limit and resource in flavor.lending_limit:
            entry["lendingLimit"] = canonical(flavor.lending_limit[resource])
        resources.append(entry)
    return {"name": flavor.name, "resources": resources}


def _raise_if(kind: str, name: str, problems: Problems) -> None:
    if problems:
        raise ManifestError(kind, name, problems)


def _finish(obj: dict[str, Any]) -> dict[str, Any]:
    validate_against_crd(obj)
    return obj
