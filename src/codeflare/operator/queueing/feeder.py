"""The engine feeder: informer events in, :class:`~codeflare.scheduling.AdmissionEngine` state out.

Every object the admission decision depends on (ResourceFlavors, ClusterQueues, Cohorts,
LocalQueues, Namespaces, priority classes, Workloads and, with the capacity check, Nodes and the pods not
managed by us) reaches the engine through here, synchronously and without I/O, as the informers
report it. :class:`QueueingState` is what the queueing controller's parts share: the engine,
the caches, and the admissions decided but not yet written. Deciding and writing are elsewhere
(:mod:`decisions`, :mod:`jobsync`, :mod:`reporter`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from codeflare.api.podsets import pod_requests
from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true
from codeflare.k8s.constants import APPWRAPPER_LABEL, RAY_CLUSTER_LABEL
from codeflare.k8s.quantity import format_milli, milli_value
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.informer import Handler, Informer, SharedInformers
from codeflare.kube.kinds import Kind
from codeflare.operator.metrics import WatchProgress
from codeflare.operator.queueing import cohorts, convert, elastic
from codeflare.operator.queueing.adapters import QUEUED_KINDS
from codeflare.operator.queueing.reason_codes import QUEUE_BLOCKER_REASONS
from codeflare.scheduling import Admission, AdmissionEngine, LocalQueue, workload_key

log = logging.getLogger(__name__)

JobRef = tuple[Kind, str, str]  # kind, namespace, name
CYCLE = "cycle"  # the scheduler's one work key in its WatchProgress
# Pods of these are counted as queued workloads, not as unmanaged usage of their node.
MANAGED_POD_LABELS = (RAY_CLUSTER_LABEL, APPWRAPPER_LABEL)


@dataclass
class QueueingState:
    """The engine and the caches the queueing controller decides over (one per operator)."""

    engine: AdmissionEngine
    informers: dict[Kind, Informer] = field(default_factory=dict)
    inflight: set[str] = field(default_factory=set)  # admissions decided, not yet in the API
    needs_reason: set[str] = field(default_factory=set)  # pending and without QuotaReserved yet
    inadmissible: set[str] = field(default_factory=set)  # QuotaReserved=False reason Inadmissible written
    priorities: dict[str, int] = field(default_factory=dict)  # WorkloadPriorityClass values
    # waitForPodsReady.requeuingStrategy.timestamp: what an evicted workload queues from
    requeuing_timestamp: str = "Eviction"
    pod_priorities: dict[str, int] = field(default_factory=dict)  # scheduling.k8s.io PriorityClass
    # LocalQueues with a stopPolicy (Hold, HoldAndDrain): out of the engine, as Kueue takes them
    # out of its queue manager; and the admitted workloads a HoldAndDrain queue must evict.
    stopped_local_queues: dict[tuple[str, str], str] = field(default_factory=dict)
    to_drain: set[str] = field(default_factory=set)
    # the stable identity of the pending reason last written per workload (see reasons.py), and
    # whether no admission write is under way (pending reasons wait for admissions)
    reasons_written: dict[str, Hashable] = field(default_factory=dict)
    # LocalQueues in the engine whose recent usage (admission fair sharing) was resumed from status
    usage_resumed: set[tuple[str, str]] = field(default_factory=set)
    changes: int = 0  # informer events handled so far: queue status is recomputed only after one
    admissions_idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.admissions_idle.set()

    def workload_obj(self, key: str) -> Obj | None:
        namespace, _, name = key.partition("/")
        return self.informers[kinds.WORKLOAD].cache.get((namespace, name))

    def owner_job(self, workload: Obj) -> JobRef | None:
        """The queued job a Workload stands for (its owner reference)."""
        for ref in (workload.get("metadata") or {}).get("ownerReferences") or []:
            kind = kinds.BY_API_KIND.get((ref.get("apiVersion", ""), ref.get("kind", "")))
            if kind in QUEUED_KINDS:
                return (kind, workload["metadata"].get("namespace", ""), ref.get("name", ""))
        return None

    def admission(self, key: str) -> Admission | None:
        """The admission that counts for a job: the written one, else the one being written."""
        cached = self.workload_obj(key)
        written = convert.admission_of(cached) if cached is not None else None
        if written is not None:
            return written
        return self.engine.admission(key) if key in self.inflight else None

    def forget_admission(self, key: str) -> None:
        """An admission could not be written: the engine goes back to the API's view."""
        self.inflight.discard(key)
        cached = self.workload_obj(key)
        if cached is None:
            self.engine.remove_workload(key)
        else:
            self.engine.add_workload(convert.workload(cached, self.priorities, self.requeuing_timestamp))


class EngineFeeder:
    """Informer handlers that keep the engine equal to the caches; each change wakes the scheduler."""

    def __init__(self, state: QueueingState, wake: Callable[[], None], progress: WatchProgress) -> None:
        self.state = state
        self.engine = state.engine
        self._wake_scheduler = wake
        self._woken = False
        self._progress = progress
        self._unmanaged: dict[str, dict[str, int]] = {}  # node -> resource -> milli

    def subscribe(self, informers: SharedInformers, capacity_check: bool) -> None:
        handlers: dict[Kind, Handler] = {
            kinds.RESOURCE_FLAVOR: self._on_flavor,
            kinds.CLUSTER_QUEUE: self._on_cluster_queue,
            kinds.COHORT: self._on_cohort,
            kinds.LOCAL_QUEUE: self._on_local_queue,
            kinds.NAMESPACE: self._on_namespace,
            kinds.WORKLOAD_PRIORITY_CLASS: self._priority_handler(self.state.priorities),
            kinds.PRIORITY_CLASS: self._priority_handler(self.state.pod_priorities),
            kinds.WORKLOAD: self._on_workload,
        }
        if capacity_check:
            handlers[kinds.NODE] = self._on_node
            handlers[kinds.POD] = self._on_pod
        for kind, handler in handlers.items():
            self.state.informers[kind] = informers.subscribe(kind, self._tracked(kind, handler))

    def _tracked(self, kind: Kind, handler: Handler) -> Handler:
        """``handler``, and the change recorded as work for the next cycle if it woke the scheduler."""

        def fed(event: str, obj: Obj, old: Obj | None) -> None:
            self.state.changes += 1
            self._woken = False
            handler(event, obj, old)
            self._progress.seen(kind.kind, obj, CYCLE if self._woken else None)

        return fed

    def _wake(self) -> None:
        self._woken = True
        self._wake_scheduler()

    # -- queues and flavors -------------------------------------------------------------------------
    def _on_flavor(self, event: str, obj: Obj, old: Obj | None) -> None:
        if event == "DELETED":
            self.engine.remove_resource_flavor(obj["metadata"]["name"])
        else:
            self.engine.add_resource_flavor(convert.resource_flavor(obj))
        self._wake()

    def _on_cluster_queue(self, event: str, obj: Obj, old: Obj | None) -> None:
        if status_only(event, obj, old):
            return  # e.g. our own counters written: nothing the engine reads changed
        if event == "DELETED":
            self.engine.remove_cluster_queue(obj["metadata"]["name"])
        else:
            try:
                spec = convert.cluster_queue(obj)
                self.engine.add_cluster_queue(dataclasses.replace(spec, fair_weight=cohorts.fair_weight(obj)))
            except ValueError as exc:
                log.error("ignoring invalid ClusterQueue: %s", exc)
                return
        self._wake()

    def _on_cohort(self, event: str, obj: Obj, old: Obj | None) -> None:
        if status_only(event, obj, old):
            return  # our own weightedShare written
        if event == "DELETED":
            self.engine.remove_cohort(obj["metadata"]["name"])
        else:
            try:
                self.engine.add_cohort(cohorts.cohort(obj))
            except ValueError as exc:
                log.error("ignoring invalid Cohort: %s", exc)
                return
        self._wake()

    def _on_local_queue(self, event: str, obj: Obj, old: Obj | None) -> None:
        if status_only(event, obj, old):
            return
        meta, state = obj["metadata"], self.state
        ref = (meta.get("namespace", ""), meta["name"])
        policy = "None" if event == "DELETED" else convert.local_queue_stop_policy(obj)
        if event == "DELETED" or policy != "None":
            self.engine.remove_local_queue(*ref)
            state.usage_resumed.discard(ref)
        else:
            self.engine.add_local_queue(_local_queue(obj))
            if ref not in state.usage_resumed:
                self._resume_usage(ref, obj)
        if policy == "None":
            state.stopped_local_queues.pop(ref, None)
        else:
            state.stopped_local_queues[ref] = policy
        if policy == "HoldAndDrain":
            for (ns, name), wl in state.informers[kinds.WORKLOAD].cache.items():
                if ns == ref[0] and self._drains(wl):
                    state.to_drain.add(workload_key(ns, name))
        self._wake()

    def _resume_usage(self, ref: tuple[str, str], obj: Obj) -> None:
        """Admission fair sharing: a LocalQueue the engine takes in resumes the recent usage its
        status kept (Kueue v0.17.7+: the history survives a restart); a no-op when it is off."""
        self.state.usage_resumed.add(ref)
        usage = convert.local_queue_usage(obj)
        if usage is not None:
            self.engine.seed_local_queue_usage(*ref, *usage)

    def _drains(self, workload: Obj) -> bool:
        """Whether an admitted, unfinished Workload sits in a HoldAndDrain LocalQueue."""
        namespace = workload["metadata"].get("namespace", "")
        queue = str((workload.get("spec") or {}).get("queueName", ""))
        if self.state.stopped_local_queues.get((namespace, queue)) != "HoldAndDrain":
            return False
        admitted = bool((workload.get("status") or {}).get("admission"))
        return admitted and not is_condition_true(conditions_of(workload), "Finished")

    def _on_namespace(self, event: str, obj: Obj, old: Obj | None) -> None:
        name = obj["metadata"]["name"]
        if event == "DELETED":
            self.engine.remove_namespace(name)
        else:
            self.engine.add_namespace(name, dict(obj["metadata"].get("labels") or {}))
        self._wake()

    @staticmethod
    def _priority_handler(values: dict[str, int]) -> Handler:
        def changed(event: str, obj: Obj, old: Obj | None) -> None:
            name = obj["metadata"]["name"]
            if event == "DELETED":
                values.pop(name, None)
            else:
                values[name] = int(obj.get("value") or 0)

        return changed

    # -- node capacity --------------------------------------------------------------------------------
    def _on_node(self, event: str, obj: Obj, old: Obj | None) -> None:
        name = obj["metadata"]["name"]
        if event == "DELETED":
            self.engine.remove_node(name)
        else:
            self.engine.add_node(convert.node(obj, self._unmanaged_quantities(name)))
        self._wake()

    def _on_pod(self, event: str, obj: Obj, old: Obj | None) -> None:
        nodes = {p.get("spec", {}).get("nodeName") for p in (obj, old) if p is not None}
        nodes.discard(None)
        for node_name in nodes:
            self._recount_unmanaged(str(node_name))

    def _recount_unmanaged(self, node_name: str) -> None:
        totals: dict[str, int] = {}
        for pod in self.state.informers[kinds.POD].cache.values():
            spec = pod.get("spec") or {}
            labels = (pod.get("metadata") or {}).get("labels") or {}
            if spec.get("nodeName") != node_name or any(label in labels for label in MANAGED_POD_LABELS):
                continue
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            for name, value in pod_requests(pod).items():
                totals[name] = totals.get(name, 0) + milli_value(value)
        if totals == self._unmanaged.get(node_name, {}):
            return
        self._unmanaged[node_name] = totals
        node = self.state.informers[kinds.NODE].cache.get(("", node_name))
        if node is not None:
            self.engine.add_node(convert.node(node, self._unmanaged_quantities(node_name)))
            self._wake()

    def _unmanaged_quantities(self, node_name: str) -> dict[str, Any]:
        return {k: format_milli(v) for k, v in self._unmanaged.get(node_name, {}).items()}

    # -- workloads ------------------------------------------------------------------------------------
    def _on_workload(self, event: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        key = workload_key(meta.get("namespace", ""), meta["name"])
        state = self.state
        if event != "DELETED" and lacks_reason(obj):
            state.needs_reason.add(key)
        else:
            state.needs_reason.discard(key)
        if event != "DELETED" and inadmissible(obj):
            state.inadmissible.add(key)  # a queue came back: its reason must be rewritten once
        else:
            state.inadmissible.discard(key)
        if event == "DELETED" or is_condition_true(conditions_of(obj), "Finished"):
            self.engine.remove_workload(key)
            state.inflight.discard(key)
            state.to_drain.discard(key)
            state.reasons_written.pop(key, None)
        else:
            # hook: a pending workload slice asks only for what it adds to the slice it replaces
            workload = elastic.engine_view(
                obj, convert.workload(obj, state.priorities, state.requeuing_timestamp), state.workload_obj
            )
            if workload.admission is None and key in state.inflight:
                # our admission is still being written: the engine keeps assuming it
                workload = dataclasses.replace(workload, admission=self.engine.admission(key))
            elif workload.admission is not None:
                state.inflight.discard(key)
            self.engine.add_workload(workload)
            if self._drains(obj):
                state.to_drain.add(key)
        self._wake()


def _local_queue(obj: Obj) -> LocalQueue:
    """The engine's LocalQueue; an unreadable ``spec.fairSharing.weight`` is logged and left out
    (weight 1) rather than keeping the queue's workloads out of the engine."""
    try:
        return convert.local_queue(obj)
    except ValueError as exc:
        log.error("ignoring the fair sharing weight: %s", exc)
        return convert.local_queue({**obj, "spec": {**obj["spec"], "fairSharing": None}})


def status_only(event: str, obj: Obj, old: Obj | None) -> bool:
    """A modification that left spec and deletion alone (same ``metadata.generation``, which the
    server bumps on every spec change, and same ``deletionTimestamp``): what the engine reads of
    a queue is unchanged, so re-placing its pending workloads would be wasted work."""
    if event != "MODIFIED" or old is None:
        return False
    new_meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    generation = new_meta.get("generation")
    return (
        generation is not None
        and generation == old_meta.get("generation")
        and new_meta.get("deletionTimestamp") == old_meta.get("deletionTimestamp")
    )


def lacks_reason(workload: Obj) -> bool:
    """Pending (no admission, not finished) and without a QuotaReserved condition yet."""
    conds = conditions_of(workload)
    if (workload.get("status") or {}).get("admission") or find_condition(conds, "QuotaReserved"):
        return False
    return not is_condition_true(conds, "Finished")


def inadmissible(workload: Obj) -> bool:
    """Pending with a queue blocker's reason written (a missing or stopped queue: Misconfigured,
    Suspended, or the legacy "Inadmissible")."""
    reserved = find_condition(conditions_of(workload), "QuotaReserved")
    pending = not (workload.get("status") or {}).get("admission")
    return pending and reserved is not None and reserved.get("reason") in QUEUE_BLOCKER_REASONS
