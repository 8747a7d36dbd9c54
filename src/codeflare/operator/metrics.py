"""The operator's Prometheus metrics, in a registry of its own (no process-global collectors).

``codeflare_workloads{queue,state}``, ``codeflare_admission_latency_seconds`` (creation to
admission), ``appwrapper_phase_total{phase}``, admissions and preemptions; and what lets a test
prove that *nothing happened* without sleeping: ``codeflare_reconcile_total{controller}``,
``codeflare_scheduling_cycles_total`` and ``codeflare_caught_up_resource_version{controller,kind}``
(see :class:`WatchProgress`). Where the client's request budget goes:
``codeflare_client_requests_total{verb,resource,priority}`` and the time spent waiting for a
``clientConnection`` token, ``codeflare_client_rate_limiter_duration_seconds{priority}``.
Kueue's own queue gauges under Kueue's names and labels (pkg/metrics/metrics.go), from the
counts the queue-status reporter hands over (:class:`KueueCounts`):
``kueue_pending_workloads{cluster_queue,status}``, ``kueue_admitted_active_workloads``, their
``kueue_local_queue_*`` twins, and 0.19's ``kueue_unadmitted_workloads{cluster_queue,reason,
underlying_cause}`` and ``kueue_local_queue_unadmitted_workloads``; counted when scraped, not at
every change. Served as Prometheus text by :mod:`probes`. Nothing here decides.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from codeflare.kube.ratelimit import current_priority


class CountsReconciles(Protocol):
    """A work queue that counts its completed reconciles (:class:`codeflare.k8s.workqueue.ReconcileQueue`)."""

    reconciles: int


class WatchProgress:
    """How far one controller has acted on the changes its watches reported, per kind.

    The handler calls :meth:`seen` for every change (with the work key it queued, if any); the
    worker calls :meth:`start` when it takes a key and :meth:`finish` when it is done. The value
    of a kind is the newest resourceVersion up to which *every* change of that kind has been fully
    acted on: one less than the oldest change still waiting or in progress, or the newest seen.
    Watch streams are ordered per kind, so this is exact for integer resourceVersions (ours, and
    Kubernetes' in practice); opaque ones are not tracked. Computed only when scraped.
    """

    def __init__(self) -> None:
        self._newest: dict[str, int] = {}
        self._waiting: dict[Hashable, dict[str, int]] = {}
        self._running: dict[Hashable, dict[str, int]] = {}

    def seen(self, kind: str, obj: dict[str, Any], key: Hashable | None = None) -> None:
        """A change of ``obj`` was reported; ``key`` is the work it caused (None: nothing to do)."""
        try:
            version = int((obj.get("metadata") or {}).get("resourceVersion") or "")
        except ValueError:
            return
        self._newest[kind] = max(self._newest.get(kind, 0), version)
        if key is not None:
            self._waiting.setdefault(key, {}).setdefault(kind, version)

    def start(self, key: Hashable) -> None:
        """The worker took ``key``: what was waiting for it is now in progress."""
        waiting = self._waiting.pop(key, {})
        running = self._running.setdefault(key, {})
        for kind, version in waiting.items():
            running[kind] = min(version, running.get(kind, version))

    def relabel(self, key: Hashable, new: Hashable) -> None:
        """What is in progress for ``key`` continues as ``new`` (work handed over, e.g. a cycle's
        decisions still being written when the next cycle takes ``key``)."""
        running = self._running.pop(key, {})
        if running:
            self._running[new] = running

    def finish(self, key: Hashable, done: bool = True, requeue_as: Hashable | None = None) -> None:
        """The worker is done with ``key``; with ``done`` false (it failed) the work waits again, as
        ``requeue_as`` when given (the key it was taken under before a :meth:`relabel`)."""
        running = self._running.pop(key, {})
        if not done:
            waiting = self._waiting.setdefault(key if requeue_as is None else requeue_as, {})
            for kind, version in running.items():
                waiting[kind] = min(version, waiting.get(kind, version))

    def caught_up(self) -> dict[str, int]:
        """Kind -> resourceVersion up to which every change has been acted on."""
        oldest: dict[str, int] = {}
        for pending in (*self._waiting.values(), *self._running.values()):
            for kind, version in pending.items():
                oldest[kind] = min(version, oldest.get(kind, version))
        return {kind: oldest[kind] - 1 if kind in oldest else newest for kind, newest in self._newest.items()}


class _ProgressCollector(Collector):
    """``codeflare_caught_up_resource_version`` from every controller's :class:`WatchProgress`."""

    def __init__(self) -> None:
        self.progress: dict[str, WatchProgress] = {}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "codeflare_caught_up_resource_version",
            "Newest resourceVersion of a kind up to which a controller has acted on every change "
            "its watch reported (the scheduler: in a completed cycle).",
            labels=["controller", "kind"],
        )
        for controller, progress in sorted(self.progress.items()):
            for kind, version in sorted(progress.caught_up().items()):
                family.add_metric([controller, kind], version)
        yield family


class _ReconcileCollector(Collector):
    """``codeflare_reconcile_total``: passes counted here, plus those each registered queue counted."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.queues: dict[str, CountsReconciles] = {}

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "codeflare_reconcile",
            "Reconcile passes completed (successfully or not), by controller.",
            labels=["controller"],
        )
        totals = dict(self.counts)
        for controller, queue in self.queues.items():
            totals[controller] = totals.get(controller, 0) + queue.reconciles
        for controller, total in sorted(totals.items()):
            family.add_metric([controller], total)
        yield family


LocalQueueRef = tuple[str, str]  # (namespace, name)


@dataclass
class KueueCounts:
    """Unfinished workloads counted as Kueue's queue gauges count them (one report's snapshot).

    ``pending``: (ClusterQueue, "active" | "inadmissible") -> count, and per LocalQueue;
    ``admitted``: per ClusterQueue and LocalQueue; ``unadmitted``: (ClusterQueue, reason,
    underlying cause) -> count ("" ClusterQueue when the LocalQueue names none), and per LocalQueue.
    """

    pending: dict[tuple[str, str], int] = field(default_factory=dict)
    lq_pending: dict[tuple[LocalQueueRef, str], int] = field(default_factory=dict)
    admitted: dict[str, int] = field(default_factory=dict)
    lq_admitted: dict[LocalQueueRef, int] = field(default_factory=dict)
    unadmitted: dict[tuple[str, str, str], int] = field(default_factory=dict)
    lq_unadmitted: dict[tuple[LocalQueueRef, str, str, str], int] = field(default_factory=dict)


class _KueueCollector(Collector):
    """Kueue's queue gauges, counted by ``source`` at each scrape (series of gone queues vanish)."""

    def __init__(self) -> None:
        self.source: Callable[[], KueueCounts] = KueueCounts
        self.replica_role = "standalone"  # Kueue's value without leader election; "leader" with it

    def collect(self) -> Iterator[GaugeMetricFamily]:
        counts, role = self.source(), self.replica_role
        families: list[tuple[str, str, list[str], dict[tuple[str, ...], int]]] = [
            ("kueue_pending_workloads", "The number of pending workloads, per 'cluster_queue' and 'status' "
             "(active: in the admission queue; inadmissible: an admission attempt failed).",
             ["cluster_queue", "status"], {tuple(k): v for k, v in counts.pending.items()}),
            ("kueue_local_queue_pending_workloads", "The number of pending workloads, per 'local_queue' "
             "and 'status'.", ["name", "namespace", "status"],
             {(lq[1], lq[0], st): v for (lq, st), v in counts.lq_pending.items()}),
            ("kueue_admitted_active_workloads", "The number of admitted Workloads that are active, "
             "per 'cluster_queue'.", ["cluster_queue"], {(k,): v for k, v in counts.admitted.items()}),
            ("kueue_local_queue_admitted_active_workloads", "The number of admitted Workloads that are "
             "active, per 'localQueue'.", ["name", "namespace"],
             {(lq[1], lq[0]): v for lq, v in counts.lq_admitted.items()}),
            ("kueue_unadmitted_workloads", "The number of unadmitted workloads, per 'cluster_queue', "
             "'reason', and 'underlying_cause'.", ["cluster_queue", "reason", "underlying_cause"],
             {tuple(k): v for k, v in counts.unadmitted.items()}),
            ("kueue_local_queue_unadmitted_workloads", "The number of unadmitted workloads, per 'name', "
             "'namespace', 'cluster_queue', 'reason', and 'underlying_cause'.",
             ["name", "namespace", "cluster_queue", "reason", "underlying_cause"],
             {(lq[1], lq[0], cq, r, c): v for (lq, cq, r, c), v in counts.lq_unadmitted.items()}),
        ]  # fmt: skip
        for name, text, labels, samples in families:
            family = GaugeMetricFamily(name, text, labels=[*labels, "replica_role"])
            for values, value in sorted(samples.items()):
                family.add_metric([*values, role], value)
            yield family


class OperatorMetrics:
    """All metrics of one operator instance."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.workloads = Gauge(
            "codeflare_workloads",
            "Workloads by ClusterQueue and state (pending, admitted, finished).",
            ["queue", "state"],
            registry=self.registry,
        )
        self.admission_latency = Histogram(
            "codeflare_admission_latency_seconds",
            "Time from Workload creation to admission.",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
            registry=self.registry,
        )
        counter = partial(Counter, registry=self.registry)
        self.appwrapper_phase = counter(
            "appwrapper_phase_total", "AppWrapper phase transitions, by phase entered.", ["phase"]
        )
        self.admissions = counter(
            "codeflare_admissions_total", "Admissions written, by ClusterQueue.", ["queue"]
        )
        self.preemptions = counter(
            "codeflare_preemptions_total", "Workloads evicted to make room, by reason.", ["reason"]
        )
        self.scheduling_cycles = counter(
            "codeflare_scheduling_cycles", "Scheduling cycles completed, their decisions written."
        )
        attempt = "'success': at least one workload was admitted, 'inadmissible': none"
        self.admission_attempts = counter(
            "kueue_admission_attempts",
            f"Scheduling cycles (attempts to admit workloads) by 'result' ({attempt}).",
            ["result", "replica_role"],
        )
        self.admission_attempt_duration = Histogram(
            "kueue_admission_attempt_duration_seconds",
            f"How long a scheduling cycle took to decide, by 'result' ({attempt}).",
            ["result", "replica_role"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),  # Prometheus' defaults
            registry=self.registry,
        )
        self.client_requests = counter(
            "codeflare_client_requests",
            "Requests the operator's API client sent (resends too), by verb, resource and the "
            "rate-limit priority they waited at.",
            ["verb", "resource", "priority"],
        )
        self.client_throttled = Histogram(
            "codeflare_client_rate_limiter_duration_seconds",
            "Time a request waited for its clientConnection qps/burst token, by priority.",
            ["priority"],
            buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60),
            registry=self.registry,
        )
        self._progress = _ProgressCollector()
        self._reconciles = _ReconcileCollector()
        self._kueue = _KueueCollector()
        self.registry.register(self._progress)
        self.registry.register(self._reconciles)
        self.registry.register(self._kueue)

    def client_request(self, verb: str, resource: str, throttled: float) -> None:
        """Count one request of the operator's client (a :data:`~codeflare.kube.client.RequestObserver`)."""
        level = current_priority().name.lower()
        self.client_requests.labels(verb, resource, level).inc()
        self.client_throttled.labels(level).observe(throttled)

    def admission_attempt(self, admitted: bool, seconds: float) -> None:
        """Count one scheduling cycle as Kueue's admission-attempt metrics do."""
        labels = ("success" if admitted else "inadmissible", self._kueue.replica_role)
        self.admission_attempts.labels(*labels).inc()
        self.admission_attempt_duration.labels(*labels).observe(seconds)

    def count_kueue_workloads(self, source: Callable[[], KueueCounts], replica_role: str) -> None:
        """Serve what ``source`` counts at each scrape as Kueue's queue gauges (``replica_role``:
        "leader" or "standalone")."""
        self._kueue.source, self._kueue.replica_role = source, replica_role

    def reconciled(self, controller: str) -> None:
        """Count one completed reconcile pass of ``controller``."""
        self._reconciles.counts[controller] = self._reconciles.counts.get(controller, 0) + 1

    def count_reconciles(self, controller: str, queue: CountsReconciles) -> None:
        """Report the reconciles ``queue`` completes as ``controller``'s."""
        self._reconciles.queues[controller] = queue

    def watch_progress(self, controller: str) -> WatchProgress:
        """The :class:`WatchProgress` of ``controller`` (one per name, created on first use)."""
        return self._progress.progress.setdefault(controller, WatchProgress())

    def render(self) -> bytes:
        return generate_latest(self.registry)
