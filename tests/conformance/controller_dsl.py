"""The vocabulary of the controller conformance cases: Kueue objects, and the steps of a case.

A case is data: the objects it starts from and a list of steps, each an action (create, patch,
delete, finish a Workload) or an expectation (admitted with these flavors, pending with this
reason, evicted, queue counters, a condition) as Kueue's integration tests write them with
``util.ExpectWorkloadToBeAdmittedAs``, ``ExpectWorkloadsToBePending``, ``FinishWorkloads`` and
the like. Names are short (as in Kueue's tests); :mod:`controller_runner` gives every case its
own namespace and prefixes cluster-scoped names, so cases share one control plane. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
KUEUE = "kueue.x-k8s.io/v1beta1"
Quota = str | tuple[str, str | None] | tuple[str, str | None, str | None]  # nominal[, borrowing[, lending]]


@dataclass(frozen=True)
class Step:
    """One action or expectation; ``args`` as the verb needs them (see the builders below)."""

    verb: str
    args: tuple[Any, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """A Kueue integration test (``source``: file and test name) ported as objects and steps."""

    source: str
    objects: tuple[Obj, ...]
    steps: tuple[Step, ...]
    differs: str = ""  # why we deliberately differ (the step that differs is written our way)


# -- objects --------------------------------------------------------------------------------------
def flavor(name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None) -> Obj:
    spec: Obj = {}
    if labels:
        spec["nodeLabels"] = labels
    if taints:
        spec["nodeTaints"] = taints
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def quotas(flavor_name: str, **resources: Quota) -> Obj:
    """``MakeFlavorQuotas(name).Resource(res, nominal[, borrowing[, lending]])``."""
    out = []
    for res, quota in resources.items():
        values = (quota,) if isinstance(quota, str) else quota
        entry: Obj = {"name": res, "nominalQuota": values[0]}
        if len(values) > 1 and values[1] is not None:
            entry["borrowingLimit"] = values[1]
        if len(values) > 2 and values[2] is not None:
            entry["lendingLimit"] = values[2]
        out.append(entry)
    return {"name": flavor_name, "resources": out}


def cluster_queue(name: str, *flavors: Obj, selector: Obj | None = None, **spec: Any) -> Obj:
    """One resource group over ``flavors`` (Kueue's wrapper: namespaceSelector ``{}`` by default)."""
    covered = [r["name"] for r in flavors[0]["resources"]] if flavors else []
    body: Obj = {
        "namespaceSelector": {} if selector is None else selector,
        "resourceGroups": [{"coveredResources": covered, "flavors": list(flavors)}] if flavors else [],
    }
    body.update({k: v for k, v in spec.items() if v is not None})
    if body["namespaceSelector"] == "null":
        del body["namespaceSelector"]
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def cohort(name: str, *flavors: Obj, parent: str | None = None, weight: str | None = None) -> Obj:
    """``MakeCohort(name).Parent(parent).ResourceGroup(flavors...).FairWeight(weight)``."""
    spec: Obj = {}
    if parent:
        spec["parentName"] = parent
    if flavors:
        spec["resourceGroups"] = [
            {"coveredResources": [r["name"] for r in flavors[0]["resources"]], "flavors": list(flavors)}
        ]
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {"apiVersion": KUEUE, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def local_queue(name: str, cq: str, stop: str | None = None, weight: str | None = None) -> Obj:
    spec: Obj = {"clusterQueue": cq}
    if stop:
        spec["stopPolicy"] = stop
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": name}, "spec": spec}


def pod_set(name: str = "main", count: int = 1, **requests: str) -> Obj:
    return {
        "name": name,
        "count": count,
        "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}},
    }


def workload(
    name: str,
    queue: str,
    *pod_sets: Obj,
    cpu: str | None = None,
    priority: int | None = None,
    tolerations: list[Obj] | None = None,
    node_selector: dict[str, str] | None = None,
    namespace: str | None = None,
) -> Obj:
    """``MakeWorkload(name, ns).Queue(queue).Request(cpu, x)``: one pod set "main" by default."""
    sets = [dict(ps) for ps in pod_sets] or [pod_set(**({"cpu": cpu} if cpu else {}))]
    for ps in sets:
        spec = ps["template"]["spec"]
        if tolerations:
            spec["tolerations"] = tolerations
        if node_selector:
            spec["nodeSelector"] = node_selector
    body: Obj = {"queueName": queue, "podSets": sets}
    if priority is not None:
        body["priority"] = priority
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": KUEUE, "kind": "Workload", "metadata": meta, "spec": body}


def namespace(name: str, labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


def priority_class(name: str, value: int) -> Obj:
    return {"apiVersion": KUEUE, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}


# -- steps -----------------------------------------------------------------------------------------
def create(*objs: Obj) -> Step:
    return Step("create", objs)


def patch(kind: str, name: str, body: Obj, namespace_name: str | None = None) -> Step:
    """A merge patch of the named object (Workloads and LocalQueues: in the case's namespace)."""
    return Step("patch", (kind, name, body), {"namespace": namespace_name})


def delete(kind: str, name: str) -> Step:
    return Step("delete", (kind, name))


def finish(*workloads: str) -> Step:
    """``util.FinishWorkloads``: Finished=True written on each Workload."""
    return Step("finish", workloads)


def admitted(
    cq: str, *workloads: str, flavors: dict[str, str] | None = None, count: int | None = None
) -> Step:
    """``ExpectWorkloadsToHaveQuotaReservation`` (and ``ToBeAdmittedAs`` when ``flavors`` is given:
    resource -> flavor of pod set "main")."""
    return Step("admitted", (cq, workloads), {"flavors": flavors, "count": count})


def admitted_count(cq: str, count: int, *workloads: str) -> Step:
    """``ExpectWorkloadsToBeAdmittedCount``: exactly ``count`` of ``workloads`` hold quota in ``cq``."""
    return Step("admitted_count", (cq, count, workloads))


def lq_usage(lq: str, op: str, milli: int, resource: str = "cpu") -> Step:
    """``ExpectLocalQueueFairSharingUsageToBe``: the LocalQueue's consumed resources (admission fair
    sharing status) hold exactly one resource, whose milli-value compares with ``op`` to ``milli``."""
    return Step("lq_usage", (lq, op, milli, resource))


def pending(*workloads: str, reason: str = "Pending", message: str | None = None) -> Step:
    """``ExpectWorkloadsToBePending``: QuotaReserved=False with ``reason`` (and ``message`` in it)."""
    return Step("pending", workloads, {"reason": reason, "message": message})


def evicted(*workloads: str, reason: str) -> Step:
    """Evicted=True with ``reason`` (``ExpectWorkloadsToBePreempted`` is reason "Preempted")."""
    return Step("evicted", workloads, {"reason": reason})


def counts(cq: str, pending_count: int, admitted_count: int) -> Step:
    """ClusterQueue ``status.pendingWorkloads`` / ``admittedWorkloads`` (Kueue's pending metrics)."""
    return Step("counts", (cq, pending_count, admitted_count))


def lq_counts(lq: str, pending_count: int, admitted_count: int) -> Step:
    return Step("lq_counts", (lq, pending_count, admitted_count))


def condition(kind: str, name: str, type_: str, status: str, reason: str, message: str | None = None) -> Step:
    return Step("condition", (kind, name, type_, status, reason), {"message": message})


def lacks_condition(kind: str, name: str, type_: str) -> Step:
    """The object has no condition of ``type_`` (e.g. a Workload never ``Preempted``)."""
    return Step("lacks_condition", (kind, name, type_))


def gone(kind: str, name: str) -> Step:
    """The object no longer exists (``ExpectObjectToBeDeleted``)."""
    return Step("gone", (kind, name))


def finalized(kind: str, name: str) -> Step:
    """The object is being deleted and still holds the resource-in-use finalizer."""
    return Step("finalized", (kind, name))


def spec_is(kind: str, name: str, path: str, value: Any) -> Step:
    """A field of the object (dotted path) has ``value``."""
    return Step("spec_is", (kind, name, path, value))


def next_second() -> Step:
    """Wait until the clock enters the next second, so that the next object is strictly newer
    (creationTimestamp has second resolution; Kueue orders and preempts by it)."""
    return Step("next_second")


def has_finalizer(kind: str, name: str) -> Step:
    """The object carries the resource-in-use finalizer (Kueue's webhook adds it at creation)."""
    return Step("has_finalizer", (kind, name))
