"""Benchmark of Kueue v1beta2 -> v1beta1 conversion by the operator's webhook on a 10k list.

Run: ``.venv/bin/python -m benchmarks.kueue_conversion_bench`` (about a minute). Starts a real
``codeflare server`` process with our Kueue CRDs (v1beta2 stored) and the real operator in a
thread of this process (queueing and AppWrappers off: only its webhook server works here), which
serves ``/convert`` with :mod:`codeflare.api.kueue_conversion`. Creates 10,000 Workloads at
v1beta2 (one pod set with requests and a priorityClassRef, as the operator writes them), then
lists them at v1beta2 (the storage version: no conversion) and at v1beta1 (one ConversionReview
of 10,000 objects to the operator). The cost per object is the v1beta1 list time over 10,000
(target < 0.2 ms, issue 13), reported beside the part conversion adds over the plain list and
the mapping's own cost in-process. Targets are reported, not asserted. Writes the
"kueue-conversion" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace

from benchmarks.results import write_section
from codeflare.api.kueue_conversion import to_v1beta1
from codeflare.kube.client import Kube

NS = "bench"
V1 = f"/apis/kueue.x-k8s.io/v1beta1/namespaces/{NS}/workloads"
V2 = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads"


def workload(i: int) -> dict[str, Any]:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": f"wl-{i:05d}", "namespace": NS, "labels": {"bench": "yes"}},
        "spec": {
            "queueName": "q",
            "priority": i % 7,
            "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "p"},
            "podSets": [{"name": "main", "count": 2, "template": {"spec": {"containers": [container]}}}],
        },
    }


async def _create(c: aiohttp.ClientSession, count: int, concurrency: int) -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(count):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            i = queue.get_nowait()
            async with c.post(V2, json=workload(i)) as resp:
                if resp.status != 201:
                    raise RuntimeError(f"create failed: {resp.status} {await resp.text()}")

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def _best_list(c: aiohttp.ClientSession, path: str, count: int, repeats: int) -> tuple[float, Any]:
    best, items = float("inf"), []
    for _ in range(repeats):
        started = time.perf_counter()
        async with c.get(path) as resp:
            raw = await resp.read()
        items = json.loads(raw).get("items") or []
        best = min(best, time.perf_counter() - started)
        if len(items) != count:
            raise RuntimeError(f"listed {len(items)} of {count}: {raw[:300]!r}")
    return best, items


async def _measure(server: ServerProcess, count: int, repeats: int) -> dict[str, Any]:
    ssl_ctx = ssl.create_default_context(cafile=str(server.ca_file))
    async with aiohttp.ClientSession(
        base_url=server.url,
        headers={"Authorization": f"Bearer {server.token}"},
        connector=aiohttp.TCPConnector(ssl=ssl_ctx, limit=20),
        timeout=aiohttp.ClientTimeout(total=600),
    ) as c:
        await _create(c, count, 16)
        plain, stored = await _best_list(c, V2, count, repeats)
        converted, old = await _best_list(c, V1, count, repeats)
    if old[0]["spec"].get("priorityClassName") != "p":
        raise RuntimeError(f"not converted: {old[0]['spec']}")
    started = time.perf_counter()
    for obj in stored:
        to_v1beta1(obj)
    mapping = time.perf_counter() - started
    return {"count": count, "plain_s": plain, "converted_s": converted, "mapping_s": mapping}


def run(count: int, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "state").start()
        try:
            operator = ThreadedOperator(
                server, {"queueing": {"enabled": False}, "appwrapper": {"enabled": False}}
            )
            operator.start(timeout=60)
            try:
                with Kube(operator.connection) as kube:
                    ensure_namespace(kube, NS)
                return asyncio.run(_measure(server, count, repeats))
            finally:
                operator.stop()
        finally:
            server.stop()


def report(r: dict[str, Any]) -> str:
    n = int(r["count"])
    per_object_ms = r["converted_s"] / n * 1000
    added_ms = (r["converted_s"] - r["plain_s"]) / n * 1000
    verdict = "met" if per_object_ms < 0.2 else "**missed**"
    return "\n".join(
        [
            "Real `codeflare server` process and the real operator's webhook server (in a thread of the "
            "benchmark's process, HTTPS over loopback), 10,000 Workloads of one pod set. Best of the "
            f"repeats. Shared machine: load average at the end {os.getloadavg()[0]:.1f} on "
            f"{os.cpu_count()} cores.",
            "",
            "| Measure | Result | Target | |",
            "|---|---|---|---|",
            f"| List of {n:,} Workloads at v1beta2 (storage, no conversion) "
            f"| {r['plain_s'] * 1000:,.0f} ms | | |",
            f"| List of {n:,} Workloads at v1beta1 (one ConversionReview to the operator) "
            f"| {r['converted_s'] * 1000:,.0f} ms | | |",
            f"| Cost per converted object (whole v1beta1 list / {n:,}) "
            f"| {per_object_ms:.3f} ms | < 0.2 ms | {verdict} |",
            f"| ... of which conversion adds over the plain list | {added_ms:.3f} ms | | |",
            f"| ... of which the mapping itself (`to_v1beta1`, in-process) "
            f"| {r['mapping_s'] / n * 1000:.4f} ms | | |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    markdown = report(run(args.count, args.repeats))
    print(markdown)
    if not args.no_write:
        write_section("kueue-conversion", markdown)


if __name__ == "__main__":
    main()
