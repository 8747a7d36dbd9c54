"""Quota, flavors, cohort borrowing/lending and queue ordering, observed through the engine."""

from codeflare.scheduling import FlavorFungibility, PodSet, Workload

from .helpers import cq, engine_with, wl


def admitted(result) -> list[str]:
    return sorted(result.admissions)


def test_admits_within_nominal_and_reports_shortfall_in_words() -> None:
    queue = cq("team-a", {"a100": {"nvidia.com/gpu": ("2",)}}, resources=("nvidia.com/gpu",), cohort="c")
    lender = cq("team-b", {"a100": {"nvidia.com/gpu": ("1",)}}, resources=("nvidia.com/gpu",), cohort="c")
    engine = engine_with(queue, lender, flavors=("a100",))
    gpus = lambda n: (PodSet("main", 1, {"nvidia.com/gpu": str(n)}),)  # noqa: E731
    engine.add_workload(Workload("ns", "small", "lq-team-a", gpus(2)))
    assert admitted(engine.schedule(0)) == ["ns/small"]
    engine.add_workload(Workload("ns", "big", "lq-team-a", gpus(4), creation_time=1))
    result = engine.schedule(1)
    info = result.pending["ns/big"]
    assert info.message == (
        "insufficient quota for nvidia.com/gpu in flavor a100 in ClusterQueue team-a: "
        "requests 4, available 1 (nominal 2 + borrowable 1, in use 2)"
    )
    (shortfall,) = info.shortfalls
    assert (shortfall.resource, shortfall.flavor, shortfall.requested, shortfall.available) == (
        "nvidia.com/gpu", "a100", 4000, 1000,
    )  # fmt: skip
    assert info.requeue_at == 21.0


def test_flavors_are_tried_in_order() -> None:
    queue = cq("a", {"spot": {"cpu": ("2",)}, "on-demand": {"cpu": ("4",)}})
    engine = engine_with(queue, flavors=("spot", "on-demand"))
    for i in range(3):
        engine.add_workload(wl(f"w{i}", "lq-a", "1", created=i))
    result = engine.schedule(0)
    flavors = [result.admissions[f"ns/w{i}"].pod_set_assignments[0].flavors["cpu"] for i in range(3)]
    assert flavors == ["spot", "spot", "on-demand"]
    assert {fr: str(q) for fr, q in engine.usage("a").items()} == {
        ("on-demand", "cpu"): "1",
        ("spot", "cpu"): "2",
    }


def test_flavor_fungibility_when_can_borrow() -> None:
    def setup(when: str):
        a = cq(
            "a", {"f1": {"cpu": ("1",)}, "f2": {"cpu": ("4",)}}, cohort="c",
            flavor_fungibility=FlavorFungibility(when_can_borrow=when),
        )  # fmt: skip
        b = cq("b", {"f1": {"cpu": ("4",)}}, cohort="c")
        engine = engine_with(a, b, flavors=("f1", "f2"))
        engine.add_workload(wl("w", "lq-a", "2"))
        return engine.schedule(0).admissions["ns/w"]

    borrow = setup("Borrow")
    assert borrow.pod_set_assignments[0].flavors["cpu"] == "f1"  # borrows in the first flavor
    try_next = setup("TryNextFlavor")
    assert try_next.pod_set_assignments[0].flavors["cpu"] == "f2"  # fits f2 without borrowing


def test_flavor_fungibility_when_can_preempt() -> None:
    from codeflare.scheduling import Preemption

    def setup(when: str):
        a = cq(
            "a", {"f1": {"cpu": ("2",)}, "f2": {"cpu": ("2",)}},
            preemption=Preemption(within_cluster_queue="LowerPriority"),
            flavor_fungibility=FlavorFungibility(when_can_preempt=when),
        )  # fmt: skip
        engine = engine_with(a, flavors=("f1", "f2"))
        engine.add_workload(wl("low", "lq-a", "2", priority=0))
        engine.schedule(0)
        engine.add_workload(wl("high", "lq-a", "2", priority=10, created=1))
        return engine.schedule(1)

    tried = setup("TryNextFlavor")
    assert tried.admissions["ns/high"].pod_set_assignments[0].flavors["cpu"] == "f2"
    assert not tried.preemptions
    stopped = setup("Preempt")
    assert [p.victim for p in stopped.preemptions] == ["ns/low"]
    assert not stopped.admissions


def test_cohort_borrowing_respects_borrowing_limit() -> None:
    # Two teams share a cohort; team-a may borrow at most 3 CPUs of team-b's idle 12.
    a = cq("team-a", {"default": {"cpu": ("9", "3")}}, cohort="research")
    b = cq("team-b", {"default": {"cpu": ("12",)}}, cohort="research")
    engine = engine_with(a, b)
    for i in range(14):
        engine.add_workload(wl(f"a{i}", "lq-team-a", "1", created=i))
    result = engine.schedule(0)
    assert len(result.admissions) == 12
    assert engine.usage("team-a")[("default", "cpu")].milli == 12_000
    assert "nominal 9 + borrowable 3, in use 12" in result.pending["ns/a12"].message


def test_lending_limit_keeps_the_rest_for_the_lender() -> None:
    # team-b lends at most 4 of its 10; team-a (no borrowing limit) can take only those 4.
    a = cq("team-a", {"default": {"cpu": ("2",)}}, cohort="c")
    b = cq("team-b", {"default": {"cpu": ("10", None, "4")}}, cohort="c")
    engine = engine_with(a, b)
    for i in range(10):
        engine.add_workload(wl(f"a{i}", "lq-team-a", "1", created=i))
    engine.schedule(0)
    assert engine.usage("team-a")[("default", "cpu")].milli == 6_000
    for i in range(6):
        engine.add_workload(wl(f"b{i}", "lq-team-b", "1", created=100 + i))
    result = engine.schedule(1)
    assert len(result.admissions) == 6  # the lender's guaranteed 6 are still there
    assert engine.quota_violations() == []


def test_workloads_that_fit_without_borrowing_go_first() -> None:
    a = cq("a", {"default": {"cpu": ("2",)}}, cohort="c")
    b = cq("b", {"default": {"cpu": ("2",)}}, cohort="c")
    engine = engine_with(a, b)
    engine.add_workload(wl("a-borrower", "lq-a", "3", priority=100, created=0))
    engine.add_workload(wl("b-own", "lq-b", "2", priority=0, created=5))
    result = engine.schedule(0)
    # b-own (no borrowing) goes first despite lower priority; a-borrower no longer fits.
    assert admitted(result) == ["ns/b-own"]
    assert result.pending["ns/a-borrower"].kind == "QuotaShortfall"


def test_order_is_priority_then_creation_time() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("1",)}}))
    engine.add_workload(wl("old-low", "lq-a", "1", priority=0, created=0))
    engine.add_workload(wl("new-high", "lq-a", "1", priority=5, created=9))
    engine.add_workload(wl("old-high", "lq-a", "1", priority=5, created=3))
    assert admitted(engine.schedule(0)) == ["ns/old-high"]
    engine.remove_workload("ns/old-high")
    assert admitted(engine.schedule(1)) == ["ns/new-high"]
    engine.remove_workload("ns/new-high")
    assert admitted(engine.schedule(2)) == ["ns/old-low"]


def test_priority_change_reorders_pending_workloads() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("1",)}}))
    engine.add_workload(wl("blocker", "lq-a", "1"))
    engine.add_workload(wl("first", "lq-a", "1", created=1))
    engine.add_workload(wl("second", "lq-a", "1", created=2))
    engine.schedule(0)
    engine.update_workload(wl("second", "lq-a", "1", created=2, priority=9))
    engine.remove_workload("ns/blocker")
    assert admitted(engine.schedule(1)) == ["ns/second"]


def test_best_effort_fifo_lets_a_fitting_workload_pass_the_head() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}))
    engine.add_workload(wl("big", "lq-a", "8", created=0))
    engine.add_workload(wl("small", "lq-a", "2", created=1))
    result = engine.schedule(0)
    assert admitted(result) == ["ns/small"]
    assert result.pending["ns/big"].kind == "QuotaShortfall"


def test_strict_fifo_blocks_behind_the_head() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("4",)}}, queueing_strategy="StrictFIFO"))
    engine.add_workload(wl("big", "lq-a", "8", created=0))
    engine.add_workload(wl("small", "lq-a", "2", created=1))
    result = engine.schedule(0)
    assert admitted(result) == []
    reason = engine.pending_reason("ns/small")
    assert reason is not None and reason.kind == "BlockedByHead" and "ns/big" in reason.message


def test_head_of_line_holding_time_keeps_the_head_against_higher_priority() -> None:
    queue = cq("a", {"default": {"cpu": ("4",)}}, queueing_strategy="StrictFIFO")
    engine = engine_with(queue, head_of_line_holding_time=30.0, backoff_time=0.0)
    engine.add_workload(wl("user", "lq-a", "3"))
    engine.schedule(0)
    engine.add_workload(wl("head", "lq-a", "2", created=1))
    engine.schedule(1)  # head blocked at t=1
    engine.add_workload(wl("vip", "lq-a", "1", priority=100, created=2))
    assert admitted(engine.schedule(2)) == []  # vip would fit but head keeps its place
    engine.remove_workload("ns/user")
    assert admitted(engine.schedule(3)) == ["ns/head", "ns/vip"]


def test_without_holding_time_a_higher_priority_arrival_takes_the_head() -> None:
    queue = cq("a", {"default": {"cpu": ("4",)}}, queueing_strategy="StrictFIFO")
    engine = engine_with(queue, backoff_time=0.0)
    engine.add_workload(wl("user", "lq-a", "3"))
    engine.add_workload(wl("head", "lq-a", "2", created=1))
    engine.schedule(1)
    engine.add_workload(wl("vip", "lq-a", "1", priority=100, created=2))
    assert admitted(engine.schedule(2)) == ["ns/vip"]


def test_multiple_resources_and_pod_sets_are_charged_per_flavor() -> None:
    queue = cq("a", {"default": {"cpu": ("10",), "memory": ("10Gi",)}}, resources=("cpu", "memory"))
    engine = engine_with(queue)
    pod_sets = (
        PodSet("head", 1, {"cpu": "500m", "memory": "1Gi"}),
        PodSet("workers", 4, {"cpu": "2", "memory": "2Gi"}),
    )
    engine.add_workload(Workload("ns", "ray", "lq-a", pod_sets))
    admission = engine.schedule(0).admissions["ns/ray"]
    usage = {p.name: {r: str(q) for r, q in p.resource_usage.items()} for p in admission.pod_set_assignments}
    assert usage == {"head": {"cpu": "500m", "memory": "1Gi"}, "workers": {"cpu": "8", "memory": "8Gi"}}
    assert str(engine.usage("a")[("default", "cpu")]) == "8500m"


def test_uncovered_resource_is_a_reason() -> None:
    engine = engine_with(cq("a"))
    engine.add_workload(wl("gpu", "lq-a", "1", extra={"nvidia.com/gpu": "1"}))
    info = engine.schedule(0).pending["ns/gpu"]
    assert info.kind == "NotCovered" and "nvidia.com/gpu" in info.message
