"""Admission fair sharing: Kueue's own unit cases, as data, run against the engine.

Sources (kubernetes-sigs/kueue v0.14.8, commit 2f2a452):
``pkg/controller/core/localqueue_controller_test.go`` TestLocalQueueReconcile (the decay of a
LocalQueue's consumed resources), ``pkg/cache/queue/cluster_queue_test.go`` TestFsAdmission (which
workload a ranked ClusterQueue tries first), ``pkg/scheduler/scheduler_afs_test.go``
TestScheduleForAFS (whole cycles), ``pkg/scheduler/preemption/preemption_test.go``
TestCandidatesOrdering (victim order). Where we follow a later Kueue on purpose it is said at the
case.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling import (
    Admission,
    AdmissionEngine,
    ClusterQueue,
    FlavorQuotas,
    LocalQueue,
    PodSet,
    PodSetAssignment,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from codeflare.scheduling.afs import USAGE_BASED, UsageLedger, alpha
from codeflare.scheduling.cycle import _with_sticky
from codeflare.scheduling.forecast import forecast, fork
from codeflare.scheduling.model import AdmissionFairSharing
from codeflare.scheduling.preemption import AdmittedWorkload, victim_of
from codeflare.scheduling.queues import ShapeClass

NOW = 1_000_000.0
MIN = 60.0


def _queue(name: str, quotas: dict[str, dict[str, str]], **spec: object) -> ClusterQueue:
    """One resource group covering every resource named, one flavor per ``quotas`` key."""
    resources = tuple(sorted({r for per in quotas.values() for r in per}))
    flavors = tuple(
        FlavorQuotas(f, tuple(ResourceQuota(r, per.get(r, "0")) for r in resources))
        for f, per in quotas.items()
    )
    return ClusterQueue(name, (ResourceGroup(resources, flavors),), **spec)  # type: ignore[arg-type]


def _engine(
    config: AdmissionFairSharing | None, *queues: ClusterQueue, lqs: dict[str, tuple[str, float | None]]
) -> AdmissionEngine:
    engine = AdmissionEngine(admission_fair_sharing=config)
    for flavor in sorted({f.name for q in queues for g in q.resource_groups for f in g.flavors}):
        engine.add_resource_flavor(ResourceFlavor(flavor))
    for queue in queues:
        engine.add_cluster_queue(queue)
    for lq, (cq, weight) in lqs.items():
        engine.add_local_queue(LocalQueue("default", lq, cq, weight))
    return engine


def _workload(name: str, lq: str, created: float = 0.0, priority: int = 0, **requests: str) -> Workload:
    return Workload("default", name, lq, (PodSet("main", 1, requests),), priority, created)  # type: ignore[arg-type]


def _running(name: str, lq: str, cq: str, flavor: str, **requests: str) -> Workload:
    """An admitted workload using ``requests`` of ``flavor``."""
    usage = {r: Quantity.parse(v) for r, v in requests.items()}
    assignment = PodSetAssignment("main", {r: flavor for r in requests}, usage, 1)
    return Workload(
        "default", name, lq, (PodSet("main", 1, requests),), admission=Admission(cq, (assignment,), NOW - MIN)
    )  # type: ignore[arg-type]


def _consumed(engine: AdmissionEngine, lq: str) -> dict[str, str]:
    usage = engine.local_queue_usage("default", lq)
    assert usage is not None
    return {r: str(q) for r, q in usage.consumed.items()}


# -- TestLocalQueueReconcile: the decay --------------------------------------------------------------
# (half-life, sampling interval, consumed before and how long ago, running (flavor, resource, amount),
#  consumed after); the LocalQueue points at ClusterQueue "cq" with flavors rf-1..rf-3
DECAY = {
    "decays if there is no running workloads": (5 * MIN, 5 * MIN, {"cpu": "8"}, 5 * MIN, [], {"cpu": "4"}),
    "sums the previous state and running workloads": (
        5 * MIN, 5 * MIN, {"cpu": "8"}, 5 * MIN, [("rf-1", "cpu", "4")], {"cpu": "6"},
    ),
    "sums the usage from different flavors and resources": (
        5 * MIN, 5 * MIN, {"cpu": "8", "example.com/gpu": "16"}, 5 * MIN,
        [("rf-1", "cpu", "2"), ("rf-2", "cpu", "2"), ("rf-3", "example.com/gpu", "4")],
        {"cpu": "6", "example.com/gpu": "10"},
    ),
    "half time twice larger than sampling": (
        10 * MIN, 5 * MIN, {"cpu": "8"}, 5 * MIN, [("rf-1", "cpu", "4")], {"cpu": "6827m"},
    ),
    "with long half time": (24 * 60 * MIN, 5 * MIN, {"cpu": "8"}, 5 * MIN, [], {"cpu": "7980m"}),
    "running GPU workloads half time twice larger than sampling": (
        10 * MIN, 5 * MIN, {"example.com/gpu": "8"}, 5 * MIN, [("rf-3", "example.com/gpu", "4")],
        {"example.com/gpu": "6827m"},
    ),
    "resets to 0 when half life is 0": (
        0.0, 5 * MIN, {"example.com/gpu": "8"}, 5 * MIN, [("rf-3", "example.com/gpu", "4")], {},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(DECAY))
def test_local_queue_usage_decays_as_kueue_reconciles(case: str) -> None:
    half_life, interval, before, ago, running, after = DECAY[case]
    quotas = {f: {"cpu": "100", "example.com/gpu": "100"} for f in ("rf-1", "rf-2", "rf-3")}
    engine = _engine(AdmissionFairSharing(half_life, interval), _queue("cq", quotas), lqs={"lq": ("cq", 1.0)})
    for i, (flavor, resource, amount) in enumerate(running):
        engine.add_workload(_running(f"run-{i}", "lq", "cq", flavor, **{resource: amount}))
    engine.seed_local_queue_usage(
        "default", "lq", {r: Quantity.parse(v) for r, v in before.items()}, NOW - ago
    )
    sampled = engine.sample_local_queue_usage(NOW)
    assert list(sampled) == [("default", "lq")]
    assert {r: str(q) for r, q in sampled[("default", "lq")].consumed.items()} == after
    assert sampled[("default", "lq")].last_update == NOW


def test_usage_is_not_sampled_before_the_interval() -> None:
    """ "is not reconciled if not enough time has passed": unchanged, next sample one minute on."""
    engine = _engine(
        AdmissionFairSharing(5 * MIN, 5 * MIN), _queue("cq", {"rf-1": {"cpu": "10"}}), lqs={"lq": ("cq", 1.0)}
    )
    engine.seed_local_queue_usage("default", "lq", {"cpu": Quantity.parse("8")}, NOW - 4 * MIN)
    assert engine.sample_local_queue_usage(NOW) == {}
    assert _consumed(engine, "lq") == {"cpu": "8"}
    assert engine.next_usage_sample(NOW) == NOW + MIN


def test_a_new_local_queue_starts_with_empty_usage() -> None:
    """ "uninitialized cache initializes status": empty consumed resources, updated now. Kueue
    v0.14.8 seeds a LocalQueue it has no record of from what it runs now ("captures current
    usage"); v0.17.7+ from its status, else empty (#12891), which we follow: a restart keeps history."""
    engine = _engine(
        AdmissionFairSharing(5 * MIN, 5 * MIN), _queue("cq", {"rf-1": {"cpu": "10"}}), lqs={"lq": ("cq", 1.0)}
    )
    engine.add_workload(_running("run", "lq", "cq", "rf-1", cpu="4"))
    sampled = engine.sample_local_queue_usage(NOW)
    assert sampled[("default", "lq")].consumed == {} and sampled[("default", "lq")].last_update == NOW
    later = engine.sample_local_queue_usage(NOW + 5 * MIN)  # then it decays toward what runs
    assert {r: str(q) for r, q in later[("default", "lq")].consumed.items()} == {"cpu": "2"}


def test_without_admission_fair_sharing_nothing_is_sampled() -> None:
    engine = _engine(None, _queue("cq", {"rf-1": {"cpu": "10"}}), lqs={"lq": ("cq", 1.0)})
    assert engine.sample_local_queue_usage(NOW) == {}
    assert engine.local_queue_usage("default", "lq") is None
    assert engine.next_usage_sample(NOW) is None


# -- TestFsAdmission: which workload a ranked queue tries first ---------------------------------------
# (admission mode, resource weights or None for no config, LocalQueue weights, consumed, workloads
#  (name, LocalQueue, priority), the first in queue order)
ORDER = {
    "workloads are ordered by LQ usage, instead of priorities": (
        USAGE_BASED, {}, {"lqA": 1.0, "lqB": 1.0}, {"lqA": {"cpu": "2"}, "lqB": {"cpu": "1"}},
        [("wlA-high", "lqA", 2), ("wlB-low", "lqB", 1)], "wlB-low",
    ),
    "workloads are ordered by LQ usage with respect to resource weights": (
        USAGE_BASED, {"cpu": 0.0, "example.com/gpu": 1.0}, {"lqA": 1.0, "lqB": 1.0},
        {"lqA": {"cpu": "1", "example.com/gpu": "10"}, "lqB": {"cpu": "1000", "example.com/gpu": "1"}},
        [("wlA-high", "lqA", 2), ("wlB-low", "lqB", 1)], "wlB-low",
    ),
    "workloads are ordered by LQ usage with respect to LQs' fair sharing weights": (
        USAGE_BASED, {}, {"lqA": 1.0, "lqB": 2.0}, {"lqA": {"cpu": "10"}, "lqB": {"cpu": "6"}},
        [("wlA-high", "lqA", 2), ("wlB-low", "lqB", 1)], "wlB-low",
    ),
    "workloads with the same LQ usage are ordered by priority": (
        USAGE_BASED, {}, {"lqA": 1.0}, {"lqA": {"cpu": "10"}},
        [("wlA-low", "lqA", 1), ("wlA-high", "lqA", 2)], "wlA-high",
    ),
    "workloads with NoFairSharing CQ are ordered by priority": (
        "NoAdmissionFairSharing", {}, {"lqA": 1.0}, {},
        [("wlA-low", "lqA", 1), ("wlA-high", "lqA", 2)], "wlA-high",
    ),
    "workloads with no FS config are ordered by priority": (
        "NoAdmissionFairSharing", None, {"lqA": 1.0}, {},
        [("wlA-low", "lqA", 1), ("wlA-high", "lqA", 2)], "wlA-high",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ORDER))
def test_ranked_queue_tries_first_as_kueue(case: str) -> None:
    mode, weights, lq_weights, consumed, workloads, first = ORDER[case]
    config = None if weights is None else AdmissionFairSharing(MIN, MIN, weights)
    queue = _queue("cq", {"default": {"cpu": "0", "example.com/gpu": "0"}}, admission_mode=mode)
    engine = _engine(config, queue, lqs={lq: ("cq", w) for lq, w in lq_weights.items()})
    for lq, values in consumed.items():
        engine.seed_local_queue_usage("default", lq, {r: Quantity.parse(v) for r, v in values.items()}, NOW)
    for name, lq, priority in workloads:
        engine.add_workload(_workload(name, lq, priority=priority, cpu="1"))
    order = engine.pending_order("cq")
    assert order is not None and order[0] == f"default/{first}"


def test_switching_admission_mode_reorders_the_pending_workloads() -> None:
    config = AdmissionFairSharing(MIN, MIN)
    engine = _engine(
        config, _queue("cq", {"default": {"cpu": "0"}}), lqs={"lqA": ("cq", None), "lqB": ("cq", None)}
    )
    engine.seed_local_queue_usage("default", "lqA", {"cpu": Quantity.parse("2")}, NOW)
    engine.add_workload(_workload("wlA-high", "lqA", priority=2, cpu="1"))
    engine.add_workload(_workload("wlB-low", "lqB", priority=1, cpu="1"))
    assert engine.pending_order("cq") == ["default/wlA-high", "default/wlB-low"]
    engine.update_cluster_queue(_queue("cq", {"default": {"cpu": "0"}}, admission_mode=USAGE_BASED))
    assert engine.pending_order("cq") == ["default/wlB-low", "default/wlA-high"]


# -- TestScheduleForAFS: whole cycles ----------------------------------------------------------------
# half-life 10 s, sampling 1 s (alpha 0.067: the entry penalty of 4 cpu is 267m); (AFS on, consumed,
# workloads (name, LocalQueue, cpu, created), admitted, pending)
CYCLES = {
    "admits workload from less active localqueue": (
        True, {"lq-a": "8", "lq-b": "2"}, [("wl-a1", "lq-a", "8", 0.0), ("wl-b1", "lq-b", "8", 1.0)],
        {"wl-b1"}, {"wl-a1"},
    ),
    "without AFS: classic admission decision ignores queue usage": (
        False, {"lq-a": "8", "lq-b": "2"}, [("wl-a1", "lq-a", "8", 0.0), ("wl-b1", "lq-b", "8", 1.0)],
        {"wl-a1"}, {"wl-b1"},
    ),
    "admits one workload from each localqueue when quota is limited": (
        True, {"lq-a": "4", "lq-b": "4"},
        [("wl-a1", "lq-a", "4", 0.0), ("wl-a2", "lq-a", "4", 1.0),
         ("wl-b1", "lq-b", "4", 2.0), ("wl-b2", "lq-b", "4", 3.0)],
        {"wl-a1", "wl-b1"}, {"wl-a2", "wl-b2"},
    ),
    "schedules normally when queues have equal usage": (
        True, {"lq-a": "2", "lq-b": "2", "lq-c": "2"},
        [("wl-a1", "lq-a", "4", 0.0), ("wl-b1", "lq-b", "3", 0.0), ("wl-c1", "lq-c", "1", 0.0)],
        {"wl-a1", "wl-b1", "wl-c1"}, set(),
    ),
    "admits workload from lq-b with uninitialized cache": (
        True, {"lq-a": "8"}, [("wl-a1", "lq-a", "8", 0.0), ("wl-b1", "lq-b", "8", 1.0)], {"wl-b1"}, {"wl-a1"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CYCLES))
def test_cycle_admits_as_kueue(case: str) -> None:
    on, consumed, workloads, admitted, pending = CYCLES[case]
    config = AdmissionFairSharing(10.0, 1.0) if on else None
    queue = _queue("cq1", {"default": {"cpu": "8", "memory": "8Gi"}}, admission_mode=USAGE_BASED)
    engine = _engine(config, queue, lqs={lq: ("cq1", 1.0) for lq in ("lq-a", "lq-b", "lq-c")})
    for lq, cpu in consumed.items():
        engine.seed_local_queue_usage("default", lq, {"cpu": Quantity.parse(cpu)}, NOW)
    for name, lq, cpu, created in workloads:
        engine.add_workload(_workload(name, lq, NOW + created, cpu=cpu))
    result = engine.schedule(NOW + 5)
    assert {k.split("/")[1] for k in result.admissions} == admitted
    assert {k.split("/")[1] for k in result.pending} == pending
    for key in result.pending:  # Kueue: "insufficient unused quota for cpu in flavor default, N more
        # needed"; ours names the same shortfall in the engine's words (docs/conformance/engine.md)
        assert result.pending[key].kind == "QuotaShortfall"
        assert "for cpu in flavor default" in result.pending[key].message


def test_the_entry_penalty_is_alpha_of_the_sampling_interval_times_the_requests() -> None:
    """TestScheduleForAFS's arithmetic: half-life 10 s, sampling 1 s, 4 cpu -> 267m."""
    assert int(4000 * alpha(1.0, 10.0)) == 267
    ledger = UsageLedger(AdmissionFairSharing(10.0, 1.0))
    ledger.admit(("default", "lq-a"), {"cpu": 4000}, NOW)
    assert ledger.usage(("default", "lq-a")).consumed == {"cpu": Quantity(267)}


# -- TestCandidatesOrdering ---------------------------------------------------------------------------
def _candidate(key: str, priority: int, cq: str, lq: str) -> AdmittedWorkload:
    return AdmittedWorkload(
        key, priority, 0.0, NOW, cq, {("default", "cpu"): 1000}, local_queue=("default", lq)
    )


def test_victims_of_a_ranked_queue_come_from_the_busiest_local_queue_first() -> None:
    """ "workloads with higher LQ usage first": the busier LocalQueue's workload first despite its
    higher priority; "workloads from different CQ are sorted based on priority and timestamp":
    usage is never compared across ClusterQueues."""
    ledger = UsageLedger(AdmissionFairSharing(MIN, MIN), ranked_queues={"preemptor", "different_cq"})
    for lq, cpu in (("low_usage_lq", "100m"), ("mid_usage_lq", "500m"), ("high_usage_lq", "1")):
        ledger.seed(("default", lq), {"cpu": Quantity.parse(cpu)}, NOW)
    low = _candidate("low_lq_usage", 1, "preemptor", "low_usage_lq")
    mid = _candidate("mid_lq_usage", 10, "preemptor", "mid_usage_lq")
    other = _candidate("high_lq_usage_different_cq", 1, "different_cq", "high_usage_lq")
    # the classic order (lower priority first) and then admission fair sharing's
    assert ledger.reorder_victims([low, mid], victim_of) == [mid, low]
    assert ledger.reorder_victims([other, mid], victim_of) == [other, mid]


def test_reclaim_preempts_from_the_local_queue_with_higher_recent_usage() -> None:
    """fair_sharing_test.go "Using AdmissionFairSharing at Cohort level / should preempt a workload
    from LQ with higher recent usage", at the engine: cq1 (16 cpu, ranked, StrictFIFO) borrows all
    of cq2's 16 for lq-a's 20 cpu (priority 10) and lq-b's 12 (priority 1); cq2's 10 cpu reclaims
    lq-a's workload, whose queue has used more, although lq-b's has the lower priority."""
    cq1 = _queue(
        "cq1",
        {"default": {"cpu": "16"}},
        cohort="all",
        queueing_strategy="StrictFIFO",
        admission_mode=USAGE_BASED,
    )
    cq2 = _queue(
        "cq2", {"default": {"cpu": "16"}}, cohort="all",
        preemption=Preemption(within_cluster_queue="LowerPriority", reclaim_within_cohort="Any"),
    )  # fmt: skip
    lqs: dict[str, tuple[str, float | None]] = {
        "lq-a": ("cq1", 1.0),
        "lq-b": ("cq1", 1.0),
        "lq-c": ("cq2", 1.0),
    }
    engine = _engine(AdmissionFairSharing(1.0, 1.0), cq1, cq2, lqs=lqs)
    engine.add_workload(_workload("high-a", "lq-a", NOW, 10, cpu="20"))
    engine.add_workload(_workload("low-b", "lq-b", NOW + 1, 1, cpu="12"))
    assert len(engine.schedule(NOW + 1).admissions) == 2
    engine.sample_local_queue_usage(NOW + 3)
    assert engine.local_queue_usage("default", "lq-a").consumed["cpu"].milli > 12_000  # type: ignore[union-attr]
    engine.add_workload(_workload("c", "lq-c", NOW + 3, 0, cpu="10"))
    result = engine.schedule(NOW + 3)
    assert [p.victim for p in result.preemptions] == ["default/high-a"]


# -- invariants ---------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["lq-a", "lq-b", "lq-c"]), st.integers(1, 6), st.integers(0, 2)),
        min_size=1, max_size=25,
    ),
    st.lists(st.integers(0, 3), min_size=1, max_size=8),
)  # fmt: skip
def test_ranked_queues_never_exceed_quota_and_keep_priority_order_within_a_local_queue(
    jobs: list[tuple[str, int, int]], finishes: list[int]
) -> None:
    """Whatever arrives and ends: quota holds, the pending order is a permutation of what waits,
    and within one LocalQueue it is by priority then age, as without admission fair sharing."""
    queue = _queue("cq", {"default": {"cpu": "8"}}, admission_mode=USAGE_BASED)
    engine = _engine(
        AdmissionFairSharing(30.0, 5.0), queue, lqs={lq: ("cq", 1.0) for lq in ("lq-a", "lq-b", "lq-c")}
    )
    for i, (lq, cpu, priority) in enumerate(jobs):
        engine.add_workload(_workload(f"w{i}", lq, NOW + i, priority, cpu=str(cpu)))
    t = NOW + len(jobs)
    running: list[str] = []
    for step, count in enumerate(finishes):
        t += 5.0
        engine.sample_local_queue_usage(t)
        running.extend(engine.schedule(t).admissions)
        assert engine.quota_violations() == []
        for key in running[:count]:
            engine.remove_workload(key)
        running = running[count:]
        order = engine.pending_order("cq") or []
        waiting = {f"default/w{i}" for i in range(len(jobs))} - set(running)
        waiting -= {f"default/w{i}" for i in range(len(jobs)) if engine.workload(f"default/w{i}") is None}
        assert sorted(order) == sorted(waiting), step
        for lq in ("lq-a", "lq-b", "lq-c"):
            mine = [k for k in order if engine.workload(k).queue_name == lq]  # type: ignore[union-attr]
            keys = [(-engine.workload(k).priority, engine.workload(k).creation_time) for k in mine]  # type: ignore[union-attr]
            assert keys == sorted(keys)


def test_a_waiting_preemptor_goes_first_only_among_its_usage_rank() -> None:
    """cluster_queue.go queueOrderingFunc: LocalQueue usage, then the sticky (preempting) head, then
    priority and age. Without ranking the sticky head goes first, as before."""
    ledger = UsageLedger(AdmissionFairSharing(MIN, MIN))
    ledger.seed(("default", "busy"), {"cpu": Quantity.parse("8")}, NOW)
    ledger.seed(("default", "idle"), {"cpu": Quantity.parse("1")}, NOW)
    idle = ((0, 2.0, "default/idle-1"), ShapeClass((), local_queue=("default", "idle")))
    busy = ((0, 3.0, "default/busy-1"), ShapeClass((), local_queue=("default", "busy")))
    sticky = ((0, 1.0, "default/busy-0"), ShapeClass((), local_queue=("default", "busy")))
    assert _with_sticky(ledger, [idle, busy], sticky) == [idle, sticky, busy]
    assert _with_sticky(None, [idle, busy], sticky) == [sticky, idle, busy]


def test_the_forecast_follows_the_usage_order() -> None:
    """Estimated starts in a ranked queue: the less busy LocalQueue's workload goes first although
    it is younger, and the other follows when it ends."""
    queue = _queue("cq", {"default": {"cpu": "4"}}, admission_mode=USAGE_BASED)
    engine = _engine(AdmissionFairSharing(MIN, MIN), queue, lqs={"lq-a": ("cq", 1.0), "lq-b": ("cq", 1.0)})
    engine.seed_local_queue_usage("default", "lq-a", {"cpu": Quantity.parse("4")}, NOW)
    engine.add_workload(_running("run", "lq-a", "cq", "default", cpu="4"))
    engine.add_workload(_workload("a1", "lq-a", NOW - 10, cpu="4"))
    engine.add_workload(_workload("b1", "lq-b", NOW - 5, cpu="4"))
    engine.schedule(NOW)
    durations = {"default/run": 10.0, "default/a1": 100.0, "default/b1": 100.0}
    estimates = forecast(fork(engine), NOW, durations).estimates
    # "run" was admitted a minute ago for 10 s: overdue, expected to end now
    assert estimates["default/b1"].start == pytest.approx(NOW)
    assert estimates["default/a1"].start == pytest.approx(NOW + 100.0, abs=3.0)
