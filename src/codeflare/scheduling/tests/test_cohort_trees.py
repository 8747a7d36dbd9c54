"""Hierarchical cohorts and fair sharing: examples from Kueue's documentation, and properties.

The examples follow Kueue's concept pages (site/content/en/docs/concepts/hierarchical_cohorts.md,
fair_sharing.md) and its resource-node rules (pkg/cache/scheduler/resource_node.go): quota
flows up a tree, lending limits keep quota back, borrowing limits cap what a subtree takes, a
cycle makes its queues inactive. The property test drives random trees (cohort quotas, limits,
re-parenting that makes and breaks cycles, quota edits, fair sharing on and off) and checks,
with sums computed here from the specs alone, that no queue or tree is ever charged beyond its
quota by an admission.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeflare.scheduling import (
    AdmissionEngine,
    ClusterQueue,
    Cohort,
    FairSharing,
    FlavorQuotas,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from codeflare.scheduling.results import SchedulingResult


def _groups(cpu: str | None, borrow: str | None = None, lend: str | None = None) -> tuple[ResourceGroup, ...]:
    if cpu is None:
        return ()
    quota = ResourceQuota("cpu", cpu, borrow, lend)
    return (ResourceGroup(("cpu",), (FlavorQuotas("default", (quota,)),)),)


def _engine(fair: bool = False) -> AdmissionEngine:
    engine = AdmissionEngine(backoff_time=1.0, fair_sharing=FairSharing(fair))
    engine.add_resource_flavor(ResourceFlavor("default"))
    return engine


def _queue(engine: AdmissionEngine, name: str, cohort: str | None, cpu: str, **kw: object) -> None:
    borrow, lend = kw.pop("borrow", None), kw.pop("lend", None)
    engine.add_cluster_queue(ClusterQueue(name, _groups(cpu, borrow, lend), cohort=cohort, **kw))  # type: ignore[arg-type]
    engine.add_local_queue(LocalQueue("ns", name, name))


def _submit(engine: AdmissionEngine, name: str, queue: str, cpu: str, at: float = 0.0, prio: int = 0) -> str:
    engine.add_workload(Workload("ns", name, queue, (PodSet("main", 1, {"cpu": cpu}),), prio, at))
    return f"ns/{name}"


def test_a_queue_borrows_from_a_sibling_subtree_through_the_root() -> None:
    engine = _engine()
    engine.add_cohort(Cohort("org"))
    engine.add_cohort(Cohort("research", "org"))
    engine.add_cohort(Cohort("prod", "org"))
    _queue(engine, "vision", "research", "2")
    _queue(engine, "serving", "prod", "6")
    w = _submit(engine, "big", "vision", "7")
    result = engine.schedule(0.0)
    assert result.admissions[w].cluster_queue == "vision"
    assert engine.usage("vision") == {("default", "cpu"): engine.usage("vision")[("default", "cpu")]}
    assert engine.quota_violations() == []
    # nothing more fits anywhere: 8 of 8 are used
    _submit(engine, "more", "serving", "2")
    assert "ns/more" not in engine.schedule(1.0).admissions


def test_cohort_quota_is_a_shared_pool_and_its_lending_limit_keeps_some_back() -> None:
    engine = _engine()
    engine.add_cohort(Cohort("org"))
    # research has a pool of 4 of its own; it lends at most 1 of it to the rest of org
    engine.add_cohort(Cohort("research", "org", _groups("4", lend="1")))
    engine.add_cohort(Cohort("prod", "org"))
    _queue(engine, "vision", "research", "0")
    _queue(engine, "serving", "prod", "0")
    assert _submit(engine, "s1", "serving", "2") not in engine.schedule(0.0).admissions
    s2 = _submit(engine, "s2", "serving", "1")
    assert s2 in engine.schedule(1.0).admissions  # only the lent 1
    v = _submit(engine, "v", "vision", "3")
    assert v in engine.schedule(2.0).admissions  # research keeps 3 for itself
    assert engine.quota_violations() == []


def test_a_borrowing_limit_on_a_cohort_caps_what_its_subtree_takes() -> None:
    engine = _engine()
    engine.add_cohort(Cohort("org", None, _groups("10")))
    engine.add_cohort(Cohort("team", "org", _groups("0", borrow="3")))
    _queue(engine, "a", "team", "1")
    assert _submit(engine, "w5", "a", "5") not in engine.schedule(0.0).admissions
    assert _submit(engine, "w4", "a", "4") in engine.schedule(1.0).admissions


def test_a_queue_reclaims_what_its_own_subtree_guarantees_although_it_borrows() -> None:
    """Kueue's flavor assigner simulates preemption when the request fits, without borrowing, in a
    cohort below the root (mayReclaimInHierarchy), although the queue itself has no nominal quota
    and may not preempt while borrowing (Kueue v0.19.2 test/integration/singlecluster/scheduler/
    preemption_test.go, "In a multi-level cohort": the same trees, the same decisions)."""
    engine = _engine()
    engine.add_cohort(Cohort("root"))
    engine.add_cohort(Cohort("guaranteed", "root", _groups("3")))
    reclaim = Preemption("Never", "Any")
    _queue(engine, "best-effort", "root", "0", preemption=reclaim)
    _queue(engine, "guaranteed", "guaranteed", "0", preemption=reclaim)
    other = _submit(engine, "other", "best-effort", "3", prio=100)
    assert other in engine.schedule(0.0).admissions  # borrowed from the guaranteed subtree
    mine = _submit(engine, "mine", "guaranteed", "3", at=1.0, prio=10)
    result = engine.schedule(1.0)
    assert [(p.preemptor, p.victim) for p in result.preemptions] == [(mine, other)]
    # a flat cohort has no subtree below the root: the same request is not a reason to reclaim
    flat = _engine()
    flat.add_cohort(Cohort("root", None, _groups("3")))
    _queue(flat, "best-effort", "root", "0", preemption=reclaim)
    _queue(flat, "guaranteed", "root", "0", preemption=reclaim)
    assert _submit(flat, "other", "best-effort", "3", prio=100) in flat.schedule(0.0).admissions
    _submit(flat, "mine", "guaranteed", "3", at=1.0, prio=10)
    assert list(flat.schedule(1.0).preemptions) == []


def test_a_cycle_makes_the_trees_queues_inactive_until_it_is_broken() -> None:
    engine = _engine()
    engine.add_cohort(Cohort("a", "b"))
    engine.add_cohort(Cohort("b", "a"))
    _queue(engine, "q", "a", "4")
    w = _submit(engine, "w", "q", "1")
    result = engine.schedule(0.0)
    assert w not in result.admissions
    reason = engine.pending_reason(w)
    assert reason is not None and reason.kind == "ClusterQueueInactive"
    assert "cycle" in reason.message and "a -> b -> a" in reason.message
    assert engine.cohort_cycles() == {
        "a": "cohort tree has a cycle: a -> b -> a",
        "b": "cohort tree has a cycle: a -> b -> a",
    }
    engine.add_cohort(Cohort("b"))
    assert w in engine.schedule(1.0).admissions
    assert engine.cohort_cycles() == {}


def test_weighted_shares_follow_kueues_dominant_resource_share() -> None:
    engine = _engine(fair=True)
    engine.add_cohort(Cohort("org", None, _groups("10")))
    _queue(engine, "a", "org", "0", fair_weight=2.0)
    _queue(engine, "b", "org", "0")
    _submit(engine, "wa", "a", "4")
    _submit(engine, "wb", "b", "1")
    engine.schedule(0.0)
    queues, cohorts = engine.weighted_shares()
    # a borrows 4 of the 10 the root could lend: 400 per mille, halved by weight 2
    assert queues == {"a": 200, "b": 100}
    assert cohorts == {"org": 0}  # a root never borrows


def test_fair_sharing_admits_the_team_with_the_lower_share_first() -> None:
    engine = _engine(fair=True)
    engine.add_cohort(Cohort("org", None, _groups("6")))
    _queue(engine, "a", "org", "0")
    _queue(engine, "b", "org", "0")
    for i in range(3):
        _submit(engine, f"a{i}", "a", "1", at=float(i))
    _submit(engine, "b0", "b", "1", at=10.0)
    engine.schedule(0.0)
    engine2 = _engine(fair=True)
    engine2.add_cohort(Cohort("org", None, _groups("3")))
    _queue(engine2, "a", "org", "0")
    _queue(engine2, "b", "org", "0")
    for i in range(3):
        _submit(engine2, f"a{i}", "a", "1", at=float(i))
    _submit(engine2, "b0", "b", "1", at=10.0)
    admitted = engine2.schedule(0.0).admissions
    # 3 fit: b's first workload goes before a's third although it is the newest
    assert "ns/b0" in admitted and len(admitted) == 3


def test_fair_preemption_takes_from_the_queue_over_its_share() -> None:
    engine = _engine(fair=True)
    engine.add_cohort(Cohort("org"))
    any_ = Preemption("Never", "Any")
    _queue(engine, "a", "org", "3", preemption=any_)
    _queue(engine, "b", "org", "3", preemption=any_)
    for i in range(6):
        _submit(engine, f"a{i}", "a", "1", at=float(i))
    assert len(engine.schedule(0.0).admissions) == 6
    b = _submit(engine, "b0", "b", "1", at=10.0)
    result = engine.schedule(1.0)
    # b is within its nominal quota: it reclaims one of a's borrowed workloads (all admitted at
    # once, so the tie goes by name, as Kueue's goes by UID)
    assert [(p.victim, p.reason) for p in result.preemptions] == [("ns/a0", "InCohortReclamation")]
    assert b not in result.admissions


# -- property: quota is never exceeded through any tree -----------------------------------
COHORTS = ("c0", "c1", "c2", "c3")
cohort_specs = st.tuples(
    st.sampled_from([None, "c0", "c1", "c2", "c3"]),  # parent (cycles allowed)
    st.one_of(st.none(), st.integers(0, 4)),  # own nominal
    st.one_of(st.none(), st.integers(0, 3)),  # borrowing limit
    st.one_of(st.none(), st.integers(0, 3)),  # lending limit
    st.sampled_from([0.0, 1.0, 1.0, 2.0]),  # weight
)
queue_specs = st.tuples(
    st.sampled_from([None, "c0", "c1", "c2", "c3"]),
    st.integers(0, 4),
    st.one_of(st.none(), st.integers(0, 3)),
    st.one_of(st.none(), st.integers(0, 3)),
    st.sampled_from(["Never", "LowerPriority", "Any"]),
)
ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("arrive"), st.integers(0, 3), st.sampled_from(["500m", "1", "2", "3"]), st.integers(0, 2)
        ),
        st.tuples(st.just("arrive"), st.integers(0, 3), st.sampled_from(["1", "2"]), st.integers(0, 2)),
        st.tuples(st.just("finish"), st.integers(0, 40)),
        st.tuples(st.just("queue"), st.integers(0, 3), queue_specs),
        st.tuples(st.just("cohort"), st.integers(0, 3), cohort_specs),
        st.tuples(st.just("drop"), st.integers(0, 3)),
    ),
    min_size=5,
    max_size=30,
)


def _cohort(index: int, spec: tuple) -> Cohort:
    parent, own, borrow, lend, weight = spec
    groups = () if own is None else _groups(str(own), _opt(borrow if parent else None), _opt(lend))
    return Cohort(COHORTS[index], parent, groups, weight)


def _opt(value: int | None) -> str | None:
    return None if value is None else str(value)


def _cq(index: int, spec: tuple) -> ClusterQueue:
    cohort, nominal, borrow, lend, reclaim = spec
    inside = cohort is not None
    groups = _groups(
        str(nominal),
        _opt(borrow if inside else None),
        _opt(min(lend, nominal) if inside and lend is not None else None),
    )
    return ClusterQueue(f"q{index}", groups, cohort=cohort, preemption=Preemption("LowerPriority", reclaim))


def _tree_sums(
    cqs: dict[str, ClusterQueue], cohorts: dict[str, Cohort]
) -> tuple[dict[str, str | None], dict[str, int]]:
    """The root (None in a cycle) of every queue, and every root's total nominal quota, from specs."""

    def top(name: str) -> str | None:
        seen: set[str] = set()
        while name not in seen:
            seen.add(name)
            spec = cohorts.get(name)
            if spec is None or spec.parent is None:
                return name
            name = spec.parent
        return None

    def quota(groups: tuple[ResourceGroup, ...]) -> int:
        return sum(r.nominal_quota.milli for g in groups for f in g.flavors for r in f.resources)

    roots = {q: (top(spec.cohort) if spec.cohort else f"cq:{q}") for q, spec in cqs.items()}
    totals: dict[str, int] = {}
    for q, root in roots.items():
        if root is not None:
            totals[root] = totals.get(root, 0) + quota(cqs[q].resource_groups)
    for name, spec in cohorts.items():
        root = top(name)
        if root is not None and root in totals:
            totals[root] += quota(spec.resource_groups)
    return roots, totals


def _build(cohort_list: list[tuple], queue_list: list[tuple], fair: bool) -> Tree:
    """An engine with the random tree, and the specs the sums are computed from."""
    engine = _engine(fair)
    tree = Tree(
        engine,
        {f"q{i}": _cq(i, spec) for i, spec in enumerate(queue_list)},
        {COHORTS[i]: _cohort(i, spec) for i, spec in enumerate(cohort_list)},
    )
    for spec in tree.cohorts.values():
        engine.add_cohort(spec)
    for name, spec in tree.cqs.items():
        engine.add_cluster_queue(spec)
        engine.add_local_queue(LocalQueue("ns", name, name))
    return tree


@dataclass
class Tree:
    """An engine driven by the random operations, with the specs it was given."""

    engine: AdmissionEngine
    cqs: dict[str, ClusterQueue]
    cohorts: dict[str, Cohort]
    serial: int = 0

    def apply(self, op: tuple, now: float, evict: list[str]) -> None:
        """Requeue the victims of the last cycle (``evict``), then carry out ``op``."""
        engine, cqs, cohorts = self.engine, self.cqs, self.cohorts
        for key in evict:
            wl = engine.workload(key)
            if wl is not None and wl.admission is not None:
                engine.update_workload(replace(wl, admission=None))
        if op[0] == "arrive":
            self.serial += 1
            _submit(engine, f"w{self.serial}", f"q{op[1]}", op[2], now, op[3])
        elif op[0] == "finish":
            admitted = sorted(k for k in engine.state.cache.admitted)
            if admitted:
                engine.remove_workload(admitted[op[1] % len(admitted)])
        elif op[0] == "queue":
            cqs[f"q{op[1]}"] = _cq(op[1], op[2])
            engine.update_cluster_queue(cqs[f"q{op[1]}"])
        elif op[0] == "cohort":
            cohorts[COHORTS[op[1]]] = _cohort(op[1], op[2])
            engine.add_cohort(cohorts[COHORTS[op[1]]])
        elif op[0] == "drop":
            cohorts.pop(COHORTS[op[1]], None)
            engine.remove_cohort(COHORTS[op[1]])


trees = (
    st.lists(cohort_specs, min_size=4, max_size=4),
    st.lists(queue_specs, min_size=4, max_size=4),
    ops,
    st.booleans(),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*trees)
def test_quota_is_never_exceeded_through_any_cohort_tree(
    cohort_list: list[tuple], queue_list: list[tuple], operations: list[tuple], fair: bool
) -> None:
    tree = _build(cohort_list, queue_list, fair)
    engine, cqs, cohorts = tree.engine, tree.cqs, tree.cohorts
    now, evict = 0.0, []
    for op in operations:
        tree.apply(op, now, evict)
        evict = []
        before = set(engine.quota_violations())
        result = engine.schedule(now)
        assert set(engine.quota_violations()) <= before
        roots, totals = _tree_sums(cqs, cohorts)
        usage = {q: sum(v.milli for v in engine.usage(q).values()) for q in cqs}
        for key, admission in result.admissions.items():
            q = admission.cluster_queue
            assert roots[q] is not None, f"{key} admitted in {q}, whose cohort tree has a cycle"
            members = [m for m, r in roots.items() if r == roots[q]]
            assert sum(usage[m] for m in members) <= totals[roots[q]], f"tree of {q} over its quota"
            spec = cqs[q]
            quotas = [r for g in spec.resource_groups for f in g.flavors for r in f.resources]
            cap = quotas[0].nominal_quota.milli
            if spec.cohort is None:
                assert usage[q] <= cap
            elif quotas[0].borrowing_limit is not None:
                assert usage[q] <= cap + quotas[0].borrowing_limit.milli
        evict.extend(p.victim for p in result.preemptions)
        now += 1.0


def _wordless(result: SchedulingResult) -> SchedulingResult:
    """The result with the messages of its pending reasons and preemptions left out."""
    return replace(
        result,
        pending={k: replace(info, message="") for k, info in result.pending.items()},
        preemptions=[replace(p, message="") for p in result.preemptions],
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*trees)
def test_an_engine_that_does_not_explain_decides_and_reasons_the_same_without_words(
    cohort_list: list[tuple], queue_list: list[tuple], operations: list[tuple], fair: bool
) -> None:
    """``explain`` off (as a forecast runs) changes only the words: the same admissions,
    preemptions, evictions, reason kinds, shortfalls and times, cycle after cycle."""
    told, quiet = _build(cohort_list, queue_list, fair), _build(cohort_list, queue_list, fair)
    quiet.engine.explain = False
    now, evict = 0.0, []
    for op in operations:
        told.apply(op, now, evict)
        quiet.apply(op, now, evict)
        worded, unworded = told.engine.schedule(now), quiet.engine.schedule(now)
        assert _wordless(worded) == _wordless(unworded)
        said = [p.message for p in unworded.preemptions]
        said += [
            i.message
            for i in unworded.pending.values()
            if i.kind in ("QuotaShortfall", "WaitingForPreemption")
        ]
        assert not any(said)
        for key in sorted(told.engine.state.cache.workloads):
            reason, quiet_reason = told.engine.pending_reason(key), quiet.engine.pending_reason(key)
            assert (reason and replace(reason, message="")) == (
                quiet_reason and replace(quiet_reason, message="")
            )
        evict = [p.victim for p in worded.preemptions]
        now += 1.0


def test_kueues_hierarchical_fair_preemption_case_ends_as_kueue_says() -> None:
    """Kueue v0.14.8 test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go,
    "using hierarchical cohorts / preempts workloads to enforce fair share": root (12 CPUs) >
    best-effort (weight 0.5) and research > chemistry, physics, llm (weight 2); evictions are
    completed at once here, where Kueue's test completes 2 and 4 of them by hand."""
    engine = _engine(fair=True)
    engine.add_cohort(Cohort("root", None, _groups("12")))
    engine.add_cohort(Cohort("research", "root"))
    for name, weight in (("chemistry", 1.0), ("physics", 1.0), ("llm", 2.0)):
        engine.add_cohort(Cohort(name, "research", (), weight))
    engine.add_cohort(Cohort("best-effort", "root", (), 0.5))
    lower = Preemption("Never", "LowerPriority")
    for name in ("chemistry", "physics", "llm", "best-effort"):
        _queue(engine, name, name, "0", preemption=lower if name != "best-effort" else Preemption())
    serial = 0

    def submit(queue: str, priority: int) -> None:
        nonlocal serial
        serial += 1
        _submit(engine, f"w{serial:03}", queue, "1", at=serial / 1000, prio=priority)

    for _ in range(6):
        submit("best-effort", -1)
        submit("physics", -1)
    assert len(engine.schedule(1.0).admissions) == 12
    assert engine.weighted_shares()[1]["best-effort"] == 1000
    assert engine.weighted_shares()[1]["physics"] == 500
    for _ in range(6):
        for queue in ("chemistry", "physics", "llm", "best-effort"):
            submit(queue, 100)
    now = 2.0
    while True:
        result = engine.schedule(now)
        for preempted in result.preemptions:
            victim = engine.workload(preempted.victim)
            assert victim is not None
            engine.update_workload(replace(victim, admission=None))
        if not result.admissions and not result.preemptions:
            break
        now += 1.0
    held = {
        q: sum(1 for w in engine.state.cache.admitted.values() if w.cluster_queue == q)
        for q in engine.state.cache.cqs
    }
    assert held == {"best-effort": 4, "chemistry": 2, "physics": 2, "llm": 4}
    cohorts = engine.weighted_shares()[1]
    assert (cohorts["best-effort"], cohorts["research"]) == (667, 667)
    assert (cohorts["chemistry"], cohorts["physics"], cohorts["llm"]) == (167, 167, 167)
