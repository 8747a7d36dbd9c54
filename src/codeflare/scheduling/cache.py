"""The scheduling cache (Kueue's ``pkg/cache``): quota book, admitted workloads, flavors, nodes.

``SchedulingCache`` holds what admission decides against: ClusterQueue specs compiled into the
:class:`~codeflare.scheduling.quota.QuotaBook`, the workloads the engine knows (their specs and
shapes) and which of them are admitted (charged), ResourceFlavors, the optional node capacity, and
the evictions it has been asked for. It answers "what does this queue's scope hold" and "why is
this queue inactive", and charges or releases admissions. It knows nothing of pending order,
routing or backoff (that is :mod:`manager`'s), and decides nothing (:mod:`cycle` does).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from codeflare.scheduling.assignment import AssignmentContext, Shape
from codeflare.scheduling.capacity import NodeCapacity
from codeflare.scheduling.model import Admission, ClusterQueue, Cohort, Node, ResourceFlavor, Workload
from codeflare.scheduling.preemption import AdmittedWorkload
from codeflare.scheduling.quota import CompiledQueue, FlavorResource, QuotaBook, Usage
from codeflare.scheduling.results import Eviction, PendingInfo

__all__ = ["SchedulingCache", "admission_usage", "by_resource"]


def admission_usage(admission: Admission) -> dict[FlavorResource, int]:
    """Total usage per (flavor, resource) recorded in an Admission."""
    usage: dict[FlavorResource, int] = {}
    for psa in admission.pod_set_assignments:
        for resource, amount in psa.resource_usage.items():
            flavor = psa.flavors.get(resource)
            if flavor is None:
                continue
            fr = (flavor, resource)
            usage[fr] = usage.get(fr, 0) + amount.milli
    return usage


def by_resource(usage: Mapping[FlavorResource, int]) -> dict[str, int]:
    """Usage per (flavor, resource) summed over flavors, per resource name."""
    out: dict[str, int] = {}
    for (_, resource), amount in usage.items():
        out[resource] = out.get(resource, 0) + amount
    return out


@dataclass(eq=False)
class SchedulingCache:
    """Quota, admitted workloads, flavors and nodes; edited by the engine, read by the cycle."""

    capacity_check: bool
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    book: QuotaBook = field(default_factory=QuotaBook)
    nodes: NodeCapacity = field(default_factory=NodeCapacity)
    cqs: dict[str, ClusterQueue] = field(default_factory=dict)
    workloads: dict[str, Workload] = field(default_factory=dict)
    shapes: dict[str, Shape] = field(default_factory=dict)
    admitted: dict[str, AdmittedWorkload] = field(default_factory=dict)
    admitted_by_cq: dict[str, dict[str, AdmittedWorkload]] = field(default_factory=dict)
    to_evict: dict[str, Eviction] = field(default_factory=dict)
    ctx: AssignmentContext = field(init=False)
    # counts changes of flavors, nodes, ClusterQueues and Cohorts (what flavor assignment reads
    # besides usage): a class's assignment remembered under another generation is made again
    config_generation: int = 0
    # queue -> (the generation it was read under, why the queue is inactive or None)
    _inactive: dict[str, tuple[int, PendingInfo | None]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.ctx = AssignmentContext(self.book, self.flavors, self.nodes if self.capacity_check else None)

    # -- flavors, nodes, cluster queues ------------------------------------------------------
    def set_flavor(self, name: str, flavor: ResourceFlavor | None) -> None:
        self.config_generation += 1
        if flavor is None:
            self.flavors.pop(name, None)
        else:
            self.flavors[name] = flavor
        self.nodes.invalidate()

    def set_node(self, name: str, node: Node | None) -> None:
        self.config_generation += 1
        self.nodes.set_node(name, node)

    def set_cluster_queue(self, name: str, spec: ClusterQueue | None) -> set[str]:
        """Install, replace or drop a ClusterQueue; returns the scopes whose quota changed."""
        self.config_generation += 1
        if spec is None:
            self.cqs.pop(name, None)
        else:
            self.cqs[name] = spec
        return self.book.set_queue(spec, name)

    def set_cohort(self, name: str, spec: Cohort | None) -> set[str]:
        """Install, replace or drop a Cohort object; returns the scopes whose quota changed."""
        self.config_generation += 1
        return self.book.set_cohort(spec, name)

    def cluster_queue(self, name: str) -> ClusterQueue | None:
        return self.cqs.get(name)

    def compiled(self, name: str) -> CompiledQueue:
        return self.book.queues[name]

    def inactive_reason(self, name: str) -> PendingInfo | None:
        """Why the queue admits nothing now (stopped, in a cohort cycle, or a flavor missing), or
        None; read again only after a configuration change (asked once per candidate)."""
        known = self._inactive.get(name)
        if known is not None and known[0] == self.config_generation:
            return known[1]
        reason = self._inactive_now(name)
        self._inactive[name] = (self.config_generation, reason)
        return reason

    def _inactive_now(self, name: str) -> PendingInfo | None:
        spec = self.cqs[name]
        if spec.stop_policy != "None":
            return PendingInfo(
                "ClusterQueueStopped", f"ClusterQueue {name} is stopped ({spec.stop_policy})", name
            )
        compiled = self.book.queues[name]
        if compiled.cycle is not None:
            message = f"ClusterQueue {name} is inactive: {compiled.cycle}"
            return PendingInfo("ClusterQueueInactive", message, name)
        flavors = self.flavors
        for _, names in compiled.groups:  # compiled.flavors without building the list (once per candidate)
            for flavor in names:
                if flavor not in flavors:
                    message = f"ClusterQueue {name} is inactive: ResourceFlavor {flavor} does not exist"
                    return PendingInfo("ClusterQueueInactive", message, name)
        return None

    # -- scopes --------------------------------------------------------------------------------
    def scope(self, name: str) -> str:
        return self.book.scope(name)

    def members(self, scope: str) -> list[str]:
        return self.book.members(scope)

    def scope_admitted(self, name: str, exclude: Collection[str] = ()) -> list[AdmittedWorkload]:
        """Admitted workloads of the queue's scope (its cohort tree, or itself), minus ``exclude``."""
        out: list[AdmittedWorkload] = []
        for member in self.book.members(self.book.scope(name)):
            out.extend(w for w in self.admitted_by_cq.get(member, {}).values() if w.key not in exclude)
        out.sort(key=lambda w: w.key)
        return out

    # -- workloads -----------------------------------------------------------------------------
    def remember(self, workload: Workload, shape: Shape) -> None:
        self.workloads[workload.key] = workload
        self.shapes[workload.key] = shape

    def forget(self, key: str) -> Workload | None:
        self.shapes.pop(key, None)
        self.to_evict.pop(key, None)
        return self.workloads.pop(key, None)

    def charge(
        self, key: str, workload: Workload, admission: Admission, usage: Usage | None = None
    ) -> AdmittedWorkload:
        """Record ``workload`` as admitted with ``admission`` and charge its usage (``usage``: the
        admission's per flavor-resource when the caller has it, only read)."""
        cq = admission.cluster_queue
        record = AdmittedWorkload(
            key,
            workload.priority,
            workload.creation_time,
            admission.admitted_at,
            cq,
            admission_usage(admission) if usage is None else usage,
            local_queue=(workload.namespace, workload.queue_name),
        )
        self.workloads[key] = workload
        self.admitted[key] = record
        self.admitted_by_cq.setdefault(cq, {})[key] = record
        self.book.charge(cq, record.usage)
        return record

    def release(self, key: str) -> tuple[AdmittedWorkload, str] | None:
        """Release an admitted workload's quota; returns it and the scope it was charged in."""
        record = self.admitted.pop(key, None)
        if record is None:
            return None
        self.admitted_by_cq[record.cluster_queue].pop(key, None)
        scope = self.book.scope(record.cluster_queue)  # before a draining queue goes
        self.book.charge(record.cluster_queue, record.usage, -1)
        return record, scope

    def mark_evict(self, key: str, reason: str, message: str) -> None:
        """Ask for an admitted workload's eviction (reported by the next cycle)."""
        record = self.admitted.get(key)
        if record is not None and record.evicting is None:
            self.to_evict[key] = Eviction(key, reason, message)  # type: ignore[arg-type]

    def take_evictions(self) -> list[Eviction]:
        """The evictions asked for since the last call, marked as under way."""
        out = []
        for key in sorted(self.to_evict):
            eviction = self.to_evict[key]
            self.admitted[key].evicting = eviction.reason
            out.append(eviction)
        self.to_evict.clear()
        return out
