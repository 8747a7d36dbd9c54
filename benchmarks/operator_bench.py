"""Operator end to end: AppWrappers through the embedded API server, from creation to Admitted and Succeeded.

Starts a ``codeflare server`` and a ``codeflare operator`` process (queueing + AppWrapper
controllers), ten namespaces each with a LocalQueue/ClusterQueue, and one kubelet simulator per
namespace (tests/support/kubelet_sim.py) that runs each pod and lets it succeed. Creates N
one-pod AppWrappers (default 1,000) and measures, from the client's creation time: admission
(Workload gets an admission) and success (AppWrapper phase Succeeded); plus the operator
process's CPU time and peak RSS. Everything shares this machine's cores (server, operator,
simulators and this client). Writes the "operator" section of benchmarks/RESULTS.md.

Usage: python -m benchmarks.operator_bench [--count N] [--qps Q --burst B] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from tests.support.apiserver import ServerProcess, free_port
from tests.support.control_plane import OperatorProcess, install_crds, wait_for, write_operator_config
from tests.support.kubelet_sim import KubeletSim, succeed
from tests.support.queue_objects import QUEUE_LABEL, create_flavor_and_queues

from benchmarks.results import write_section
from codeflare.kube import config, kinds
from codeflare.kube.client import AsyncKube, Kube

QUEUES = 10
Obj = dict[str, Any]


def appwrapper(name: str, namespace: str) -> Obj:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-pod"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
        },
    }
    return {
        "apiVersion": kinds.APPWRAPPER.api_version,
        "kind": "AppWrapper",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: "queue"}},
        "spec": {"suspend": True, "components": [{"template": pod}]},
    }


class Timeline:
    """Client-side timestamps per AppWrapper (namespace/name): created, admitted, succeeded."""

    def __init__(self) -> None:
        self.created: dict[str, float] = {}
        self.admitted: dict[str, float] = {}
        self.succeeded: dict[str, float] = {}

    async def follow_workloads(self, kube: AsyncKube) -> None:
        async for _, obj in _watch_forever(kube, kinds.WORKLOAD):
            if (obj.get("status") or {}).get("admission"):
                for ref in obj["metadata"].get("ownerReferences") or []:
                    self.admitted.setdefault(
                        f"{obj['metadata']['namespace']}/{ref['name']}", time.monotonic()
                    )

    async def follow_appwrappers(self, kube: AsyncKube) -> None:
        async for _, obj in _watch_forever(kube, kinds.APPWRAPPER):
            if (obj.get("status") or {}).get("phase") == "Succeeded":
                self.succeeded.setdefault(
                    f"{obj['metadata']['namespace']}/{obj['metadata']['name']}", time.monotonic()
                )


async def _watch_forever(kube: AsyncKube, kind: Any) -> Any:
    version = ""
    while True:
        try:
            async for event_type, obj in kube.watch(kind, resource_version=version or None):
                version = obj.get("metadata", {}).get("resourceVersion", version)
                if event_type in ("ADDED", "MODIFIED"):
                    yield event_type, obj
        except Exception:
            await asyncio.sleep(0.2)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _drive(
    server: ServerProcess, count: int, timeline: Timeline, operator: psutil.Process
) -> dict[str, float]:
    kube = AsyncKube(config.from_kubeconfig(server.kubeconfig), timeout=120)
    sims = [
        KubeletSim(AsyncKube(config.from_kubeconfig(server.kubeconfig)), f"team-{i}", succeed, interval=0.25)
        for i in range(QUEUES)
    ]
    tasks = [asyncio.create_task(s.run()) for s in sims]
    tasks += [
        asyncio.create_task(timeline.follow_workloads(kube)),
        asyncio.create_task(timeline.follow_appwrappers(kube)),
    ]
    peak_rss = operator.memory_info().rss
    cpu_before = sum(operator.cpu_times()[:2])
    gate = asyncio.Semaphore(16)

    async def create(i: int) -> None:
        namespace, name = f"team-{i % QUEUES}", f"aw-{i:04d}"
        async with gate:
            started = time.monotonic()
            await kube.create(kinds.APPWRAPPER, appwrapper(name, namespace))
            timeline.created[f"{namespace}/{name}"] = started

    start = time.monotonic()
    creating = asyncio.gather(*(create(i) for i in range(count)))
    deadline = start + 900
    while time.monotonic() < deadline and len(timeline.succeeded) < count:
        await asyncio.sleep(0.5)
        peak_rss = max(peak_rss, operator.memory_info().rss)
    await creating
    cpu = sum(operator.cpu_times()[:2]) - cpu_before
    for task in tasks:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*tasks, return_exceptions=True)
    for sim in sims:
        await sim.kube.aclose()
    await kube.aclose()
    return {"start": start, "cpu": cpu, "rss": peak_rss / 2**20}


def run(count: int, client_connection: dict[str, float] | None = None) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "server").start()
        operator: OperatorProcess | None = None
        try:
            kube = Kube(config.from_kubeconfig(server.kubeconfig))
            install_crds(kube)
            per_queue = max(1, count // QUEUES)
            create_flavor_and_queues(
                kube, {f"team-{i}": (f"cq-{i}", f"{per_queue * 100}m") for i in range(QUEUES)}
            )
            write_operator_config(
                kube,
                {
                    "metrics": {"bindAddress": f"127.0.0.1:{free_port()}"},
                    "health": {"bindAddress": "0"},
                    "queueing": {"capacityCheck": False},
                    "instascale": {"enabled": False},
                    **({"clientConnection": client_connection} if client_connection else {}),
                },
            )
            kube.close()
            operator = OperatorProcess(server.kubeconfig, Path(tmp) / "operator.log").start()
            wait_for(
                lambda: "queueing controller synced" in operator.log(), timeout=60, what="operator synced"
            )
            assert operator.proc is not None
            timeline = Timeline()
            measured = asyncio.run(_drive(server, count, timeline, psutil.Process(operator.proc.pid)))
        finally:
            if operator is not None:
                operator.stop()
            server.stop()
    return report(count, timeline, measured, client_connection)


def report(
    count: int,
    timeline: Timeline,
    measured: dict[str, float],
    client_connection: dict[str, float] | None = None,
) -> str:
    start = measured["start"]
    admit = [timeline.admitted[k] - t for k, t in timeline.created.items() if k in timeline.admitted]
    done = [timeline.succeeded[k] - t for k, t in timeline.created.items() if k in timeline.succeeded]
    admitted_span = max(timeline.admitted.values(), default=start) - start
    succeeded_span = max(timeline.succeeded.values(), default=start) - start
    created_span = max(timeline.created.values(), default=start) - start
    rate = len(admit) / admitted_span if admitted_span > 0 else float("nan")
    done_rate = len(done) / succeeded_span if succeeded_span > 0 else float("nan")
    admit_p = f"{_percentile(admit, 0.5):.2f} s / {_percentile(admit, 0.99):.2f} s"
    done_p = f"{_percentile(done, 0.5):.2f} s / {_percentile(done, 0.99):.2f} s"
    mcad = "MCAD: 14 min for 150 AppWrappers"
    lines = [
        f"End to end through the embedded API server: {count} AppWrappers (one 100m-CPU pod each) across "
        f"{QUEUES} queues with room for all, created 16 at a time by one client; one kubelet simulator per "
        "namespace (0.25 s steps: a pod runs on one step and succeeds on the next). Server, operator, "
        "simulators and client share this machine's cores. The operator's clientConnection: "
        + (
            ", ".join(f"{k} {v:g}" for k, v in client_connection.items())
            if client_connection
            else "its defaults (qps 50, burst 100)"
        )
        + ".",
        "",
        "| measure | value | target / anchor |",
        "|---|---|---|",
        f"| AppWrappers created | {len(timeline.created)} in {created_span:.1f} s | |",
        f"| admitted | {len(admit)} in {admitted_span:.1f} s from the first creation | |",
        f"| admissions per second | {rate:.1f} | >= 40 (Kueue baseline ~43/s on a real API server) |",
        f"| creation to admission p50 / p99 | {admit_p} | |",
        f"| succeeded | {len(done)} in {succeeded_span:.1f} s ({done_rate:.1f}/s) | {mcad} |",
        f"| creation to Succeeded p50 / p99 | {done_p} | |",
        f"| operator CPU (user+system) | {measured['cpu']:.1f} s | |",
        f"| operator peak RSS | {measured['rss']:.0f} MiB | |",
    ]
    if admit:
        lines += ["", f"Mean creation to admission {statistics.fmean(admit):.2f} s."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument(
        "--qps", type=float, help="the operator's clientConnection.qps (default: its own, 50)"
    )
    parser.add_argument(
        "--burst", type=int, help="the operator's clientConnection.burst (default: its own, 100)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    limits = {k: v for k, v in (("qps", args.qps), ("burst", args.burst)) if v is not None}
    markdown = run(args.count, limits or None)
    print(markdown)
    if not args.no_write:
        write_section("operator", markdown)


if __name__ == "__main__":
    main()
