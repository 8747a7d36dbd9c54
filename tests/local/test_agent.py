"""The node agent as a process: queue admission to Ray, crash and restart, GPU detection.

- With the operator queueing RayClusters, a second cluster that does not fit waits suspended,
  its Workload saying why, and starts once the first is deleted.
- SIGKILL the agent while clusters run: the restarted agent re-adopts the same processes (same
  pids, still ready); a cluster deleted while it was down has its processes stopped (from the
  journal when the object is gone, from the annotation when it is only terminating).
- A fake ``nvidia-smi`` on the agent's PATH shows up on the Node it registers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import kinds
from codeflare.kube.client import Kube
from tests.local.conftest import LocalPlane, agent_env, start_plane, stop_plane
from tests.support import local_agent as la
from tests.support.control_plane import OperatorProcess, quiet_config, wait_for, write_operator_config


@pytest.fixture
def own_plane(tmp_path: Path) -> Iterator[LocalPlane]:
    plane = start_plane(tmp_path)
    try:
        yield plane
    finally:
        stop_plane(plane)


# -- queueing ------------------------------------------------------------------------------------


def _workload_of(kube: Kube, cluster: str) -> dict[str, Any] | None:
    for wl in kube.list(kinds.WORKLOAD, "default"):
        if any(o.get("name") == cluster for o in wl["metadata"].get("ownerReferences") or []):
            return wl
    return None


def _not_admitted_reason(kube: Kube, cluster: str) -> str:
    wl = _workload_of(kube, cluster) or {}
    for cond in (wl.get("status") or {}).get("conditions") or []:
        if cond["type"] == "QuotaReserved" and cond["status"] == "False":
            return str(cond.get("message") or "")
    return ""


@pytest.mark.ray
def test_second_cluster_waits_for_quota_then_starts(own_plane: LocalPlane, tmp_path: Path) -> None:
    kube = own_plane.kube
    # As `local up` configures it: Ray nodes are host processes, so no mTLS env/certificates
    # (RAY_USE_TLS with a cert mount that does not exist on the host stops the GCS) and no OAuth.
    write_operator_config(
        kube, quiet_config(kuberay={"mTLSEnabled": False, "rayDashboardOAuthEnabled": False})
    )
    operator = OperatorProcess(own_plane.server.kubeconfig, tmp_path / "operator.log").start()
    try:
        kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default-flavor"}, "spec": {}})
        quota = [{"name": "cpu", "nominalQuota": "2"}, {"name": "memory", "nominalQuota": "4Gi"}]
        kube.create(
            kinds.CLUSTER_QUEUE,
            {
                "metadata": {"name": "one-cluster"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [{"name": "default-flavor", "resources": quota}],
                        }
                    ],
                },
            },
        )
        kube.create(
            kinds.LOCAL_QUEUE,
            {"metadata": {"name": "q", "namespace": "default"}, "spec": {"clusterQueue": "one-cluster"}},
        )
        kube.create(kinds.RAYCLUSTER, la.raycluster("first", suspend=True, queue="q"))
        own_plane.wait_ready("first")
        kube.create(kinds.RAYCLUSTER, la.raycluster("second", suspend=True, queue="q"))

        reason = own_plane.wait(lambda: _not_admitted_reason(kube, "second"), 30, "second's pending reason")
        assert "cpu" in reason, reason
        time.sleep(3)  # several operator and agent passes
        second = kube.get(kinds.RAYCLUSTER, "second", "default")
        assert second["spec"]["suspend"] is True
        assert (second.get("status") or {}).get("state") in (None, "suspended")
        assert kube.list(kinds.POD, "default", labels={"ray.io/cluster": "second"}) == []
        assert la.is_ready(kube, "first")

        own_plane.delete_and_wait("first")
        obj = own_plane.wait_ready("second")
        assert obj["spec"]["suspend"] is False
        assert la.http_ok(f"{la.dashboard_url(obj)}/api/version", headers=la.ray_headers(kube, "second"))
    finally:
        operator.stop()


# -- crash and restart ---------------------------------------------------------------------------


def _leaders(kube: Kube, name: str) -> dict[str, tuple[int, float]]:
    return la.recorded_node_pids(kube.get(kinds.RAYCLUSTER, name, "default"))


@pytest.mark.ray
def test_agent_sigkill_and_restart_readopts_and_cleans_up(own_plane: LocalPlane) -> None:
    kube, agent = own_plane.kube, own_plane.agent
    kube.create(kinds.RAYCLUSTER, la.raycluster("keep"))
    kube.create(kinds.RAYCLUSTER, la.raycluster("gone", workers=0))
    own_plane.wait_ready("keep")
    own_plane.wait_ready("gone")
    keep_leaders = _leaders(kube, "keep")
    keep_procs = la.cluster_processes(kube, "keep")
    gone_procs = la.cluster_processes(kube, "gone")
    assert len(keep_leaders) == 2

    # The agent dies; the Ray processes run on without it.
    agent.kill()
    assert len(la.alive(keep_procs)) > 0 and len(la.alive(gone_procs)) > 0
    # "gone" is deleted while nobody runs its finalizer; an admin forces it out.
    kube.delete(kinds.RAYCLUSTER, "gone", "default")
    kube.patch(kinds.RAYCLUSTER, "gone", {"metadata": {"finalizers": []}}, "default")
    wait_for(lambda: kube.find(kinds.RAYCLUSTER, "gone", "default") is None, 10, 0.1)
    assert la.alive(gone_procs), "nothing should have stopped gone's processes yet"

    agent.start()
    own_plane.wait(lambda: not la.alive(gone_procs), 60, "the orphaned cluster's processes to stop")
    # Re-adopted, not restarted: same leaders, still ready, pods still point at them.
    for _ in range(6):
        assert la.is_ready(kube, "keep")
        time.sleep(0.5)
    assert _leaders(kube, "keep") == keep_leaders
    assert la.pod_pids(kube, "keep") == {pid for pid, _ in keep_leaders.values()}
    leaders = [p for p in keep_procs if p.pid in la.pod_pids(kube, "keep")]
    assert len(la.alive(leaders)) == 2
    assert "re-adopted node head" in agent.log(200)

    # Second crash: "keep" is deleted while the agent is down; its finalizer holds the object
    # until the restarted agent stops the processes (found through the annotation).
    agent.kill()
    kube.delete(kinds.RAYCLUSTER, "keep", "default")
    time.sleep(1)
    assert len(la.alive(leaders)) == 2
    agent.start()
    own_plane.wait(lambda: kube.find(kinds.RAYCLUSTER, "keep", "default") is None, 60, "keep deleted")
    own_plane.wait(lambda: not la.alive(keep_procs), 30, "keep's processes to stop")


# -- GPUs ----------------------------------------------------------------------------------------

FAKE_SMI = """#!/bin/sh
# A stand-in for nvidia-smi: two H100s, answering the query the agent makes.
echo "NVIDIA H100 80GB HBM3, 81559 MiB"
echo "NVIDIA H100 80GB HBM3, 81559 MiB"
"""


def test_node_registered_with_gpus_from_nvidia_smi(tmp_path: Path) -> None:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    plane = start_plane(tmp_path / "plane")
    try:
        plane.agent.stop()
        for node in plane.kube.list(kinds.NODE):
            plane.kube.delete(kinds.NODE, node["metadata"]["name"])
        plane.agent = la.AgentProcess(
            tmp_path / "gpu-home", plane.server.kubeconfig, env=agent_env(str(bin_dir))
        )
        plane.agent.start()
        # generous: on a loaded machine the agent starts slowly
        node = plane.wait(lambda: next(iter(plane.kube.list(kinds.NODE)), None), 120, "the GPU node")
        labels = node["metadata"]["labels"]
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
        assert labels["nvidia.com/gpu.count"] == "2"
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "2"
        assert node["status"]["capacity"]["nvidia.com/gpu"] == "2"
    finally:
        stop_plane(plane)
