"""The work queue on a manual clock: deduplication, no concurrent reconciles of a key, delays, backoff.

Time moves only when a test advances the :class:`ManualClock`; ``settle`` lets the event loop run
what is runnable, so no test depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable

import pytest

from codeflare.k8s.workqueue import ManualClock, ReconcileQueue, WorkQueue


async def settle(rounds: int = 20) -> None:
    """Run every ready callback (a few loop iterations), without letting time pass."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def test_keys_are_deduplicated_and_handed_out_in_order() -> None:
    queue: WorkQueue[str] = WorkQueue(clock=ManualClock())
    for key in ["a", "b", "a", "c", "b"]:
        queue.add(key)
    assert len(queue) == 3
    assert [await queue.get() for _ in range(3)] == ["a", "b", "c"]


async def test_a_key_added_while_active_comes_back_once_after_done() -> None:
    queue: WorkQueue[str] = WorkQueue(clock=ManualClock())
    queue.add("a")
    key = await queue.get()
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0  # never handed out twice at once
    queue.done(key)
    assert len(queue) == 1 and await queue.get() == "a"


async def test_delayed_add_waits_for_the_clock_and_the_earliest_wins() -> None:
    clock = ManualClock()
    queue: WorkQueue[str] = WorkQueue(clock=clock)
    queue.add("k", delay=10)
    queue.add("k", delay=5)
    queue.add("k", delay=30)
    getter = asyncio.create_task(queue.get())
    await settle()
    clock.advance(4.9)
    await settle()
    assert not getter.done()
    clock.advance(0.1)
    await settle()
    assert getter.done() and getter.result() == "k"
    queue.done("k")
    clock.advance(100)  # the superseded later requests do not fire again
    await settle()
    assert len(queue) == 0


async def test_a_getter_waiting_for_a_timer_wakes_for_an_immediate_add() -> None:
    clock = ManualClock()
    queue: WorkQueue[str] = WorkQueue(clock=clock)
    queue.add("late", delay=60)
    getter = asyncio.create_task(queue.get())
    await settle()
    queue.add("now")
    await settle()
    assert getter.result() == "now"


async def test_backoff_doubles_up_to_the_limit_and_forget_resets_it() -> None:
    queue: WorkQueue[str] = WorkQueue(clock=ManualClock(), base_delay=1, max_delay=5)
    assert [queue.add_rate_limited("k") for _ in range(5)] == [1, 2, 4, 5, 5]
    assert queue.failures("k") == 5
    queue.forget("k")
    assert queue.failures("k") == 0 and queue.add_rate_limited("k") == 1


async def test_reconcile_queue_never_runs_a_key_concurrently_and_reruns_it_once() -> None:
    gate = asyncio.Event()
    calls: list[Hashable] = []
    active: set[Hashable] = set()
    overlap: list[Hashable] = []

    async def reconcile(key: Hashable) -> float | None:
        if key in active:
            overlap.append(key)
        active.add(key)
        calls.append(key)
        await gate.wait()
        active.discard(key)
        return None

    rq: ReconcileQueue[Hashable] = ReconcileQueue(reconcile, workers=3, clock=ManualClock())
    runner = asyncio.create_task(rq.run())
    for _ in range(5):
        rq.add("a")
    rq.add("b")
    await settle()
    assert sorted(calls) == ["a", "b"]  # "a" once, though added five times
    rq.add("a")  # while "a" runs: once more afterwards
    await settle()
    assert calls.count("a") == 1
    gate.set()
    await settle()
    runner.cancel()
    assert overlap == [] and calls.count("a") == 2 and calls.count("b") == 1 and rq.reconciles == 3


async def test_reconcile_queue_requeues_after_the_returned_delay_and_backs_off_on_errors() -> None:
    clock = ManualClock()
    calls: list[float] = []

    async def reconcile(key: Hashable) -> float | None:
        calls.append(clock.now())
        if len(calls) == 1:
            return 5.0
        if len(calls) in (2, 3):
            raise RuntimeError("boom")
        return None

    rq: ReconcileQueue[Hashable] = ReconcileQueue(
        reconcile, workers=1, clock=clock, base_delay=1, max_delay=30
    )
    runner = asyncio.create_task(rq.run())
    rq.add("k")
    for _ in range(20):
        await settle()
        clock.advance(0.5)
    await settle()
    runner.cancel()
    assert calls == [0.0, 5.0, 6.0, 8.0]  # requeued after 5 s, then backoff 1 s, then 2 s
    assert rq.queue.failures("k") == 0  # the last reconcile succeeded


async def test_the_real_clock_is_the_default() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("k", delay=0.001)
    assert await asyncio.wait_for(queue.get(), timeout=5) == "k"


@pytest.mark.parametrize("delay", [0, -1])
async def test_non_positive_delays_queue_at_once(delay: float) -> None:
    queue: WorkQueue[str] = WorkQueue(clock=ManualClock())
    queue.add("k", delay=delay)
    assert len(queue) == 1
