"""Expected arrivals and the expected start: the stream a history leads to, and its invariants.

Properties, in one queue without preemption: with no submission observed the expected start is the
earliest one (the forecast given no later arrivals), field for field; it is never before the
earliest one; under StrictFIFO, for a workload of at least the expected arrivals' priority, it is
the earliest one (later work goes behind).
"""

from __future__ import annotations

from functools import partial

from hypothesis import given
from hypothesis import strategies as st

from codeflare.scheduling.arrivals import EXPECTED_MARK, ArrivalHistory
from codeflare.scheduling.forecast import forecast, fork
from codeflare.scheduling.tests.helpers import cq, engine_with, wl
from codeflare.scheduling.tests.test_forecast import SETTINGS, no_overrun


def test_each_class_at_its_observed_rate_evenly_spaced_in_turn() -> None:
    history = ArrivalHistory(window=3600.0)
    for i, cpu in enumerate(("1", "1", "1", "1")):
        history.observe(wl(f"small{i}", "lq-a", cpu, created=1000.0 + i), 60.0 + i)
    history.observe(wl("big", "lq-a", "4", created=2000.0), 600.0)
    history.observe(wl("unknown", "lq-a", "2", created=2000.0), None)  # counted, never replayed
    history.observe(wl("small0", "lq-a", "1", created=3000.0), 1.0)  # seen before: ignored
    stream = history.expected(3600.0, horizon=3600.0)
    small = [a for a in stream if a.workload.pod_sets[0].requests["cpu"].milli == 1000]
    assert [a.at for a in small] == [3600.0 + 450.0 + 900.0 * k for k in range(4)]
    assert [a.duration for a in small] == [60.0, 61.0, 62.0, 63.0]
    assert [a.at for a in stream if a.duration == 600.0] == [5400.0]
    assert all(a.duration is not None for a in stream)
    assert [a.at for a in stream] == sorted(a.at for a in stream)
    keys = [a.workload.key for a in stream]
    assert len(set(keys)) == len(keys) and all(EXPECTED_MARK in k for k in keys)
    assert all(a.workload.creation_time == a.at and a.workload.admission is None for a in stream)
    assert history.expected(3600.0, horizon=3600.0) == stream  # deterministic
    assert len(history.expected(3600.0, horizon=3600.0, limit=2)) == 2
    # an hour later than the last of them: nothing is expected
    assert history.expected(2000.0 + 3600.0) == []


def test_old_submissions_are_forgotten() -> None:
    history = ArrivalHistory(window=100.0)
    history.observe(wl("old", "lq-a", "1", created=0.0), 10.0)
    for i in range(20):
        history.observe(wl(f"new{i}", "lq-a", "1", created=200.0 + i), 10.0)
    assert len(history) == 20
    history.observe(wl("older", "lq-a", "1", created=50.0), 10.0)  # submitted before the window
    assert len(history) == 20


def test_a_backfilling_arrival_delays_the_big_one() -> None:
    """BestEffortFIFO, 4 CPU: 'big' (4) waits for 'run' (3, ends at 100); small workloads submitted
    every 50 s take the free CPU first and keep it: the expected start is after the earliest."""
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}, queueing_strategy="BestEffortFIFO"))
    engine.add_workload(wl("run", "lq-a", "3"))
    engine.schedule(0.0)
    engine.add_workload(wl("big", "lq-a", "4", created=1.0))
    history = ArrivalHistory(window=3600.0)
    for i in range(72):
        history.observe(wl(f"s{i}", "lq-a", "1", created=-3600.0 + 50.0 * i + 1.0), 120.0)
    durations = {"ns/run": 100.0, "ns/big": 10.0}
    earliest = forecast(fork(engine), 1.0, durations).estimates["ns/big"].start
    expected = forecast(fork(engine), 1.0, durations, arrivals=history.expected(1.0)).estimates["ns/big"]
    assert earliest is not None and expected.start is not None
    assert earliest == 100.0 and expected.start > earliest


queue_spec = st.sampled_from(["StrictFIFO", "BestEffortFIFO"])
workload_spec = st.tuples(
    st.integers(1, 4),  # cpu
    st.integers(0, 2),  # priority
    st.integers(1, 60),  # duration
)


@SETTINGS
@given(
    strategy=queue_spec,
    nominal=st.integers(2, 6),
    existing=st.lists(workload_spec, max_size=10),
    observed=st.lists(st.tuples(workload_spec, st.integers(0, 3599)), max_size=10),
)
def test_property_expected_start_and_earliest_start(
    strategy: str,
    nominal: int,
    existing: list[tuple[int, int, int]],
    observed: list[tuple[tuple[int, int, int], int]],
) -> None:
    engine = engine_with(cq("a", {"default": {"cpu": (str(nominal),)}}, queueing_strategy=strategy))
    durations: dict[str, float | None] = {}
    for i, (cpu, priority, duration) in enumerate(existing):
        engine.add_workload(wl(f"w{i}", "lq-a", str(min(cpu, nominal)), priority=priority, created=float(i)))
        durations[f"ns/w{i}"] = float(duration)
        if i == len(existing) // 2:
            engine.schedule(float(i))
    now = float(len(existing))
    history = ArrivalHistory()
    exact = partial(forecast, resolution=0.0, min_step=0.0)
    earliest = exact(fork(engine), now, durations)
    assert exact(fork(engine), now, durations, arrivals=history.expected(now)) == earliest
    for i, ((cpu, priority, duration), ago) in enumerate(observed):
        history.observe(wl(f"o{i}", "lq-a", str(min(cpu, nominal)), priority=priority, created=now - ago),
                        float(duration))  # fmt: skip
    arrivals = history.expected(now)
    expected = exact(fork(engine), now, durations, arrivals=arrivals, check=no_overrun)
    assert set(expected.estimates) == set(earliest.estimates)
    top = max((a.workload.priority for a in arrivals), default=-1)
    for key, estimate in expected.estimates.items():
        first = earliest.estimates[key].start
        workload = engine.workload(key)
        assert first is not None and estimate.start is not None and workload is not None
        assert estimate.start >= first, key
        if strategy == "StrictFIFO" and workload.priority >= top:
            assert estimate.start == first, key  # what is expected goes behind it
