"""RayCluster end to end in local mode: real Ray processes behind a RayCluster object.

A cluster with one worker becomes ready, its dashboard answers on loopback, a Ray job sees both
nodes and runs a task on each, and deleting the cluster leaves none of its processes alive. Two
clusters run side by side without sharing a port.
"""

from __future__ import annotations

import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import kinds
from tests.local.conftest import LocalPlane
from tests.support import local_agent as la
from tests.support.control_plane import wait_for

pytestmark = pytest.mark.ray

BOTH_NODES_SCRIPT = """
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

ray.init()
nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
assert len(nodes) == 2, f"expected 2 alive nodes, got {nodes}"

@ray.remote(num_cpus=1)
def where():
    return ray.get_runtime_context().get_node_id()

ran_on = ray.get([
    where.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote()
    for n in nodes
])
assert sorted(ran_on) == sorted(nodes), ran_on
print(f"ran on {len(set(ran_on))} nodes")
"""


def node_ports(obj: dict[str, Any]) -> set[int]:
    meta = obj["metadata"]
    state = json.loads(meta["annotations"][la.STATE_ANNOTATION])
    ports: set[int] = set()
    for node in state["nodes"]:
        p = node["ports"]
        ports |= {v for k, v in p.items() if v is not None and k not in ("min_worker", "max_worker")}
        ports |= set(range(p["min_worker"], p["max_worker"] + 1))
    return ports


def alive_nodes(dashboard: str, headers: dict[str, str]) -> int:
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(f"{dashboard}/nodes?view=summary", headers=headers)
    with opener.open(request, timeout=5) as response:
        summary = json.loads(response.read())["data"]["summary"]
    return sum(1 for n in summary if n["raylet"]["state"] == "ALIVE")


def has_alive_nodes(dashboard: str, headers: dict[str, str], count: int) -> bool:
    return alive_nodes(dashboard, headers) == count


def test_cluster_ready_runs_a_job_on_both_nodes_and_leaves_nothing_behind(
    clean: LocalPlane, tmp_path: Path
) -> None:
    from ray.job_submission import JobStatus, JobSubmissionClient

    kube = clean.kube
    kube.create(kinds.RAYCLUSTER, la.raycluster("demo"))
    obj = clean.wait_ready("demo")

    status = obj["status"]
    assert status["readyWorkerReplicas"] == 1
    assert status["head"]["podIP"] == "127.0.0.1"
    url = la.dashboard_url(obj)
    assert url == f"http://127.0.0.1:{status['endpoints']['dashboard']}"
    headers = la.ray_headers(kube, "demo")
    assert la.http_ok(f"{url}/api/version", headers=headers)
    pods = kube.list(kinds.POD, "default", labels={"ray.io/cluster": "demo"})
    assert sorted(p["metadata"]["name"] for p in pods) == ["demo-head", "demo-small-worker-0"]
    assert all(p["status"]["phase"] == "Running" for p in pods)

    script = tmp_path / "both_nodes.py"
    script.write_text(BOTH_NODES_SCRIPT)
    client = JobSubmissionClient(url, headers=headers)
    job = client.submit_job(entrypoint=f"{sys.executable} {script}")
    final = wait_for(
        lambda: (s := client.get_job_status(job)).is_terminal() and s,
        120,
        0.5,
        what="the Ray job to finish",
    )
    logs = client.get_job_logs(job)
    assert final == JobStatus.SUCCEEDED, logs
    assert "ran on 2 nodes" in logs

    processes = la.cluster_processes(kube, "demo")
    recorded = la.recorded_node_pids(obj)
    assert {pid for pid, _ in recorded.values()} == la.pod_pids(kube, "demo")
    assert len(processes) > len(recorded)  # gcs, raylets, dashboard, workers... not just leaders

    clean.delete_and_wait("demo")
    wait_for(lambda: not la.alive(processes), 10, 0.1, what="the cluster's processes to exit")
    assert not la.http_ok(f"{url}/api/version", timeout=1, headers=headers)
    wait_for(
        lambda: kube.list(kinds.POD, "default", labels={"ray.io/cluster": "demo"}) == [],
        30,
        0.2,
        what="the cluster's Pods to be garbage-collected",
    )


def test_two_clusters_side_by_side_share_no_port(clean: LocalPlane) -> None:
    kube = clean.kube
    kube.create(kinds.RAYCLUSTER, la.raycluster("left"))
    kube.create(kinds.RAYCLUSTER, la.raycluster("right"))
    left = clean.wait_ready("left")
    right = clean.wait_ready("right")

    assert not node_ports(left) & node_ports(right)
    for obj in (left, right):
        url = la.dashboard_url(obj)
        headers = la.ray_headers(kube, obj["metadata"]["name"])
        assert la.http_ok(f"{url}/api/version", headers=headers)
        # Each worker joined its own head: two alive nodes per cluster, not one or four.
        assert wait_for(partial(has_alive_nodes, url, headers, 2), 30, 0.5)
    # ... and each cluster has a token of its own: one's does not open the other's dashboard
    assert la.ray_headers(kube, "left") != la.ray_headers(kube, "right")
    assert not la.http_ok(f"{la.dashboard_url(left)}/api/version", headers=la.ray_headers(kube, "right"))
    left_procs = la.cluster_processes(kube, "left")
    right_procs = la.cluster_processes(kube, "right")
    assert not {p.pid for p in left_procs} & {p.pid for p in right_procs}

    clean.delete_and_wait("left")
    wait_for(lambda: not la.alive(left_procs), 10, 0.1, what="left's processes to exit")
    time.sleep(1)
    right_leaders = [p for p in right_procs if p.pid in la.pod_pids(kube, "right")]
    assert len(right_leaders) == 2
    assert la.alive(right_leaders) == right_leaders, "deleting one cluster touched the other"
    assert la.is_ready(kube, "right")
