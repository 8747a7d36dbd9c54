"""The queue-status reporter: ClusterQueue and LocalQueue status counters, usage and Active.

:func:`count_workloads` is the pure part: pending and admitted workloads per ClusterQueue and per
LocalQueue, and each LocalQueue's admitted usage per (flavor, resource), from the Workload and
LocalQueue caches; :func:`kueue_counts` counts them as Kueue's queue gauges do (pending active or
inadmissible, admitted, unadmitted by reason and underlying cause). :class:`QueueStatusReporter`
writes the statuses computed by :mod:`status` (only where they changed; ClusterQueue usage comes
from the engine, which charges admissions before they are written; with admission fair sharing
each LocalQueue's recent usage as the engine last sampled it), the ``resource-in-use``
finalizers decided by :mod:`finalizers`, and sets the ``codeflare_workloads`` gauges; Kueue's are
counted by :meth:`QueueStatusReporter.kueue_counts` when scraped.
It decides no admission and writes no Workload.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field

from codeflare.k8s.conditions import conditions_of, is_condition_true
from codeflare.k8s.quantity import Quantity
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind
from codeflare.kube.ratelimit import Priority, priority
from codeflare.operator.context import OperatorContext
from codeflare.operator.metrics import KueueCounts
from codeflare.operator.queueing import convert, finalizers, reason_codes, status
from codeflare.operator.queueing.decisions import limited
from codeflare.operator.queueing.feeder import QueueingState
from codeflare.scheduling import LocalQueueUsage, workload_key

QueueRef = tuple[str, str]  # LocalQueue (namespace, name)
FlavorResource = tuple[str, str]
PATCH_CONCURRENCY = 16  # queue status patches in flight at once


@dataclass
class QueueCounts:
    """Counters of unfinished workloads: (pending, admitted) per queue, and LocalQueue usage."""

    cluster_queues: dict[str, list[int]] = field(default_factory=dict)
    local_queues: dict[QueueRef, list[int]] = field(default_factory=dict)
    local_usage: dict[QueueRef, dict[FlavorResource, Quantity]] = field(default_factory=dict)

    def of_cluster_queue(self, name: str) -> tuple[int, int]:
        pending, admitted = self.cluster_queues.get(name, [0, 0])
        return pending, admitted

    def of_local_queue(self, ref: QueueRef) -> tuple[int, int]:
        pending, admitted = self.local_queues.get(ref, [0, 0])
        return pending, admitted


def count_workloads(
    workloads: Iterable[Obj], cluster_queue_of: Mapping[QueueRef, str], held: Iterable[QueueRef] = ()
) -> QueueCounts:
    """Count unfinished ``workloads``; a pending one counts in the ClusterQueue its LocalQueue names,
    unless that LocalQueue is stopped (Kueue takes a stopped LocalQueue's workloads out of its
    ClusterQueue's queue, so they are not pending there)."""
    counts = QueueCounts()
    stopped = set(held)
    for wl in workloads:
        if is_condition_true(conditions_of(wl), "Finished"):
            continue
        namespace = str((wl.get("metadata") or {}).get("namespace", ""))
        lq_ref = (namespace, str((wl.get("spec") or {}).get("queueName", "")))
        admission = convert.admission_of(wl)
        cq = admission.cluster_queue if admission else cluster_queue_of.get(lq_ref)
        slot = 1 if admission else 0
        if cq and (admission or lq_ref not in stopped):
            counts.cluster_queues.setdefault(cq, [0, 0])[slot] += 1
        counts.local_queues.setdefault(lq_ref, [0, 0])[slot] += 1
        if admission:
            usage = counts.local_usage.setdefault(lq_ref, {})
            for psa in admission.pod_set_assignments:
                for resource, amount in psa.resource_usage.items():
                    key = (psa.flavors.get(resource, ""), resource)
                    usage[key] = usage[key] + amount if key in usage else amount
    return counts


# Codes of workloads still in their ClusterQueue's heap (Kueue's "active" pending status); any
# other code means an admission attempt failed or the queue is blocked ("inadmissible").
_ACTIVE_CODES = frozenset({reason_codes.PENDING_EVALUATION, reason_codes.WAITING_FOR_PREEMPTED})


def kueue_counts(
    workloads: Iterable[Obj],
    cluster_queue_of: Mapping[QueueRef, str],
    reason_of: Callable[[str, Obj], str],
    held: Iterable[QueueRef] = (),
) -> KueueCounts:
    """Unfinished ``workloads`` as Kueue's gauges count them: admitted per queue; unadmitted per
    queue by ``reason`` NoReservation and ``underlying_cause`` (``reason_of(key, workload)``, the
    QuotaReserved code); pending (only those in a ClusterQueue's queue, so not a stopped
    LocalQueue's) active or inadmissible by that code (pkg/metrics/metrics.go, KEP-10852)."""
    counts, stopped = KueueCounts(), set(held)
    for wl in workloads:
        if is_condition_true(conditions_of(wl), "Finished"):
            continue
        meta = wl.get("metadata") or {}
        lq_ref = (str(meta.get("namespace", "")), str((wl.get("spec") or {}).get("queueName", "")))
        admission = convert.admission_of(wl)
        if admission is not None:
            cq = admission.cluster_queue
            counts.admitted[cq] = counts.admitted.get(cq, 0) + 1
            counts.lq_admitted[lq_ref] = counts.lq_admitted.get(lq_ref, 0) + 1
            continue
        cq = cluster_queue_of.get(lq_ref, "")
        cause = reason_of(workload_key(lq_ref[0], str(meta.get("name", ""))), wl)
        key = (cq, reason_codes.NO_RESERVATION, cause)
        counts.unadmitted[key] = counts.unadmitted.get(key, 0) + 1
        lq_key = (lq_ref, *key)
        counts.lq_unadmitted[lq_key] = counts.lq_unadmitted.get(lq_key, 0) + 1
        if cq and lq_ref not in stopped:
            state = "active" if cause in _ACTIVE_CODES else "inadmissible"
            counts.pending[(cq, state)] = counts.pending.get((cq, state), 0) + 1
            counts.lq_pending[(lq_ref, state)] = counts.lq_pending.get((lq_ref, state), 0) + 1
    return counts


def _fair_sharing_status(usage: LocalQueueUsage | None) -> Obj | None:
    return None if usage is None else convert.local_queue_usage_status(usage.consumed, usage.last_update)


class QueueStatusReporter:
    """Writes ClusterQueue and LocalQueue status from the caches and the engine's usage."""

    def __init__(self, ctx: OperatorContext, state: QueueingState) -> None:
        self.ctx = ctx
        self.state = state
        self._reported: tuple[int, dict[str, dict[FlavorResource, Quantity]]] | None = None  # last written
        self._usage_due: dict[QueueRef, LocalQueueUsage] = {}  # sampled recent usage not yet written
        role = "leader" if ctx.config.leader_election.leader_elect else "standalone"
        ctx.metrics.count_kueue_workloads(self.kueue_counts, role)

    def kueue_counts(self) -> KueueCounts:
        """Kueue's gauges from the caches and the engine now (called when metrics are scraped)."""
        informers = self.state.informers
        if kinds.WORKLOAD not in informers or kinds.LOCAL_QUEUE not in informers:
            return KueueCounts()
        cluster_queue_of = {
            ref: str((lq.get("spec") or {}).get("clusterQueue", ""))
            for ref, lq in informers[kinds.LOCAL_QUEUE].cache.items()
        }
        workloads = list(informers[kinds.WORKLOAD].cache.values())
        return kueue_counts(workloads, cluster_queue_of, self._reason_code, self.state.stopped_local_queues)

    def usage_sampled(self, samples: Mapping[QueueRef, LocalQueueUsage]) -> None:
        """Admission fair sharing sampled these LocalQueues' recent usage: the next :meth:`write`
        puts it in their ``status.fairSharing`` (a newer sample replaces one not yet written)."""
        self._usage_due.update(samples)

    async def write(self) -> int:
        """Recompute and write queue status, unless no event, no admission and no usage sample
        changed anything since the last complete write (usage is charged in the engine before its
        event arrives); returns how many status patches it sent."""
        engine, cluster_queues = self.state.engine, self.state.informers[kinds.CLUSTER_QUEUE].cache
        seen = (self.state.changes, {name: engine.usage(name) for _, name in cluster_queues})
        if seen == self._reported and not self._usage_due:
            return 0
        due, self._usage_due = self._usage_due, {}
        try:
            with priority(Priority.BOOKKEEPING):  # after admissions in the client's rate limit
                sent = await self._write(due)
        except BaseException:
            self._usage_due = {**due, **self._usage_due}  # written with the retry, unless newer
            raise
        self._reported = seen
        return sent

    async def _write(self, usage_due: Mapping[QueueRef, LocalQueueUsage]) -> int:
        informers = self.state.informers
        writes: list[Awaitable[None]] = []
        patches = 0  # status patches among them
        cluster_queue_of = {
            ref: str((lq.get("spec") or {}).get("clusterQueue", ""))
            for ref, lq in informers[kinds.LOCAL_QUEUE].cache.items()
        }
        workloads = list(informers[kinds.WORKLOAD].cache.values())
        counts = count_workloads(workloads, cluster_queue_of, self.state.stopped_local_queues)
        now = format_rfc3339(self.ctx.clock())
        flavors = [name for _, name in informers[kinds.RESOURCE_FLAVOR].cache]
        for (_, name), cq in list(informers[kinds.CLUSTER_QUEUE].cache.items()):
            pending, admitted = counts.of_cluster_queue(name)
            self.ctx.metrics.workloads.labels(queue=name, state="pending").set(pending)
            self.ctx.metrics.workloads.labels(queue=name, state="admitted").set(admitted)
            new = status.cluster_queue_status(
                cq,
                pending=pending,
                admitted=admitted,
                usage=self.state.engine.usage(name),
                flavors_known=flavors,
                now=now,
            )
            patches += new is not None
            in_use = admitted > 0 or any(self.state.engine.usage(name).values())
            writes.append(self._cluster_queue_writes(cq, in_use, new))
        used = finalizers.flavors_in_use(list(informers[kinds.CLUSTER_QUEUE].cache.values()))
        for (_, name), flavor in list(informers[kinds.RESOURCE_FLAVOR].cache.items()):
            writes.append(self._finalize(kinds.RESOURCE_FLAVOR, flavor, name in used))
        cq_active = {
            name: status.cluster_queue_active(cq, flavors)[0] == "True"
            for (_, name), cq in informers[kinds.CLUSTER_QUEUE].cache.items()
        }
        for (ns, name), lq in list(informers[kinds.LOCAL_QUEUE].cache.items()):
            pending, admitted = counts.of_local_queue((ns, name))
            new = status.local_queue_status(
                lq,
                pending=pending,
                admitted=admitted,
                usage=counts.local_usage.get((ns, name), {}),
                cluster_queue_active=cq_active.get(cluster_queue_of.get((ns, name), "")),
                now=now,
                fair_sharing=_fair_sharing_status(usage_due.get((ns, name))),
            )
            if new is not None:
                patches += 1
                writes.append(self._patch_status(kinds.LOCAL_QUEUE, name, ns, new))
        limit = asyncio.Semaphore(PATCH_CONCURRENCY)
        outcomes = await asyncio.gather(*(limited(limit, w) for w in writes), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return patches

    def _reason_code(self, key: str, workload: Obj) -> str:
        """The QuotaReserved code the engine gives a pending workload now (PendingEvaluation while
        it has none, e.g. its admission is being written)."""
        info = self.state.engine.pending_reason(key)
        if info is None:
            return reason_codes.PENDING_EVALUATION
        lq_ref = (key.partition("/")[0], str((workload.get("spec") or {}).get("queueName", "")))
        return reason_codes.quota_reserved_reason(info, lq_ref in self.state.stopped_local_queues)

    async def _cluster_queue_writes(self, cq: Obj, in_use: bool, new: Obj | None) -> None:
        await self._finalize(kinds.CLUSTER_QUEUE, cq, in_use)  # first: it writes against cq's version
        if new is not None:
            await self._patch_status(kinds.CLUSTER_QUEUE, cq["metadata"]["name"], None, new)

    async def _finalize(self, kind: Kind, obj: Obj, in_use: bool) -> None:
        new = finalizers.finalizers_change(obj, in_use)
        if new is None:
            return
        meta = obj["metadata"]
        body = {"metadata": {"finalizers": new, "resourceVersion": meta.get("resourceVersion")}}
        # a conflict (the object changed since the cache saw it) is retried at the next report
        with contextlib.suppress(errors.NotFound, errors.Conflict):
            await self.ctx.kube.patch(kind, meta["name"], body, meta.get("namespace"))

    async def _patch_status(self, kind: Kind, name: str, namespace: str | None, new: Obj) -> None:
        with contextlib.suppress(errors.NotFound):
            await self.ctx.kube.patch(kind, name, {"status": new}, namespace, status=True)
