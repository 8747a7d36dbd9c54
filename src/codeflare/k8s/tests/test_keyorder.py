"""KeyedOrder: one key's writes in the order they were handed over, other keys alongside, never
more than the limit at once, and no deadlock or lost turn when a waiting write is cancelled.

The property: for any sequence of writes (key, how many loop turns it takes) handed over in one
go, the writes of each key run one at a time in the order handed over, and no more than
``limit`` writes run at once overall.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.k8s.keyorder import KeyedOrder


class Writes:
    """Writes that note their name when they run; ``gated`` ones wait for :attr:`release` first."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.release = asyncio.Event()

    def gated(self, name: str) -> Callable[[], Awaitable[None]]:
        async def write() -> None:
            await self.release.wait()
            self.log.append(name)

        return write

    def quick(self, name: str) -> Callable[[], Awaitable[None]]:
        async def write() -> None:
            self.log.append(name)

        return write


async def test_a_later_write_of_a_key_waits_for_the_earlier_one_and_other_keys_do_not() -> None:
    order = KeyedOrder(4)
    release_admission = asyncio.Event()
    log: list[str] = []

    async def admit() -> None:
        log.append("admit w start")
        await release_admission.wait()
        log.append("admit w end")

    async def write(name: str) -> None:
        log.append(name)

    admission = asyncio.ensure_future(order.run("w", admit))
    eviction = asyncio.ensure_future(order.run("w", lambda: write("evict w")))
    other = asyncio.ensure_future(order.run("x", lambda: write("admit x")))
    await other
    assert log == ["admit w start", "admit x"]  # x went by; w's eviction waits
    release_admission.set()
    await asyncio.gather(admission, eviction)
    assert log == ["admit w start", "admit x", "admit w end", "evict w"]


async def test_the_line_is_taken_at_the_call_not_when_first_awaited() -> None:
    order = KeyedOrder(2)
    log: list[int] = []

    async def write(i: int) -> None:
        log.append(i)

    first, second = order.run("k", lambda: write(1)), order.run("k", lambda: write(2))
    await asyncio.gather(second, first)  # awaited in the other order
    assert log == [1, 2]


async def test_a_waiter_never_holds_the_only_slot() -> None:
    """Limit 1: the slot goes to a write whose key is free, not to one waiting for its key."""
    order, writes = KeyedOrder(1), Writes()
    a1 = asyncio.ensure_future(order.run("a", writes.gated("a1")))
    a2 = asyncio.ensure_future(order.run("a", writes.quick("a2")))
    b1 = asyncio.ensure_future(order.run("b", writes.quick("b1")))
    await asyncio.sleep(0)
    writes.release.set()
    await asyncio.wait_for(asyncio.gather(a1, a2, b1), timeout=5)
    assert writes.log.index("a1") < writes.log.index("a2")
    assert sorted(writes.log) == ["a1", "a2", "b1"]


async def test_cancelling_a_waiting_write_cancels_nothing_else() -> None:
    order, writes = KeyedOrder(2), Writes()
    one = asyncio.ensure_future(order.run("k", writes.gated("first")))
    two = asyncio.ensure_future(order.run("k", writes.quick("second")))
    three = asyncio.ensure_future(order.run("k", writes.quick("third")))
    await asyncio.sleep(0)
    two.cancel()
    writes.release.set()
    await asyncio.gather(one, three)
    assert two.cancelled() and writes.log == ["first", "third"]


async def test_a_failed_write_frees_its_key() -> None:
    order = KeyedOrder(1)

    async def fail() -> None:
        raise RuntimeError("refused")

    async def succeed() -> str:
        return "written"

    failing = asyncio.ensure_future(order.run("k", fail))
    after = asyncio.ensure_future(order.run("k", succeed))
    with pytest.raises(RuntimeError, match="refused"):
        await failing
    assert await after == "written"


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="limit must be at least 1"):
        KeyedOrder(0)


@settings(max_examples=60, deadline=None)
@given(
    limit=st.integers(min_value=1, max_value=4),
    writes=st.lists(st.tuples(st.sampled_from("abcd"), st.integers(min_value=0, max_value=3)), max_size=30),
)
def test_each_key_in_order_and_never_over_the_limit(limit: int, writes: list[tuple[str, int]]) -> None:
    order = KeyedOrder(limit)
    running: dict[str, int] = {}
    started: dict[str, list[int]] = {}
    peak = 0

    async def write(i: int, key: str, turns: int) -> None:
        nonlocal peak
        running[key] = running.get(key, 0) + 1
        assert running[key] == 1, f"two writes of {key} at once"
        peak = max(peak, sum(running.values()))
        started.setdefault(key, []).append(i)
        for _ in range(turns):
            await asyncio.sleep(0)
        running[key] -= 1

    async def scenario() -> None:
        calls = [
            order.run(key, lambda i=i, k=key, t=turns: write(i, k, t))
            for i, (key, turns) in enumerate(writes)
        ]
        await asyncio.gather(*calls)

    asyncio.run(scenario())
    assert peak <= limit
    for key, indices in started.items():
        assert indices == [i for i, (k, _) in enumerate(writes) if k == key]
