"""The queueing controller: Workloads for queued jobs, admission decisions, and their effects.

It keeps list-watch caches (:class:`~codeflare.kube.informer.Informer`) of every object the
admission decision depends on and decides only once all of them have synced, so a restarted
operator never acts on a partial view (no double admission, no quota overrun). Each cycle feeds
the :class:`~codeflare.scheduling.AdmissionEngine` and writes its decisions: Workload admission
and conditions (the pending reason verbatim), evictions, queue status counters. A job worker
keeps each queued job in line with its Workload: creates it, suspends jobs that run without an
admission, unsuspends admitted ones with their flavor's nodeSelector/tolerations injected, and
marks the Workload finished when the job ends, which releases its quota.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from codeflare.kube import errors, kinds
from codeflare.kube.informer import Informer
from codeflare.kube.kinds import Kind
from codeflare.operator.context import OperatorContext
from codeflare.operator.queueing import convert, jobs, status
from codeflare.operator.queueing.conditions import get_condition, set_condition
from codeflare.scheduling import Admission, AdmissionEngine, PendingInfo, SchedulingResult, workload_key

log = logging.getLogger(__name__)

Obj = dict[str, Any]
JobRef = tuple[Kind, str, str]  # kind, namespace, name
DEFAULT_QUEUE_ANNOTATION = "kueue.x-k8s.io/default-queue"
JOB_RETRY_S = 0.5  # a job whose sync failed is looked at again after this
WRITE_CONCURRENCY = 16  # parallel writes per scheduling cycle or batch of job syncs
QUEUE_STATUS_INTERVAL = 1.0  # seconds between ClusterQueue/LocalQueue status refreshes under load
MANAGED_POD_LABELS = ("ray.io/cluster", "workload.codeflare.dev/appwrapper")


def register(ctx: OperatorContext, registry: Any) -> list[Awaitable[Any]]:
    """Entry point used by the operator: returns the controller's background coroutines."""
    return QueueingController(ctx).background()


class QueueingController:
    """Queueing and admission for RayClusters, RayJobs and AppWrappers carrying a queue label."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        cfg = ctx.config.queueing
        self.engine = AdmissionEngine(
            backoff_time=cfg.backoff_time.total_seconds(),
            head_of_line_holding_time=cfg.head_of_line_holding_time.total_seconds(),
            capacity_check=cfg.capacity_check,
        )
        self._wake = asyncio.Event()
        self._dirty_jobs: dict[JobRef, None] = {}
        self._jobs_ready = asyncio.Event()
        self._inflight: set[str] = set()
        self._needs_reason: set[str] = set()
        self._queue_status_at = 0.0
        self._queue_status_due = False
        self._priorities: dict[str, int] = {}  # WorkloadPriorityClass values
        self._pod_priorities: dict[str, int] = {}  # scheduling.k8s.io PriorityClass values
        self._workload_of_job: dict[str, str] = {}  # job uid -> workload key
        self._unmanaged: dict[str, dict[str, int]] = {}  # node -> resource -> milli
        self.informers: dict[Kind, Informer] = {}
        handlers: dict[Kind, Callable[[str, Obj, Obj | None], None]] = {
            kinds.RESOURCE_FLAVOR: self._on_flavor,
            kinds.CLUSTER_QUEUE: self._on_cluster_queue,
            kinds.LOCAL_QUEUE: self._on_local_queue,
            kinds.NAMESPACE: self._on_namespace,
            kinds.WORKLOAD_PRIORITY_CLASS: self._on_priority_class,
            kinds.PRIORITY_CLASS: self._on_pod_priority_class,
            kinds.WORKLOAD: self._on_workload,
            kinds.RAYCLUSTER: self._job_handler(kinds.RAYCLUSTER),
            kinds.RAYJOB: self._job_handler(kinds.RAYJOB),
            kinds.APPWRAPPER: self._job_handler(kinds.APPWRAPPER),
        }
        if cfg.capacity_check:
            handlers[kinds.NODE] = self._on_node
            handlers[kinds.POD] = self._on_pod
        for kind, handler in handlers.items():
            self.informers[kind] = ctx.informers.subscribe(kind, handler)

    def background(self) -> list[Awaitable[Any]]:
        loops: list[Awaitable[Any]] = [self._schedule_loop()]  # the informers run in ctx.informers
        loops.append(self._job_loop())
        if self.ctx.config.queueing.wait_for_pods_ready.enabled:
            loops.append(self._pods_ready_loop())
        return loops

    # -- informer handlers (synchronous, no I/O) -----------------------------------------------------
    def _poke(self) -> None:
        self._wake.set()

    def _on_flavor(self, event: str, obj: Obj, old: Obj | None) -> None:
        if event == "DELETED":
            self.engine.remove_resource_flavor(obj["metadata"]["name"])
        else:
            self.engine.add_resource_flavor(convert.resource_flavor(obj))
        self._poke()

    def _on_cluster_queue(self, event: str, obj: Obj, old: Obj | None) -> None:
        if event == "DELETED":
            self.engine.remove_cluster_queue(obj["metadata"]["name"])
        else:
            try:
                self.engine.add_cluster_queue(convert.cluster_queue(obj))
            except ValueError as exc:
                log.error("ignoring invalid ClusterQueue: %s", exc)
                return
        self._poke()

    def _on_local_queue(self, event: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        if event == "DELETED":
            self.engine.remove_local_queue(meta.get("namespace", ""), meta["name"])
        else:
            self.engine.add_local_queue(convert.local_queue(obj))
        self._poke()
        self._touch_jobs_in(meta.get("namespace", ""))

    def _on_namespace(self, event: str, obj: Obj, old: Obj | None) -> None:
        name = obj["metadata"]["name"]
        if event == "DELETED":
            self.engine.remove_namespace(name)
        else:
            self.engine.add_namespace(name, dict(obj["metadata"].get("labels") or {}))
        self._poke()

    def _on_pod_priority_class(self, event: str, obj: Obj, old: Obj | None) -> None:
        name = obj["metadata"]["name"]
        if event == "DELETED":
            self._pod_priorities.pop(name, None)
        else:
            self._pod_priorities[name] = int(obj.get("value") or 0)

    def _on_priority_class(self, event: str, obj: Obj, old: Obj | None) -> None:
        name = obj["metadata"]["name"]
        if event == "DELETED":
            self._priorities.pop(name, None)
        else:
            self._priorities[name] = int(obj.get("value") or 0)

    def _on_node(self, event: str, obj: Obj, old: Obj | None) -> None:
        name = obj["metadata"]["name"]
        if event == "DELETED":
            self.engine.remove_node(name)
        else:
            self.engine.add_node(convert.node(obj, self._unmanaged_quantities(name)))
        self._poke()

    def _on_pod(self, event: str, obj: Obj, old: Obj | None) -> None:
        nodes = {p.get("spec", {}).get("nodeName") for p in (obj, old) if p is not None}
        nodes.discard(None)
        for node_name in nodes:
            self._recount_unmanaged(str(node_name))

    def _recount_unmanaged(self, node_name: str) -> None:
        from codeflare.scheduling import parse_quantity

        totals: dict[str, int] = {}
        for pod in self.informers[kinds.POD].cache.values():
            spec = pod.get("spec") or {}
            labels = (pod.get("metadata") or {}).get("labels") or {}
            if spec.get("nodeName") != node_name or any(label in labels for label in MANAGED_POD_LABELS):
                continue
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            for name, value in jobs.pod_requests(pod).items():
                totals[name] = totals.get(name, 0) + parse_quantity(value)
        if totals == self._unmanaged.get(node_name, {}):
            return
        self._unmanaged[node_name] = totals
        node = self.informers[kinds.NODE].cache.get(("", node_name))
        if node is not None:
            self.engine.add_node(convert.node(node, self._unmanaged_quantities(node_name)))
            self._poke()

    def _unmanaged_quantities(self, node_name: str) -> dict[str, Any]:
        from codeflare.scheduling import format_quantity

        return {k: format_quantity(v) for k, v in self._unmanaged.get(node_name, {}).items()}

    def _on_workload(self, event: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        key = workload_key(meta.get("namespace", ""), meta["name"])
        job_uid = (meta.get("labels") or {}).get(jobs.JOB_UID_LABEL)
        if event != "DELETED" and _lacks_reason(obj):
            self._needs_reason.add(key)
        else:
            self._needs_reason.discard(key)
        if event == "DELETED" or (get_condition(obj, "Finished") or {}).get("status") == "True":
            self.engine.remove_workload(key)
            self._inflight.discard(key)
            if event == "DELETED" and job_uid:
                self._workload_of_job.pop(job_uid, None)
        else:
            if job_uid:
                self._workload_of_job[job_uid] = key
            workload = convert.workload(obj, self._priorities)
            if workload.admission is None and key in self._inflight:
                workload = dataclasses.replace(workload, admission=self.engine.admission(key))
            elif workload.admission is not None:
                self._inflight.discard(key)
            self.engine.add_workload(workload)
        self._poke()
        owner = self._owner_job(obj)
        if owner is not None:
            self._mark_job(owner)

    def _job_handler(self, kind: Kind) -> Callable[[str, Obj, Obj | None], None]:
        def handle(event: str, obj: Obj, old: Obj | None) -> None:
            if event != "DELETED":
                meta = obj["metadata"]
                self._mark_job((kind, meta.get("namespace", ""), meta["name"]))

        return handle

    def _mark_job(self, ref: JobRef) -> None:
        self._dirty_jobs[ref] = None
        self._jobs_ready.set()

    def _touch_jobs_in(self, namespace: str) -> None:
        for kind in jobs.QUEUED_KINDS:
            informer = self.informers.get(kind)
            for ns, name in list(informer.cache) if informer else []:
                if ns == namespace:
                    self._mark_job((kind, ns, name))

    def _owner_job(self, workload: Obj) -> JobRef | None:
        for ref in (workload.get("metadata") or {}).get("ownerReferences") or []:
            kind = kinds.BY_API_KIND.get((ref.get("apiVersion", ""), ref.get("kind", "")))
            if kind in jobs.QUEUED_KINDS:
                return (kind, workload["metadata"].get("namespace", ""), ref.get("name", ""))
        return None

    async def _synced(self) -> None:
        await asyncio.gather(*(inf.synced.wait() for inf in self.informers.values()))

    # -- the scheduling loop -----------------------------------------------------------------------
    async def _schedule_loop(self) -> None:
        self.ctx.mark_ready("queueing", False)
        await self._synced()
        self.ctx.mark_ready("queueing")
        log.info("queueing controller synced; admitting")
        while True:
            self._wake.clear()
            result = self.engine.schedule(self.ctx.clock())
            try:
                await self._apply(result)
                if self.ctx.clock() - self._queue_status_at >= QUEUE_STATUS_INTERVAL:
                    self._queue_status_at = self.ctx.clock()
                    self._queue_status_due = False
                    await self._write_queue_status()
                else:
                    self._queue_status_due = True
            except errors.KubeError as exc:
                log.warning("writing scheduling decisions failed: %s", exc)
                self._poke()
            timeout = None
            if result.next_wakeup is not None:
                timeout = max(0.05, result.next_wakeup - self.ctx.clock())
            if self._queue_status_due:
                timeout = min(timeout or QUEUE_STATUS_INTERVAL, QUEUE_STATUS_INTERVAL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=timeout)
            await asyncio.sleep(0.02)  # coalesce bursts of events into one cycle

    async def _pods_ready_loop(self) -> None:
        """waitForPodsReady: an admitted workload whose pods are not all ready within the timeout
        (counted from its admission) is evicted and requeued; ready ones get PodsReady=True."""
        await self._synced()
        timeout = self.ctx.config.queueing.wait_for_pods_ready.timeout.total_seconds()
        while True:
            await asyncio.sleep(min(1.0, max(0.2, timeout / 4)))
            try:
                await self._check_pods_ready(timeout)
            except errors.KubeError as exc:
                log.warning("waitForPodsReady check failed: %s", exc)

    async def _check_pods_ready(self, timeout: float) -> None:
        now_seconds = self.ctx.clock()
        now = convert.rfc3339(now_seconds)
        for (ns, name), wl in list(self.informers[kinds.WORKLOAD].cache.items()):
            if not (wl.get("status") or {}).get("admission"):
                continue
            if (get_condition(wl, "Finished") or {}).get("status") == "True":
                continue
            owner = self._owner_job(wl)
            job = self.informers[owner[0]].cache.get((owner[1], owner[2])) if owner else None
            if job is None or owner is None:
                continue
            key = workload_key(ns, name)
            if jobs.pods_ready(owner[0], job):
                await self._write_status(
                    key, _pods_ready_change(True, "PodsReady", "all pods are ready", now)
                )
                continue
            if (get_condition(wl, "PodsReady") or {}).get("status") == "True":
                continue  # it was ready once: recovering is the job's business, not an admission timeout
            admitted_at = convert.timestamp(
                (get_condition(wl, "QuotaReserved") or {}).get("lastTransitionTime")
            )
            if admitted_at and now_seconds - admitted_at > timeout:
                await self._evict(
                    key,
                    "PodsReadyTimeout",
                    f"pods were not all ready within {timeout:g}s of admission; requeued",
                    now,
                )
            else:
                await self._write_status(
                    key, _pods_ready_change(False, "PodsNotReady", "waiting for the pods to be ready", now)
                )

    def _workload_obj(self, key: str) -> Obj | None:
        namespace, _, name = key.partition("/")
        return self.informers[kinds.WORKLOAD].cache.get((namespace, name))

    async def _write_status(self, key: str, change: Callable[[Obj], Obj | None]) -> Obj | None:
        namespace, _, name = key.partition("/")

        def edit(current: Obj) -> Obj | None:
            new_status = change(current)
            if new_status is None:
                return None
            current["status"] = new_status
            return current

        cached = self._workload_obj(key)
        try:
            if cached is not None:
                # one request in the common case: write against the cached resourceVersion
                edited = edit(copy.deepcopy(cached))
                if edited is None:
                    return None
                with contextlib.suppress(errors.Conflict):
                    return await self.ctx.kube.replace_status(kinds.WORKLOAD, edited)
            return await self.ctx.kube.update(kinds.WORKLOAD, name, namespace, edit, status=True)
        except errors.NotFound:
            return None

    async def _apply(self, result: SchedulingResult) -> None:
        now = convert.rfc3339(result.now)
        # Every decided admission is in flight before the first await: a Workload event that
        # arrives while earlier admissions are being written (still without this admission) must
        # not put the workload back in the queue and free its quota for someone else.
        unwritten = dict(result.admissions)
        self._inflight.update(unwritten)
        limit = asyncio.Semaphore(WRITE_CONCURRENCY)

        async def admit(key: str, admission: Admission) -> None:
            async with limit:
                await self._admit(key, admission, now, result.now)
            unwritten.pop(key, None)

        try:
            outcomes = await asyncio.gather(
                *(admit(k, a) for k, a in result.admissions.items()), return_exceptions=True
            )
        finally:
            for key in unwritten:  # a write failed: forget the decision, requeue from the API's view
                self._forget_admission(key)
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        if failures:
            raise failures[0]
        for preempted in result.preemptions:
            self.ctx.metrics.preemptions.labels(reason=preempted.reason).inc()
            await self._evict(preempted.victim, "Preempted", preempted.message, now)
        for eviction in result.evictions:
            await self._evict(eviction.workload, eviction.reason, eviction.message, now)
        reasons = {key: self._explain(key, info) for key, info in result.pending.items()}
        for key in self._unexplained():
            info = self.engine.pending_reason(key)
            if info is not None:
                reasons.setdefault(key, self._explain(key, info))
        writes = []
        for key, message in reasons.items():
            if key in self._inflight:
                continue
            cached = self._workload_obj(key)
            if cached is None or status.pending_status(cached, message, now) is None:
                continue
            writes.append(self._limited(limit, self._write_status(key, _pending_change(message, now))))
        for outcome in await asyncio.gather(*writes, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome

    @staticmethod
    async def _limited(limit: asyncio.Semaphore, call: Awaitable[Any]) -> Any:
        async with limit:
            return await call

    def _explain(self, key: str, info: PendingInfo) -> str:
        """The engine's reason; when only node capacity is short, plus what scale-out says about it."""
        scale_out = get_condition(self._workload_obj(key) or {}, "ScaleOut") if info.capacity_only else None
        if scale_out and scale_out.get("message"):
            return f"{info.message}; {scale_out['message']}"
        return info.message

    def _unexplained(self) -> list[str]:
        """Pending workloads that carry no reason yet (the engine reports only what it examined)."""
        return [key for key in sorted(self._needs_reason) if key not in self._inflight]

    def _forget_admission(self, key: str) -> None:
        self._inflight.discard(key)
        cached = self._workload_obj(key)
        if cached is None:
            self.engine.remove_workload(key)
        else:
            self.engine.add_workload(convert.workload(cached, self._priorities))
        self._poke()

    async def _admit(self, key: str, admission: Admission, now: str, now_seconds: float) -> None:
        self._inflight.add(key)
        written = await self._write_status(key, lambda cur: status.admitted_status(cur, admission, now))
        if written is None and self._workload_obj(key) is None:
            self._inflight.discard(key)
            self.engine.remove_workload(key)
            return
        obj = written or self._workload_obj(key) or {}
        created = convert.timestamp((obj.get("metadata") or {}).get("creationTimestamp"))
        if created:
            self.ctx.metrics.admission_latency.observe(max(0.0, now_seconds - created))
        self.ctx.metrics.admissions.labels(queue=admission.cluster_queue).inc()
        log.info("admitted %s in ClusterQueue %s", key, admission.cluster_queue)
        if written is not None:
            await self.ctx.events.record(
                written, "QuotaReserved", f"Quota reserved in ClusterQueue {admission.cluster_queue}"
            )
        owner = self._owner_job(obj) if obj else None
        if owner is not None:
            self._mark_job(owner)

    async def _evict(self, key: str, reason: str, message: str, now: str) -> None:
        self._inflight.discard(key)
        written = await self._write_status(key, lambda cur: status.evicted_status(cur, reason, message, now))
        log.info("evicted %s: %s", key, message)
        if written is not None:
            await self.ctx.events.record(
                written, reason, message, type_="Warning" if reason != "Preempted" else "Normal"
            )

    async def _write_queue_status(self) -> None:
        workloads = self.informers[kinds.WORKLOAD].cache
        lq_to_cq = {
            (ns, n): (o.get("spec") or {}).get("clusterQueue", "")
            for (ns, n), o in self.informers[kinds.LOCAL_QUEUE].cache.items()
        }
        counts: dict[str, list[int]] = {}
        lq_counts: dict[tuple[str, str], list[int]] = {}
        lq_usage: dict[tuple[str, str], dict[tuple[str, str], Any]] = {}
        for (ns, _), wl in workloads.items():
            if (get_condition(wl, "Finished") or {}).get("status") == "True":
                continue
            lq_ref = (ns, str((wl.get("spec") or {}).get("queueName", "")))
            admission = convert.admission_of(wl)
            cq = admission.cluster_queue if admission else lq_to_cq.get(lq_ref)
            slot = 1 if admission else 0
            if cq:
                counts.setdefault(cq, [0, 0])[slot] += 1
            lq_counts.setdefault(lq_ref, [0, 0])[slot] += 1
            if admission:
                usage = lq_usage.setdefault(lq_ref, {})
                for psa in admission.pod_set_assignments:
                    for res, amount in psa.resource_usage.items():
                        fr = (psa.flavors.get(res, ""), res)
                        usage[fr] = usage[fr] + amount if fr in usage else amount
        now = convert.rfc3339(self.ctx.clock())
        flavors = [n for _, n in self.informers[kinds.RESOURCE_FLAVOR].cache]
        for (_, name), cq in list(self.informers[kinds.CLUSTER_QUEUE].cache.items()):
            pending, admitted = counts.get(name, [0, 0])
            self.ctx.metrics.workloads.labels(queue=name, state="pending").set(pending)
            self.ctx.metrics.workloads.labels(queue=name, state="admitted").set(admitted)
            new = status.cluster_queue_status(
                cq,
                pending=pending,
                admitted=admitted,
                usage=self.engine.usage(name),
                flavors_known=flavors,
                now=now,
            )
            if new is not None:
                await self._patch_status(kinds.CLUSTER_QUEUE, name, None, new)
        cq_names = {n for _, n in self.informers[kinds.CLUSTER_QUEUE].cache}
        for (ns, name), lq in list(self.informers[kinds.LOCAL_QUEUE].cache.items()):
            pending, admitted = lq_counts.get((ns, name), [0, 0])
            new = status.local_queue_status(
                lq,
                pending=pending,
                admitted=admitted,
                usage=lq_usage.get((ns, name), {}),
                cluster_queue_exists=lq_to_cq.get((ns, name)) in cq_names,
                now=now,
            )
            if new is not None:
                await self._patch_status(kinds.LOCAL_QUEUE, name, ns, new)

    async def _patch_status(self, kind: Kind, name: str, namespace: str | None, new: Obj) -> None:
        with contextlib.suppress(errors.NotFound):
            await self.ctx.kube.patch(kind, name, {"status": new}, namespace, status=True)

    # -- the job worker ----------------------------------------------------------------------------
    async def _job_loop(self) -> None:
        await self._synced()
        while True:
            await self._jobs_ready.wait()
            self._jobs_ready.clear()
            batch, self._dirty_jobs = list(self._dirty_jobs), {}
            # different jobs are independent: sync them side by side (one job is never in two syncs,
            # since a job marked again meanwhile waits for the next batch)
            limit = asyncio.Semaphore(WRITE_CONCURRENCY)
            await asyncio.gather(*(self._limited(limit, self._sync_job_or_retry(ref)) for ref in batch))

    async def _sync_job_or_retry(self, ref: JobRef) -> None:
        try:
            await self._sync_job(*ref)
        except errors.KubeError as exc:
            log.warning("syncing %s: %s; will retry", ref[0].ref(ref[2], ref[1]), exc)
            asyncio.get_running_loop().call_later(JOB_RETRY_S, self._mark_job, ref)

    def _default_queue(self, kind: Kind, namespace: str) -> str | None:
        if kind == kinds.APPWRAPPER and self.ctx.config.appwrapper.default_queue_name:
            return self.ctx.config.appwrapper.default_queue_name
        for (ns, name), lq in self.informers[kinds.LOCAL_QUEUE].cache.items():
            annotations = (lq.get("metadata") or {}).get("annotations") or {}
            if ns == namespace and str(annotations.get(DEFAULT_QUEUE_ANNOTATION, "")).lower() == "true":
                return name
        return None

    async def _sync_job(self, kind: Kind, namespace: str, name: str) -> None:
        job = self.informers[kind].cache.get((namespace, name))
        if job is None or (job.get("metadata") or {}).get("deletionTimestamp"):
            return
        if jobs.owned_by_queued_job(job):
            return  # a child of a RayJob or AppWrapper: admitted with its parent, never queued itself
        queue = jobs.queue_name(job)
        if queue is None:
            default = self._default_queue(kind, namespace)
            fresh = not job.get("status") or jobs.is_suspended(job)
            if default is None or not fresh:
                return
            await self.ctx.kube.patch(
                kind, name, {"metadata": {"labels": {jobs.QUEUE_LABEL: default}}}, namespace
            )
            return
        uid = str(job["metadata"].get("uid", ""))
        wl_key = self._workload_of_job.get(uid)
        workload = self._workload_obj(wl_key) if wl_key else None
        done, message = jobs.finished(kind, job)
        if workload is None:
            if done:
                return
            if not jobs.is_suspended(job):
                await self._set_job(
                    kind,
                    jobs.suspended_job(kind, job),
                    "Suspended",
                    "suspended until its Workload is admitted",
                )
            await self._create_workload(kind, job)
            return
        key = workload_key(namespace, workload["metadata"]["name"])
        if done:
            succeeded = "fail" not in message.lower()
            await self._write_status(
                key,
                lambda cur: status.finished_status(
                    cur, message, convert.rfc3339(self.ctx.clock()), succeeded
                ),
            )
            return
        written = convert.admission_of(workload)
        admission = written or (self.engine.admission(key) if key in self._inflight else None)
        wanted = jobs.workload_pod_sets(kind, job)
        if wanted != (workload.get("spec") or {}).get("podSets"):
            await self._resize(kind, job, workload, key, wanted, admission is not None)
            return
        # unsuspend only on an admission the API holds: one still in flight may yet fail to be written
        if written is not None and jobs.is_suspended(job):
            await self._set_job(
                kind,
                jobs.admitted_job(kind, job, self._assignments(written)),
                "Admitted",
                f"admitted in ClusterQueue {written.cluster_queue}",
            )
        elif admission is None and not jobs.is_suspended(job):
            await self._set_job(
                kind, jobs.suspended_job(kind, job), "Suspended", "suspended: its Workload has no admission"
            )

    async def _resize(
        self, kind: Kind, job: Obj, workload: Obj, key: str, wanted: list[Obj], admitted: bool
    ) -> None:
        """The job's pod sets changed: update the Workload; an admitted one is evicted and requeued."""
        name = workload["metadata"]["name"]
        now = convert.rfc3339(self.ctx.clock())
        if admitted:
            await self._evict(
                key, "PodSetsChanged", "the job's pod sets changed; requeued with the new size", now
            )
        await self.ctx.kube.patch(
            kinds.WORKLOAD, name, {"spec": {"podSets": wanted}}, workload["metadata"].get("namespace")
        )

    def _assignments(self, admission: Admission) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        flavors = self.informers[kinds.RESOURCE_FLAVOR].cache
        for psa in admission.pod_set_assignments:
            selector: dict[str, str] = {}
            tolerations: list[Obj] = []
            for flavor_name in sorted(set(psa.flavors.values())):
                flavor = flavors.get(("", flavor_name)) or {}
                spec = flavor.get("spec") or {}
                selector.update(spec.get("nodeLabels") or {})
                tolerations += [t for t in spec.get("tolerations") or [] if t not in tolerations]
            out[psa.name] = {"nodeSelector": selector, "tolerations": tolerations}
        return out

    async def _set_job(self, kind: Kind, new: Obj, reason: str, message: str) -> None:
        meta = new["metadata"]
        patch: Obj = {"spec": {"suspend": new["spec"]["suspend"]}}
        if kind == kinds.APPWRAPPER:
            patch["spec"]["components"] = new["spec"].get("components", [])
            body = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, **patch}
            await self.ctx.kube.patch(kind, meta["name"], body, meta.get("namespace"))
        else:
            await self.ctx.kube.replace(kind, new)
        log.info("%s: %s", kind.ref(meta["name"], meta.get("namespace")), message)
        await self.ctx.events.record(new, reason, message)

    async def _create_workload(self, kind: Kind, job: Obj) -> None:
        pc = jobs.priority_class(job)
        if pc:
            manifest = jobs.workload_for(kind, job, self._priorities.get(pc, 0), pc)
        else:
            pod_pc = jobs.pod_priority_class(kind, job)
            priority = self._pod_priorities.get(pod_pc, 0) if pod_pc else 0
            manifest = jobs.workload_for(kind, job, priority, pod_pc, "scheduling.k8s.io/priorityclass")
        try:
            created = await self.ctx.kube.create(kinds.WORKLOAD, manifest)
        except errors.AlreadyExists:
            return
        log.info(
            "created Workload %s/%s for %s",
            created["metadata"].get("namespace"),
            created["metadata"]["name"],
            kind.ref(job["metadata"]["name"], job["metadata"].get("namespace")),
        )


def _lacks_reason(workload: Obj) -> bool:
    """Pending (no admission, not finished) and without a QuotaReserved condition yet."""
    if (workload.get("status") or {}).get("admission") or get_condition(
        workload, "QuotaReserved"
    ) is not None:
        return False
    return (get_condition(workload, "Finished") or {}).get("status") != "True"


def _pods_ready_change(ready: bool, reason: str, message: str, now: str) -> Callable[[Obj], Obj | None]:
    def change(current: Obj) -> Obj | None:
        cond = get_condition(current, "PodsReady")
        wanted = "True" if ready else "False"
        if cond is not None and cond.get("status") == wanted and cond.get("reason") == reason:
            return None
        new = dict(current.get("status") or {})
        new["conditions"] = set_condition(
            list(new.get("conditions") or []), "PodsReady", wanted, reason, message, now
        )
        return new

    return change


def _pending_change(message: str, now: str) -> Callable[[Obj], Obj | None]:
    def change(current: Obj) -> Obj | None:
        return status.pending_status(current, message, now)

    return change
