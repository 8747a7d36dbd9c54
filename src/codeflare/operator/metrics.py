"""The operator's Prometheus metrics, in a registry of its own (no process-global collectors).

``codeflare_workloads{queue,state}``, ``codeflare_admission_latency_seconds`` (creation to
admission) and ``appwrapper_phase_total{phase}``; served as Prometheus text by :mod:`probes`.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


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
        self.appwrapper_phase = Counter(
            "appwrapper_phase_total",
            "AppWrapper phase transitions, by phase entered.",
            ["phase"],
            registry=self.registry,
        )
        self.admissions = Counter(
            "codeflare_admissions_total",
            "Admissions written, by ClusterQueue.",
            ["queue"],
            registry=self.registry,
        )
        self.preemptions = Counter(
            "codeflare_preemptions_total",
            "Workloads evicted to make room, by reason.",
            ["reason"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
