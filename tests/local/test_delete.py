"""Deleting a RayCluster finishes within seconds: ready, or still starting its head.

The agent holds its finalizer until the cluster's processes are stopped, then releases it; nothing
else blocks (no other finalizer on plain Kubernetes), so the object must be gone soon after. A
delete that arrives while the head is still starting must not wait for the start to finish (or
time out): the start is given up. Each case reports how long the delete took (printed; the
assertion is only a generous bound, speed is for the benchmarks) and checks that no process of
the cluster survives and its token Secret is collected with it.
"""

from __future__ import annotations

import time

import psutil
import pytest

from codeflare.api.ray_auth import token_secret_name
from codeflare.kube import kinds
from codeflare.local.agent.ray_node import cluster_temp_root
from tests.local.conftest import LocalPlane
from tests.support import local_agent as la
from tests.support.polling import wait_for

pytestmark = pytest.mark.ray

GENEROUS = 30.0  # seconds; what a user's `down()` would still call prompt on a loaded 2-core host


def started_for(uid: str) -> list[psutil.Process]:
    """The processes whose command line names the cluster's temp dir (its nodes' ``ray start``)."""
    root = cluster_temp_root(uid)
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(root in part for part in proc.info["cmdline"] or []):
            found.append(proc)
    return found


def delete_and_time(plane: LocalPlane, name: str) -> float:
    started = time.monotonic()
    plane.kube.delete(kinds.RAYCLUSTER, name, "default")
    wait_for(
        lambda: plane.kube.find(kinds.RAYCLUSTER, name, "default") is None,
        GENEROUS,
        0.05,
        what=f"RayCluster {name} gone",
    )
    return time.monotonic() - started


def test_deleting_a_ready_cluster_is_prompt(clean: LocalPlane) -> None:
    clean.kube.create(kinds.RAYCLUSTER, la.raycluster("quick", workers=1))
    clean.wait_ready("quick")
    procs = la.cluster_processes(clean.kube, "quick")
    assert clean.kube.find(kinds.SECRET, token_secret_name("quick"), "default") is not None

    took = delete_and_time(clean, "quick")
    print(f"ready cluster (head + 1 worker) deleted in {took:.2f}s")
    wait_for(lambda: not la.alive(procs), 10, 0.1, what="the cluster's processes to exit")
    wait_for(
        lambda: clean.kube.find(kinds.SECRET, token_secret_name("quick"), "default") is None,
        30,
        0.2,
        what="the token Secret to be collected with its cluster",
    )


def test_deleting_a_cluster_whose_head_is_starting_does_not_wait_for_the_start(clean: LocalPlane) -> None:
    uid = clean.kube.create(kinds.RAYCLUSTER, la.raycluster("early", workers=1))["metadata"]["uid"]
    # the head's `ray start` runs (found by its temp dir, which names the cluster's uid) but the
    # cluster is not ready yet
    procs = wait_for(lambda: started_for(uid), 60, 0.05, what="the head's process")
    assert la.state(clean.kube, "early") != "ready"

    took = delete_and_time(clean, "early")
    print(f"starting cluster deleted in {took:.2f}s")
    wait_for(lambda: not la.alive(procs), 10, 0.1, what="the cluster's processes to exit")
