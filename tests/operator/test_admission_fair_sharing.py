"""Admission fair sharing end to end: a real API server process and the operator.

With ``queueing.admissionFairSharing`` configured, every LocalQueue's recent usage, decayed as
Kueue's LocalQueue controller does, appears in ``status.fairSharing.admissionFairSharingStatus``
once an admission has charged it, and an operator restart resumes it from there (Kueue v0.17.7+)
instead of starting over. Without the block nothing writes ``status.fairSharing`` at all (Kueue's
"AdmissionFairSharing = nil" case), even for a ClusterQueue asking for usage-based ordering.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.cli.main import main
from codeflare.k8s.quantity import milli_value
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OperatorProcess,
    ensure_namespace,
    operator_plane,
    wait_for,
)
from tests.support.queue_objects import cluster_queue, local_queue, workload

NAMESPACE = "team"
# a short half-life, so that one admission of 2 CPUs shows in milli-CPUs within a second or two
AFS = {"usageHalfLifeTime": "10s", "usageSamplingInterval": "1s"}


@contextlib.contextmanager
def plane(server: ServerProcess, tmp_path: Any, **sections: Any) -> Iterator[tuple[Kube, OperatorProcess]]:
    """The operator with ``sections``, ClusterQueue "cq" (4 CPUs, usage-based) and LocalQueues a, b."""
    with operator_plane(server, tmp_path / "operator.log", **sections) as (kube, operator):
        queue = cluster_queue("cq", "4")
        queue["spec"]["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
        kube.create(kinds.CLUSTER_QUEUE, queue)
        ensure_namespace(kube, NAMESPACE)
        for name in ("a", "b"):
            kube.create(kinds.LOCAL_QUEUE, local_queue(name, NAMESPACE, "cq"))
        yield kube, operator


@pytest.fixture
def afs_plane(fresh_apiserver: ServerProcess, tmp_path: Any) -> Iterator[tuple[Kube, OperatorProcess]]:
    with plane(fresh_apiserver, tmp_path, queueing={"admissionFairSharing": AFS}) as made:
        yield made


@pytest.fixture
def plain_plane(fresh_apiserver: ServerProcess, tmp_path: Any) -> Iterator[tuple[Kube, OperatorProcess]]:
    with plane(fresh_apiserver, tmp_path) as made:
        yield made


def lq_status(kube: Kube, name: str) -> dict[str, Any]:
    return kube.get(kinds.LOCAL_QUEUE, name, NAMESPACE).get("status") or {}


def recent_usage(kube: Kube, name: str) -> tuple[int, float] | None:
    """(consumed milli-CPU, lastUpdate epoch seconds) from a LocalQueue's status, if it has one."""
    afs = (lq_status(kube, name).get("fairSharing") or {}).get("admissionFairSharingStatus")
    if afs is None:
        return None
    last_update = epoch_seconds(afs["lastUpdate"])
    assert last_update is not None, afs
    return milli_value(afs["consumedResources"].get("cpu", 0)), last_update


def admitted(kube: Kube, name: str) -> bool:
    return bool((kube.get(kinds.WORKLOAD, name, NAMESPACE).get("status") or {}).get("admission"))


def test_recent_usage_is_written_after_an_admission_and_survives_a_restart(
    afs_plane: tuple[Kube, OperatorProcess],
    fresh_apiserver: ServerProcess,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kube, operator = afs_plane
    # every LocalQueue gets its (empty) history at its first sample, as in Kueue
    wait_for(lambda: recent_usage(kube, "b") is not None, what="b's first sample")
    status_b = lq_status(kube, "b")["fairSharing"]
    assert (
        status_b["weightedShare"] == 0 and status_b["admissionFairSharingStatus"]["consumedResources"] == {}
    )

    kube.create(kinds.WORKLOAD, workload("train", NAMESPACE, "a", "2"))
    wait_for(lambda: admitted(kube, "train"), what="train admitted")
    wait_for(lambda: (recent_usage(kube, "a") or (0, 0))[0] > 0, what="a's consumed CPU")
    assert recent_usage(kube, "b") is not None and recent_usage(kube, "b")[0] == 0  # type: ignore[index]
    # what `codeflare queue describe` shows of it
    capsys.readouterr()
    cli = ["queue", "describe", "a", "-n", NAMESPACE, "--kubeconfig", str(fresh_apiserver.kubeconfig)]
    assert main([*cli, "-o", "json"]) == 0
    assert milli_value(json.loads(capsys.readouterr().out)["recent_usage"]["cpu"]) > 0
    assert main(cli) == 0
    assert "Recent usage" in capsys.readouterr().out

    # the usage keeps growing while train runs; then train ends and the operator restarts
    before = (recent_usage(kube, "a") or (0, 0))[0]
    wait_for(lambda: (recent_usage(kube, "a") or (0, 0))[0] > before, what="a's usage growing")
    kube.delete(kinds.WORKLOAD, "train", NAMESPACE)
    wait_for(lambda: lq_status(kube, "a").get("admittedWorkloads") == 0, what="train gone from a")
    operator.stop()
    consumed, stamped = recent_usage(kube, "a")  # type: ignore[misc]
    assert consumed > 0
    operator.start()

    # resumed from the status, it decays from there (forgotten, it would start again at 0)
    def resumed() -> bool:
        usage = recent_usage(kube, "a")
        return usage is not None and usage[1] > stamped

    wait_for(resumed, timeout=60, what="a sampled after the restart")
    after, _ = recent_usage(kube, "a")  # type: ignore[misc]
    assert 0 < after < consumed, (consumed, after)
    assert operator.running, operator.log()[-3000:]


def test_without_the_configuration_block_no_queue_gets_fair_sharing_status(
    plain_plane: tuple[Kube, OperatorProcess],
) -> None:
    kube, operator = plain_plane
    kube.create(kinds.WORKLOAD, workload("train", NAMESPACE, "a", "2"))
    wait_for(lambda: admitted(kube, "train"), what="train admitted")
    # the status write that counts train is the one that would carry the usage
    wait_for(lambda: lq_status(kube, "a").get("admittedWorkloads") == 1, what="a's status counts train")
    assert "fairSharing" not in lq_status(kube, "a")
    wait_for(lambda: "conditions" in lq_status(kube, "b"), what="b's status written")
    assert "fairSharing" not in lq_status(kube, "b")
    assert operator.running, operator.log()[-3000:]
