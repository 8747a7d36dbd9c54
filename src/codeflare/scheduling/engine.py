"""``AdmissionEngine``: the incrementally maintained state and the public API of scheduling.

Callers feed it inputs one object at a time (flavors, cluster queues, local queues, namespace
labels, workloads, nodes) and call ``schedule(now)``. What it keeps between calls is an
:class:`~codeflare.scheduling.state.EngineState`; the decision cycle over that state lives in
``cycle``, which never sees the engine. Contract with the caller:

* Workload keys are ``"namespace/name"`` strings (``Workload.key``).
* ``schedule`` charges every admission it returns at once, so calling it again before the caller
  persists anything never over-commits quota. The caller later reports the workload with that
  admission (``update_workload``; an equal admission is a no-op) and removes it when it finishes.
* Preemption victims and drained/deactivated workloads stay charged until the caller reports
  them without admission (``update_workload``: they are requeued) or removes them.
* ``update_workload`` without admission on an admitted workload withdraws the admission.
No I/O, no clock reads: time is always an argument.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Mapping
from dataclasses import replace

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.assignment import Shape
from codeflare.scheduling.cycle import pending_reason, run_cycle
from codeflare.scheduling.model import (
    Admission,
    ClusterQueue,
    LocalQueue,
    Node,
    ResourceFlavor,
    Workload,
)
from codeflare.scheduling.placement import placement_of
from codeflare.scheduling.preemption import AdmittedWorkload
from codeflare.scheduling.queues import PendingQueue, order_key
from codeflare.scheduling.quota import FlavorResource
from codeflare.scheduling.results import Eviction, PendingInfo, SchedulingResult
from codeflare.scheduling.state import EngineState

logger = logging.getLogger(__name__)


def workload_shape(workload: Workload) -> Shape:
    """The pod sets, per-pod requests and placement constraints of a workload, as a hashable,
    sorted value (workloads of one shape fit or fail together)."""
    return tuple(
        (
            ps.name,
            ps.count,
            tuple(sorted((r, q.milli) for r, q in ps.requests.items() if q.milli)),
            placement_of(ps),
        )
        for ps in workload.pod_sets
    )


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


class AdmissionEngine:
    """Kueue-compatible admission: quota, cohorts, borrowing, preemption, reasons, backoff."""

    def __init__(
        self,
        *,
        backoff_time: float = 20.0,
        head_of_line_holding_time: float = 0.0,
        capacity_check: bool = False,
    ) -> None:
        self.state = EngineState(backoff_time, head_of_line_holding_time, capacity_check)

    @property
    def backoff_time(self) -> float:
        return self.state.backoff_time

    @property
    def head_of_line_holding_time(self) -> float:
        return self.state.head_of_line_holding_time

    @property
    def capacity_check(self) -> bool:
        return self.state.capacity_check

    # -- resource flavors --------------------------------------------------------------------
    def add_resource_flavor(self, flavor: ResourceFlavor) -> None:
        """Add or replace a ResourceFlavor."""
        self.state.flavors[flavor.name] = flavor
        self.state.nodes.invalidate()
        self._wake_all()

    def remove_resource_flavor(self, name: str) -> None:
        """Remove a ResourceFlavor; queues naming it become inactive."""
        self.state.flavors.pop(name, None)
        self.state.nodes.invalidate()
        self._wake_all()

    # -- cluster queues ----------------------------------------------------------------------
    def add_cluster_queue(self, queue: ClusterQueue) -> None:
        """Add or replace a ClusterQueue (quota, cohort, policies)."""
        self._set_cluster_queue(queue.name, queue)

    update_cluster_queue = add_cluster_queue

    def remove_cluster_queue(self, name: str) -> None:
        """Remove a ClusterQueue; its pending workloads report it missing."""
        self._set_cluster_queue(name, None)

    def _set_cluster_queue(self, name: str, spec: ClusterQueue | None) -> None:
        old = self.state.cqs.get(name)
        if spec is None:
            self.state.cqs.pop(name, None)
        else:
            self.state.cqs[name] = spec
        for scope in self.state.book.set_queue(spec, name):
            self._wake_scope(scope)
        if spec is None:
            queue = self.state.queues.pop(name, None)
            if queue is not None:
                for key in sorted(queue.shape_of):
                    self.state.queued_in.pop(key, None)
                    self._place(key)
        else:
            self.state.queues.setdefault(name, PendingQueue(name))
            self.state.dirty.add(name)
            if spec.stop_policy == "HoldAndDrain" and (old is None or old.stop_policy != "HoldAndDrain"):
                for key in sorted(self.state.admitted_by_cq.get(name, {})):
                    self._mark_evict(
                        key, "ClusterQueueStopped", f"ClusterQueue {name} is stopped (HoldAndDrain)"
                    )
        for lq_key in sorted(k for k, lq in self.state.lqs.items() if lq.cluster_queue == name):
            self._replace_local_queue_workloads(lq_key)

    # -- local queues and namespaces ---------------------------------------------------------
    def add_local_queue(self, queue: LocalQueue) -> None:
        """Add or replace a LocalQueue."""
        self.state.lqs[(queue.namespace, queue.name)] = queue
        self._replace_local_queue_workloads((queue.namespace, queue.name))

    def remove_local_queue(self, namespace: str, name: str) -> None:
        """Remove a LocalQueue; its pending workloads report it missing."""
        self.state.lqs.pop((namespace, name), None)
        self._replace_local_queue_workloads((namespace, name))

    def add_namespace(self, name: str, labels: Mapping[str, str]) -> None:
        """Add or replace a namespace's labels (for ClusterQueue namespaceSelector)."""
        self.state.namespaces[name] = dict(labels)
        for lq_key in sorted(k for k in self.state.by_lq if k[0] == name):
            self._replace_local_queue_workloads(lq_key)

    def remove_namespace(self, name: str) -> None:
        """Forget a namespace's labels."""
        self.state.namespaces.pop(name, None)
        for lq_key in sorted(k for k in self.state.by_lq if k[0] == name):
            self._replace_local_queue_workloads(lq_key)

    def _replace_local_queue_workloads(self, lq_key: tuple[str, str]) -> None:
        for key in sorted(self.state.by_lq.get(lq_key, ())):
            self._unqueue(key)
            self._place(key)

    # -- nodes -------------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        """Add or replace a node of the capacity snapshot."""
        self.state.nodes.set_node(node.name, node)
        if self.state.capacity_check:
            self._wake_all()

    def remove_node(self, name: str) -> None:
        """Remove a node of the capacity snapshot."""
        self.state.nodes.set_node(name, None)
        if self.state.capacity_check:
            self._wake_all()

    # -- workloads ---------------------------------------------------------------------------
    def add_workload(self, workload: Workload) -> None:
        """Add or replace a workload (see the module docstring for the admission contract)."""
        key = workload.key
        old = self.state.workloads.get(key)
        record = self.state.admitted.get(key)
        if old is not None and record is not None and old.admission == workload.admission:
            self.state.workloads[key] = workload
            record.priority = workload.priority
            if not workload.active:
                self._mark_evict(key, "InactiveWorkload", f"workload {key} was deactivated")
            return
        self._detach(key)
        self.state.workloads[key] = workload
        self.state.shapes[key] = workload_shape(workload)
        if workload.admission is not None:
            self._charge(key, workload, workload.admission)
            return
        lq_key = (workload.namespace, workload.queue_name)
        self.state.by_lq.setdefault(lq_key, set()).add(key)
        self._place(key)

    update_workload = add_workload

    def remove_workload(self, key: str) -> None:
        """Forget a workload (finished or deleted); its quota is released."""
        self._detach(key)

    def _charge(self, key: str, workload: Workload, admission: Admission) -> None:
        cq = admission.cluster_queue
        record = AdmittedWorkload(
            key,
            workload.priority,
            workload.creation_time,
            admission.admitted_at,
            cq,
            admission_usage(admission),
        )
        self.state.admitted[key] = record
        self.state.admitted_by_cq.setdefault(cq, {})[key] = record
        self.state.book.charge(cq, record.usage)
        spec = self.state.cqs.get(cq)
        if not workload.active:
            self._mark_evict(key, "InactiveWorkload", f"workload {key} was deactivated")
        elif spec is not None and spec.stop_policy == "HoldAndDrain":
            self._mark_evict(key, "ClusterQueueStopped", f"ClusterQueue {cq} is stopped (HoldAndDrain)")

    def _detach(self, key: str) -> None:
        workload = self.state.workloads.pop(key, None)
        if workload is None:
            return
        self.state.shapes.pop(key, None)
        nominated = self.state.nominated.pop(key, None)
        if nominated is not None:
            self._wake_scope(nominated[0])  # what it held back may go now
        self.state.fresh.discard(key)
        self.state.to_evict.pop(key, None)
        record = self.state.admitted.pop(key, None)
        if record is not None:
            self.state.admitted_by_cq[record.cluster_queue].pop(key, None)
            scope = self.state.book.scope(record.cluster_queue)  # before a draining queue goes
            self.state.book.charge(record.cluster_queue, record.usage, -1)
            if self.state.capacity_check:
                self._wake_all()
            else:
                self._wake_scope(scope)
            return
        self._unqueue(key)
        lq_key = (workload.namespace, workload.queue_name)
        members = self.state.by_lq.get(lq_key)
        if members is not None:
            members.discard(key)
            if not members:
                del self.state.by_lq[lq_key]

    def _unqueue(self, key: str) -> None:
        self.state.blocked.pop(key, None)
        cq = self.state.queued_in.pop(key, None)
        if cq is not None and cq in self.state.queues:
            self.state.queues[cq].discard(key)

    def _place(self, key: str) -> None:
        workload = self.state.workloads[key]
        cq, info = self._placement(workload)
        if cq is None:
            assert info is not None
            self.state.blocked[key] = info
            self.state.fresh.add(key)
            return
        order = order_key(workload.priority, workload.creation_time, key)
        self.state.queues[cq].add(key, self.state.shapes[key], order)
        self.state.queued_in[key] = cq
        self.state.dirty.add(cq)

    def _placement(self, workload: Workload) -> tuple[str | None, PendingInfo | None]:
        if not workload.active:
            return None, PendingInfo("Inactive", f"workload {workload.key} is inactive")
        lq = self.state.lqs.get((workload.namespace, workload.queue_name))
        if lq is None:
            message = f"LocalQueue {workload.queue_name} does not exist in namespace {workload.namespace}"
            return None, PendingInfo("NoLocalQueue", message)
        spec = self.state.cqs.get(lq.cluster_queue)
        if spec is None:
            return None, PendingInfo(
                "NoClusterQueue", f"ClusterQueue {lq.cluster_queue} does not exist", lq.cluster_queue
            )
        selector = spec.namespace_selector
        if selector is None or not selector.matches(self.state.namespaces.get(workload.namespace, {})):
            message = f"namespace {workload.namespace} is not selected by ClusterQueue {spec.name}"
            return None, PendingInfo("NamespaceNotSelected", message, spec.name)
        return spec.name, None

    def _mark_evict(self, key: str, reason: str, message: str) -> None:
        record = self.state.admitted.get(key)
        if record is not None and record.evicting is None:
            self.state.to_evict[key] = Eviction(key, reason, message)  # type: ignore[arg-type]

    # -- waking ------------------------------------------------------------------------------
    def _wake_scope(self, scope: str) -> None:
        self.state.dirty.update(self.state.book.members(scope))

    def _wake_all(self) -> None:
        for scope in sorted({self.state.book.scope(name) for name in self.state.cqs}):
            self.state.book.bump(scope, freed=True)
        self.state.dirty.update(self.state.cqs)

    # -- queries -----------------------------------------------------------------------------
    def admission(self, key: str) -> Admission | None:
        """The admission the engine holds for a workload (assumed or reported)."""
        workload = self.state.workloads.get(key)
        return workload.admission if workload is not None else None

    def workload(self, key: str) -> Workload | None:
        """The engine's view of a workload (with the admission it assumed, if any)."""
        return self.state.workloads.get(key)

    def usage(self, cluster_queue: str) -> dict[tuple[str, str], Quantity]:
        """Charged usage of a ClusterQueue per (flavor, resource)."""
        usage = self.state.book.usage.get(cluster_queue, {})
        return {fr: Quantity(v) for fr, v in sorted(usage.items()) if v}

    def quota_violations(self) -> list[str]:
        """Queues or cohorts charged beyond their limits (only after quota is lowered under use)."""
        return self.state.book.violations()

    def evicting(self) -> dict[str, str]:
        """Workloads asked to be evicted and still charged: key -> reason."""
        return {k: r.evicting for k, r in sorted(self.state.admitted.items()) if r.evicting is not None}

    def pending_reason(self, key: str) -> PendingInfo | None:
        """Why a pending workload is not admitted (None when admitted or unknown)."""
        return pending_reason(self.state, key)

    # -- the decision cycle ------------------------------------------------------------------
    def schedule(self, now: float) -> SchedulingResult:
        """Decide at time ``now``: admissions, preemptions, evictions, pending reasons."""
        self.state.now = now
        result = SchedulingResult(now)
        for key in sorted(self.state.to_evict):
            eviction = self.state.to_evict[key]
            self.state.admitted[key].evicting = eviction.reason
            result.evictions.append(eviction)
        self.state.to_evict.clear()
        while self.state.timers and self.state.timers[0][0] <= now:
            _, cq = heapq.heappop(self.state.timers)
            if cq in self.state.queues:
                self.state.dirty.add(cq)
        for key in sorted(self.state.fresh):
            if key in self.state.blocked:
                result.pending[key] = self.state.blocked[key]
        self.state.fresh.clear()
        run_cycle(self.state, now, result, self._record_admission)
        result.next_wakeup = self.state.timers[0][0] if self.state.timers else None
        logger.debug(
            "scheduling cycle at %s: %d admitted, %d preempted, %d evicted",
            now, len(result.admissions), len(result.preemptions), len(result.evictions),
        )  # fmt: skip
        return result

    def _record_admission(self, key: str, admission: Admission) -> None:
        workload = replace(self.state.workloads[key], admission=admission)
        lq_key = (workload.namespace, workload.queue_name)
        self._unqueue(key)
        members = self.state.by_lq.get(lq_key)
        if members is not None:
            members.discard(key)
            if not members:
                del self.state.by_lq[lq_key]
        self.state.workloads[key] = workload
        self._charge(key, workload, admission)
