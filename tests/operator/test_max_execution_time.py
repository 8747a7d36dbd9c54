"""maximumExecutionTimeSeconds end to end: a real API server, the operator process, RayClusters.

A RayCluster labelled ``kueue.x-k8s.io/max-exec-time-seconds`` gets a Workload with that maximum;
the operator admits and unsuspends it, then deactivates the Workload once its time is up (Kueue's
DeactivationTarget and Evicted reasons) and suspends the cluster again. A second cluster's
accumulated time from earlier admissions (written into its status, as Kueue's own integration test
does) shortens what is left of its maximum. No Ray is needed: nothing runs in the clusters.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.k8s.conditions import find_condition
from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from tests.operator.test_queueing import _admitted_in, _running, _workload, cluster_queue, raycluster
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OperatorProcess,
    ensure_namespace,
    operator_plane,
    wait_for,
)

NS = "team-a"
MAXIMUM = 2


@pytest.fixture
def control_plane(fresh_apiserver: ServerProcess, tmp_path: Any) -> Iterator[tuple[Kube, OperatorProcess]]:
    with operator_plane(fresh_apiserver, tmp_path / "operator.log") as (kube, operator):
        kube.create(kinds.CLUSTER_QUEUE, cluster_queue(NS, "8"))
        ensure_namespace(kube, NS)
        kube.create(
            kinds.LOCAL_QUEUE, {"metadata": {"name": "queue", "namespace": NS}, "spec": {"clusterQueue": NS}}
        )
        yield kube, operator


def _limited(name: str, seconds: int) -> dict[str, Any]:
    rc = raycluster(name, NS, "1", "1")
    rc["metadata"]["labels"][MAX_EXEC_TIME_LABEL] = str(seconds)
    return rc


def _deactivated(kube: Kube, name: str) -> dict[str, Any] | None:
    wl = _workload(kube, NS, name) or {}
    evicted = find_condition((wl.get("status") or {}).get("conditions"), "Evicted")
    if evicted and evicted["status"] == "True" and evicted["reason"].startswith("DeactivatedDueTo"):
        return wl
    return None


def test_an_admitted_cluster_is_deactivated_after_its_maximum(
    control_plane: tuple[Kube, OperatorProcess],
) -> None:
    kube, operator = control_plane
    kube.create(kinds.RAYCLUSTER, _limited("short", MAXIMUM))
    wl = wait_for(lambda: _workload(kube, NS, "short"), what="the Workload")
    assert wl["spec"]["maximumExecutionTimeSeconds"] == MAXIMUM
    wait_for(lambda: _admitted_in(kube, NS, "short") == NS, what="admitted")
    wait_for(lambda: _running(kube, NS, "short"), what="unsuspended")

    wl = wait_for(lambda: _deactivated(kube, "short"), timeout=30, what="deactivated past the maximum")
    conds = wl["status"]["conditions"]
    evicted = find_condition(conds, "Evicted")
    admitted = find_condition(conds, "Admitted")
    assert evicted is not None and admitted is not None
    assert evicted["reason"] == "DeactivatedDueToMaximumExecutionTimeExceeded"
    assert evicted["message"] == "The workload is deactivated due to exceeding the maximum execution time"
    assert admitted["status"] == "False"
    assert wl["spec"]["active"] is False
    assert "admission" not in wl["status"]
    assert find_condition(conds, "DeactivationTarget") is None  # folded into the Evicted reason
    # never before the maximum: the ended admission's whole seconds, counted from the Admitted
    # transition (whole seconds, as Kueue's metav1.Time), reach it
    assert wl["status"]["accumulatedPastExecutionTimeSeconds"] >= MAXIMUM
    wait_for(lambda: not _running(kube, NS, "short"), what="suspended through the eviction path")

    # a cluster without the label is left running
    kube.create(kinds.RAYCLUSTER, raycluster("unlimited", NS, "1", "1"))
    wait_for(lambda: _running(kube, NS, "unlimited"), what="unlimited unsuspended")
    assert "maximumExecutionTimeSeconds" not in (_workload(kube, NS, "unlimited") or {})["spec"]
    assert operator.running, operator.log()[-3000:]


def test_accumulated_time_counts_against_the_maximum(control_plane: tuple[Kube, OperatorProcess]) -> None:
    kube, operator = control_plane
    kube.create(kinds.RAYCLUSTER, _limited("again", 600))
    wait_for(lambda: _admitted_in(kube, NS, "again") == NS, what="admitted")
    wl = wait_for(lambda: _workload(kube, NS, "again"), what="the Workload")
    # earlier admissions used all but MAXIMUM seconds (kueue test/integration/singlecluster/
    # controller/core/workload_controller_test.go sets maximum-1 the same way)
    status = {"accumulatedPastExecutionTimeSeconds": 600 - MAXIMUM}
    kube.patch(kinds.WORKLOAD, wl["metadata"]["name"], {"status": status}, NS, status=True)
    wl = wait_for(lambda: _deactivated(kube, "again"), timeout=30, what="deactivated by the accumulated time")
    assert wl["spec"]["active"] is False
    wait_for(lambda: not _running(kube, NS, "again"), what="suspended")
    assert operator.running, operator.log()[-3000:]
