"""Preemption within a ClusterQueue and within a cohort, following Kueue's documented rules."""

from dataclasses import replace

from codeflare.scheduling import AdmissionEngine, BorrowWithinCohort, Preemption

from .helpers import cq, engine_with, wl


def evict(engine: AdmissionEngine, key: str) -> None:
    """What the operator does once a victim's pods are gone: report it without admission."""
    workload = engine.workload(key)
    assert workload is not None
    engine.update_workload(replace(workload, admission=None))


def test_lower_priority_is_preempted_within_the_cluster_queue() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}, preemption=Preemption("LowerPriority")))
    engine.add_workload(wl("low", "lq-a", "4", priority=1))
    engine.schedule(0)
    engine.add_workload(wl("high", "lq-a", "4", priority=5, created=1))
    result = engine.schedule(1)
    assert [(p.victim, p.reason, p.preemptor) for p in result.preemptions] == [
        ("ns/low", "InClusterQueue", "ns/high")
    ]
    assert result.pending["ns/high"].kind == "WaitingForPreemption"
    # the victim stays charged until evicted: nothing is admitted meanwhile, nothing preempted twice
    again = engine.schedule(2)
    assert not again.admissions and not again.preemptions
    evict(engine, "ns/low")
    assert list(engine.schedule(3).admissions) == ["ns/high"]
    assert engine.pending_reason("ns/low") is not None  # requeued


def test_equal_priority_is_protected_under_lower_priority() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}, preemption=Preemption("LowerPriority")))
    engine.add_workload(wl("first", "lq-a", "4", priority=5))
    engine.schedule(0)
    engine.add_workload(wl("second", "lq-a", "4", priority=5, created=1))
    result = engine.schedule(1)
    assert not result.preemptions
    assert "preemption cannot free enough quota" in result.pending["ns/second"].message


def test_lower_or_newer_equal_priority_preempts_newer_equals_only() -> None:
    policy = Preemption("LowerOrNewerEqualPriority")
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}, preemption=policy))
    engine.add_workload(wl("newer", "lq-a", "4", priority=5, created=10))
    engine.schedule(10)
    engine.add_workload(wl("older", "lq-a", "4", priority=5, created=1))
    assert [p.victim for p in engine.schedule(11).preemptions] == ["ns/newer"]
    engine2 = engine_with(cq("a", {"default": {"cpu": ("4",)}}, preemption=policy))
    engine2.add_workload(wl("older", "lq-a", "4", priority=5, created=1))
    engine2.schedule(1)
    engine2.add_workload(wl("newer", "lq-a", "4", priority=5, created=10))
    assert engine2.schedule(11).preemptions == []


def test_never_policy_does_not_preempt() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}))
    engine.add_workload(wl("low", "lq-a", "4", priority=1))
    engine.schedule(0)
    engine.add_workload(wl("high", "lq-a", "4", priority=5, created=1))
    result = engine.schedule(1)
    assert result.preemptions == [] and result.pending["ns/high"].kind == "QuotaShortfall"


def test_smallest_sufficient_victim_set_is_chosen() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("6",)}}, preemption=Preemption("LowerPriority")))
    engine.add_workload(wl("two", "lq-a", "2", priority=1, created=0))
    engine.add_workload(wl("one-a", "lq-a", "1", priority=1, created=1))
    engine.add_workload(wl("one-b", "lq-a", "1", priority=1, created=2))
    engine.add_workload(wl("prio2", "lq-a", "2", priority=2, created=3))
    engine.schedule(0)
    engine.add_workload(wl("high", "lq-a", "2", priority=9, created=4))
    victims = sorted(p.victim for p in engine.schedule(1).preemptions)
    # Kueue's order (lowest priority first): one-a then one-b suffice; no victim can be dropped,
    # and the higher-priority "prio2" is never touched while lower ones suffice.
    assert victims == ["ns/one-a", "ns/one-b"]


def test_pruning_drops_victims_that_are_not_needed() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}, preemption=Preemption("LowerPriority")))
    engine.add_workload(wl("big", "lq-a", "3", priority=1, created=0))
    engine.schedule(0)
    engine.add_workload(wl("tiny", "lq-a", "1", priority=1, created=1))
    engine.schedule(5)  # tiny admitted later, so it is tried first as a victim
    engine.add_workload(wl("high", "lq-a", "3", priority=9, created=2))
    assert [p.victim for p in engine.schedule(6).preemptions] == ["ns/big"]


def test_no_preemption_when_the_preemptor_still_would_not_fit() -> None:
    queue = cq("a", {"default": {"cpu": ("4",)}}, preemption=Preemption("LowerPriority"))
    engine = engine_with(queue)
    engine.add_workload(wl("high-user", "lq-a", "3", priority=10))
    engine.add_workload(wl("low-user", "lq-a", "1", priority=1, created=1))
    engine.schedule(0)
    engine.add_workload(wl("mid", "lq-a", "3", priority=5, created=2))
    result = engine.schedule(1)
    assert result.preemptions == []
    assert "preemption cannot free enough quota" in result.pending["ns/mid"].message


def test_reclaim_within_cohort_evicts_borrowers() -> None:
    a = cq("a", {"default": {"cpu": ("4",)}}, cohort="c", preemption=Preemption(reclaim_within_cohort="Any"))
    b = cq("b", {"default": {"cpu": ("4",)}}, cohort="c")
    engine = engine_with(a, b)
    for i in range(8):
        engine.add_workload(wl(f"b{i}", "lq-b", "1", priority=100, created=i))
    engine.schedule(0)
    assert engine.usage("b")[("default", "cpu")].milli == 8000
    engine.add_workload(wl("mine", "lq-a", "2", priority=0, created=20))
    result = engine.schedule(1)
    assert sorted(p.reason for p in result.preemptions) == ["InCohortReclamation"] * 2
    assert all(p.cluster_queue == "b" for p in result.preemptions)
    for p in result.preemptions:
        evict(engine, p.victim)
    assert list(engine.schedule(2).admissions) == ["ns/mine"]


def test_reclaim_lower_priority_protects_higher_priority_borrowers() -> None:
    policy = Preemption(reclaim_within_cohort="LowerPriority")
    a = cq("a", {"default": {"cpu": ("4",)}}, cohort="c", preemption=policy)
    b = cq("b", {"default": {"cpu": ("4",)}}, cohort="c")
    engine = engine_with(a, b)
    for i in range(8):
        engine.add_workload(wl(f"b{i}", "lq-b", "1", priority=100, created=i))
    engine.schedule(0)
    engine.add_workload(wl("mine", "lq-a", "2", priority=0, created=20))
    assert engine.schedule(1).preemptions == []


def test_borrow_within_cohort_reason() -> None:
    # Kueue takes cohort candidates only with reclaimWithinCohort set (its webhook refuses
    # borrowWithinCohort without it), so the policy names both
    policy = Preemption(
        within_cluster_queue="LowerPriority",
        reclaim_within_cohort="LowerPriority",
        borrow_within_cohort=BorrowWithinCohort("LowerPriority", max_priority_threshold=10),
    )
    a = cq("a", {"default": {"cpu": ("2",)}}, cohort="c", preemption=policy)
    b = cq("b", {"default": {"cpu": ("2",)}}, cohort="c")
    c = cq("c", {"default": {"cpu": ("2",)}}, cohort="c")
    engine = engine_with(a, b, c)
    engine.add_workload(wl("a-own", "lq-a", "2", priority=100))
    for i in range(4):
        engine.add_workload(wl(f"b{i}", "lq-b", "1", priority=1, created=i))
    engine.schedule(0)  # b borrows 2; the cohort is full
    engine.add_workload(wl("mine", "lq-a", "1", priority=50, created=9))
    result = engine.schedule(1)
    assert [(p.reason, p.cluster_queue) for p in result.preemptions] == [
        ("InCohortReclaimWhileBorrowing", "b")
    ]


def test_within_cluster_queue_candidates_do_not_touch_other_queues() -> None:
    a = cq("a", {"default": {"cpu": ("2",)}}, cohort="c", preemption=Preemption("LowerPriority"))
    b = cq("b", {"default": {"cpu": ("2",)}}, cohort="c")
    engine = engine_with(a, b)
    engine.add_workload(wl("a-low", "lq-a", "2", priority=0))
    engine.add_workload(wl("b-low", "lq-b", "2", priority=0))
    engine.schedule(0)
    engine.add_workload(wl("a-high", "lq-a", "2", priority=5, created=1))
    result = engine.schedule(1)
    assert [(p.victim, p.reason) for p in result.preemptions] == [("ns/a-low", "InClusterQueue")]
