"""Dashboard benchmark: its cost while idle with 1,000 workloads, and how fast a change reaches a browser.

One command (``python -m benchmarks.dashboard_bench``) starts a ``codeflare server`` process,
creates 1,000 pending Workloads in one ClusterQueue (plus 50 RayClusters), and starts
``codeflare dashboard`` as its own process with two browser-like event streams open (My work and
Queues). Then it measures:

- idle: the dashboard process's RSS and CPU share over ``--idle`` seconds with nothing changing
  (the streams stay open; the dashboard only answers heartbeats and samples its history);
- latency: ``--changes`` status writes to one RayCluster (``readyWorkerReplicas``), each timed
  from the moment the API call is sent to the moment the My work stream delivers the fragment
  showing the new count (p50/p99).

Targets (issue 17): < 100 MiB, < 2 % CPU idle, p99 < 1 s. Writes the "dashboard" section of
benchmarks/RESULTS.md unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
from tests.dashboard.harness import DashboardProcess
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ensure_namespace, install_crds
from tests.support.polling import wait_for
from tests.support.queue_objects import cluster_queue, local_queue, raycluster, workload

from benchmarks.results import write_section
from codeflare.kube import config, kinds
from codeflare.kube.client import Kube

NAMESPACE = "bench"
DESIRED = 9999  # the marker cluster's desired workers: "<i>/9999" appears only in its row


class Stream:
    """One event stream read in a thread: every event's arrival time and data."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.events: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with contextlib.suppress(httpx.HTTPError):  # the dashboard stops at the end of the run
            self._events()

    def _events(self) -> None:
        with httpx.stream("GET", self.url, timeout=httpx.Timeout(5.0, read=None)) as resp:
            data: list[str] = []
            for line in resp.iter_lines():
                if line.startswith("data: "):
                    data.append(line[6:])
                elif not line and data:
                    with self.lock:
                        self.events.append((time.monotonic(), "\n".join(data)))
                    data = []

    def first_after(self, since: float, text: str) -> float | None:
        with self.lock:
            return next((t for t, d in self.events if t >= since and text in d), None)

    def count(self) -> int:
        with self.lock:
            return len(self.events)


class WatchStream(Stream):
    """The API server's own watch of the marker cluster, read the same way: the baseline."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        super().__init__(f"{server.url}/apis/ray.io/v1/namespaces/{NAMESPACE}/rayclusters?watch=true")

    def _events(self) -> None:
        headers = {"Authorization": f"Bearer {self.server.token}"}
        timeout = httpx.Timeout(5.0, read=None)
        with httpx.stream(
            "GET", self.url, headers=headers, verify=str(self.server.ca_file), timeout=timeout
        ) as resp:
            for line in resp.iter_lines():
                obj = json.loads(line)["object"] if line else {}
                if obj.get("metadata", {}).get("name") == "marker":
                    ready = (obj.get("status") or {}).get("readyWorkerReplicas")
                    with self.lock:
                        self.events.append((time.monotonic(), f">{ready}/{DESIRED}<"))


def populate(kube: Kube, workloads: int, clusters: int) -> None:
    install_crds(kube)
    ensure_namespace(kube, NAMESPACE)
    kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
    kube.create(kinds.CLUSTER_QUEUE, cluster_queue("bench-cq", "10"))
    kube.create(kinds.LOCAL_QUEUE, local_queue("queue", NAMESPACE, "bench-cq"))
    for i in range(workloads):
        kube.create(kinds.WORKLOAD, workload(f"wl-{i:04d}", NAMESPACE, "queue", "1", priority=i % 7))
    for i in range(clusters):
        kube.create(kinds.RAYCLUSTER, raycluster(f"rc-{i:03d}", NAMESPACE, queue=None))
    marker = raycluster("marker", NAMESPACE, queue=None, workers=DESIRED)
    marker["spec"]["suspend"] = False
    kube.create(kinds.RAYCLUSTER, marker)


def idle_cost(proc: psutil.Process, seconds: float) -> dict[str, float]:
    before, started = proc.cpu_times(), time.monotonic()
    time.sleep(seconds)
    after, wall = proc.cpu_times(), time.monotonic() - started
    cpu = (after.user + after.system) - (before.user + before.system)
    info = proc.memory_full_info()
    return {"cpu_percent": 100 * cpu / wall, "rss_mib": info.rss / 2**20, "uss_mib": info.uss / 2**20}


def latencies(kube: Kube, stream: Stream, watch: Stream, changes: int) -> tuple[list[float], list[float]]:
    """(API change -> dashboard stream, API change -> the API server's own watch) per change."""
    out, baseline = [], []
    for i in range(1, changes + 1):
        body = {"status": {"readyWorkerReplicas": i}}
        written = time.monotonic()  # the write is sent now; both clients are timed from here
        kube.patch(kinds.RAYCLUSTER, "marker", body, NAMESPACE, status=True)
        shown = f">{i}/{DESIRED}<"
        arrived = wait_for(lambda w=written, t=shown: stream.first_after(w, t), 10, 0.002)
        watched = wait_for(lambda w=written, t=shown: watch.first_after(w, t), 10, 0.002)
        out.append(arrived - written)
        baseline.append(watched - written)
        time.sleep(0.1)
    return out, baseline


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as tmp:
        base = Path(tmp)
        server = ServerProcess(base / "state").start()
        dashboard: DashboardProcess | None = None
        try:
            with Kube(config.from_kubeconfig(server.kubeconfig)) as kube:
                started = time.monotonic()
                populate(kube, args.workloads, args.clusters)
                populated = time.monotonic() - started
                dashboard = DashboardProcess(server.kubeconfig, base / "dash").start()
                assert dashboard.proc is not None
                proc = psutil.Process(dashboard.proc.pid)
                work = Stream(dashboard.url + "events/work")
                queues = Stream(dashboard.url + "events/queues")
                wait_for(lambda: work.first_after(0, "rc-"), 60)
                wait_for(lambda: queues.first_after(0, "wl-"), 60)
                time.sleep(args.settle)
                idle = idle_cost(proc, args.idle)
                watch = WatchStream(server)
                time.sleep(1.0)
                lat, base = latencies(kube, work, watch, args.changes)
                return {
                    "workloads": args.workloads,
                    "clusters": args.clusters + 1,
                    "populate_s": populated,
                    "idle_s": args.idle,
                    **idle,
                    "changes": len(lat),
                    "p50_ms": 1000 * statistics.median(lat),
                    "p99_ms": 1000 * percentile(lat, 0.99),
                    "max_ms": 1000 * max(lat),
                    "watch_p50_ms": 1000 * statistics.median(base),
                    "watch_p99_ms": 1000 * percentile(base, 0.99),
                    "load": psutil.getloadavg()[0],
                }
        finally:
            if dashboard is not None:
                dashboard.stop()
            server.stop()


def markdown(r: dict[str, Any]) -> str:
    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    rows = [
        (
            "RSS while idle",
            f"{r['rss_mib']:.0f} MiB (USS {r['uss_mib']:.0f} MiB)",
            "< 100 MiB",
            verdict(r["rss_mib"] < 100),
        ),
        (
            f"CPU while idle ({r['idle_s']:.0f} s)",
            f"{r['cpu_percent']:.2f} % of one core",
            "< 2 %",
            verdict(r["cpu_percent"] < 2),
        ),
        ("API change to browser stream, p50", f"{r['p50_ms']:.0f} ms", "", ""),
        (
            "API change to browser stream, p99",
            f"{r['p99_ms']:.0f} ms (max {r['max_ms']:.0f} ms, {r['changes']} changes)",
            "< 1 s",
            verdict(r["p99_ms"] < 1000),
        ),
        (
            "API change to a plain watch of the API server (baseline), p50 / p99",
            f"{r['watch_p50_ms']:.0f} ms / {r['watch_p99_ms']:.0f} ms",
            "",
            "",
        ),
    ]
    table = "\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows)
    return f"""`codeflare dashboard` as its own process against a `codeflare server` process holding
{r["workloads"]} pending Workloads in one ClusterQueue and {r["clusters"]} RayClusters, with two event
streams open (My work, Queues), as two browser tabs would hold.

| Measure | Result | Target | |
|---|---|---|---|
{table}

Latency: from sending a status write (`readyWorkerReplicas` of one RayCluster) to the arrival
of the My work fragment showing it: watch event, store, a 50 ms coalescing pause, rendering the
whole view ({r["clusters"]} rows) and the event-stream write. 1-minute load average at the end:
{r["load"]:.1f} on {psutil.cpu_count()} cores (other work on the machine included).
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=1000)
    parser.add_argument("--clusters", type=int, default=50)
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle measurement")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to let the start-up settle")
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    result = run(args)
    text = markdown(result)
    print(text)
    if not args.no_write:
        write_section("dashboard", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
