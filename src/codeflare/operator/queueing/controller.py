"""The queueing controller: Workloads for queued jobs, admission decisions, and their effects.

It wires four parts over the operator's shared informers and runs their loops: the
:class:`~codeflare.operator.queueing.feeder.EngineFeeder` keeps the
:class:`~codeflare.scheduling.AdmissionEngine` equal to the caches; each scheduling cycle's
decisions are written by the :class:`~codeflare.operator.queueing.decisions.DecisionWriter`
(Workload admission and conditions, evictions; the pending reasons by its low-priority
:class:`~codeflare.operator.queueing.reasons.PendingReasonWriter`); the
:class:`~codeflare.operator.queueing.jobsync.JobSync` keeps every queued job in line with its
Workload (creates it, suspends and unsuspends the job, marks it finished); the
:class:`~codeflare.operator.queueing.reporter.QueueStatusReporter` writes queue status counters
(and, with admission fair sharing, each LocalQueue's recent usage as the engine samples it).
Nothing is decided before every cache has synced, so a restarted operator never acts on a
partial view (no double admission, no quota overrun).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import logging
import math
import time
from collections.abc import Awaitable
from typing import Any

from codeflare.kube import errors
from codeflare.operator.config import AdmissionFairSharingConfig
from codeflare.operator.context import OperatorContext
from codeflare.operator.queueing.cohorts import CohortStatusWriter
from codeflare.operator.queueing.decisions import WRITE_CONCURRENCY, DecisionWriter
from codeflare.operator.queueing.feeder import CYCLE, EngineFeeder, JobRef, QueueingState
from codeflare.operator.queueing.forecasting import StartForecaster
from codeflare.operator.queueing.jobsync import JobSync
from codeflare.operator.queueing.maxexec import MaxExecTimer
from codeflare.operator.queueing.reporter import QueueStatusReporter
from codeflare.scheduling import AdmissionEngine, AdmissionFairSharing, FairSharing, SchedulingResult

log = logging.getLogger(__name__)

SCHEDULER = "scheduler"  # the scheduling loop's name in the watch-progress metric
QUEUE_STATUS_INTERVAL = 1.0  # seconds between ClusterQueue/LocalQueue status reports at most
QUEUE_STATUS_SHARE = 0.1  # of clientConnection.qps, at most, for queue status patches on average
COALESCE_S = 0.02  # a burst of events makes one cycle
# A cycle starts only while the admissions already decided can all be written within this many
# seconds at clientConnection.qps, and are at most twice the parallel writes (when the server, not
# the bucket, sets the pace): decisions keep just ahead of the writes instead of seconds ahead
ADMISSION_BACKLOG_S = 0.25
USAGE_SAMPLE_CHECK_S = 1.0  # admission fair sharing: how often LocalQueues are checked for a due sample


def admission_fair_sharing(cfg: AdmissionFairSharingConfig | None) -> AdmissionFairSharing | None:
    """The engine's admission fair sharing settings from ``queueing.admissionFairSharing``
    (None: off)."""
    if cfg is None:
        return None
    return AdmissionFairSharing(
        usage_half_life_s=cfg.usage_half_life_time.total_seconds(),
        usage_sampling_interval_s=cfg.usage_sampling_interval.total_seconds(),
        resource_weights=dict(cfg.resource_weights),
    )


def register(ctx: OperatorContext) -> list[Awaitable[Any]]:
    """Entry point used by the operator: returns the controller's background coroutines."""
    return QueueingController(ctx).background()


class QueueingController:
    """Queueing and admission for RayClusters, RayJobs and AppWrappers carrying a queue label."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        cfg = ctx.config.queueing
        self.state = QueueingState(
            AdmissionEngine(
                backoff_time=cfg.backoff_time.total_seconds(),
                head_of_line_holding_time=cfg.head_of_line_holding_time.total_seconds(),
                capacity_check=cfg.capacity_check,
                fair_sharing=FairSharing(cfg.fair_sharing.enable, cfg.fair_sharing.preemption_strategies),
                admission_fair_sharing=admission_fair_sharing(cfg.admission_fair_sharing),
            ),
            requeuing_timestamp=cfg.wait_for_pods_ready.requeuing_strategy.timestamp,
        )
        self._wake = asyncio.Event()
        self.progress = ctx.metrics.watch_progress(SCHEDULER)
        self.feeder = EngineFeeder(self.state, self._wake.set, self.progress)
        self.jobs = JobSync(ctx, self.state, DecisionWriter(ctx, self.state, self._mark_job))
        self.writer = self.jobs.writer
        self.reporter = QueueStatusReporter(ctx, self.state)
        self.cohort_status = CohortStatusWriter(ctx, self.state, cfg.fair_sharing.enable)
        self.feeder.subscribe(ctx.informers, cfg.capacity_check)
        self.jobs.subscribe(ctx.informers)
        self.maxexec = MaxExecTimer(ctx, self.state.workload_obj, self.writer.write_status)
        self.maxexec.subscribe(ctx.informers)
        self.forecaster = StartForecaster(ctx, self.state)  # estimated starts (advice, published apart)
        self.forecaster.subscribe()
        self._queue_status_due = asyncio.Event()  # a cycle wrote its decisions: report the queues
        self._cycles = itertools.count()
        self._writes: set[asyncio.Task[None]] = set()  # cycles whose decisions are being written
        self._failure: BaseException | None = None  # what a cycle's writes raised, other than an API error
        qps = ctx.config.client_connection.qps
        ahead = min(math.ceil(qps * ADMISSION_BACKLOG_S), 2 * WRITE_CONCURRENCY)
        self.backlog_limit = max(1, ahead)  # decided admissions not yet written, at most

    def _mark_job(self, ref: JobRef) -> None:
        self.jobs.mark(ref)

    def background(self) -> list[Awaitable[Any]]:
        loops: list[Awaitable[Any]] = [self._schedule_loop(), self._job_loop(), self._reason_loop()]
        loops.append(self._queue_status_loop())
        loops.append(self._maxexec_loop())
        loops.append(self.forecaster.run(self._synced))
        forecast_api = importlib.import_module("codeflare.operator.forecast_api")  # feasibility checks
        loops += forecast_api.register(self.ctx, self.state, self.forecaster)
        if self.ctx.config.queueing.wait_for_pods_ready.enabled:
            loops.append(self._pods_ready_loop())
        if self.ctx.config.queueing.admission_fair_sharing is not None:
            loops.append(self._usage_sample_loop())
        return loops  # the informers themselves run in ctx.informers

    async def _synced(self) -> None:
        await asyncio.gather(*(inf.synced.wait() for inf in self.state.informers.values()))

    # -- the scheduling loop -----------------------------------------------------------------------
    async def _schedule_loop(self) -> None:
        self.ctx.mark_ready("queueing", False)
        await self._synced()
        self.ctx.mark_ready("queueing")
        log.info("queueing controller synced; admitting")
        try:
            while True:
                self._wake.clear()
                started = time.monotonic()
                timeout = self._cycle()
                spent = time.monotonic() - started
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=timeout)
                if self._failure is not None:
                    raise self._failure
                await asyncio.sleep(max(COALESCE_S, spent))  # cycles take at most half the loop
                # decide no further ahead of the writes than the client can catch up with soon
                await self.writer.room(self.backlog_limit)
        finally:
            for task in self._writes:
                task.cancel()

    def _cycle(self) -> float | None:
        """One scheduling cycle, its decisions handed to be written (the next cycle does not wait
        for them: it decides over the quota they take); returns how long to wait at most for the
        next."""
        cycle = (CYCLE, next(self._cycles))
        self.progress.start(CYCLE)
        self.progress.relabel(CYCLE, cycle)  # caught up once this cycle's decisions are written
        started = time.monotonic()
        budget = max(1, self.backlog_limit - self.writer.backlog)  # admissions the client can write soon
        result = self.state.engine.schedule(self.ctx.clock(), budget)
        self.ctx.metrics.admission_attempt(bool(result.admissions), time.monotonic() - started)
        task = asyncio.create_task(self._write(result, cycle))
        self._writes.add(task)
        task.add_done_callback(self._written)
        if result.unfinished:
            return 0.0  # rounds left: the next cycle goes on once the writes leave room
        if result.next_wakeup is None:
            return None
        return max(0.05, result.next_wakeup - self.ctx.clock())

    async def _write(self, result: SchedulingResult, cycle: tuple[str, int]) -> None:
        written = False
        try:
            await self.writer.apply(result)
            written = True
            self._queue_status_due.set()
        except errors.KubeError as exc:
            log.warning("writing scheduling decisions failed: %s", exc)
            self._wake.set()
        finally:
            self.progress.finish(cycle, written, requeue_as=CYCLE)
            self.ctx.metrics.scheduling_cycles.inc()

    def _written(self, task: asyncio.Task[None]) -> None:
        """A cycle's writes ended; anything but an API error stops the scheduling loop (as it did
        when the loop wrote them itself)."""
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is not None and self._failure is None:
            self._failure = task.exception()
            self._wake.set()

    async def _queue_status_loop(self) -> None:
        """Queue status after cycles, the newest state each time, apart from the scheduling loop
        (which never waits for these bookkeeping writes); at most once every
        ``QUEUE_STATUS_INTERVAL``, and spaced so that its patches take at most
        ``QUEUE_STATUS_SHARE`` of the client's qps (a round that patched 60 queues waits 12 s at
        qps 50: under a flood the counters lag, the admissions do not)."""
        await self._synced()
        qps = self.ctx.config.client_connection.qps
        while True:
            await self._queue_status_due.wait()
            self._queue_status_due.clear()
            started, sent = self.ctx.clock(), 0
            try:
                sent = await self.reporter.write()
                sent += await self.cohort_status.write()
            except errors.KubeError as exc:
                log.warning("writing queue status failed (retried after the next cycle): %s", exc)
                self._queue_status_due.set()
            finally:
                self.ctx.metrics.reconciled("queue-status")
            spacing = max(QUEUE_STATUS_INTERVAL, sent / (QUEUE_STATUS_SHARE * qps))
            await asyncio.sleep(max(0.0, spacing - (self.ctx.clock() - started)))

    async def _usage_sample_loop(self) -> None:
        """Admission fair sharing: every LocalQueue's recent usage decays once per sampling
        interval in the engine (Kueue's LocalQueue controller), and what was sampled goes to
        their status with the next queue status report. It wakes when the next sample is due,
        and at least every ``USAGE_SAMPLE_CHECK_S`` (a new LocalQueue is due at once)."""
        await self._synced()
        engine = self.state.engine
        while True:
            now = self.ctx.clock()
            due = engine.next_usage_sample(now)
            if due is not None and due <= now:
                samples = engine.sample_local_queue_usage(now)
                if samples:
                    self.reporter.usage_sampled(samples)
                    self._queue_status_due.set()
                    self._wake.set()  # the order of the LocalQueues' heads may have changed
                due = engine.next_usage_sample(now)
            wait = USAGE_SAMPLE_CHECK_S if due is None else min(USAGE_SAMPLE_CHECK_S, due - now)
            await asyncio.sleep(max(COALESCE_S, wait))

    # -- the job worker and waitForPodsReady ---------------------------------------------------------
    async def _job_loop(self) -> None:
        await self._synced()
        await self.jobs.run()

    async def _maxexec_loop(self) -> None:
        await self._synced()
        await self.maxexec.run()

    async def _reason_loop(self) -> None:
        await self._synced()
        await self.writer.reasons.run()

    async def _pods_ready_loop(self) -> None:
        """waitForPodsReady: an admitted workload whose pods are not all ready within the timeout
        (counted from its admission) is evicted and requeued; ready ones get PodsReady=True."""
        await self._synced()
        timeout = self.ctx.config.queueing.wait_for_pods_ready.timeout.total_seconds()
        while True:
            await asyncio.sleep(min(1.0, max(0.2, timeout / 4)))
            try:
                await self.writer.check_pods_ready(timeout)
            except errors.KubeError as exc:
                log.warning("waitForPodsReady check failed: %s", exc)
            finally:
                self.ctx.metrics.reconciled("pods-ready")
