"""Benchmark of the embedded API server over loopback HTTPS with one async client.

Run: ``.venv/bin/python -m benchmarks.apiserver_bench`` (about a minute). Starts a real
``codeflare server`` process on a fresh state directory and measures:
creates/s of 10,000 small custom objects (target >= 1,000/s), one full list of 10,000 objects
(target < 0.5 s), watch event delivery latency p50/p99 with 10 concurrent watchers (target p99 <
50 ms), and the server's RSS holding 10,000 objects. Targets are reported, not asserted. Writes
the "apiserver" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import psutil

from benchmarks.results import write_section

GROUP = "bench.example.com"
PATH = f"/apis/{GROUP}/v1/namespaces/default/items"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"items.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "items", "singular": "item", "kind": "Item"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"size": {"type": "integer"}, "owner": {"type": "string"}},
                            }
                        },
                    }
                },
            }
        ],
    },
}


def item(name: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Item",
        "metadata": {"name": name, "labels": {"bench": "yes", "shard": str(i % 10)}},
        "spec": {"size": i, "owner": "bench"},
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(state: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "codeflare.cli.main",
            "server",
            "--state-dir",
            str(state),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while not (state / "kubeconfig").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("server did not start")
        time.sleep(0.05)
    return proc


async def create_all(c: aiohttp.ClientSession, count: int, concurrency: int) -> float:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(count):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            i = queue.get_nowait()
            async with c.post(PATH, json=item(f"item-{i:05d}", i)) as resp:
                if resp.status != 201:
                    raise RuntimeError(f"create failed: {resp.status} {await resp.text()}")
                await resp.read()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


async def list_all(c: aiohttp.ClientSession, expected: int, repeats: int = 3) -> tuple[float, float]:
    """Best (response bytes received, bytes received and JSON decoded) times over ``repeats``."""
    best = best_fetch = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        async with c.get(PATH) as resp:
            raw = await resp.read()
        best_fetch = min(best_fetch, time.perf_counter() - started)
        items = json.loads(raw)["items"]
        best = min(best, time.perf_counter() - started)
        if len(items) != expected:
            raise RuntimeError(f"listed {len(items)} of {expected}")
    return best_fetch, best


async def watch_latency(c: aiohttp.ClientSession, watchers: int, writes: int) -> list[float]:
    """Latency from sending a write to each watcher reading its event, in seconds."""
    async with c.get(PATH, params={"limit": "1"}) as resp:
        rv = (await resp.json())["metadata"]["resourceVersion"]
    sent: dict[str, float] = {}
    latencies: list[float] = []
    ready = asyncio.Event()
    opened = [0]

    async def watch() -> None:
        params = {
            "watch": "1",
            "resourceVersion": rv,
            "labelSelector": "watched=yes",
            "timeoutSeconds": "120",
        }
        seen = 0
        async with c.get(PATH, params=params) as resp:
            opened[0] += 1
            if opened[0] == watchers:
                ready.set()
            async for line in resp.content:
                if not line.strip():
                    continue
                now = time.perf_counter()
                name = json.loads(line)["object"]["metadata"]["name"]
                latencies.append(now - sent[name])
                seen += 1
                if seen == writes:
                    return

    tasks = [asyncio.create_task(watch()) for _ in range(watchers)]
    await asyncio.wait_for(ready.wait(), 30)
    await asyncio.sleep(0.2)
    for i in range(writes):
        name = f"watched-{i:04d}"
        body = item(name, i)
        body["metadata"]["labels"]["watched"] = "yes"
        sent[name] = time.perf_counter()
        async with c.post(PATH, json=body) as resp:
            if resp.status != 201:
                raise RuntimeError(await resp.text())
            await resp.read()
        await asyncio.sleep(0.005)
    await asyncio.wait_for(asyncio.gather(*tasks), 60)
    return latencies


async def run(count: int, concurrency: int, watchers: int, writes: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        port = free_port()
        proc = start_server(state, port)
        try:
            token = (state / "admin.token").read_text().strip()
            ssl_ctx = ssl.create_default_context(cafile=str(state / "ca.crt"))
            async with aiohttp.ClientSession(
                base_url=f"https://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {token}"},
                connector=aiohttp.TCPConnector(ssl=ssl_ctx, limit=concurrency + watchers + 4),
                timeout=aiohttp.ClientTimeout(total=120),
            ) as c:
                async with c.post(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD
                ) as resp:
                    resp.raise_for_status()
                create_s = await create_all(c, count, concurrency)
                fetch_s, list_s = await list_all(c, count)
                rss = psutil.Process(proc.pid).memory_info().rss
                latencies = sorted(await watch_latency(c, watchers, writes))
            return {
                "count": count,
                "creates_per_s": count / create_s,
                "list_s": list_s,
                "fetch_s": fetch_s,
                "rss_mib": rss / 2**20,
                "watch_p50_ms": statistics.median(latencies) * 1000,
                "watch_p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
                "watch_events": len(latencies),
            }
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)


def report(r: dict[str, float], concurrency: int, watchers: int) -> str:
    def verdict(ok: bool) -> str:
        return "met" if ok else "**missed**"

    n = int(r["count"])
    return "\n".join(
        [
            f"Real `codeflare server` process, HTTPS over loopback, one `aiohttp.ClientSession` "
            f"({concurrency} requests in flight for creates). Custom resource with a structural schema.",
            "",
            "| Measure | Result | Target | |",
            "|---|---|---|---|",
            f"| Creates of {n:,} small custom objects | {r['creates_per_s']:,.0f}/s | >= 1,000/s "
            f"| {verdict(r['creates_per_s'] >= 1000)} |",
            f"| Full list of {n:,} objects (best of 3, incl. JSON decode) | {r['list_s'] * 1000:,.0f} ms "
            f"| < 500 ms | {verdict(r['list_s'] < 0.5)} |",
            f"| ... of which the response (server + transfer, before decode) | {r['fetch_s'] * 1000:,.0f} ms "
            f"| | |",
            f"| Watch delivery p50 ({watchers} watchers, {int(r['watch_events'])} events) "
            f"| {r['watch_p50_ms']:.1f} ms | | |",
            f"| Watch delivery p99 | {r['watch_p99_ms']:.1f} ms | < 50 ms "
            f"| {verdict(r['watch_p99_ms'] < 50)} |",
            f"| Server RSS holding {n:,} objects | {r['rss_mib']:.0f} MiB | reported | |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    result = asyncio.run(run(args.count, args.concurrency, args.watchers, args.writes))
    markdown = report(result, args.concurrency, args.watchers)
    print(markdown)
    if not args.no_write:
        write_section("apiserver", markdown)


if __name__ == "__main__":
    main()
