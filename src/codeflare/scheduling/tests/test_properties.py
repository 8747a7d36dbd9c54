"""Property-based tests over random arrivals, finishes, deletions, priority and quota changes."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeflare.k8s.quantity import milli_value
from codeflare.scheduling import (
    AdmissionEngine,
    BorrowWithinCohort,
    ClusterQueue,
    FlavorQuotas,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    SchedulingResult,
    Workload,
)

FLAVORS = ("f1", "f2")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class QueueSpec:
    cohort: str | None
    quotas: tuple[tuple[int, int | None, int | None], ...]  # per flavor: nominal, borrow, lend
    strategy: str
    within: str
    reclaim: str
    bwc: str


queue_specs = st.builds(
    QueueSpec,
    cohort=st.sampled_from([None, "c1", "c1", "c2"]),
    quotas=st.tuples(
        *[
            st.tuples(
                st.integers(0, 6),
                st.one_of(st.none(), st.integers(0, 4)),
                st.one_of(st.none(), st.integers(0, 4)),
            )
            for _ in FLAVORS
        ]
    ),
    strategy=st.sampled_from(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"]),
    within=st.sampled_from(["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
    reclaim=st.sampled_from(["Never", "LowerPriority", "Any"]),
    bwc=st.sampled_from(["Never", "LowerPriority"]),
)

arrival = st.tuples(
    st.just("arrive"), st.integers(0, 3), st.sampled_from(["500m", "1", "2", "3", "4"]), st.integers(0, 3)
)
operations = st.lists(
    st.one_of(
        arrival,
        arrival,
        arrival,
        st.tuples(st.just("finish"), st.integers(0, 50)),
        st.tuples(st.just("delete"), st.integers(0, 50)),
        st.tuples(st.just("priority"), st.integers(0, 50), st.integers(0, 3)),
        st.tuples(st.just("quota"), st.integers(0, 3), st.integers(0, 1), st.integers(0, 8)),
        st.tuples(
            st.just("tick"),
        ),
    ),
    min_size=8,
    max_size=40,
)


def build_queue(index: int, spec: QueueSpec, nominal_override: dict[tuple[int, int], int]) -> ClusterQueue:
    flavors = []
    for f, (nominal, borrow, lend) in enumerate(spec.quotas):
        nominal = nominal_override.get((index, f), nominal)
        in_cohort = spec.cohort is not None
        flavors.append(
            FlavorQuotas(
                FLAVORS[f],
                (
                    ResourceQuota(
                        "cpu",
                        str(nominal),
                        str(borrow) if in_cohort and borrow is not None else None,
                        str(min(lend, nominal)) if in_cohort and lend is not None else None,
                    ),
                ),
            )
        )
    return ClusterQueue(
        f"cq{index}",
        (ResourceGroup(("cpu",), tuple(flavors)),),
        cohort=spec.cohort,
        queueing_strategy=spec.strategy,  # type: ignore[arg-type]
        preemption=Preemption(spec.within, spec.reclaim, BorrowWithinCohort(spec.bwc)),  # type: ignore[arg-type]
    )


class Simulation:
    """Drives an engine through operations and checks invariants after every cycle."""

    def __init__(self, specs: list[QueueSpec], reverse: bool = False, budget: int | None = None) -> None:
        self.specs = specs
        self.budget = budget  # admissions per schedule() call; a cycle calls until nothing is left
        self.engine = AdmissionEngine(backoff_time=3.0)
        self.overrides: dict[tuple[int, int], int] = {}
        order = list(range(len(specs)))
        for flavor in reversed(FLAVORS) if reverse else FLAVORS:
            self.engine.add_resource_flavor(ResourceFlavor(flavor))
        for i in reversed(order) if reverse else order:
            self.engine.add_cluster_queue(build_queue(i, specs[i], self.overrides))
            self.engine.add_local_queue(LocalQueue("ns", f"lq{i}", f"cq{i}"))
        self.now = 0.0
        self.serial = 0
        self.to_evict: list[str] = []
        self.trace: list[tuple] = []

    def keys(self, admitted: bool | None) -> list[str]:
        out = []
        for key in sorted(self.engine.state.cache.workloads):
            is_admitted = self.engine.admission(key) is not None
            if admitted is None or admitted == is_admitted:
                out.append(key)
        return out

    def apply(self, op: tuple) -> None:
        for key in self.to_evict:
            workload = self.engine.workload(key)
            if workload is not None and workload.admission is not None:
                self.engine.update_workload(replace(workload, admission=None))
        self.to_evict = []
        kind = op[0]
        if kind == "arrive":
            _, q, cpu, prio = op
            q %= len(self.specs)
            self.serial += 1
            pod_sets = (PodSet("main", 1, {"cpu": cpu}),)
            self.engine.add_workload(Workload("ns", f"w{self.serial:03}", f"lq{q}", pod_sets, prio, self.now))
        elif kind in ("finish", "delete", "priority"):
            keys = self.keys(True if kind == "finish" else (False if kind == "priority" else None))
            if keys:
                key = keys[op[1] % len(keys)]
                if kind == "priority":
                    self.engine.update_workload(replace(self.engine.workload(key), priority=op[2]))
                else:
                    self.engine.remove_workload(key)
        elif kind == "quota":
            q = op[1] % len(self.specs)
            self.overrides[(q, op[2])] = op[3]
            self.engine.update_cluster_queue(build_queue(q, self.specs[q], self.overrides))
        self.now += 1.0

    def cycle(self) -> SchedulingResult:
        before = set(self.engine.quota_violations())
        snapshot = {k: self.engine.workload(k) for k in self.keys(True)}
        result = self.schedule(snapshot)
        # usage only grows within a cycle, so a queue not borrowing now was not borrowing then
        usage = self.engine.state.cache.book.usage
        usage_after = {f"cq{i}": dict(usage.get(f"cq{i}", {})) for i in range(len(self.specs))}
        after = set(self.engine.quota_violations())
        assert after <= before, f"new quota violations: {after - before}"
        self.check_preemptions(result, snapshot, usage_after)
        self.to_evict.extend(p.victim for p in result.preemptions)
        self.to_evict.extend(e.workload for e in result.evictions)
        self.trace.append(
            (
                self.now,
                sorted((k, a.cluster_queue, tuple(p.flavors["cpu"] for p in a.pod_set_assignments))
                       for k, a in result.admissions.items()),
                [(p.victim, p.reason, p.preemptor) for p in result.preemptions],
                sorted((k, v.message, v.requeue_at) for k, v in result.pending.items()),
            )
        )  # fmt: skip
        return result

    def schedule(self, admitted: dict[str, Workload | None]) -> SchedulingResult:
        """One ``schedule(now)``, or with a budget the calls it takes to finish, as one result;
        ``admitted`` gains what each call admits (a later call, like Kueue's next cycle, may
        preempt it)."""
        result = self.engine.schedule(self.now, self.budget)
        while result.unfinished:
            assert self.budget is not None and len(result.admissions) >= self.budget
            admitted.update((k, self.engine.workload(k)) for k in result.admissions)
            more = self.engine.schedule(self.now, self.budget)
            result.admissions.update(more.admissions)
            result.preemptions.extend(more.preemptions)
            result.evictions.extend(more.evictions)
            result.pending.update(more.pending)
            result.unfinished, result.next_wakeup = more.unfinished, more.next_wakeup
        return result

    def check_preemptions(self, result: SchedulingResult, admitted: dict, usage: dict) -> None:
        for p in result.preemptions:
            victim, preemptor = admitted[p.victim], self.engine.workload(p.preemptor)
            assert victim is not None and preemptor is not None
            own_cq = self.engine.state.cache.cqs[f"cq{int(preemptor.queue_name[2:])}"]
            policy = own_cq.preemption
            if p.reason == "InClusterQueue":
                assert p.cluster_queue == own_cq.name
                assert policy.within_cluster_queue != "Never"
                newer_equal = (
                    victim.priority == preemptor.priority and victim.creation_time > preemptor.creation_time
                )
                if policy.within_cluster_queue == "LowerPriority":
                    assert victim.priority < preemptor.priority
                else:
                    assert victim.priority < preemptor.priority or newer_equal
            else:
                assert p.cluster_queue != own_cq.name and own_cq.cohort is not None
                victim_cq = self.engine.state.cache.cqs[p.cluster_queue]
                assert victim_cq.cohort == own_cq.cohort
                nominal = {
                    (fq.name, rq.name): milli_value(rq.nominal_quota)
                    for g in victim_cq.resource_groups
                    for fq in g.flavors
                    for rq in fq.resources
                }
                used = usage[p.cluster_queue]
                assert any(used.get(fr, 0) > n for fr, n in nominal.items()), (
                    "victim's queue was not borrowing"
                )
                if p.reason == "InCohortReclamation":
                    assert policy.reclaim_within_cohort == "Any" or (
                        policy.reclaim_within_cohort == "LowerPriority"
                        and victim.priority < preemptor.priority
                    )
                else:
                    assert policy.borrow_within_cohort.policy == "LowerPriority"
                    assert victim.priority < preemptor.priority

    def check_work_conserving(self) -> None:
        """No pending workload of a BestEffortFIFO queue fits in its queue's free nominal quota."""
        book = self.engine.state.cache.book
        for key in self.keys(False):
            workload = self.engine.workload(key)
            assert workload is not None
            queue = self.engine.state.manager.cluster_queue_of(key)
            if queue is None or self.engine.state.cache.cqs[queue].queueing_strategy != "BestEffortFIFO":
                continue
            reason = self.engine.pending_reason(key)
            if reason is not None and reason.message.startswith("quota is held for"):
                continue  # promised to a higher-ranked preemptor whose victims are leaving
            request = workload.pod_sets[0].requests["cpu"].milli
            for flavor in FLAVORS:
                fr = (flavor, "cpu")
                free_nominal = book.queues[queue].nominal[fr] - book.usage[queue].get(fr, 0)
                fits = request <= free_nominal and request <= book.available(queue, fr)
                assert not fits, (
                    f"{key} fits {flavor} in {queue} but is pending: {self.engine.pending_reason(key)}"
                )


def run(
    specs: list[QueueSpec],
    ops: list[tuple],
    reverse: bool = False,
    conserving: bool = False,
    budget: int | None = None,
) -> list[tuple]:
    sim = Simulation(specs, reverse, budget)
    sim.cycle()
    for op in ops:
        sim.apply(op)
        sim.cycle()
        if conserving:
            sim.check_work_conserving()
    return sim.trace


@SETTINGS
@given(st.lists(queue_specs, min_size=1, max_size=4), operations)
def test_quota_is_never_exceeded_and_preemption_respects_policy(
    specs: list[QueueSpec], ops: list[tuple]
) -> None:
    run(specs, ops)


@SETTINGS
@given(st.lists(queue_specs, min_size=1, max_size=4), operations)
def test_decisions_are_deterministic(specs: list[QueueSpec], ops: list[tuple]) -> None:
    assert run(specs, ops) == run(specs, ops, reverse=True)


@SETTINGS
@given(st.lists(queue_specs, min_size=1, max_size=4), operations)
def test_best_effort_fifo_admits_whatever_fits_in_free_nominal_quota(
    specs: list[QueueSpec], ops: list[tuple]
) -> None:
    run(specs, ops, conserving=True)


@SETTINGS
@given(st.lists(queue_specs, min_size=1, max_size=4), operations, st.integers(1, 3))
def test_a_budget_keeps_every_invariant(specs: list[QueueSpec], ops: list[tuple], budget: int) -> None:
    """``schedule(now, budget)`` stops between two rounds (the operator's scheduling loop decides
    no further ahead of its writes than its client can write soon); called until nothing is
    left, quota still holds, preemption respects the policies, a BestEffortFIFO queue leaves
    nothing pending that fits its free nominal quota, and the decisions are deterministic. They
    need not equal one call's: where preemptions and admissions meet at one moment, a split can
    change the victims a preemption picks (12 of the 75 long random sequences below, budgets 1-3,
    differ somewhere from the unsplit run; the invariants hold in all)."""
    trace = run(specs, ops, conserving=True, budget=budget)
    assert trace == run(specs, ops, reverse=True, budget=budget)


def random_scenario(seed: int) -> tuple[list[QueueSpec], list[tuple]]:
    """Longer, busier sequences than hypothesis tends to draw (many arrivals, preemption on)."""
    rng = random.Random(seed)
    specs = [
        QueueSpec(
            rng.choice([None, "c1", "c1"]),
            tuple((rng.randint(1, 6), rng.choice([None, 2, 4]), rng.choice([None, 1, 3])) for _ in FLAVORS),
            rng.choice(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"]),
            rng.choice(["LowerPriority", "LowerOrNewerEqualPriority", "Never"]),
            rng.choice(["Any", "LowerPriority", "Never"]),
            rng.choice(["LowerPriority", "Never"]),
        )
        for _ in range(rng.randint(2, 4))
    ]
    ops: list[tuple] = []
    for _ in range(150):
        roll = rng.random()
        if roll < 0.5:
            ops.append(("arrive", rng.randrange(4), rng.choice(["500m", "1", "2", "3"]), rng.randrange(4)))
        elif roll < 0.75:
            ops.append(("finish", rng.randrange(50)))
        elif roll < 0.82:
            ops.append(("delete", rng.randrange(50)))
        elif roll < 0.9:
            ops.append(("priority", rng.randrange(50), rng.randrange(4)))
        elif roll < 0.95:
            ops.append(("quota", rng.randrange(4), rng.randrange(2), rng.randint(0, 8)))
        else:
            ops.append(("tick",))
    return specs, ops


@pytest.mark.parametrize("seed", range(25))
def test_long_random_sequences_keep_every_invariant(seed: int) -> None:
    specs, ops = random_scenario(seed)
    trace = run(specs, ops, conserving=True)
    assert trace == run(specs, ops, reverse=True)
    budgeted = run(specs, ops, conserving=True, budget=1 + seed % 3)
    assert budgeted == run(specs, ops, reverse=True, budget=1 + seed % 3)
