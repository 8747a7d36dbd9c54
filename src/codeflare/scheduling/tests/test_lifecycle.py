"""Placement reasons, stop policies, backoff, capacity check and the admission contract."""

from dataclasses import replace

from codeflare.scheduling import (
    AdmissionEngine,
    ClusterQueue,
    LabelSelector,
    LocalQueue,
    Node,
    ResourceFlavor,
)

from .helpers import cq, engine_with, wl


def test_missing_local_queue_then_cluster_queue_then_namespace() -> None:
    engine = AdmissionEngine()
    engine.add_resource_flavor(ResourceFlavor("default"))
    engine.add_workload(wl("w", "lq"))
    assert engine.schedule(0).pending["ns/w"].kind == "NoLocalQueue"
    engine.add_local_queue(LocalQueue("ns", "lq", "team"))
    info = engine.schedule(1).pending["ns/w"]
    assert info.kind == "NoClusterQueue" and "ClusterQueue team does not exist" in info.message
    selector = LabelSelector({"research": "true"})
    engine.add_cluster_queue(replace(cq("team"), namespace_selector=selector))
    assert engine.schedule(2).pending["ns/w"].kind == "NamespaceNotSelected"
    engine.add_namespace("ns", {"research": "true"})
    assert list(engine.schedule(3).admissions) == ["ns/w"]


def test_nil_namespace_selector_selects_nothing() -> None:
    engine = engine_with(ClusterQueue("a", cq("a").resource_groups, namespace_selector=None))
    engine.add_workload(wl("w", "lq-a"))
    assert engine.schedule(0).pending["ns/w"].kind == "NamespaceNotSelected"


def test_inactive_workload_is_not_admitted_and_is_evicted_when_deactivated() -> None:
    engine = engine_with(cq("a"))
    engine.add_workload(wl("off", "lq-a", active=False))
    engine.add_workload(wl("on", "lq-a"))
    result = engine.schedule(0)
    assert result.pending["ns/off"].kind == "Inactive" and list(result.admissions) == ["ns/on"]
    engine.update_workload(replace(engine.workload("ns/on"), active=False))
    evictions = engine.schedule(1).evictions
    assert [(e.workload, e.reason) for e in evictions] == [("ns/on", "InactiveWorkload")]


def test_missing_flavor_makes_the_queue_inactive() -> None:
    engine = engine_with(cq("a", {"gone": {"cpu": ("4",)}}))
    engine.add_workload(wl("w", "lq-a"))
    assert engine.schedule(0).pending["ns/w"].kind == "ClusterQueueInactive"
    engine.add_resource_flavor(ResourceFlavor("gone"))
    assert list(engine.schedule(1).admissions) == ["ns/w"]


def test_hold_admits_nothing_new_and_hold_and_drain_evicts() -> None:
    engine = engine_with(cq("a"))
    engine.add_workload(wl("running", "lq-a"))
    engine.schedule(0)
    engine.update_cluster_queue(replace(cq("a"), stop_policy="Hold"))
    engine.add_workload(wl("new", "lq-a", created=1))
    result = engine.schedule(1)
    assert not result.admissions and not result.evictions
    assert result.pending["ns/new"].kind == "ClusterQueueStopped"
    engine.update_cluster_queue(replace(cq("a"), stop_policy="HoldAndDrain"))
    result = engine.schedule(2)
    assert [(e.workload, e.reason) for e in result.evictions] == [("ns/running", "ClusterQueueStopped")]
    assert engine.schedule(3).evictions == []  # asked once
    engine.update_cluster_queue(cq("a"))
    assert sorted(engine.schedule(4).admissions) == ["ns/new"]


def test_backoff_is_respected_unless_quota_is_freed_or_raised() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("2",)}}), backoff_time=10.0)
    engine.add_workload(wl("user", "lq-a", "2"))
    engine.add_workload(wl("waiting", "lq-a", "1", created=1))
    result = engine.schedule(0)
    assert result.pending["ns/waiting"].requeue_at == 10.0 and result.next_wakeup == 10.0
    assert "ns/waiting" not in engine.schedule(5).pending  # in backoff: not looked at
    assert "ns/waiting" in engine.schedule(10).pending  # backoff over: re-evaluated
    engine.update_cluster_queue(cq("a", {"default": {"cpu": ("3",)}}))  # quota raised
    assert list(engine.schedule(11).admissions) == ["ns/waiting"]
    engine.add_workload(wl("next", "lq-a", "1", created=2))
    engine.schedule(12)
    engine.remove_workload("ns/user")  # quota freed
    assert list(engine.schedule(13).admissions) == ["ns/next"]


def test_repeated_schedule_never_overcommits_and_reports_are_idempotent() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("2",)}}))
    for i in range(4):
        engine.add_workload(wl(f"w{i}", "lq-a", "1", created=i))
    first = engine.schedule(0)
    assert len(first.admissions) == 2
    assert engine.schedule(0).admissions == {} and engine.schedule(1).admissions == {}
    for key, admission in first.admissions.items():
        workload = engine.workload(key)
        engine.update_workload(replace(workload, admission=admission))  # the operator persisted it
    assert engine.usage("a")[("default", "cpu")].milli == 2000
    assert engine.quota_violations() == []
    engine.update_workload(replace(engine.workload("ns/w0"), admission=None))  # withdrawn
    assert list(engine.schedule(2).admissions) == ["ns/w0"]


def test_externally_admitted_workloads_are_charged() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("2",)}}))
    engine.add_workload(wl("w0", "lq-a", "2"))
    admission = engine.schedule(0).admissions["ns/w0"]
    other = engine_with(cq("a", {"default": {"cpu": ("2",)}}))
    other.add_workload(replace(wl("w0", "lq-a", "2"), admission=admission))
    other.add_workload(wl("w1", "lq-a", "1"))
    assert other.schedule(1).admissions == {}


def capacity_engine() -> AdmissionEngine:
    engine = engine_with(
        cq("a", {"gpu": {"cpu": ("100",)}}), flavors=(), capacity_check=True, backoff_time=5.0
    )
    engine.add_resource_flavor(ResourceFlavor("gpu", {"pool": "gpu"}))
    engine.add_node(Node("n1", {"pool": "gpu"}, {"cpu": "8"}, unmanaged_usage={"cpu": "2"}))
    engine.add_node(Node("n2", {"pool": "gpu"}, {"cpu": "8"}))
    engine.add_node(Node("n3", {"pool": "cpu"}, {"cpu": "64"}))
    engine.add_node(Node("n4", {"pool": "gpu"}, {"cpu": "64"}, unschedulable=True))
    return engine


def test_capacity_check_reports_capacity_not_quota() -> None:
    engine = capacity_engine()
    engine.add_workload(wl("fits", "lq-a", "10"))
    engine.add_workload(wl("too-big", "lq-a", "8", created=1))
    result = engine.schedule(0)
    assert list(result.admissions) == ["ns/fits"]
    info = result.pending["ns/too-big"]
    assert info.kind == "CapacityShortfall" and info.capacity_only
    (shortfall,) = info.shortfalls
    assert (shortfall.kind, shortfall.flavor, shortfall.requested, shortfall.available) == (
        "capacity", "gpu", 8000, 4000,
    )  # fmt: skip
    assert shortfall.missing == 4000
    assert "insufficient node capacity for cpu in flavor gpu" in info.message
    engine.add_node(Node("n5", {"pool": "gpu"}, {"cpu": "8"}))  # the autoscaler added a node
    assert list(engine.schedule(1).admissions) == ["ns/too-big"]


def test_a_node_reserved_for_a_workload_is_capacity_for_it_alone() -> None:
    engine = capacity_engine()  # 14 CPUs free on the schedulable gpu nodes
    engine.add_workload(wl("early", "lq-a", "14"))  # takes them all
    assert list(engine.schedule(0).admissions) == ["ns/early"]
    # an 8-CPU node came up for "big"; a smaller, older workload must not take it
    engine.add_node(Node("n5", {"pool": "gpu"}, {"cpu": "8"}, reserved_for="ns/big"))
    engine.add_workload(wl("small", "lq-a", "4", created=1))
    engine.add_workload(wl("big", "lq-a", "8", created=2))

    result = engine.schedule(1)

    assert list(result.admissions) == ["ns/big"]
    small = result.pending["ns/small"]
    assert small.capacity_only
    assert small.shortfalls[0].available == 0 and small.shortfalls[0].nodes == 2  # n5 not counted
    # once "big" holds its admission the reservation is lifted: what is left is everyone's
    engine.add_node(Node("n5", {"pool": "gpu"}, {"cpu": "8"}))
    engine.add_node(Node("n6", {"pool": "gpu"}, {"cpu": "4"}))
    assert list(engine.schedule(2).admissions) == ["ns/small"]


def test_capacity_check_off_by_default() -> None:
    engine = engine_with(cq("a", {"default": {"cpu": ("100",)}}))
    engine.add_node(Node("n1", {}, {"cpu": "1"}))
    engine.add_workload(wl("w", "lq-a", "50"))
    assert list(engine.schedule(0).admissions) == ["ns/w"]
