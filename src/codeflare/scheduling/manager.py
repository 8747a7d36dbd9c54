"""The queue manager (Kueue's ``pkg/queue/manager.go``): routing, pending heaps, backoff timers.

``QueueManager`` routes pending workloads from their LocalQueue to a ClusterQueue's
:class:`~codeflare.scheduling.queues.PendingQueue` (or holds them blocked with the reason: no
LocalQueue, no ClusterQueue, namespace not selected, inactive), remembers which ClusterQueues
must be looked at in the next cycle (woken), the backoff timers of parked shape classes, and
the preemptors that hold quota while their victims are evicted. It knows no quota and decides
nothing; routing rules that need a ClusterQueue's spec get it passed in.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection
from dataclasses import dataclass, field

from codeflare.scheduling.afs import UsageLedger
from codeflare.scheduling.assignment import Shape
from codeflare.scheduling.model import ClusterQueue, LocalQueue, Workload
from codeflare.scheduling.queues import OrderKey, PendingQueue, ShapeClass, order_key
from codeflare.scheduling.quota import FlavorResource
from codeflare.scheduling.results import PendingInfo

__all__ = ["QueueManager"]

LocalQueueKey = tuple[str, str]


@dataclass(eq=False)
class QueueManager:
    """Pending workloads by ClusterQueue, LocalQueues, namespaces, wake-ups and timers."""

    queues: dict[str, PendingQueue] = field(default_factory=dict)  # per ClusterQueue
    lqs: dict[LocalQueueKey, LocalQueue] = field(default_factory=dict)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> labels
    blocked: dict[str, PendingInfo] = field(default_factory=dict)  # pending outside any queue
    queued_in: dict[str, str] = field(default_factory=dict)  # workload -> ClusterQueue
    by_lq: dict[LocalQueueKey, set[str]] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)  # blocked since the last cycle (reasons to report)
    dirty: set[str] = field(default_factory=set)  # ClusterQueues to look at in the next cycle
    # (ClusterQueue, preemptor) held back when a call stopped at its budget: the next call goes on
    held_over: list[tuple[str, str]] = field(default_factory=list)
    timers: list[tuple[float, str]] = field(default_factory=list)  # heap of (retry at, ClusterQueue)
    # preemptors waiting for their victims: key -> (scope, order, flavor-resources it needs)
    nominated: dict[str, tuple[str, OrderKey, set[FlavorResource]]] = field(default_factory=dict)
    afs: UsageLedger | None = None  # admission fair sharing, when configured

    # -- local queues, namespaces, cluster queues ----------------------------------------------
    def set_local_queue(self, key: LocalQueueKey, queue: LocalQueue | None) -> None:
        if queue is None:
            self.lqs.pop(key, None)
            if self.afs is not None:
                self.afs.forget(key)
        else:
            self.lqs[key] = queue
            if self.afs is not None:
                self.afs.set_weight(key, queue.fair_sharing_weight)

    def local_queues_of(self, cluster_queue: str) -> list[LocalQueueKey]:
        return sorted(k for k, lq in self.lqs.items() if lq.cluster_queue == cluster_queue)

    def set_namespace(self, name: str, labels: dict[str, str] | None) -> list[LocalQueueKey]:
        """Set (or forget) a namespace's labels; returns the LocalQueues with workloads there."""
        if labels is None:
            self.namespaces.pop(name, None)
        else:
            self.namespaces[name] = labels
        return sorted(k for k in self.by_lq if k[0] == name)

    def open_queue(self, cluster_queue: str, ranked: bool = False) -> list[str]:
        """Open (or keep) a ClusterQueue's pending heap, ``ranked`` by admission fair sharing or
        not; a queue switching between the two is rebuilt: returns its workloads to route again."""
        ranking = self.afs if ranked else None
        queue = self.queues.get(cluster_queue)
        keys = []
        if queue is not None and queue.ranking is not ranking:
            keys = self.close_queue(cluster_queue)
            queue = None
        if queue is None:
            self.queues[cluster_queue] = PendingQueue(cluster_queue, ranking)
        self.dirty.add(cluster_queue)
        return keys

    def close_queue(self, cluster_queue: str) -> list[str]:
        """Drop a ClusterQueue's pending heap; returns its workloads, to be routed again."""
        queue = self.queues.pop(cluster_queue, None)
        keys = sorted(queue.shape_of) if queue is not None else []
        for key in keys:
            self.queued_in.pop(key, None)
        return keys

    def queue(self, cluster_queue: str) -> PendingQueue | None:
        return self.queues.get(cluster_queue)

    # -- routing -------------------------------------------------------------------------------
    def track(self, workload: Workload) -> None:
        """Remember a pending workload under its LocalQueue."""
        self.by_lq.setdefault((workload.namespace, workload.queue_name), set()).add(workload.key)

    def untrack(self, workload: Workload) -> None:
        lq_key = (workload.namespace, workload.queue_name)
        members = self.by_lq.get(lq_key)
        if members is not None:
            members.discard(workload.key)
            if not members:
                del self.by_lq[lq_key]

    def members_of(self, lq_key: LocalQueueKey) -> list[str]:
        return sorted(self.by_lq.get(lq_key, ()))

    def route(
        self, workload: Workload, cqs: dict[str, ClusterQueue]
    ) -> tuple[str | None, PendingInfo | None]:
        """The ClusterQueue a pending workload goes to, or why it is blocked."""
        if not workload.active:
            return None, PendingInfo("Inactive", f"workload {workload.key} is inactive")
        lq = self.lqs.get((workload.namespace, workload.queue_name))
        if lq is None:
            message = f"LocalQueue {workload.queue_name} does not exist in namespace {workload.namespace}"
            return None, PendingInfo("NoLocalQueue", message)
        spec = cqs.get(lq.cluster_queue)
        if spec is None:
            return None, PendingInfo(
                "NoClusterQueue", f"ClusterQueue {lq.cluster_queue} does not exist", lq.cluster_queue
            )
        selector = spec.namespace_selector
        if selector is None or not selector.matches(self.namespaces.get(workload.namespace, {})):
            message = f"namespace {workload.namespace} is not selected by ClusterQueue {spec.name}"
            return None, PendingInfo("NamespaceNotSelected", message, spec.name)
        return spec.name, None

    def place(self, workload: Workload, shape: Shape, cqs: dict[str, ClusterQueue]) -> None:
        """Queue a pending workload in its ClusterQueue, or hold it blocked with the reason."""
        key = workload.key
        cq, info = self.route(workload, cqs)
        if cq is None:
            assert info is not None
            self.blocked[key] = info
            self.fresh.add(key)
            return
        order = order_key(workload.priority, workload.creation_time, key)
        self.queues[cq].add(key, shape, order, (workload.namespace, workload.queue_name))
        self.queued_in[key] = cq
        self.dirty.add(cq)

    def unqueue(self, key: str) -> None:
        self.blocked.pop(key, None)
        cq = self.queued_in.pop(key, None)
        if cq is not None and cq in self.queues:
            self.queues[cq].discard(key)

    def blocked_reason(self, key: str) -> PendingInfo | None:
        return self.blocked.get(key)

    def cluster_queue_of(self, key: str) -> str | None:
        return self.queued_in.get(key)

    def take_fresh(self) -> dict[str, PendingInfo]:
        """Workloads blocked since the last call, with their reasons."""
        out = {key: self.blocked[key] for key in sorted(self.fresh) if key in self.blocked}
        self.fresh.clear()
        return out

    def forget(self, key: str) -> None:
        self.fresh.discard(key)

    # -- waking and timers ---------------------------------------------------------------------
    def wake(self, names: list[str] | set[str]) -> None:
        self.dirty.update(names)

    def take_woken(self, now: float) -> list[str]:
        """ClusterQueues to look at now: woken ones and those whose backoff timer ran out."""
        while self.timers and self.timers[0][0] <= now:
            _, cq = heapq.heappop(self.timers)
            if cq in self.queues:
                self.dirty.add(cq)
        names = sorted(self.dirty)
        self.dirty.clear()
        return names

    def park(
        self, cluster_queue: str, cls: ShapeClass, generation: int, retry_at: float, info: PendingInfo
    ) -> None:
        cls.park(generation, retry_at, info)
        heapq.heappush(self.timers, (retry_at, cluster_queue))

    def next_wakeup(self) -> float | None:
        return self.timers[0][0] if self.timers else None

    # -- preemptors holding quota ----------------------------------------------------------------
    def nominate(self, key: str, scope: str, order: OrderKey, needs: set[FlavorResource]) -> None:
        self.nominated[key] = (scope, order, needs)

    def unnominate(self, key: str) -> str | None:
        """Forget a preemptor; returns the scope it held quota in."""
        held = self.nominated.pop(key, None)
        return held[0] if held is not None else None

    def is_nominated(self, key: str) -> bool:
        return key in self.nominated

    def preemptor_head(self, cluster_queue: str) -> tuple[OrderKey, ShapeClass] | None:
        """The best-ranked preemptor still queued in ``cluster_queue``, with its class: Kueue keeps
        it at the head of a BestEffortFIFO queue (``preemptorWorkload``, sticky), so a better
        workload queued behind it cannot take the quota its victims free."""
        queue = self.queues.get(cluster_queue)
        if queue is None or not self.nominated:
            return None
        keys = [k for k in self.nominated if self.queued_in.get(k) == cluster_queue and k in queue.shape_of]
        if not keys:
            return None
        cls = queue.classes[queue.shape_of[min(keys, key=lambda k: self.nominated[k][1])]]
        best = min(cls.members[k] for k in keys if k in cls.members)
        return best, cls

    def holder(
        self, key: str, scope: str, order: OrderKey, needs: Collection[FlavorResource] | None
    ) -> str | None:
        """A preemptor of ``scope`` holding quota that ``key`` needs (any, when ``needs`` is
        None), if any: against another preemptor only a higher-ranked one, against any other
        workload every one (Kueue reserves an active preemptor's quota ahead of all, PR #13797)."""
        if not self.nominated:
            return None
        preemptor = key in self.nominated
        for other, (other_scope, other_order, other_needs) in sorted(self.nominated.items()):
            if other == key or other_scope != scope or (preemptor and not other_order < order):
                continue
            if needs is None or not other_needs.isdisjoint(needs):
                return other
        return None
