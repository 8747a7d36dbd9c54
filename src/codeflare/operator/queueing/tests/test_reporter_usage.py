"""The queue status reporter and admission fair sharing: a usage sample alone makes a LocalQueue
status write carrying ``status.fairSharing``, and a write that fails keeps the sample for the
retry. Over in-memory caches and a recording client (no API server)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from codeflare.k8s.quantity import Quantity
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.kube import errors, kinds
from codeflare.operator.config import OperatorConfig
from codeflare.operator.metrics import OperatorMetrics
from codeflare.operator.queueing.feeder import QueueingState
from codeflare.operator.queueing.reporter import QueueStatusReporter
from codeflare.scheduling import AdmissionEngine, LocalQueueUsage

NOW = 1_750_000_000.0
QUEUE = ("team", "a")


class RecordingKube:
    """Records status patches; fails the next ``failures`` of them."""

    def __init__(self) -> None:
        self.patches: list[tuple[str, dict[str, Any]]] = []
        self.failures = 0

    async def patch(
        self, kind: Any, name: str, body: dict[str, Any], namespace: str | None = None, **_: Any
    ) -> None:
        if self.failures:
            self.failures -= 1
            raise errors.KubeError("unavailable")
        self.patches.append((name, body))


def reporter() -> tuple[QueueStatusReporter, RecordingKube]:
    kube = RecordingKube()
    ctx: Any = SimpleNamespace(
        config=OperatorConfig.default(), metrics=OperatorMetrics(), kube=kube, clock=lambda: NOW
    )
    state = QueueingState(AdmissionEngine())
    lq = {"metadata": {"name": QUEUE[1], "namespace": QUEUE[0]}, "spec": {"clusterQueue": "cq"}}
    caches = {
        kinds.CLUSTER_QUEUE: {},
        kinds.RESOURCE_FLAVOR: {},
        kinds.WORKLOAD: {},
        kinds.LOCAL_QUEUE: {QUEUE: lq},
    }
    state.informers = {kind: SimpleNamespace(cache=cache) for kind, cache in caches.items()}  # type: ignore[misc]
    return QueueStatusReporter(ctx, state), kube


def written_usage(kube: RecordingKube) -> list[Any]:
    return [body["status"].get("fairSharing") for _, body in kube.patches]


def test_a_sample_alone_is_written_with_the_next_report() -> None:
    report, kube = reporter()
    assert asyncio.run(report.write()) == 1  # the first report: counters and Active
    assert written_usage(kube) == [None]
    assert asyncio.run(report.write()) == 0  # nothing changed since
    report.usage_sampled({QUEUE: LocalQueueUsage({"cpu": Quantity(1500)}, NOW)})
    assert asyncio.run(report.write()) == 1
    assert written_usage(kube)[-1] == {
        "weightedShare": 0,
        "admissionFairSharingStatus": {
            "consumedResources": {"cpu": "1500m"},
            "lastUpdate": format_rfc3339(NOW),
        },
    }
    assert asyncio.run(report.write()) == 0  # written once


def test_a_failed_write_keeps_the_sample_for_the_retry() -> None:
    report, kube = reporter()
    report.usage_sampled({QUEUE: LocalQueueUsage({"cpu": Quantity(1000)}, NOW)})
    kube.failures = 1
    with pytest.raises(errors.KubeError):
        asyncio.run(report.write())
    assert kube.patches == []
    assert asyncio.run(report.write()) == 1
    consumed = written_usage(kube)[-1]["admissionFairSharingStatus"]["consumedResources"]
    assert consumed == {"cpu": "1"}
