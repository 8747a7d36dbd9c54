"""Kueue objects as the admission engine's plain data types, and admissions back as status.

API manifests (ResourceFlavor, ClusterQueue, LocalQueue, Workload, Node, Namespace) in, frozen
:mod:`codeflare.scheduling` values out. Malformed quantities raise ``ValueError`` naming the field
so the controller can report them on the object instead of crashing. Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codeflare.k8s.conditions import conditions_of, find_condition
from codeflare.k8s.constants import RESERVED_FOR_ANNOTATION
from codeflare.k8s.quantity import Quantity, QuantityError, format_milli, milli_value, parse_quantity
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.scheduling import (
    Admission,
    BorrowWithinCohort,
    ClusterQueue,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
    LabelSelectorRequirement,
    LocalQueue,
    Node,
    PodSet,
    PodSetAssignment,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)


def _seconds(text: str | None) -> float:
    """Epoch seconds of a timestamp field; 0 when absent or malformed (the engine's "no time")."""
    return epoch_seconds(text) or 0.0


def label_selector(sel: Any) -> LabelSelector | None:
    if sel is None:
        return None
    exprs = tuple(
        LabelSelectorRequirement(
            str(e.get("key", "")), e.get("operator", "Exists"), tuple(e.get("values") or ())
        )
        for e in sel.get("matchExpressions") or []
    )
    return LabelSelector(dict(sel.get("matchLabels") or {}), exprs)


def resource_flavor(obj: Obj) -> ResourceFlavor:
    spec = obj.get("spec") or {}
    return ResourceFlavor(
        obj["metadata"]["name"],
        dict(spec.get("nodeLabels") or {}),
        tuple(spec.get("nodeTaints") or ()),
        tuple(spec.get("tolerations") or ()),
    )


def cluster_queue(obj: Obj) -> ClusterQueue:
    name = obj["metadata"]["name"]
    spec = obj.get("spec") or {}
    groups = []
    for gi, group in enumerate(spec.get("resourceGroups") or []):
        flavors = []
        for fi, flavor in enumerate(group.get("flavors") or []):
            quotas = []
            for ri, res in enumerate(flavor.get("resources") or []):
                where = f"spec.resourceGroups[{gi}].flavors[{fi}].resources[{ri}]"
                try:
                    quotas.append(
                        ResourceQuota(
                            str(res["name"]),
                            res.get("nominalQuota", 0),
                            res.get("borrowingLimit"),
                            res.get("lendingLimit"),
                        )
                    )
                except (QuantityError, KeyError, TypeError) as exc:
                    raise ValueError(f"ClusterQueue {name}: {where}: {exc}") from exc
            flavors.append(FlavorQuotas(str(flavor.get("name", "")), tuple(quotas)))
        groups.append(ResourceGroup(tuple(group.get("coveredResources") or ()), tuple(flavors)))
    preemption = spec.get("preemption") or {}
    borrow = preemption.get("borrowWithinCohort") or {}
    fungibility = spec.get("flavorFungibility") or {}
    selector = spec.get("namespaceSelector")
    return ClusterQueue(
        name=name,
        resource_groups=tuple(groups),
        cohort=spec.get("cohortName") or None,
        queueing_strategy=spec.get("queueingStrategy") or "BestEffortFIFO",
        # Kueue: a null namespaceSelector selects no namespace, {} selects all of them
        namespace_selector=label_selector(selector),
        preemption=Preemption(
            within_cluster_queue=preemption.get("withinClusterQueue") or "Never",
            reclaim_within_cohort=preemption.get("reclaimWithinCohort") or "Never",
            borrow_within_cohort=BorrowWithinCohort(
                borrow.get("policy") or "Never", borrow.get("maxPriorityThreshold")
            ),
        ),
        flavor_fungibility=FlavorFungibility(
            _fungibility(fungibility.get("whenCanBorrow"), "Borrow", "MayStopSearch"),
            _fungibility(fungibility.get("whenCanPreempt"), "Preempt", "TryNextFlavor"),
        ),
        stop_policy=_stop_policy(obj),
        # Kueue: only UsageBasedAdmissionFairSharing turns it on; any other value (v1beta1 has no
        # enum) or no scope leaves it off, which the engine decides
        admission_mode=(spec.get("admissionScope") or {}).get("admissionMode") or None,
    )


def _fungibility(policy: Any, stop: str, default: str) -> Any:
    """v1beta2's ``MayStopSearch`` is what the engine (and v1beta1, deprecated) call ``stop``."""
    return stop if (policy or default) in ("MayStopSearch", stop) else "TryNextFlavor"


def _stop_policy(obj: Obj) -> Any:
    """``spec.stopPolicy``; a terminating ClusterQueue admits nothing new either (Kueue's
    cache marks it terminating), which Hold expresses to the engine."""
    policy = str((obj.get("spec") or {}).get("stopPolicy") or "None")
    if (obj.get("metadata") or {}).get("deletionTimestamp") and policy == "None":
        return "Hold"
    return policy


def local_queue_stop_policy(obj: Obj) -> str:
    """A LocalQueue's ``spec.stopPolicy`` (None, Hold, HoldAndDrain)."""
    return str((obj.get("spec") or {}).get("stopPolicy") or "None")


def local_queue(obj: Obj) -> LocalQueue:
    meta, spec = obj["metadata"], obj.get("spec") or {}
    return LocalQueue(
        meta.get("namespace", ""),
        meta["name"],
        str(spec.get("clusterQueue", "")),
        fair_sharing_weight=_local_queue_weight(obj),
    )


def _local_queue_weight(obj: Obj) -> float | None:
    """``spec.fairSharing.weight`` as a number; None when not given (Kueue then weighs 1). Not
    validated, as in Kueue (0 and negative weights are the engine's to rank)."""
    weight = ((obj.get("spec") or {}).get("fairSharing") or {}).get("weight")
    if weight is None:
        return None
    try:
        return float(parse_quantity(weight))
    except QuantityError as exc:
        raise ValueError(f"LocalQueue {obj['metadata']['name']}: spec.fairSharing.weight: {exc}") from exc


def local_queue_usage(obj: Obj) -> tuple[dict[str, Quantity], float] | None:
    """The admission fair sharing history a LocalQueue's status carries
    (``status.fairSharing.admissionFairSharingStatus``): consumed resources and the epoch seconds
    of ``lastUpdate``; None when it has none or it is malformed (then it is not resumed)."""
    afs = (((obj.get("status") or {}).get("fairSharing")) or {}).get("admissionFairSharingStatus") or {}
    last_update = epoch_seconds(afs.get("lastUpdate"))
    if last_update is None:
        return None
    try:
        consumed = {str(r): Quantity.parse(q) for r, q in (afs.get("consumedResources") or {}).items()}
    except QuantityError:
        return None
    return consumed, last_update


def local_queue_usage_status(consumed: Mapping[str, Quantity], last_update: float) -> Obj:
    """``status.fairSharing`` carrying a LocalQueue's recent usage (weightedShare stays 0: Kueue's
    LocalQueue controller never sets it)."""
    return {
        "weightedShare": 0,
        "admissionFairSharingStatus": {
            "consumedResources": {r: str(q) for r, q in consumed.items()},
            "lastUpdate": format_rfc3339(last_update),
        },
    }


def admission_of(obj: Obj) -> Admission | None:
    status = obj.get("status") or {}
    adm = status.get("admission")
    if not adm:
        return None
    reserved = find_condition(conditions_of(obj), "QuotaReserved")
    admitted_at = _seconds((reserved or {}).get("lastTransitionTime"))
    return Admission(
        str(adm.get("clusterQueue", "")),
        tuple(
            PodSetAssignment(
                str(psa.get("name", "")),
                dict(psa.get("flavors") or {}),
                dict(psa.get("resourceUsage") or {}),
                int(psa.get("count") or 0),
            )
            for psa in adm.get("podSetAssignments") or []
        ),
        admitted_at,
    )


def queue_order_time(obj: Obj, requeuing_timestamp: str = "Eviction") -> float:
    """When a Workload queues from, in epoch seconds (Kueue's ``GetQueueOrderTimestamp``): the
    time of its eviction when it was evicted for its pods' readiness and the requeuing strategy's
    timestamp is ``Eviction``, or by an admission check; else its creation. (Kueue's other case,
    a workload reclaimed while borrowing, applies only with the PrioritySortingWithinCohort gate
    off, which is not modelled.)"""
    evicted = find_condition(conditions_of(obj), "Evicted")
    if evicted is not None and evicted.get("status") == "True":
        reason = evicted.get("reason")
        if reason == "AdmissionCheck" or (reason == "PodsReadyTimeout" and requeuing_timestamp == "Eviction"):
            return _seconds(evicted.get("lastTransitionTime"))
    return _seconds(obj["metadata"].get("creationTimestamp"))


def workload(
    obj: Obj, priorities: dict[str, int] | None = None, requeuing_timestamp: str = "Eviction"
) -> Workload:
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    pod_sets = []
    for ps in spec.get("podSets") or []:
        requests: dict[str, Any] = {}
        for container in ((ps.get("template") or {}).get("spec") or {}).get("containers") or []:
            for res, value in ((container.get("resources") or {}).get("requests") or {}).items():
                requests[res] = requests.get(res, 0)
                requests[res] = format_milli(milli_value(requests[res]) + milli_value(value))
        pod_spec = (ps.get("template") or {}).get("spec") or {}
        pod_sets.append(
            PodSet(
                str(ps.get("name", "main")),
                int(ps.get("count") or 0),
                requests,
                tuple(pod_spec.get("tolerations") or ()),
                dict(pod_spec.get("nodeSelector") or {}),
                _required_node_affinity(pod_spec),
            )
        )
    priority = spec.get("priority")
    ref = spec.get("priorityClassRef") or {}
    if priority is None and ref.get("kind") == "WorkloadPriorityClass" and ref.get("name") and priorities:
        priority = priorities.get(ref["name"], 0)
    return Workload(
        namespace=meta.get("namespace", ""),
        name=meta["name"],
        queue_name=str(spec.get("queueName", "")),
        pod_sets=tuple(pod_sets),
        priority=int(priority or 0),
        creation_time=queue_order_time(obj, requeuing_timestamp),
        active=spec.get("active", True) is not False,
        admission=admission_of(obj),
    )


def _required_node_affinity(pod_spec: Obj) -> tuple[tuple[LabelSelectorRequirement, ...], ...] | None:
    """The pod's required node affinity terms (ORed; each term's expressions ANDed), None if unset."""
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if terms is None:
        return None
    try:
        return tuple(
            tuple(
                LabelSelectorRequirement(
                    str(e.get("key", "")), str(e.get("operator", "")), tuple(e.get("values") or ())
                )
                for e in term.get("matchExpressions") or ()
            )
            for term in terms
        )
    except ValueError:
        return ()  # a malformed term (the API refuses them) matches no flavor rather than any


def node(obj: Obj, unmanaged_usage: dict[str, Any] | None = None) -> Node:
    meta = obj["metadata"]
    status = obj.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
    )
    return Node(
        meta["name"],
        dict(meta.get("labels") or {}),
        dict(status.get("allocatable") or {}),
        bool((obj.get("spec") or {}).get("unschedulable")) or not ready,
        dict(unmanaged_usage or {}),
        (meta.get("annotations") or {}).get(RESERVED_FOR_ANNOTATION) or None,
    )


def admission_status(admission: Admission) -> Obj:
    """``status.admission`` of a Workload."""
    return {
        "clusterQueue": admission.cluster_queue,
        "podSetAssignments": [
            {
                "name": psa.name,
                "flavors": dict(psa.flavors),
                "resourceUsage": {k: str(v) for k, v in psa.resource_usage.items()},
                "count": psa.count,
            }
            for psa in admission.pod_set_assignments
        ],
    }
