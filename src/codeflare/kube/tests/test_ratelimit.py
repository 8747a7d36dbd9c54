"""The client's token bucket: client-go's QPS/Burst arithmetic, and the client waiting on it.

Cases in the first table are ported from golang.org/x/time/rate (``rate/rate_test.go``, the
limiter behind client-go's ``flowcontrol.NewTokenBucketRateLimiter``) and from client-go
(``util/flowcontrol/throttle_test.go``), rewritten as one-token reservations, the only form a
client uses (``Wait``). Properties: whatever the arrival times, no window of served requests
holds more than ``burst + qps * window``, requests are served in arrival order, and requests
that arrive no faster than ``qps`` never wait. Waiting requests are served by priority (our
addition, not client-go's): admissions before the default before bookkeeping, first come first
served within one, and whatever the mix, no window holds more grants than the bucket allows;
bookkeeping leaves ``keep`` tokens (half the burst) for work, also in every mix.
Then through :class:`AsyncKube` over HTTP: the server sees the requests no earlier than the
bucket allows.
Deliberate difference: client-go coerces a burst below 1 to 1; we refuse it (the operator's
configuration already rejects ``clientConnection.burst < 1`` naming the field).
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.kube import kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.config import from_token
from codeflare.kube.ratelimit import Priority, TokenBucket, priority
from codeflare.kube.tests.scripted_api import Answer, ScriptedAPI

D = 0.1  # rate_test.go's time unit d (100 ms)

# (source, qps, burst, [(call time, expected wait)])
CASES = [
    # client-go throttle_test.go TestLimiter: qps 10, burst 1; the second Accept blocks 100 ms
    ("client-go TestLimiter", 10, 1, [(0.0, 0.0), (0.0, D)]),
    # rate_test.go TestSimpleReserve (qps 10, burst 2), its 2-token reservations as 1-token pairs:
    # t0 acts at t0, the next pair at t0 waits until t2, a pair at t3 acts at t3/t4
    ("x/time/rate TestSimpleReserve", 10, 2, [(0, 0), (0, 0), (0, D), (0, 2 * D), (3 * D, 0), (3 * D, D)]),
    # rate_test.go TestWaitSimple: burst 3, 2 tokens act now, 3 more act 2d later
    ("x/time/rate TestWaitSimple", 10, 3, [(0, 0), (0, 0), (0, 0), (0, D), (0, 2 * D)]),
    # rate_test.go TestLimiterBurst1: burst 1 refills one token every d
    ("x/time/rate TestLimiterBurst1", 10, 1, [(0, 0), (D, 0), (2 * D, 0), (2 * D, D)]),
    # rate_test.go TestLimiterBurst3: a long pause refills at most burst tokens
    ("x/time/rate TestLimiterBurst3", 10, 3, [(0, 0)] * 3 + [(9 * D, 0)] * 3 + [(9 * D, D)]),
    # rate_test.go TestReserveJumpBack: a clock stepping back adds no tokens
    ("x/time/rate TestReserveJumpBack", 10, 2, [(D, 0), (D, 0), (0, D)]),
]


@pytest.mark.parametrize(("source", "qps", "burst", "calls"), CASES, ids=[c[0] for c in CASES])
def test_waits_as_client_go_does(
    source: str, qps: float, burst: int, calls: list[tuple[float, float]]
) -> None:
    bucket = TokenBucket(qps, burst)
    waits = [bucket.reserve(at) for at, _ in calls]
    assert waits == pytest.approx([wait for _, wait in calls], abs=1e-9), source


@pytest.mark.parametrize(("qps", "burst"), [(0, 1), (-1, 1), (10, 0), (10, -5)])
def test_a_bucket_that_could_never_serve_is_refused(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match=r"qps|burst"):
        TokenBucket(qps, burst)


arrivals = st.lists(st.floats(min_value=0, max_value=2.0, allow_nan=False), min_size=1, max_size=60)


@given(
    qps=st.floats(min_value=0.5, max_value=200, allow_nan=False),
    burst=st.integers(min_value=1, max_value=20),
    gaps=arrivals,
)
def test_no_window_serves_more_than_burst_plus_qps(qps: float, burst: int, gaps: list[float]) -> None:
    bucket = TokenBucket(qps, burst)
    now, served = 0.0, []
    for gap in gaps:
        now += gap
        served.append(now + bucket.reserve(now))
    assert served == sorted(served)  # first come, first served
    for i in range(len(served)):
        for j in range(i, len(served)):
            assert j - i + 1 <= burst + qps * (served[j] - served[i]) + 1e-6


@given(
    qps=st.floats(min_value=0.5, max_value=200, allow_nan=False),
    burst=st.integers(min_value=1, max_value=20),
    extra=st.lists(st.floats(min_value=0, max_value=1.0, allow_nan=False), min_size=1, max_size=60),
)
def test_requests_no_faster_than_qps_never_wait(qps: float, burst: int, extra: list[float]) -> None:
    bucket = TokenBucket(qps, burst)
    now = 0.0
    for gap in extra:
        assert bucket.reserve(now) == 0.0
        now += 1 / qps + gap


class LoggedBucket(TokenBucket):
    """The bucket, noting the time of every token it hands out, and to which priority with how
    many tokens left after it."""

    def __init__(self, qps: float, burst: int) -> None:
        super().__init__(qps, burst)
        self.granted: list[float] = []
        self.left: list[tuple[Priority, float]] = []

    def reserve(self, now: float) -> float:
        self.granted.append(now)
        return super().reserve(now)

    def _take(self, now: float, level: Priority) -> None:
        super()._take(now, level)
        self.left.append((level, self._tokens))


async def test_waiting_requests_are_served_by_priority() -> None:
    """Burst 1, spent: of the requests then waiting, admissions go first, bookkeeping last."""
    bucket = TokenBucket(50, 1)
    await bucket.acquire()
    order: list[str] = []

    async def request(name: str, level: Priority | None = None) -> None:
        await bucket.acquire(level)
        order.append(name)

    async def bookkeeping(name: str) -> None:
        with priority(Priority.BOOKKEEPING):  # the context variable, inherited by the task
            await asyncio.create_task(request(name))

    await asyncio.gather(
        bookkeeping("reason-1"),
        bookkeeping("reason-2"),
        request("default"),
        request("admit-1", Priority.ADMISSION),
        request("admit-2", Priority.ADMISSION),
    )
    assert order == ["admit-1", "admit-2", "default", "reason-1", "reason-2"]


async def test_a_cancelled_waiter_gives_its_turn_to_the_next() -> None:
    bucket = TokenBucket(50, 1)
    await bucket.acquire()
    first = asyncio.create_task(bucket.acquire(Priority.ADMISSION))
    second = asyncio.create_task(bucket.acquire(Priority.BOOKKEEPING))
    await asyncio.sleep(0)
    first.cancel()
    await second  # served although the waiter before it left the line
    assert first.cancelled()


@settings(max_examples=20, deadline=None)
@given(
    burst=st.integers(min_value=1, max_value=5),
    arrivals=st.lists(
        st.tuples(st.sampled_from(list(Priority)), st.sampled_from([0.0, 0.0, 0.001, 0.003])),
        min_size=1,
        max_size=25,
    ),
)
def test_priorities_never_exceed_the_bucket(burst: int, arrivals: list[tuple[Priority, float]]) -> None:
    qps = 1000.0
    bucket = LoggedBucket(qps, burst)
    served: dict[Priority, list[int]] = {level: [] for level in Priority}

    async def request(i: int, level: Priority) -> None:
        await bucket.acquire(level)
        served[level].append(i)

    async def scenario() -> None:
        tasks = []
        for i, (level, gap) in enumerate(arrivals):
            tasks.append(asyncio.create_task(request(i, level)))
            await asyncio.sleep(gap)
        await asyncio.gather(*tasks)

    asyncio.run(scenario())
    granted = bucket.granted
    assert len(granted) == len(arrivals)
    for i in range(len(granted)):
        for j in range(i, len(granted)):
            assert j - i + 1 <= burst + qps * (granted[j] - granted[i]) + 1e-6
    for order in served.values():  # first come, first served within one priority
        assert order == sorted(order)
    for level, left in bucket.left:  # bookkeeping never takes the tokens kept for work
        if level is Priority.BOOKKEEPING:
            assert left >= bucket.keep - 1e-6


async def test_bookkeeping_leaves_half_the_burst_for_admissions() -> None:
    """Burst 4 keeps 2: bookkeeping takes two tokens, then waits although tokens are there; the
    admissions arriving meanwhile take those two at once, and bookkeeping goes when 3 are back."""
    bucket = LoggedBucket(20, 4)
    assert bucket.keep == 2
    order: list[str] = []

    async def request(name: str, level: Priority) -> None:
        await bucket.acquire(level)
        order.append(name)

    await request("report-1", Priority.BOOKKEEPING)
    await request("report-2", Priority.BOOKKEEPING)
    waiting = asyncio.create_task(request("report-3", Priority.BOOKKEEPING))
    await asyncio.sleep(0)
    assert order == ["report-1", "report-2"]  # two tokens are left, both kept
    await request("admit-1", Priority.ADMISSION)
    await request("admit-2", Priority.ADMISSION)
    assert order == ["report-1", "report-2", "admit-1", "admit-2"]  # served at once, no wait
    await waiting
    assert bucket.granted[-1] - bucket.granted[-2] >= 3 / 20 - 0.01  # 3 tokens refilled at 20/s
    level, left = bucket.left[-1]
    assert level is Priority.BOOKKEEPING and left >= 2 - 1e-6  # (more when the timer fired late)


@pytest.mark.parametrize(("burst", "keep"), [(1, 1), (4, 4), (4, -1)])
def test_keep_must_leave_a_token_to_take(burst: int, keep: int) -> None:
    with pytest.raises(ValueError, match="keep must be at least 0 and less than burst"):
        TokenBucket(10, burst, keep=keep)


async def test_the_client_sends_no_faster_than_its_bucket() -> None:
    """qps 20, burst 3: of 9 concurrent reads the server sees 3 at once, then one every 50 ms."""
    qps, burst, count = 20.0, 3, 9
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}
    with ScriptedAPI(default=Answer(200, configmap)).serving() as server:
        kube = AsyncKube(from_token(server.url, "t", namespace="ns"), rate_limit=TokenBucket(qps, burst))
        try:
            started = asyncio.get_running_loop().time()
            await asyncio.gather(*(kube.get(kinds.CONFIGMAP, "cm", "ns") for _ in range(count)))
        finally:
            await kube.aclose()
    arrivals_at = sorted(r.at for r in server.sent("GET"))
    assert len(arrivals_at) == count
    for k, at in enumerate(arrivals_at):  # the k-th request cannot reach the server before its token
        assert at - started >= max(0, k + 1 - burst) / qps - 1e-3, k


async def test_without_a_bucket_nothing_waits() -> None:
    """The default client (SDK, CLI, agent) is not limited: the bucket is opt-in."""
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}
    with ScriptedAPI(default=Answer(200, configmap)).serving() as server:
        kube = AsyncKube(from_token(server.url, "t", namespace="ns"))
        try:
            assert kube.rate_limit is None
            await asyncio.gather(*(kube.get(kinds.CONFIGMAP, "cm", "ns") for _ in range(3)))
        finally:
            await kube.aclose()
    assert len(server.sent("GET")) == 3
