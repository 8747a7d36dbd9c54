"""``AdmissionEngine``: the incrementally maintained state and the public API of scheduling.

Callers feed it inputs one object at a time (flavors, cluster queues, local queues, namespace
labels, workloads, nodes) and call ``schedule(now)``. What it keeps between calls is an
:class:`~codeflare.scheduling.state.EngineState`, split as Kueue splits it: the scheduling cache
(quota book, admitted workloads, flavors, nodes) and the queue manager (routing, pending heaps,
backoff timers); the decision cycle over them lives in ``cycle``, which never sees the engine and
uses only their methods. Contract with the caller:

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

import logging
from collections.abc import Mapping

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.afs import USAGE_BASED, LocalQueueKey, LocalQueueUsage, UsageLedger
from codeflare.scheduling.assignment import Shape
from codeflare.scheduling.cache import by_resource
from codeflare.scheduling.cycle import pending_reason, run_cycle
from codeflare.scheduling.fairsharing import weighted_shares
from codeflare.scheduling.model import (
    Admission,
    AdmissionFairSharing,
    ClusterQueue,
    Cohort,
    FairSharing,
    LocalQueue,
    Node,
    ResourceFlavor,
    Workload,
)
from codeflare.scheduling.placement import placement_of
from codeflare.scheduling.quota import Usage
from codeflare.scheduling.records import evolved
from codeflare.scheduling.results import PendingInfo, SchedulingResult
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


class AdmissionEngine:
    """Kueue-compatible admission: quota, cohort trees, borrowing, preemption, fair sharing,
    reasons, backoff."""

    def __init__(
        self,
        *,
        backoff_time: float = 20.0,
        head_of_line_holding_time: float = 0.0,
        capacity_check: bool = False,
        fair_sharing: FairSharing | None = None,
        admission_fair_sharing: AdmissionFairSharing | None = None,
    ) -> None:
        self.state = EngineState(backoff_time, head_of_line_holding_time, capacity_check)
        if fair_sharing is not None:
            self.state.fair_sharing = fair_sharing
            self.state.cache.ctx.fair_sharing = fair_sharing.enable
        if admission_fair_sharing is not None:
            ledger = UsageLedger(admission_fair_sharing)
            self.state.manager.afs = self.state.cache.ctx.afs = ledger

    @property
    def backoff_time(self) -> float:
        return self.state.backoff_time

    @property
    def head_of_line_holding_time(self) -> float:
        return self.state.head_of_line_holding_time

    @property
    def capacity_check(self) -> bool:
        return self.state.capacity_check

    @property
    def explain(self) -> bool:
        """Whether ``schedule`` words its quota, preemption and hold reasons (on by default). Off,
        their messages are empty and all else is the same (decisions, kinds, shortfalls, times):
        for a simulation that reads no words, which then builds none."""
        return self.state.explain

    @explain.setter
    def explain(self, on: bool) -> None:
        self.state.explain = on

    # -- resource flavors --------------------------------------------------------------------
    def add_resource_flavor(self, flavor: ResourceFlavor) -> None:
        """Add or replace a ResourceFlavor."""
        self.state.cache.set_flavor(flavor.name, flavor)
        self._wake_all()

    def remove_resource_flavor(self, name: str) -> None:
        """Remove a ResourceFlavor; queues naming it become inactive."""
        self.state.cache.set_flavor(name, None)
        self._wake_all()

    # -- cluster queues ----------------------------------------------------------------------
    def add_cluster_queue(self, queue: ClusterQueue) -> None:
        """Add or replace a ClusterQueue (quota, cohort, policies)."""
        self._set_cluster_queue(queue.name, queue)

    update_cluster_queue = add_cluster_queue

    def remove_cluster_queue(self, name: str) -> None:
        """Remove a ClusterQueue; its pending workloads report it missing, its admitted ones keep
        their usage in its cohort until they finish (the queue drains)."""
        self._set_cluster_queue(name, None)

    def _set_cluster_queue(self, name: str, spec: ClusterQueue | None) -> None:
        cache, manager = self.state.cache, self.state.manager
        old = cache.cluster_queue(name)
        for scope in cache.set_cluster_queue(name, spec):
            self._wake_scope(scope)
        ledger = manager.afs
        ranked = ledger is not None and spec is not None and spec.admission_mode == USAGE_BASED
        if ledger is not None:
            ledger.ranked_queues.discard(name)
            if ranked:
                ledger.ranked_queues.add(name)
        if spec is None:
            for key in manager.close_queue(name):
                self._place(key)
        else:
            for key in manager.open_queue(name, ranked):
                self._place(key)
            if spec.stop_policy == "HoldAndDrain" and (old is None or old.stop_policy != "HoldAndDrain"):
                for key in sorted(cache.admitted_by_cq.get(name, {})):
                    cache.mark_evict(
                        key, "ClusterQueueStopped", f"ClusterQueue {name} is stopped (HoldAndDrain)"
                    )
        for lq_key in manager.local_queues_of(name):
            self._replace_local_queue_workloads(lq_key)

    # -- cohorts -----------------------------------------------------------------------------
    def add_cohort(self, cohort: Cohort) -> None:
        """Add or replace a Cohort object (parent, quota, fair-sharing weight)."""
        self._set_cohort(cohort.name, cohort)

    def remove_cohort(self, name: str) -> None:
        """Remove a Cohort object; queues naming it keep an implicit cohort of that name."""
        self._set_cohort(name, None)

    def _set_cohort(self, name: str, spec: Cohort | None) -> None:
        for scope in self.state.cache.set_cohort(name, spec):
            self._wake_scope(scope)

    # -- local queues and namespaces ---------------------------------------------------------
    def add_local_queue(self, queue: LocalQueue) -> None:
        """Add or replace a LocalQueue."""
        self.state.manager.set_local_queue((queue.namespace, queue.name), queue)
        self._replace_local_queue_workloads((queue.namespace, queue.name))

    def remove_local_queue(self, namespace: str, name: str) -> None:
        """Remove a LocalQueue; its pending workloads report it missing."""
        self.state.manager.set_local_queue((namespace, name), None)
        self._replace_local_queue_workloads((namespace, name))

    def add_namespace(self, name: str, labels: Mapping[str, str]) -> None:
        """Add or replace a namespace's labels (for ClusterQueue namespaceSelector)."""
        for lq_key in self.state.manager.set_namespace(name, dict(labels)):
            self._replace_local_queue_workloads(lq_key)

    def remove_namespace(self, name: str) -> None:
        """Forget a namespace's labels."""
        for lq_key in self.state.manager.set_namespace(name, None):
            self._replace_local_queue_workloads(lq_key)

    def _replace_local_queue_workloads(self, lq_key: tuple[str, str]) -> None:
        for key in self.state.manager.members_of(lq_key):
            self.state.manager.unqueue(key)
            self._place(key)

    # -- nodes -------------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        """Add or replace a node of the capacity snapshot."""
        self.state.cache.set_node(node.name, node)
        if self.state.capacity_check:
            self._wake_all()

    def remove_node(self, name: str) -> None:
        """Remove a node of the capacity snapshot."""
        self.state.cache.set_node(name, None)
        if self.state.capacity_check:
            self._wake_all()

    # -- workloads ---------------------------------------------------------------------------
    def add_workload(self, workload: Workload) -> None:
        """Add or replace a workload (see the module docstring for the admission contract)."""
        cache = self.state.cache
        key = workload.key
        old = cache.workloads.get(key)
        record = cache.admitted.get(key)
        if old is not None and record is not None and old.admission == workload.admission:
            cache.workloads[key] = workload
            record.priority = workload.priority
            if not workload.active:
                cache.mark_evict(key, "InactiveWorkload", f"workload {key} was deactivated")
            return
        self._detach(key)
        cache.remember(workload, workload_shape(workload))
        if workload.admission is not None:
            self._charge(key, workload, workload.admission)
            return
        self.state.manager.track(workload)
        self._place(key)

    update_workload = add_workload

    def remove_workload(self, key: str) -> None:
        """Forget a workload (finished or deleted); its quota is released."""
        self._detach(key)

    def _charge(self, key: str, workload: Workload, admission: Admission, usage: Usage | None = None) -> None:
        cache = self.state.cache
        record = cache.charge(key, workload, admission, usage)
        if self.state.manager.afs is not None:
            self.state.manager.afs.charge(_local_queue(workload), by_resource(record.usage))
        spec = cache.cluster_queue(admission.cluster_queue)
        if not workload.active:
            cache.mark_evict(key, "InactiveWorkload", f"workload {key} was deactivated")
        elif spec is not None and spec.stop_policy == "HoldAndDrain":
            message = f"ClusterQueue {spec.name} is stopped (HoldAndDrain)"
            cache.mark_evict(key, "ClusterQueueStopped", message)

    def _detach(self, key: str) -> None:
        cache, manager = self.state.cache, self.state.manager
        workload = cache.forget(key)
        if workload is None:
            return
        held = manager.unnominate(key)
        if held is not None:
            self._wake_scope(held)  # what it held back may go now
        manager.forget(key)
        released = cache.release(key)
        if released is not None:
            if manager.afs is not None:
                manager.afs.charge(_local_queue(workload), by_resource(released[0].usage), -1)
            if self.state.capacity_check:
                self._wake_all()
            else:
                self._wake_scope(released[1])
            return
        manager.unqueue(key)
        manager.untrack(workload)

    def _place(self, key: str) -> None:
        cache = self.state.cache
        self.state.manager.place(cache.workloads[key], cache.shapes[key], cache.cqs)

    # -- waking ------------------------------------------------------------------------------
    def _wake_scope(self, scope: str) -> None:
        self.state.manager.wake(self.state.cache.members(scope))

    def _wake_all(self) -> None:
        cache = self.state.cache
        for scope in sorted({cache.scope(name) for name in cache.cqs}):
            cache.book.bump(scope, freed=True)
        self.state.manager.wake(set(cache.cqs))

    # -- queries -----------------------------------------------------------------------------
    def admission(self, key: str) -> Admission | None:
        """The admission the engine holds for a workload (assumed or reported)."""
        workload = self.state.cache.workloads.get(key)
        return workload.admission if workload is not None else None

    def workload(self, key: str) -> Workload | None:
        """The engine's view of a workload (with the admission it assumed, if any)."""
        return self.state.cache.workloads.get(key)

    def usage(self, cluster_queue: str) -> dict[tuple[str, str], Quantity]:
        """Charged usage of a ClusterQueue per (flavor, resource)."""
        usage = self.state.cache.book.usage.get(cluster_queue, {})
        return {fr: Quantity(v) for fr, v in sorted(usage.items()) if v}

    def quota_violations(self) -> list[str]:
        """Queues or cohorts charged beyond their limits: only after quota was lowered or removed
        under use, or a queue moved; usage of flavor-resources no longer in quota is counted."""
        return self.state.cache.book.violations()

    def weighted_shares(self) -> tuple[dict[str, int], dict[str, int]]:
        """Fair sharing's ``weightedShare`` of every ClusterQueue and Cohort object, as usage
        stands (Kueue's ``status.fairSharing``); by name, ClusterQueues then Cohorts."""
        return weighted_shares(self.state.cache.book)

    def cohort_cycles(self) -> dict[str, str]:
        """Cohorts in (or under) a cycle of parents, with the cycle: they and their queues admit
        nothing until it is broken."""
        cohorts = self.state.cache.book.cohorts
        return {name: node.cycle for name, node in sorted(cohorts.items()) if node.cycle is not None}

    def evicting(self) -> dict[str, str]:
        """Workloads asked to be evicted and still charged: key -> reason."""
        admitted = self.state.cache.admitted
        return {k: r.evicting for k, r in sorted(admitted.items()) if r.evicting is not None}

    def pending_order(self, cluster_queue: str) -> list[str] | None:
        """The pending workloads of a ClusterQueue in the order its queue tries them (priority,
        then creation time), parked ones included; None when the engine has no such queue."""
        queue = self.state.manager.queue(cluster_queue)
        return None if queue is None else queue.ordered()

    def pending_reason(self, key: str) -> PendingInfo | None:
        """Why a pending workload is not admitted (None when admitted or unknown)."""
        return pending_reason(self.state, key)

    # -- the decision cycle ------------------------------------------------------------------
    def schedule(self, now: float, budget: int | None = None) -> SchedulingResult:
        """Decide at time ``now``: admissions, preemptions, evictions, pending reasons. With a
        ``budget``, stop after the round that reaches that many admissions (``unfinished``: the
        queues that would go on stay woken for the next call, whose decisions then see what
        arrived in between, as Kueue's next cycle does)."""
        self.state.now = now
        result = SchedulingResult(now)
        result.evictions.extend(self.state.cache.take_evictions())
        result.pending.update(self.state.manager.take_fresh())
        run_cycle(self.state, now, result, self._record_admission, budget)
        result.next_wakeup = self.state.manager.next_wakeup()
        logger.debug(
            "scheduling cycle at %s: %d admitted, %d preempted, %d evicted",
            now, len(result.admissions), len(result.preemptions), len(result.evictions),
        )  # fmt: skip
        return result

    def _record_admission(self, key: str, admission: Admission, usage: Usage) -> None:
        workload = evolved(self.state.cache.workloads[key], admission=admission)
        self.state.manager.unqueue(key)
        self.state.manager.untrack(workload)
        self._charge(key, workload, admission, usage)
        if self.state.manager.afs is not None:
            self.state.manager.afs.admit(_local_queue(workload), _requests(workload), self.state.now)

    # -- admission fair sharing --------------------------------------------------------------
    def sample_local_queue_usage(self, now: float) -> dict[LocalQueueKey, LocalQueueUsage]:
        """Decay the recent usage of every LocalQueue whose sampling interval has passed to
        ``now`` (Kueue's LocalQueue controller); returns them with their new status values. Empty
        when admission fair sharing is not configured."""
        ledger = self.state.manager.afs
        if ledger is None:
            return {}
        sampled = ledger.sample(now, self.state.manager.lqs)
        if sampled:
            self.state.manager.wake(set(ledger.ranked_queues))  # the order of their heads moved
        return sampled

    def next_usage_sample(self, now: float) -> float | None:
        """When :meth:`sample_local_queue_usage` has something to do next (None: never)."""
        ledger = self.state.manager.afs
        return None if ledger is None else ledger.due(now, self.state.manager.lqs)

    def seed_local_queue_usage(
        self, namespace: str, name: str, consumed: Mapping[str, Quantity], last_update: float
    ) -> None:
        """Resume a LocalQueue's recent usage from its status (a restart keeps the history)."""
        if self.state.manager.afs is not None:
            self.state.manager.afs.seed((namespace, name), consumed, last_update)

    def local_queue_usage(self, namespace: str, name: str) -> LocalQueueUsage | None:
        """A LocalQueue's recent usage as admission fair sharing ranks it (None when off)."""
        ledger = self.state.manager.afs
        return None if ledger is None else ledger.usage((namespace, name))


def _local_queue(workload: Workload) -> LocalQueueKey:
    return (workload.namespace, workload.queue_name)


def _requests(workload: Workload) -> dict[str, int]:
    """A workload's total requests per resource, milli-units (Kueue's SumTotalRequests)."""
    total: dict[str, int] = {}
    for ps in workload.pod_sets:
        for resource, quantity in ps.requests.items():
            total[resource] = total.get(resource, 0) + quantity.milli * ps.count
    return total
