"""Real Ray clusters as host processes: ready, runs a job on both nodes, stops clean, re-adopts,
detects a dead worker, and two clusters run side by side. Slow (a cluster takes ~10 s here)."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from codeflare.local.agent import processes
from codeflare.local.agent.cluster_runner import LocalRayCluster, NodeTemplate
from codeflare.local.agent.ports import PortAllocator
from codeflare.local.agent.ray_node import cluster_temp_root

pytestmark = pytest.mark.ray

SMALL = 80 * 1024 * 1024  # object store bytes (Ray's minimum is 75 MiB)
HEAD = NodeTemplate(num_cpus=1, object_store_memory_bytes=SMALL, resources={"on_head": 1})
WORKER = NodeTemplate(num_cpus=1, object_store_memory_bytes=SMALL, resources={"on_worker": 1})

_JOB = """
import ray
ray.init()
alive = [n for n in ray.nodes() if n["Alive"]]
@ray.remote(num_cpus=0)
def where():
    return ray.get_runtime_context().get_node_id()
on_head = ray.get(where.options(resources={"on_head": 1}).remote())
on_worker = ray.get(where.options(resources={"on_worker": 1}).remote())
assert len(alive) == 2 and on_head != on_worker, (alive, on_head, on_worker)
print("RAN ON", len({on_head, on_worker}), "NODES")
"""

MakeCluster = Callable[[str], LocalRayCluster]


@pytest.fixture(scope="module")
def allocator(tmp_path_factory: pytest.TempPathFactory) -> PortAllocator:
    return PortAllocator(tmp_path_factory.mktemp("ports"))


@pytest.fixture()
def make_cluster(allocator: PortAllocator, tmp_path: Path) -> Iterator[MakeCluster]:
    clusters: list[LocalRayCluster] = []

    def make(name: str) -> LocalRayCluster:
        cluster = LocalRayCluster(name, HEAD, ports=allocator, log_dir=tmp_path / name)
        clusters.append(cluster)
        return cluster

    try:
        yield make
    finally:
        for cluster in clusters:
            cluster.stop(grace=1.0)


def _node_tree(cluster: LocalRayCluster) -> list[psutil.Process]:
    procs: list[psutil.Process] = []
    for node in cluster.nodes.values():
        procs += processes.node_processes(node.handle)
    return procs


def test_cluster_runs_a_job_on_both_nodes_and_stops_clean(make_cluster: MakeCluster, tmp_path: Path) -> None:
    from ray.job_submission import JobStatus, JobSubmissionClient

    cluster = make_cluster("jobs")
    cluster.start_head()
    cluster.add_worker("small", WORKER)
    cluster.wait_workers_ready()
    assert sorted(cluster.ready_nodes()) == ["head", "small-0"]

    script = tmp_path / "job.py"
    script.write_text(_JOB)
    client = JobSubmissionClient(cluster.dashboard_url)
    job_id = client.submit_job(entrypoint=f"{sys.executable} {script}")
    deadline = time.monotonic() + 120
    while (status := client.get_job_status(job_id)) not in {JobStatus.SUCCEEDED, JobStatus.FAILED}:
        assert time.monotonic() < deadline, "job did not finish"
        time.sleep(0.5)
    logs = client.get_job_logs(job_id)
    assert status == JobStatus.SUCCEEDED, logs
    assert "RAN ON 2 NODES" in logs

    # An agent restart: a new object rebuilt from the saved state adopts the live nodes.
    adopted = LocalRayCluster.adopt(cluster.to_state(), HEAD, ports=cluster.port_allocator)
    assert set(adopted.nodes) == {"head", "small-0"}
    assert adopted.endpoints == cluster.endpoints
    assert sorted(adopted.ready_nodes()) == ["head", "small-0"]

    tree = _node_tree(adopted)
    assert len(tree) > 10  # gcs, raylets, dashboard and its modules, agents, workers...
    adopted.stop(grace=2.0)
    cluster.nodes.clear()
    survivors = [p.pid for p in tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert survivors == []
    assert not Path(cluster_temp_root(adopted.uid)).exists()
    assert cluster.port_allocator.reservations() == {}


def test_two_clusters_run_side_by_side(make_cluster: MakeCluster) -> None:
    first, second = make_cluster("one"), make_cluster("two")
    first.start_head()
    second.start_head()

    assert first.ready_nodes() == ["head"] and second.ready_nodes() == ["head"]
    ports_first = set(first.nodes["head"].ports.all_ports())
    ports_second = set(second.nodes["head"].ports.all_ports())
    assert not ports_first & ports_second
    assert first.endpoints.dashboard != second.endpoints.dashboard


def test_a_killed_worker_is_reported_with_its_exit_code(make_cluster: MakeCluster) -> None:
    cluster = make_cluster("deaths")
    cluster.start_head()
    worker = cluster.add_worker("small", WORKER)
    cluster.wait_workers_ready()
    tree = processes.node_processes(worker.handle)

    os.kill(worker.handle.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not cluster.dead_nodes():
        assert time.monotonic() < deadline
        time.sleep(0.1)

    assert [(d.node, d.exit_code) for d in cluster.dead_nodes()] == [("small-0", -signal.SIGKILL)]
    cluster.forget_dead()
    assert "small-0" not in cluster.nodes
    assert not [p for p in tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert cluster.ready_nodes() == ["head"]
