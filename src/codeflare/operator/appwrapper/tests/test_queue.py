"""The reconcile queue: deduplication, one reconcile per key at a time, delays and backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable


async def test_keys_are_deduplicated_and_never_reconciled_concurrently() -> None:
    from codeflare.operator.appwrapper.queue import ReconcileQueue

    active: set[Hashable] = set()
    calls: list[Hashable] = []
    overlap: list[Hashable] = []

    async def reconcile(key: Hashable) -> float | None:
        if key in active:
            overlap.append(key)
        active.add(key)
        calls.append(key)
        await asyncio.sleep(0.02)
        active.discard(key)
        return None

    queue = ReconcileQueue(reconcile, workers=3)
    runner = asyncio.create_task(queue.run())
    for _ in range(5):
        queue.add("a")
    queue.add("b")
    await asyncio.sleep(0.005)
    queue.add("a")  # while "a" runs: once more afterwards
    await asyncio.sleep(0.1)
    runner.cancel()
    assert overlap == []
    assert calls.count("a") == 2 and calls.count("b") == 1


async def test_requeue_after_and_backoff_on_errors() -> None:
    from codeflare.operator.appwrapper.queue import ReconcileQueue

    calls: list[float] = []

    async def reconcile(key: Hashable) -> float | None:
        calls.append(asyncio.get_running_loop().time())
        if len(calls) == 1:
            return 0.05
        if len(calls) == 2:
            raise RuntimeError("boom")
        return None

    queue = ReconcileQueue(reconcile, workers=1)
    runner = asyncio.create_task(queue.run())
    queue.add("k")
    await asyncio.sleep(0.5)
    runner.cancel()
    assert len(calls) == 3
    assert calls[1] - calls[0] >= 0.04
    assert calls[2] - calls[1] >= 0.2  # first retry after an error waits 0.25s
