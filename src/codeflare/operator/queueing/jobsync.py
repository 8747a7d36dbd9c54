"""The job side of queueing: each queued job kept in line with its Workload.

:func:`decide_job` is the pure decision over one job, its Workload and the admission that counts
(written, or decided and being written): give it the namespace's default queue, queue it
(create its Workload, suspending it first if it runs), mark the Workload finished when the job
ended, follow a change of its pod sets, unsuspend it on an admission the API holds (with the
flavors' nodeSelectors and tolerations injected), suspend it when it runs without one (undoing
that injection), or carry a suspended job's queue and priority-class labels to its Workload.
:class:`JobSync` carries the decision out, one job at a time per batch, and retries a failed
sync. What differs between kinds is the kind's adapter (:mod:`adapters`); nothing here
branches on the kind.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codeflare.api.kueue import namespace_default_queue
from codeflare.api.kueue_conversion import priority_class_ref, priority_class_source
from codeflare.k8s.conditions import conditions_of, is_condition_true
from codeflare.k8s.constants import (
    JOB_UID_LABEL,
    POD_PRIORITY_CLASS_SOURCE,
    QUEUE_NAME_LABEL,
    WORKLOAD_PRIORITY_CLASS_SOURCE,
)
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.informer import SharedInformers
from codeflare.kube.kinds import Kind
from codeflare.operator.context import OperatorContext
from codeflare.operator.metrics import WatchProgress
from codeflare.operator.queueing import adapters, convert, elastic, jobs, status
from codeflare.operator.queueing.decisions import WRITE_CONCURRENCY, DecisionWriter, limited
from codeflare.operator.queueing.feeder import JobRef, QueueingState
from codeflare.scheduling import Admission, workload_key

log = logging.getLogger(__name__)

CONTROLLER = "queueing"  # its reconcile count and watch progress
JOB_RETRY_S = 0.5  # a job whose sync failed is looked at again after this


class JobStep(enum.Enum):
    NOTHING = "nothing to do"
    LABEL_QUEUE = "label the job with the namespace's default queue"
    QUEUE = "create the job's Workload"
    FINISH = "mark the Workload finished"
    SUSPEND = "suspend the job and restore its pod sets: its Workload has no admission"
    RESIZE = "update the Workload's pod sets"
    UNSUSPEND = "run the admitted job"
    RETARGET = "follow the suspended job's queue or priority-class label on its Workload"


@dataclass(frozen=True)
class JobDecision:
    step: JobStep
    queue: str = ""  # LABEL_QUEUE: the default queue; RETARGET: the queue label
    suspend_first: bool = False  # QUEUE: the job runs without a Workload
    succeeded: bool = True  # FINISH
    message: str = ""  # FINISH: how the job ended
    pod_sets: tuple[Obj, ...] = ()  # RESIZE: the Workload's new spec.podSets
    evict: bool = False  # RESIZE: the Workload is admitted and must be requeued with the new size
    admission: Admission | None = None  # UNSUSPEND
    priority_class: str | None = None  # RETARGET: the priority-class label (None: removed)


NOTHING = JobDecision(JobStep.NOTHING)


def decide_job(
    kind: Kind,
    job: Obj | None,
    workload: Obj | None,
    *,
    default_queue: str | None,
    assumed: Admission | None,
) -> JobDecision:
    """What to do about ``job`` (None: gone) given its Workload (None: none yet).

    ``assumed`` is an admission decided and still being written; the job is only unsuspended on
    an admission the API holds (one in flight may yet fail to be written), but it is not
    suspended while one is in flight either. A job running without an admission is suspended
    (and its pod sets restored) before anything else, as Kueue's reconciler stops an evicted
    job before it looks at its shape.
    """
    adapter = adapters.adapter_for(kind)
    if job is None or (job.get("metadata") or {}).get("deletionTimestamp"):
        return NOTHING
    if jobs.owned_by_queued_job(job):
        return NOTHING  # a child of a RayJob or AppWrapper: admitted with its parent, never queued itself
    if jobs.queue_name(job) is None:
        fresh = not job.get("status") or adapter.is_suspended(job)
        if default_queue is None or not fresh:
            return NOTHING
        return JobDecision(JobStep.LABEL_QUEUE, queue=default_queue)
    ended = adapter.finished(job)
    if workload is None:
        if ended.done:
            return NOTHING
        return JobDecision(JobStep.QUEUE, suspend_first=not adapter.is_suspended(job))
    if ended.done:
        return JobDecision(JobStep.FINISH, succeeded=ended.success, message=ended.message)
    written = convert.admission_of(workload)
    admission = written or assumed
    if admission is None and not adapter.is_suspended(job):
        return JobDecision(JobStep.SUSPEND)
    wanted = jobs.workload_pod_sets(kind, job)
    current = (workload.get("spec") or {}).get("podSets") or []
    if not (jobs.same_shape(wanted, current) if admission else wanted == current):
        return JobDecision(JobStep.RESIZE, pod_sets=tuple(wanted), evict=admission is not None)
    if written is not None and adapter.is_suspended(job):
        return JobDecision(JobStep.UNSUSPEND, admission=written)
    if admission is None:
        return _retarget(job, workload)
    return NOTHING


def _retarget(job: Obj, workload: Obj) -> JobDecision:
    """A suspended, unadmitted job whose queue or WorkloadPriorityClass label changed (Kueue's
    jobframework reconciler updates the Workload's queueName, and its priority only where it
    came from a WorkloadPriorityClass)."""
    spec = workload.get("spec") or {}
    queue, priority_class = jobs.queue_name(job) or "", jobs.priority_class(job)
    source, name = priority_class_source(spec.get("priorityClassRef")) or ("", "")
    from_label = source == WORKLOAD_PRIORITY_CLASS_SOURCE
    if spec.get("queueName", "") != queue or (from_label and name != priority_class):
        return JobDecision(JobStep.RETARGET, queue=queue, priority_class=priority_class)
    return NOTHING


class JobSync:
    """Syncs queued jobs marked dirty by their own, their Workload's or their LocalQueue's changes."""

    def __init__(self, ctx: OperatorContext, state: QueueingState, writer: DecisionWriter) -> None:
        self.ctx = ctx
        self.state = state
        self.writer = writer
        self.progress: WatchProgress = ctx.metrics.watch_progress(CONTROLLER)
        self._dirty: dict[JobRef, None] = {}
        self._ready = asyncio.Event()
        self._workload_of_job: dict[str, str] = {}  # job uid -> workload key
        self.elastic = elastic.ElasticSlices(ctx.kube, writer.write_status, ctx.clock)

    def subscribe(self, informers: SharedInformers) -> None:
        for kind in adapters.QUEUED_KINDS:
            self.state.informers[kind] = informers.subscribe(kind, self._job_handler(kind))
        self.state.informers[kinds.WORKLOAD] = informers.subscribe(kinds.WORKLOAD, self._on_workload)
        self.state.informers[kinds.LOCAL_QUEUE] = informers.subscribe(kinds.LOCAL_QUEUE, self._on_local_queue)

    # -- what to look at (informer handlers: synchronous, no I/O) -----------------------------------
    def mark(self, ref: JobRef) -> None:
        self._dirty[ref] = None
        self._ready.set()

    def _job_handler(self, kind: Kind) -> Callable[[str, Obj, Obj | None], None]:
        def changed(event: str, obj: Obj, old: Obj | None) -> None:
            if event == "DELETED":
                self.progress.seen(kind.kind, obj)
                return
            ref = (kind, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            self.progress.seen(kind.kind, obj, ref)
            self.mark(ref)

        return changed

    def _on_workload(self, event: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        job_uid = (meta.get("labels") or {}).get(JOB_UID_LABEL)
        if job_uid and event == "DELETED":
            self._workload_of_job.pop(job_uid, None)
        elif job_uid and not _finished(obj):
            self._workload_of_job[job_uid] = workload_key(meta.get("namespace", ""), meta["name"])
        owner = self.state.owner_job(obj)
        self.progress.seen(kinds.WORKLOAD.kind, obj, owner)
        if owner is not None:
            self.mark(owner)

    def _on_local_queue(self, event: str, obj: Obj, old: Obj | None) -> None:
        namespace = obj["metadata"].get("namespace", "")
        touched = [
            (kind, namespace, name)
            for kind in adapters.QUEUED_KINDS
            for ns, name in list(self.state.informers[kind].cache)
            if ns == namespace
        ]
        for ref in touched:
            self.progress.seen(kinds.LOCAL_QUEUE.kind, obj, ref)
            self.mark(ref)
        if not touched:
            self.progress.seen(kinds.LOCAL_QUEUE.kind, obj)

    # -- the worker ---------------------------------------------------------------------------------
    async def run(self) -> None:
        """Sync marked jobs in batches until cancelled (call once the caches have synced)."""
        while True:
            await self._ready.wait()
            self._ready.clear()
            batch, self._dirty = list(self._dirty), {}
            # different jobs are independent: sync them side by side (one job is never in two syncs,
            # since a job marked again meanwhile waits for the next batch)
            limit = asyncio.Semaphore(WRITE_CONCURRENCY)
            await asyncio.gather(*(limited(limit, self._sync_or_retry(ref)) for ref in batch))

    async def _sync_or_retry(self, ref: JobRef) -> None:
        self.progress.start(ref)
        done = False
        try:
            await self.sync(*ref)
            done = True
        except errors.KubeError as exc:
            log.warning("syncing %s: %s; will retry", ref[0].ref(ref[2], ref[1]), exc)
            asyncio.get_running_loop().call_later(JOB_RETRY_S, self.mark, ref)
        finally:
            self.progress.finish(ref, done)
            self.ctx.metrics.reconciled(CONTROLLER)

    def _default_queue(self, kind: Kind, namespace: str) -> str | None:
        configured = adapters.adapter_for(kind).configured_default_queue(
            self.ctx.config.appwrapper.default_queue_name
        )
        if configured:
            return configured
        cache = self.state.informers[kinds.LOCAL_QUEUE].cache
        return namespace_default_queue(lq for (ns, _), lq in cache.items() if ns == namespace)

    async def sync(self, kind: Kind, namespace: str, name: str) -> None:
        """Decide about one job from the caches and carry the decision out."""
        job = self.state.informers[kind].cache.get((namespace, name))
        if job is not None and elastic.is_elastic(kind, job):  # hook: elastic jobs resize by slices
            workloads = self.state.informers[kinds.WORKLOAD].cache.values()
            if await self.elastic.sync(job, jobs.workload_pod_sets(kind, job), list(workloads)):
                return
        uid = str(((job or {}).get("metadata") or {}).get("uid", ""))
        wl_key = self._workload_of_job.get(uid)
        workload = self.state.workload_obj(wl_key) if wl_key else None
        assumed = self.state.engine.admission(wl_key) if wl_key in self.state.inflight else None
        default = self._default_queue(kind, namespace) if job is not None else None
        decision = decide_job(kind, job, workload, default_queue=default, assumed=assumed)
        if job is None or decision.step is JobStep.NOTHING:
            return
        await self._act(kind, job, workload, decision)

    async def _act(self, kind: Kind, job: Obj, workload: Obj | None, decision: JobDecision) -> None:
        step, meta = decision.step, job["metadata"]
        adapter = adapters.adapter_for(kind)
        if step is JobStep.LABEL_QUEUE:
            labels = {"metadata": {"labels": {QUEUE_NAME_LABEL: decision.queue}}}
            await self.ctx.kube.patch(kind, meta["name"], labels, meta.get("namespace"))
        elif step is JobStep.QUEUE:
            if decision.suspend_first:
                message = "suspended until its Workload is admitted"
                await self._set_job(kind, adapter.suspend(job), "Suspended", message)
            await self._create_workload(kind, job)
        elif step is JobStep.UNSUSPEND and decision.admission is not None:
            infos = adapters.infos_for(self._assignments(decision.admission))
            admitted = adapter.run_with_pod_set_infos(job, infos)
            message = f"admitted in ClusterQueue {decision.admission.cluster_queue}"
            await self._set_job(kind, admitted, "Admitted", message)
        elif step is JobStep.SUSPEND and workload is not None:
            originals = adapters.original_infos(workload)
            stopped = adapter.restore_pod_set_infos(adapter.suspend(job), originals)
            await self._set_job(kind, stopped, "Suspended", "suspended: its Workload has no admission")
        elif step is JobStep.RETARGET and workload is not None:
            await self._retarget(kind, job, workload, decision)
        elif workload is not None:
            await self._write_workload(workload, decision)

    async def _retarget(self, kind: Kind, job: Obj, workload: Obj, decision: JobDecision) -> None:
        meta = workload["metadata"]
        spec: Obj = {"queueName": decision.queue}
        current = priority_class_source((workload.get("spec") or {}).get("priorityClassRef"))
        if current is not None and current[0] == WORKLOAD_PRIORITY_CLASS_SOURCE:
            priority, name, source = self._priority(kind, job)
            spec.update(priority=priority, priorityClassRef=priority_class_ref(source, name or ""))
        await self.ctx.kube.patch(kinds.WORKLOAD, meta["name"], {"spec": spec}, meta.get("namespace"))
        log.info("Workload %s/%s follows its job: %s", meta.get("namespace"), meta["name"], spec)

    async def _write_workload(self, workload: Obj, decision: JobDecision) -> None:
        meta = workload["metadata"]
        key = workload_key(meta.get("namespace", ""), meta["name"])
        now = format_rfc3339(self.ctx.clock())
        if decision.step is JobStep.FINISH:
            message, succeeded = decision.message, decision.succeeded
            await self.writer.write_status(
                key, lambda cur: status.finished_status(cur, message, now, succeeded)
            )
            return
        # RESIZE: an admitted Workload is evicted and requeued with the new size
        if decision.evict:
            message = "the job's pod sets changed; requeued with the new size"
            await self.writer.evict(key, "PodSetsChanged", message, now)
        body = {"spec": {"podSets": list(decision.pod_sets)}}
        await self.ctx.kube.patch(kinds.WORKLOAD, meta["name"], body, meta.get("namespace"))

    def _assignments(self, admission: Admission) -> dict[str, dict[str, Any]]:
        """Per pod set, the node selector and tolerations of the flavors it was admitted with."""
        out: dict[str, dict[str, Any]] = {}
        flavors = self.state.informers[kinds.RESOURCE_FLAVOR].cache
        for psa in admission.pod_set_assignments:
            selector: dict[str, str] = {}
            tolerations: list[Obj] = []
            for flavor_name in sorted(set(psa.flavors.values())):
                spec = (flavors.get(("", flavor_name)) or {}).get("spec") or {}
                selector.update(spec.get("nodeLabels") or {})
                tolerations += [t for t in spec.get("tolerations") or [] if t not in tolerations]
            out[psa.name] = {"nodeSelector": selector, "tolerations": tolerations}
        return out

    async def _set_job(self, kind: Kind, new: Obj, reason: str, message: str) -> None:
        meta = new["metadata"]
        patch = adapters.adapter_for(kind).write_patch(new)
        if patch is not None:
            await self.ctx.kube.patch(kind, meta["name"], patch, meta.get("namespace"))
        else:
            await self.ctx.kube.replace(kind, new)
        log.info("%s: %s", kind.ref(meta["name"], meta.get("namespace")), message)
        await self.ctx.events.record(new, reason, message)

    def _priority(self, kind: Kind, job: Obj) -> tuple[int, str | None, str]:
        """(priority, class name, source): the WorkloadPriorityClass label's, else the pods' class."""
        label = jobs.priority_class(job)
        if label:
            return self.state.priorities.get(label, 0), label, WORKLOAD_PRIORITY_CLASS_SOURCE
        pod_pc = jobs.pod_priority_class(kind, job)
        priority = self.state.pod_priorities.get(pod_pc, 0) if pod_pc else 0
        return priority, pod_pc, POD_PRIORITY_CLASS_SOURCE

    async def _create_workload(self, kind: Kind, job: Obj) -> None:
        priority, name, source = self._priority(kind, job)
        try:
            manifest = jobs.workload_for(kind, job, priority, name, source)
        except ValueError as exc:  # a bad max-exec-time-seconds label: the job stays suspended
            log.warning("%s: %s", kind.ref(job["metadata"]["name"], job["metadata"].get("namespace")), exc)
            await self.ctx.events.record(job, "InvalidLabel", str(exc), type_="Warning")
            return
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


def _finished(workload: Obj) -> bool:
    return is_condition_true(conditions_of(workload), "Finished")
