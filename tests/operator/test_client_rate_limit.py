"""The operator's API client honours ``clientConnection.qps``/``burst`` (client-go's token bucket).

A real operator process against a real API server, configured with ``qps: 4, burst: 1``, admits
60 Workloads that fit at once. Each admission is at least one write of the operator's, and the
operator was idle before the first Workload arrived, so its bucket held one token: the last
admission cannot land earlier than ``(60 - 1) / 4`` s (about 15 s) after the first Workload was created,
however fast the machine (a lower bound, not a speed measurement). Unthrottled, the same 60
admissions took about 6 s on the shared 2-core development machine (2026-12-02), creation of the
60 Workloads included. The operator also says which limits it applied, and counts its requests by
verb, resource and priority with the time they waited for tokens. And under the same bucket, a
late Workload of higher priority goes before earlier ones still waiting for their writes: the
scheduling loop decides no further ahead of the writes than the bucket can catch up with soon.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeflare.kube import kinds
from codeflare.kube.client import Kube
from tests.operator.operator_metrics import OperatorMetricsReader
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import OperatorProcess, install_crds, quiet_config, write_operator_config
from tests.support.polling import wait_for
from tests.support.queue_objects import admission, create_flavor_and_queues, workload

QPS, BURST, COUNT = 4, 1, 60


@pytest.fixture
def metrics() -> OperatorMetricsReader:
    return OperatorMetricsReader()


@pytest.fixture
def operator(
    kube: Kube, fresh_apiserver: ServerProcess, tmp_path: Path, metrics: OperatorMetricsReader
) -> Iterator[OperatorProcess]:
    install_crds(kube)
    create_flavor_and_queues(kube, {"team": ("cq", str(COUNT))})
    limits = {"qps": QPS, "burst": BURST}
    write_operator_config(kube, quiet_config(clientConnection=limits, metrics=metrics.bind))
    process = OperatorProcess(fresh_apiserver.kubeconfig, tmp_path / "operator.log").start()
    try:
        wait_for(lambda: "queueing controller synced" in process.log(), 60, what="operator synced")
        yield process
    finally:
        process.stop()
        print(process.log()[-3000:])  # shown by pytest when the test fails


def test_admissions_are_paced_by_the_configured_bucket(
    kube: Kube, operator: OperatorProcess, metrics: OperatorMetricsReader
) -> None:
    assert f"API client rate limit: qps {QPS}, burst {BURST}" in operator.log()
    first_created = time.monotonic()
    for i in range(COUNT):
        kube.create(kinds.WORKLOAD, workload(f"wl-{i:02d}", "team", "queue", "1"))

    def all_admitted() -> bool:
        items = kube.list(kinds.WORKLOAD, "team")
        return len(items) == COUNT and all(admission(wl) for wl in items)

    wait_for(all_admitted, 120, 0.05, what=f"{COUNT} admissions")
    elapsed = time.monotonic() - first_created
    assert elapsed >= (COUNT - BURST) / QPS, f"{COUNT} admissions in {elapsed:.2f}s beat qps {QPS}"
    # where the budget went, as the operator counts it: every admission was a status write sent at
    # admission priority, and those writes waited for their tokens
    sent = metrics.value(
        "codeflare_client_requests_total", verb="update", resource="workloads/status", priority="admission"
    )
    assert sent is not None and sent >= COUNT
    waited = metrics.value("codeflare_client_rate_limiter_duration_seconds_sum", priority="admission")
    assert waited is not None and waited > 0


def test_decisions_keep_just_ahead_of_the_writes(kube: Kube, operator: OperatorProcess) -> None:
    """A workload of higher priority that arrives while earlier ones wait for their writes goes
    before them: the scheduling loop decides only what the bucket can write within
    ``ADMISSION_BACKLOG_S`` (at qps 4, one admission ahead), so the earlier ones are still pending
    when it comes. Deciding all 20 at once (their quota fits) and writing them at qps 4 afterwards
    would admit the late one last, about 5 s after it arrived."""
    low = [f"low-{i:02d}" for i in range(20)]
    for name in low:
        kube.create(kinds.WORKLOAD, workload(name, "team", "queue", "1", priority=0))
    order: list[str] = []  # workloads in the order their admission was first seen

    def observe() -> None:
        seen = set(order)
        admitted = {wl["metadata"]["name"] for wl in kube.list(kinds.WORKLOAD, "team") if admission(wl)}
        order.extend(sorted(admitted - seen, key=lambda name: (name == "high", name)))  # ties: "high" last

    wait_for(lambda: bool(observe() or order), 60, 0.02, what="the first admission")
    kube.create(kinds.WORKLOAD, workload("high", "team", "queue", "1", priority=100))
    wait_for(lambda: bool(observe() or len(order) == len(low) + 1), 120, 0.02, what="every admission")
    before = order.index("high")
    assert before <= 5, f"the late high-priority workload was admitted after {before} earlier ones: {order}"
