"""Benchmark of CRD conversion through a webhook: what one converted object costs on a 10k list.

Run: ``.venv/bin/python -m benchmarks.conversion_bench`` (under a minute). Starts a real
``codeflare server`` process and the test suite's conversion webhook (HTTPS on loopback, in a
thread of this process; it renames ``spec.dimension`` to ``spec.size``), creates 10,000 objects at
the storage version v2, then lists them at v2 (no conversion) and at v1 (one ConversionReview of
10,000 objects). The cost per object is the v1 list time over 10,000 (target < 0.2 ms, issue 13),
reported beside the part conversion adds over the plain list. Targets are reported, not asserted.
Writes the "conversion" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from tests.apiserver.conversion_support import GROUP, ConversionWebhook, widget_crd

from benchmarks.apiserver_bench import free_port, start_server
from benchmarks.results import write_section

V1 = f"/apis/{GROUP}/v1/namespaces/default/widgets"
V2 = f"/apis/{GROUP}/v2/namespaces/default/widgets"


async def _create(c: aiohttp.ClientSession, count: int, concurrency: int) -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(count):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            i = queue.get_nowait()
            body = {
                "apiVersion": f"{GROUP}/v2",
                "kind": "Widget",
                "metadata": {"name": f"w-{i:05d}", "labels": {"bench": "yes"}},
                "spec": {"dimension": i},
            }
            async with c.post(V2, json=body) as resp:
                if resp.status != 201:
                    raise RuntimeError(f"create failed: {resp.status} {await resp.text()}")

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def _best_list(c: aiohttp.ClientSession, path: str, count: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        async with c.get(path) as resp:
            raw = await resp.read()
        items = json.loads(raw)["items"]
        best = min(best, time.perf_counter() - started)
        if len(items) != count:
            raise RuntimeError(f"listed {len(items)} of {count}: {raw[:200]!r}")
    return best


async def run(count: int, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        hook = ConversionWebhook(Path(tmp)).start()
        port = free_port()
        proc = start_server(state, port)
        try:
            token = (state / "admin.token").read_text().strip()
            ssl_ctx = ssl.create_default_context(cafile=str(state / "ca.crt"))
            async with aiohttp.ClientSession(
                base_url=f"https://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {token}"},
                connector=aiohttp.TCPConnector(ssl=ssl_ctx, limit=20),
                timeout=aiohttp.ClientTimeout(total=300),
            ) as c:
                crd = widget_crd("widgets", {"url": hook.url, "caBundle": hook.ca_bundle})
                async with c.post(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd
                ) as resp:
                    resp.raise_for_status()
                await _create(c, count, 16)
                plain = await _best_list(c, V2, count, repeats)
                reviews = len(hook.reviews)
                converted = await _best_list(c, V1, count, repeats)
                per_list = (len(hook.reviews) - reviews) / repeats
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
            hook.stop()
    return {"count": count, "plain_s": plain, "converted_s": converted, "reviews_per_list": per_list}


def report(r: dict[str, Any]) -> str:
    n = int(r["count"])
    per_object_ms = r["converted_s"] / n * 1000
    added_ms = (r["converted_s"] - r["plain_s"]) / n * 1000
    verdict = "met" if per_object_ms < 0.2 else "**missed**"
    return "\n".join(
        [
            "Real `codeflare server` process, HTTPS over loopback; the conversion webhook is the test "
            "suite's (aiohttp, HTTPS, in the benchmark's process). Best of the repeats. "
            f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
            "",
            "| Measure | Result | Target | |",
            "|---|---|---|---|",
            f"| List of {n:,} objects at the storage version (no conversion) "
            f"| {r['plain_s'] * 1000:,.0f} ms | | |",
            f"| List of {n:,} objects at the other version "
            f"({r['reviews_per_list']:.0f} ConversionReview per list) "
            f"| {r['converted_s'] * 1000:,.0f} ms | | |",
            f"| Cost per converted object (whole converted list / {n:,}) "
            f"| {per_object_ms:.3f} ms | < 0.2 ms | {verdict} |",
            f"| ... of which conversion adds over the plain list | {added_ms:.3f} ms | | |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    markdown = report(asyncio.run(run(args.count, args.repeats)))
    print(markdown)
    if not args.no_write:
        write_section("conversion", markdown)


if __name__ == "__main__":
    main()
