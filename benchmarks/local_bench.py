"""Local mode: time from creating a RayCluster to ``ready``, against a bare ``ray start`` by hand.

Same shape both ways: a head and one worker, 1 CPU and 1 GiB each (object store 30 %, as the
agent derives it), loopback only, usage stats off, every port chosen, a temp dir per node.

- local: an unsuspended RayCluster is created through the API (a real ``codeflare server`` and
  ``codeflare local agent``); the clock stops when ``status.state`` reads ``ready``.
- bare: ``ray start --head`` then ``ray start --address`` run one after the other, as a person
  would; the clock stops when both returned and the head's dashboard lists two ALIVE nodes
  and answers the Jobs API (what the agent waits for before it says ready).

Runs alternate (local, bare, local, ...) and the medians are compared (target ratio <= 1.2).
Memory: the summed RSS and PSS of every process of one running cluster (PSS counts shared
pages once). Bare runs are stopped by process group, never with ``ray stop``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
from tests.support import local_agent as la  # noqa: E402
from tests.support.apiserver import ServerProcess  # noqa: E402
from tests.support.control_plane import ensure_namespace, install_crds, wait_for  # noqa: E402

from benchmarks.results import write_section  # noqa: E402
from codeflare.kube import config, kinds  # noqa: E402
from codeflare.kube.client import Kube  # noqa: E402
from codeflare.local.agent.ports import PortAllocator  # noqa: E402

MEMORY = 1 << 30
POLL_S = 0.2  # both sides poll at this interval (faster polling itself costs CPU on 2 cores)
OBJECT_STORE = MEMORY * 3 // 10
RAY = str(Path(sys.executable).parent / "ray")
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class Sample:
    seconds: float
    rss_mib: float
    pss_mib: float
    processes: int


def memory_of(procs: list[psutil.Process]) -> tuple[float, float]:
    rss = pss = 0
    for proc in procs:
        try:
            info = proc.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return rss / 2**20, pss / 2**20


# -- local mode -----------------------------------------------------------------------------------


def run_local(kube: Kube, index: int) -> Sample:
    name = f"bench-{index}"
    start = time.monotonic()
    kube.create(kinds.RAYCLUSTER, la.raycluster(name))
    wait_for(lambda: la.is_ready(kube, name), 180, POLL_S, what=f"{name} ready")
    seconds = time.monotonic() - start
    time.sleep(3)  # let the dashboard's agents settle before measuring memory
    procs = la.cluster_processes(kube, name)
    rss, pss = memory_of(procs)
    kube.delete(kinds.RAYCLUSTER, name, "default")
    wait_for(lambda: kube.find(kinds.RAYCLUSTER, name, "default") is None, 60, 0.2)
    wait_for(lambda: not la.alive(procs), 30, 0.1, what=f"{name}'s processes gone")
    return Sample(seconds, rss, pss, len(procs))


# -- bare ray start -------------------------------------------------------------------------------


def node_args(ports: dict[str, int | None], temp_dir: str) -> list[str]:
    return [
        "--disable-usage-stats",
        "--node-ip-address=127.0.0.1",
        f"--temp-dir={temp_dir}",
        f"--node-manager-port={ports['node_manager']}",
        f"--object-manager-port={ports['object_manager']}",
        f"--metrics-export-port={ports['metrics_export']}",
        f"--dashboard-agent-grpc-port={ports['dashboard_agent_grpc']}",
        f"--dashboard-agent-listen-port={ports['dashboard_agent_listen']}",
        f"--runtime-env-agent-port={ports['runtime_env_agent']}",
        f"--min-worker-port={ports['min_worker']}",
        f"--max-worker-port={ports['max_worker']}",
        "--num-cpus=1",
        "--num-gpus=0",
        f"--memory={MEMORY}",
        f"--object-store-memory={OBJECT_STORE}",
    ]


def alive_nodes(dashboard: str) -> int:
    try:
        with _HTTP.open(f"{dashboard}/nodes?view=summary&nocache=1", timeout=2) as response:
            summary = json.loads(response.read())["data"]["summary"]
        return sum(1 for n in summary if n["raylet"]["state"] == "ALIVE")
    except (OSError, ValueError, KeyError):
        return 0


def run_bare(allocator: PortAllocator, index: int, log_dir: Path) -> Sample:
    owner = f"bare-{index}"
    head_ports = allocator.reserve_node_ports(f"{owner}/head", head=True).to_dict()
    worker_ports = allocator.reserve_node_ports(f"{owner}/worker", head=False).to_dict()
    temp = tempfile.mkdtemp(prefix="cfb-", dir="/tmp")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    dashboard = f"http://127.0.0.1:{head_ports['dashboard']}"
    head_cmd = [
        RAY,
        "start",
        "--head",
        f"--port={head_ports['gcs']}",
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={head_ports['dashboard']}",
        f"--ray-client-server-port={head_ports['client_server']}",
        *node_args(head_ports, f"{temp}/h"),
    ]
    worker_cmd = [
        RAY,
        "start",
        f"--address=127.0.0.1:{head_ports['gcs']}",
        *node_args(worker_ports, f"{temp}/w"),
    ]
    groups: list[int] = []
    try:
        start = time.monotonic()
        for cmd, log in ((head_cmd, "head"), (worker_cmd, "worker")):
            with open(log_dir / f"bare-{index}-{log}.log", "ab") as out:
                proc = subprocess.Popen(
                    cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            groups.append(proc.pid)
            if proc.wait(120) != 0:
                raise RuntimeError(f"{' '.join(cmd[:3])} failed; see {log_dir}")
        wait_for(lambda: alive_nodes(dashboard) == 2, 120, POLL_S, what="bare cluster: 2 alive nodes")
        wait_for(lambda: la.http_ok(f"{dashboard}/api/jobs/", 2), 60, POLL_S, what="bare Jobs API")
        seconds = time.monotonic() - start
        time.sleep(3)
        procs = [p for p in psutil.process_iter() if _pgid(p.pid) in groups]
        rss, pss = memory_of(procs)
        return Sample(seconds, rss, pss, len(procs))
    finally:
        stop_groups(groups)
        allocator.release_prefix(f"{owner}/")
        subprocess.run(["rm", "-rf", temp], check=False)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def stop_groups(groups: list[int]) -> None:
    """SIGTERM, then SIGKILL, the process groups our ``ray start`` commands led."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        members = [p for p in psutil.process_iter() if _pgid(p.pid) in groups]
        if not members:
            return
        for pgid in groups:
            try:
                os.killpg(pgid, sig)
            except (ProcessLookupError, PermissionError):
                continue
        psutil.wait_procs(members, timeout=wait)


def with_retry(run: Callable[[], Sample], failures: list[str]) -> Sample:
    """One retry: on a loaded 2-core machine a bare ``ray start`` can time out; that is noted."""
    try:
        return run()
    except (RuntimeError, AssertionError) as exc:
        failures.append(str(exc).splitlines()[0])
        return run()


def row(label: str, samples: list[Sample]) -> str:
    """One markdown table row: median time, every run, median memory, process count."""
    seconds = statistics.median(x.seconds for x in samples)
    runs = ", ".join(f"{x.seconds:.1f}" for x in samples)
    rss = statistics.median(x.rss_mib for x in samples)
    pss = statistics.median(x.pss_mib for x in samples)
    return f"| {label} | {seconds:.1f} | {runs} | {rss:.0f} | {pss:.0f} | {samples[-1].processes} |"


# -- main -----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="print, do not update RESULTS.md")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="local-bench-"))
    server = ServerProcess(base / "state").start()
    kube = Kube(config.from_kubeconfig(server.kubeconfig))
    install_crds(kube)
    ensure_namespace(kube, "default")
    agent = la.AgentProcess(base / "home", server.kubeconfig).start()
    allocator = PortAllocator()  # the host-wide registry the agents use: no collisions with them
    local: list[Sample] = []
    failures: list[str] = []
    load = os.getloadavg()
    bare: list[Sample] = []
    try:
        wait_for(lambda: kube.list(kinds.NODE), 30, 0.1, what="the agent's Node")
        for index in range(args.repeat):
            local.append(run_local(kube, index))
            print(f"local #{index}: {local[-1]}", flush=True)
            bare.append(with_retry(partial(run_bare, allocator, index, base), failures))
            print(f"bare  #{index}: {bare[-1]}", flush=True)
    finally:
        agent.stop()
        kube.close()
        server.stop()

    med = {k: statistics.median(getattr(s, k) for s in local) for k in ("seconds", "rss_mib", "pss_mib")}
    bmed = {k: statistics.median(getattr(s, k) for s in bare) for k in ("seconds", "rss_mib", "pss_mib")}
    ratio = med["seconds"] / bmed["seconds"]
    verdict = "meets" if ratio <= 1.2 else "misses"
    body = f"""### Local mode: RayCluster (head + 1 worker) to ready vs bare `ray start`

`python benchmarks/local_bench.py` ({args.repeat} runs each, alternating; medians). Head and
worker 1 CPU / 1 GiB each, object store 300 MiB; bare = `ray start --head` then
`ray start --address` by hand, ready when 2 nodes are ALIVE and the Jobs API answers.

| | time to ready (s) | runs (s) | RSS sum (MiB) | PSS sum (MiB) | processes |
|---|---|---|---|---|---|
{row("local mode (API -> `ready`)", local)}
{row("bare `ray start` x2", bare)}

Ratio local / bare: **{ratio:.2f}** (target <= 1.2: {verdict}). Resident memory per local
cluster (head + 1 worker, idle): {med["pss_mib"]:.0f} MiB PSS ({med["rss_mib"]:.0f} MiB summed RSS);
the agent and API server are shared by all clusters and not counted.
1-minute load average before/after: {load[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores
(other work on the machine shows up in both columns; the runs alternate to share it out).
{f"Retried bare runs: {'; '.join(failures)}." if failures else ""}
"""
    print(body)
    if not args.no_write:
        write_section("local", body)


if __name__ == "__main__":
    main()
