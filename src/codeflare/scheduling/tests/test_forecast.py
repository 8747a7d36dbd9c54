"""The start-time forecast: known cases, and properties over random queues and workloads.

Properties: the simulation never charges beyond quota; no estimate is earlier than now; a
workload with nothing ahead that fits is estimated "now"; with exact durations and no rounding
the estimate is the admission time a replay of the same engine gives.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codeflare.scheduling import AdmissionEngine, Preemption
from codeflare.scheduling.forecast import Arrival, forecast, fork
from codeflare.scheduling.tests.helpers import assert_plain, cq, engine_with, wl

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def no_overrun(engine: AdmissionEngine, t: float) -> None:
    assert engine.quota_violations() == [], f"quota exceeded at t={t}"


def test_waits_behind_known_durations_in_order() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}))
    for i in range(3):
        engine.add_workload(wl(f"run{i}", "lq-a", "4", created=float(i)))
    engine.schedule(0.0)  # run0 admitted at t=0
    durations = {"ns/run0": 100.0, "ns/run1": 50.0, "ns/run2": 10.0}
    result = forecast(fork(engine), 20.0, durations, min_step=0.0, resolution=0.0)
    assert result.estimates["ns/run1"].start == 100.0
    assert result.estimates["ns/run1"].waiting_for == ("ns/run0",)
    assert result.estimates["ns/run1"].position == 0
    assert result.estimates["ns/run2"].start == 150.0
    assert result.estimates["ns/run2"].position == 1
    assert engine.admission("ns/run1") is None  # the forecast ran on a copy
    for estimate in result.estimates.values():
        assert_plain(estimate)


def test_unknown_duration_ahead_means_no_bound() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}))
    engine.add_workload(wl("forever", "lq-a", "4"))
    engine.schedule(0.0)
    engine.add_workload(wl("next", "lq-a", "1", created=1.0))
    result = forecast(fork(engine), 5.0, {"ns/forever": None, "ns/next": 5.0})
    estimate = result.estimates["ns/next"]
    assert estimate.start is None
    assert estimate.waiting_for == ("ns/forever",)
    assert sum(e.start is None for e in result.estimates.values()) == 1


def test_overdue_run_ends_now_and_preemption_is_named() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}, preemption=Preemption("LowerPriority")))
    engine.add_workload(wl("low", "lq-a", "4", priority=0))
    engine.schedule(0.0)
    engine.add_workload(wl("high", "lq-a", "4", priority=10, created=1.0))
    result = forecast(fork(engine), 30.0, {"ns/low": None, "ns/high": 10.0})
    assert result.estimates["ns/high"].start == 30.0
    assert result.estimates["ns/high"].preempts == ("ns/low",)
    # overdue: admitted 0 s, expected 10 s, now 30 s -> it ends now, the next goes now
    engine2 = engine_with(cq("a", {"default": {"cpu": ("4",)}}))
    engine2.add_workload(wl("old", "lq-a", "4"))
    engine2.schedule(0.0)
    engine2.add_workload(wl("new", "lq-a", "4", created=1.0))
    later = forecast(fork(engine2), 30.0, {"ns/old": 10.0, "ns/new": 1.0})
    assert later.estimates["ns/new"].start is not None and 30.0 <= later.estimates["ns/new"].start <= 31.0


def test_rounding_is_never_early_and_bounded() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("1",)}}))
    for i in range(40):
        engine.add_workload(wl(f"w{i}", "lq-a", "1", created=float(i)))
    engine.schedule(0.0)
    durations = {f"ns/w{i}": 10.0 + (i % 3) for i in range(40)}
    exact = forecast(fork(engine), 0.0, durations, resolution=0.0, min_step=0.0)
    rounded = forecast(fork(engine), 0.0, durations, resolution=0.02, min_step=1.0)
    assert rounded.steps <= exact.steps
    for key, estimate in exact.estimates.items():
        got = rounded.estimates[key].start
        assert estimate.start is not None and got is not None
        assert estimate.start <= got <= estimate.start * 1.25 + 1.0


# -- properties --------------------------------------------------------------------------------
queue_quota = st.tuples(st.integers(0, 6), st.one_of(st.none(), st.integers(0, 4)))
workload_spec = st.tuples(
    st.sampled_from(["lq-a", "lq-b", "lq-c"]),
    st.integers(1, 5),  # cpu
    st.integers(0, 2),  # priority
    st.one_of(st.none(), st.integers(1, 60)),  # duration
)


def build(quotas: list[tuple[int, int | None]], cohort: bool, preempt: bool) -> AdmissionEngine:
    policy = Preemption("LowerPriority", "Any") if preempt else Preemption()
    queues = [
        cq(name, {"default": {"cpu": (str(nominal), None if borrow is None or not cohort else str(borrow))}},
           cohort="co" if cohort else None, preemption=policy)
        for name, (nominal, borrow) in zip("abc", quotas, strict=True)
    ]  # fmt: skip
    return engine_with(*queues)


def scenario(
    quotas: list[tuple[int, int | None]],
    cohort: bool,
    preempt: bool,
    early: list[tuple[str, int, int, int | None]],
    late: list[tuple[str, int, int, int | None]],
) -> tuple[AdmissionEngine, dict[str, float | None]]:
    """Early workloads arrive at 0 and some are admitted; late ones arrive at 5; now is 10."""
    engine = build(quotas, cohort, preempt)
    durations: dict[str, float | None] = {}
    for i, (queue, cpu, priority, duration) in enumerate(early + late):
        created = 0.0 if i < len(early) else 5.0 + i
        engine.add_workload(wl(f"w{i}", queue, str(cpu), priority=priority, created=created))
        durations[f"ns/w{i}"] = None if duration is None else float(duration)
        if i == len(early) - 1:
            for victim in engine.schedule(0.0).preemptions:
                current = engine.workload(victim.victim)
                assert current is not None
                engine.update_workload(replace(current, admission=None))
    return engine, durations


@SETTINGS
@given(
    quotas=st.lists(queue_quota, min_size=3, max_size=3),
    cohort=st.booleans(),
    preempt=st.booleans(),
    early=st.lists(workload_spec, max_size=8),
    late=st.lists(workload_spec, max_size=10),
)
def test_properties_quota_never_exceeded_and_never_before_now(
    quotas: list[tuple[int, int | None]],
    cohort: bool,
    preempt: bool,
    early: list[tuple[str, int, int, int | None]],
    late: list[tuple[str, int, int, int | None]],
) -> None:
    engine, durations = scenario(quotas, cohort, preempt, early, late)
    result = forecast(fork(engine), 10.0, durations, check=no_overrun)
    for estimate in result.estimates.values():
        assert estimate.start is None or estimate.start >= 10.0
    # fits with nothing ahead -> now: a fresh engine where the workload alone fits
    if late:
        queue, cpu, priority, duration = late[0]
        alone = build([(8, None)] * 3, cohort, preempt)
        alone.add_workload(wl("solo", queue, str(cpu), priority=priority))
        only = forecast(alone, 10.0, {"ns/solo": None if duration is None else float(duration)})
        assert only.estimates["ns/solo"].start == 10.0
        assert only.estimates["ns/solo"].position == 0


def replay(
    engine: AdmissionEngine, now: float, durations: dict[str, float | None], arrivals: Sequence[Arrival] = ()
) -> dict[str, float]:
    """What happens when every workload runs exactly its duration (and ``arrivals``, in order, are
    submitted at their times): admission time per workload."""
    durations = {**durations, **{a.workload.key: a.duration for a in arrivals}}
    coming = list(arrivals)
    ends: list[tuple[float, str]] = []
    end_of: dict[str, float] = {}
    admitted: dict[str, float] = {}
    for key, duration in durations.items():
        current = engine.workload(key)
        if current is not None and current.admission is not None and duration is not None:
            end_of[key] = max(now, current.admission.admitted_at + duration)
            heapq.heappush(ends, (end_of[key], key))
    t = now
    while True:
        for _ in range(8):
            result = engine.schedule(t)
            for key in result.admissions:
                admitted.setdefault(key, t)
                if durations.get(key) is not None:
                    end_of[key] = t + (durations[key] or 0.0)
                    heapq.heappush(ends, (end_of[key], key))
            victims = [p.victim for p in result.preemptions]
            for victim in victims:
                end_of.pop(victim, None)
                current = engine.workload(victim)
                assert current is not None
                engine.update_workload(replace(current, admission=None))
            if not victims:
                break
        while ends and end_of.get(ends[0][1]) != ends[0][0]:
            heapq.heappop(ends)
        if not ends and not coming:
            return admitted
        t = min(ends[0][0] if ends else math.inf, coming[0].at if coming else math.inf)
        while ends and ends[0][0] == t:
            _, key = heapq.heappop(ends)
            if end_of.get(key) == t:
                del end_of[key]
                engine.remove_workload(key)
        while coming and coming[0].at <= t:
            engine.add_workload(coming.pop(0).workload)


arrival_spec = st.tuples(
    st.sampled_from(["lq-a", "lq-b", "lq-c"]),
    st.integers(1, 5),  # cpu
    st.integers(0, 2),  # priority
    st.integers(1, 60),  # duration
    st.integers(0, 80),  # submitted this long after now
)


def arrivals_of(specs: list[tuple[str, int, int, int, int]], now: float) -> list[Arrival]:
    """Expected arrivals from their specs, in order of time."""
    timed = sorted((now + after, i, queue, cpu, priority, duration)
                   for i, (queue, cpu, priority, duration, after) in enumerate(specs))  # fmt: skip
    return [
        Arrival(at, wl(f"new{i}", queue, str(cpu), priority=priority, created=at), float(duration))
        for at, i, queue, cpu, priority, duration in timed
    ]


@SETTINGS
@given(
    quotas=st.lists(queue_quota, min_size=3, max_size=3),
    cohort=st.booleans(),
    preempt=st.booleans(),
    early=st.lists(workload_spec, max_size=8),
    late=st.lists(workload_spec, max_size=10),
    coming=st.lists(arrival_spec, max_size=8),
)
def test_property_exact_durations_and_arrivals_give_the_replayed_admission(
    quotas: list[tuple[int, int | None]],
    cohort: bool,
    preempt: bool,
    early: list[tuple[str, int, int, int | None]],
    late: list[tuple[str, int, int, int | None]],
    coming: list[tuple[str, int, int, int, int]],
) -> None:
    """With exact durations the forecast is exact: the earliest start (no arrivals) is when a
    replay admits every pending workload; the expected start too, given its arrivals: a replay that
    submits them at their times admits every pending workload when the forecast says; the
    arrivals get no estimate."""
    engine, durations = scenario(quotas, cohort, preempt, early, late)
    pending = [k for k in durations if engine.admission(k) is None]
    earliest = forecast(fork(engine), 10.0, durations, resolution=0.0, min_step=0.0)
    without = replay(fork(engine), 10.0, durations)
    for key in pending:
        assert earliest.estimates[key].start == without.get(key), key
    arrivals = arrivals_of(coming, 10.0)
    result = forecast(fork(engine), 10.0, durations, resolution=0.0, min_step=0.0, arrivals=arrivals,
                      check=no_overrun)  # fmt: skip
    actual = replay(fork(engine), 10.0, durations, arrivals)
    assert set(result.estimates) == set(pending)
    for key in pending:
        assert result.estimates[key].start == actual.get(key), key


def test_fork_shares_frozen_values_and_nothing_mutable() -> None:
    """The fork shares the frozen workload values with the original (the cheap copy) and nothing
    that the simulation changes: finishing and admitting in the fork leaves the original as it was."""
    engine = engine_with(cq("a", {"default": {"cpu": ("2",)}}))
    for i in range(3):
        engine.add_workload(wl(f"w{i}", "lq-a", "2", created=float(i)))
    engine.schedule(0.0)
    copy = fork(engine)
    assert copy.workload("ns/w1") is engine.workload("ns/w1")
    result = forecast(copy, 0.0, {f"ns/w{i}": 10.0 for i in range(3)})
    assert [result.estimates[f"ns/w{i}"].start for i in (1, 2)] == [10.0, 20.0]
    assert engine.admission("ns/w0") is not None and engine.admission("ns/w1") is None
    assert engine.pending_order("a") == ["ns/w1", "ns/w2"]


@SETTINGS
@given(
    quotas=st.lists(queue_quota, min_size=3, max_size=3),
    cohort=st.booleans(),
    early=st.lists(workload_spec, max_size=8),
    late=st.lists(workload_spec, max_size=10),
)
# found by hypothesis: in a cohort the round of preemptions carried out 0.42 s later lets w5 (known
# run time, waiting behind workloads of unknown run time in the exact forecast: no bound) in at
# 41 s, ahead of w2 (lower priority), which then starts at 48 s instead of 40 s
@example(
    quotas=[(0, None), (5, None), (1, None)],
    cohort=True,
    early=[("lq-a", 1, 0, None)] * 3 + [("lq-b", 1, 0, None), ("lq-b", 4, 0, 16)],
    late=[("lq-a", 3, 1, 7), ("lq-b", 2, 0, 25), ("lq-b", 1, 0, 15), ("lq-b", 2, 0, 9)],
)
def test_property_rounding_and_deferred_preemption_stay_within_the_resolution(
    quotas: list[tuple[int, int | None]],
    cohort: bool,
    early: list[tuple[str, int, int, int | None]],
    late: list[tuple[str, int, int, int | None]],
) -> None:
    """With preemption on: releasing ends per step and carrying out a round of preemptions at the
    next moment (both within the resolution) keeps every bounded estimate near the exact one, as
    long as the two forecasts make the same decisions. When they do not (another workload gets a
    bound: the later round let it in first, see the example), the estimates behind it move by its
    run time, which no resolution bounds: such inputs are outside this property (the quota and
    "never before now" still hold there, checked by the property above for any resolution)."""
    engine, durations = scenario(quotas, cohort, True, early, late)
    exact = forecast(fork(engine), 10.0, durations, resolution=0.0, min_step=0.0)
    rounded = forecast(fork(engine), 10.0, durations, resolution=0.02, min_step=0.0)
    bounded = {k for k, e in exact.estimates.items() if e.start is not None}
    if bounded != {k for k, e in rounded.estimates.items() if e.start is not None}:
        return  # different decisions: outside what the resolution bounds (quota: the property above)
    for key, estimate in exact.estimates.items():
        got = rounded.estimates[key].start
        if estimate.start is None or got is None:
            continue
        assert abs(got - estimate.start) <= 0.25 * (estimate.start - 10.0), key
