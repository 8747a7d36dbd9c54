"""The decision writer: a scheduling cycle's admissions, evictions and reasons, written to Workloads.

:meth:`DecisionWriter.apply` takes a :class:`~codeflare.scheduling.SchedulingResult` and writes
it: ``status.admission`` with QuotaReserved/Admitted, evictions (preemption, stopped queue,
deactivation, resize, pods-ready timeout), each computed from the current object by a pure
function of :mod:`status`, then Events and metrics; pending reasons are handed to the
low-priority :class:`~codeflare.operator.queueing.reasons.PendingReasonWriter`. Admissions are held
"in flight" in :class:`~codeflare.operator.queueing.feeder.QueueingState` from the decision until
the write, so quota is never given away twice. Cycles need not wait for each other's writes:
all share one limit of ``WRITE_CONCURRENCY`` requests, and the writes of one workload are sent in
the order they were decided (an admission before the eviction a later cycle decided). The writer
counts the admissions decided and not yet written (:attr:`DecisionWriter.backlog`), and
:meth:`DecisionWriter.room` lets the scheduling loop wait before deciding more than the client
can write soon: an admission decided long before its write holds its quota while it waits, and
the workloads that arrive meanwhile (a higher priority among them) are judged too late. What the
*job* does about an admission (unsuspend, suspend) is :mod:`jobsync`'s business: the writer only
tells it which job to look at.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from codeflare.k8s.conditions import conditions_of, find_condition
from codeflare.k8s.constants import CAPACITY_SHORTFALLS_ANNOTATION
from codeflare.k8s.keyorder import KeyedOrder
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.ratelimit import Priority, priority
from codeflare.operator.context import OperatorContext
from codeflare.operator.queueing import status
from codeflare.operator.queueing.adapters import adapter_for
from codeflare.operator.queueing.feeder import JobRef, QueueingState
from codeflare.operator.queueing.reasons import PendingReasonWriter, PendingText, stable_identity
from codeflare.scheduling import Admission, PendingInfo, SchedulingResult, encode_shortfalls

log = logging.getLogger(__name__)

Change = Callable[[Obj], Obj | None]  # current Workload -> its new status, or None: nothing to write
WRITE_CONCURRENCY = 16  # parallel decision writes (of all cycles in flight), or per batch of job syncs


async def limited(limit: asyncio.Semaphore, call: Awaitable[Any]) -> Any:
    async with limit:
        return await call


class DecisionWriter:
    """Writes what the engine decided; never decides anything itself."""

    def __init__(
        self, ctx: OperatorContext, state: QueueingState, mark_job: Callable[[JobRef], None]
    ) -> None:
        self.ctx = ctx
        self.state = state
        self._mark_job = mark_job
        self.reasons = PendingReasonWriter(state, self.write_status, self._explain, ctx.clock)
        self._order = KeyedOrder(WRITE_CONCURRENCY)  # one workload's writes in decision order
        self._applying = 0  # cycles whose decisions are being written
        self.backlog = 0  # admissions decided whose write has not ended
        self._room = asyncio.Event()  # set whenever the backlog shrinks

    async def room(self, limit: int) -> None:
        """Return once fewer than ``limit`` decided admissions wait for their write."""
        while self.backlog >= limit:
            self._room.clear()
            await self._room.wait()

    def _written(self, count: int) -> None:
        self.backlog -= count
        self._room.set()

    async def write_status(self, key: str, change: Change) -> Obj | None:
        """Write ``change`` of a Workload's status (cached copy first, else a fresh read)."""
        namespace, _, name = key.partition("/")

        def edit(current: Obj) -> Obj | None:
            new_status = change(current)
            if new_status is None:
                return None
            current["status"] = new_status
            return current

        cached = self.state.workload_obj(key)
        try:
            if cached is not None:
                # one request in the common case: write against the cached resourceVersion
                edited = edit(dict(cached))  # a shallow copy: ``change`` builds a new status
                if edited is None:
                    return None
                with contextlib.suppress(errors.Conflict):
                    return await self.ctx.kube.replace_status(kinds.WORKLOAD, edited)
            return await self.ctx.kube.update(kinds.WORKLOAD, name, namespace, edit, status=True)
        except errors.NotFound:
            return None

    async def apply(self, result: SchedulingResult) -> None:
        """Write one cycle's decisions: admissions first, then evictions, then pending reasons."""
        now = format_rfc3339(result.now)
        state = self.state
        # Every decided admission is in flight before the first await: a Workload event that
        # arrives while earlier admissions are being written (still without this admission) must
        # not put the workload back in the queue and free its quota for someone else.
        unwritten = dict(result.admissions)
        state.inflight.update(unwritten)
        ended = 0  # admission writes of this cycle that have ended, written or not
        self.backlog += len(unwritten)

        async def admit(key: str, admission: Admission) -> None:
            nonlocal ended
            try:
                await self.admit(key, admission, now, result.now)
                unwritten.pop(key, None)
            finally:
                ended += 1
                self._written(1)

        self._applying += 1
        state.admissions_idle.clear()  # the pending-reason writer waits for these
        try:
            with priority(Priority.ADMISSION):  # first in the client's rate limit
                admissions = [
                    self._order.run(k, functools.partial(admit, k, a)) for k, a in result.admissions.items()
                ]
                outcomes = await asyncio.gather(*admissions, return_exceptions=True)
                failures = [o for o in outcomes if isinstance(o, BaseException)]
                if failures:
                    raise failures[0]
                await self._evict_all(result, now)
        finally:
            self._written(len(result.admissions) - ended)  # writes that never started
            self._applying -= 1
            if not self._applying:
                state.admissions_idle.set()
            for key in unwritten:  # a write failed: forget the decision, requeue from the API's view
                state.forget_admission(key)
        with priority(Priority.BOOKKEEPING):  # after admissions in the client's rate limit
            await self._record_shortfalls(self._mark_reasons(result))

    async def _evict_all(self, result: SchedulingResult, now: str) -> None:
        state = self.state
        evictions: list[tuple[str, str, str, str | None]] = []  # (workload, reason, message, preemption)
        for preempted in result.preemptions:
            self.ctx.metrics.preemptions.labels(reason=preempted.reason).inc()
            evictions.append((preempted.victim, status.PREEMPTED, preempted.message, preempted.reason))
        for eviction in result.evictions:
            evictions.append(
                (eviction.workload, *status.eviction_condition(eviction.reason, eviction.message), None)
            )
        drain = sorted(state.to_drain)  # admitted in a LocalQueue stopped with HoldAndDrain
        state.to_drain.difference_update(drain)
        evictions += [(key, *status.eviction_condition("LocalQueueStopped", ""), None) for key in drain]
        writes = [
            self._order.run(key, functools.partial(self.evict, key, reason, message, now, preemption))
            for key, reason, message, preemption in evictions
        ]
        for outcome in await asyncio.gather(*writes, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome

    def _mark_reasons(self, result: SchedulingResult) -> dict[str, PendingInfo]:
        """Hand the pending workloads to the reason writer; their infos (for the shortfalls)."""
        state = self.state
        infos = dict(result.pending)
        # pending workloads without a reason yet, or with an Inadmissible one whose queue may be
        # back (the engine reports only what it examined)
        unexplained = (state.needs_reason | state.inadmissible) - state.inflight
        self.reasons.mark(infos)
        self.reasons.mark(unexplained)
        if self.ctx.config.queueing.capacity_check:
            for key in unexplained - infos.keys():
                info = state.engine.pending_reason(key)
                if info is not None:
                    infos[key] = info
        return infos

    async def _record_shortfalls(self, infos: dict[str, PendingInfo]) -> None:
        """Keep annotation ``codeflare.dev/capacity-shortfalls`` (the engine's structured
        shortfalls, what scale-out reads) on Workloads pending on node capacity only."""
        writes = []
        for key, info in infos.items():
            cached = self.state.workload_obj(key)
            if key in self.state.inflight or cached is None:
                continue
            wanted = encode_shortfalls(info.shortfalls) if info.capacity_only else None
            annotations = (cached.get("metadata") or {}).get("annotations") or {}
            if annotations.get(CAPACITY_SHORTFALLS_ANNOTATION) == wanted:
                continue
            namespace, _, name = key.partition("/")
            body = {"metadata": {"annotations": {CAPACITY_SHORTFALLS_ANNOTATION: wanted}}}
            writes.append(
                limited(self._order.limit, self.ctx.kube.patch(kinds.WORKLOAD, name, body, namespace))
            )
        for outcome in await asyncio.gather(*writes, return_exceptions=True):
            if isinstance(outcome, BaseException) and not isinstance(outcome, errors.NotFound):
                raise outcome

    def _explain(self, key: str, info: PendingInfo) -> PendingText:
        """Kueue's reason and message; when only node capacity is short, plus what scale-out says."""
        cached = self.state.workload_obj(key) or {}
        queue = (
            str((cached.get("metadata") or {}).get("namespace", "")),
            str((cached.get("spec") or {}).get("queueName", "")),
        )
        reason, message = status.pending_condition(info, cached, queue in self.state.stopped_local_queues)
        scale_out = find_condition(conditions_of(cached), "ScaleOut") if info.capacity_only else None
        suffix = str(scale_out.get("message") or "") if scale_out else ""
        text = f"{message}; {suffix}" if suffix else message
        return PendingText(reason, text, stable_identity(reason, info, suffix))

    async def admit(self, key: str, admission: Admission, now: str, now_seconds: float) -> None:
        state = self.state
        state.inflight.add(key)
        written = await self.write_status(key, lambda cur: status.admitted_status(cur, admission, now))
        if written is None and state.workload_obj(key) is None:
            state.inflight.discard(key)
            state.engine.remove_workload(key)
            return
        obj = written or state.workload_obj(key) or {}
        created = epoch_seconds((obj.get("metadata") or {}).get("creationTimestamp"))
        if created:
            self.ctx.metrics.admission_latency.observe(max(0.0, now_seconds - created))
        self.ctx.metrics.admissions.labels(queue=admission.cluster_queue).inc()
        log.info("admitted %s in ClusterQueue %s", key, admission.cluster_queue)
        if written is not None:
            await self.ctx.events.record(
                written, "QuotaReserved", f"Quota reserved in ClusterQueue {admission.cluster_queue}"
            )
        owner = state.owner_job(obj) if obj else None
        if owner is not None:
            self._mark_job(owner)

    async def evict(
        self, key: str, reason: str, message: str, now: str, preemption_reason: str | None = None
    ) -> None:
        self.state.inflight.discard(key)

        def change(cur: Obj) -> Obj | None:
            return status.evicted_status(cur, reason, message, now, preemption_reason=preemption_reason)

        written = await self.write_status(key, change)
        log.info("evicted %s: %s", key, message)
        if written is not None:
            await self.ctx.events.record(
                written, reason, message, type_="Warning" if reason != "Preempted" else "Normal"
            )

    async def check_pods_ready(self, timeout: float) -> None:
        """waitForPodsReady: PodsReady conditions, and evictions of workloads past the timeout."""
        now_seconds = self.ctx.clock()
        now = format_rfc3339(now_seconds)
        state = self.state
        for (ns, name), wl in list(state.informers[kinds.WORKLOAD].cache.items()):
            owner = state.owner_job(wl)
            job = state.informers[owner[0]].cache.get((owner[1], owner[2])) if owner else None
            if owner is None or job is None:
                continue
            step = status.pods_ready_step(wl, adapter_for(owner[0]).pods_ready(job), now_seconds, timeout)
            key = f"{ns}/{name}"
            if step is status.PodsReadyStep.READY:
                await self.write_status(key, _pods_ready_change(True, "PodsReady", "all pods are ready", now))
            elif step is status.PodsReadyStep.WAITING:
                message = "waiting for the pods to be ready"
                await self.write_status(key, _pods_ready_change(False, "PodsNotReady", message, now))
            elif step is status.PodsReadyStep.TIMED_OUT:
                message = f"pods were not all ready within {timeout:g}s of admission; requeued"
                await self.evict(key, "PodsReadyTimeout", message, now)


def _pods_ready_change(ready: bool, reason: str, message: str, now: str) -> Change:
    def change(current: Obj) -> Obj | None:
        return status.pods_ready_status(current, ready, reason, message, now)

    return change
