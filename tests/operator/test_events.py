"""The operator's Event recorder against a real API server: its own request budget, client-go's
per-object spam filter, repeats counted on the waiting Event, and a bounded backlog.

Facts ported from client-go ``tools/record`` (``events_cache.go``: ``defaultSpamBurst`` 25 per
source and object; ``event.go``: ``maxQueuedEvents``) and controller-runtime
``pkg/internal/recorder/recorder.go`` (the recorder's client is its own, so is its rate limit).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.ratelimit import TokenBucket
from codeflare.operator.events import SPAM_BURST, EventRecorder
from tests.support.apiserver import ServerProcess
from tests.support.polling import async_wait_for


def _pod(name: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default", "uid": name}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


@pytest.fixture
async def kube(apiserver: ServerProcess) -> AsyncIterator[AsyncKube]:
    client = AsyncKube(config.from_kubeconfig(apiserver.kubeconfig))
    try:
        yield client
    finally:
        await client.aclose()


async def _events_about(kube: AsyncKube, name: str) -> list[dict[str, Any]]:
    return [e for e in await kube.list(kinds.EVENT, "default") if e["involvedObject"]["name"] == name]


async def _wait_for_events(kube: AsyncKube, names: list[str], count: int) -> list[dict[str, Any]]:
    async def probe() -> list[dict[str, Any]]:
        found = [e for n in names for e in await _events_about(kube, n)]
        return found if len(found) == count else []

    return await async_wait_for(probe, 30, what=f"{count} events about {names}")


async def test_events_do_not_spend_the_controllers_budget(kube: AsyncKube, apiserver: ServerProcess) -> None:
    """The controllers' bucket (burst 5, one token per 1,000 s) is spent; Events are still written."""
    shared = TokenBucket(0.001, 5)
    operator = AsyncKube(config.from_kubeconfig(apiserver.kubeconfig), rate_limit=shared)
    try:
        recorder = EventRecorder(operator)
        for _ in range(5):
            await shared.acquire()
        assert shared.due_in(time.monotonic()) > 100  # spent: the next token is 1,000 s away
        names = [f"budget-{i}" for i in range(3)]
        for name in names:
            assert await recorder.record(_pod(name), "Started", "started")
        await _wait_for_events(kube, names, 3)
    finally:
        await operator.aclose()


async def test_one_object_gets_the_spam_burst_then_nothing(kube: AsyncKube) -> None:
    recorder = EventRecorder(kube)
    taken = [await recorder.record(_pod("chatty"), "Retry", f"attempt {i}") for i in range(SPAM_BURST + 5)]
    assert taken == [True] * SPAM_BURST + [False] * 5
    assert await recorder.record(_pod("quiet"), "Retry", "attempt 0")  # another object's budget
    await _wait_for_events(kube, ["chatty"], SPAM_BURST)


async def test_a_repeat_is_counted_on_the_waiting_event(kube: AsyncKube) -> None:
    recorder = EventRecorder(kube)
    for _ in range(3):  # no await suspends in between: the sender has not taken the first yet
        assert await recorder.record(_pod("repeat"), "Admitted", "admitted by cq")
    (event,) = await _wait_for_events(kube, ["repeat"], 1)
    assert event["count"] == 3
    assert event["reason"] == "Admitted"


async def test_a_full_backlog_drops_new_events(kube: AsyncKube) -> None:
    recorder = EventRecorder(kube, senders=1, backlog=2)
    taken = [await recorder.record(_pod(f"flood-{i}"), "Created", "created") for i in range(4)]
    assert taken == [True, True, False, False]
    await _wait_for_events(kube, [f"flood-{i}" for i in range(4)], 2)
