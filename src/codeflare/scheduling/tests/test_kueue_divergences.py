"""One focused test per divergence from Kueue that issue 12 lists; each failed before the fix.

Sources of the rules: Kueue v0.14 ``pkg/cache/scheduler/resource_node.go`` (usage of every
flavor-resource counts in the cohort), ``pkg/scheduler/flavorassigner/flavorassigner.go`` (pods
resource, taints, node affinity, fungibility with no preemption candidates) and
``pkg/scheduler/preemption/preemption.go`` (classical preemption: reclaim while under nominal).
"""

from __future__ import annotations

from codeflare.k8s.labels import Requirement
from codeflare.scheduling import (
    ClusterQueue,
    FlavorFungibility,
    FlavorQuotas,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from codeflare.scheduling.tests.helpers import cq, engine_with, wl


def test_usage_of_a_removed_flavor_still_counts_in_the_cohort() -> None:
    a = cq("a", {"f": {"cpu": ("10",)}}, cohort="c")
    b = cq("b", {"f": {"cpu": ("10",)}}, cohort="c")
    engine = engine_with(a, b, flavors=("f", "g"))
    engine.add_workload(wl("big", "lq-a", "15"))
    assert "ns/big" in engine.schedule(0).admissions  # borrows 5 from b
    engine.update_cluster_queue(cq("a", {"g": {"cpu": ("10",)}}, cohort="c"))  # f removed from a
    engine.add_workload(wl("late", "lq-b", "10"))
    result = engine.schedule(1)
    assert "ns/late" not in result.admissions  # a's 15 of f still run in the cohort
    assert any(v.startswith("cohort c") for v in engine.quota_violations())


def test_usage_of_a_removed_resource_is_a_violation_of_a_queue_without_cohort() -> None:
    engine = engine_with(cq("a", {"f": {"cpu": ("4",)}}), flavors=("f", "g"))
    engine.add_workload(wl("w", "lq-a", "4"))
    engine.schedule(0)
    engine.update_cluster_queue(cq("a", {"g": {"cpu": ("4",)}}))
    assert engine.quota_violations() == ["ClusterQueue a ('f', 'cpu'): 4000 > 0"]


def test_removed_queue_with_admitted_workloads_keeps_its_cohort_usage_until_they_finish() -> None:
    a = cq("a", {"f": {"cpu": ("4",)}}, cohort="c")
    b = cq("b", {"f": {"cpu": ("4",)}}, cohort="c")
    engine = engine_with(a, b, flavors=("f",))
    engine.add_workload(wl("w", "lq-a", "8"))
    engine.schedule(0)
    engine.remove_cluster_queue("a")
    engine.add_workload(wl("x", "lq-b", "1"))
    assert "ns/x" not in engine.schedule(1).admissions
    engine.remove_workload("ns/w")
    assert "ns/x" in engine.schedule(2).admissions
    assert engine.quota_violations() == []


def test_pods_resource_is_charged_one_per_pod() -> None:
    queue = cq("a", {"f": {"cpu": ("10",), "pods": ("3",)}}, resources=("cpu", "pods"))
    engine = engine_with(queue, flavors=("f",))
    engine.add_workload(wl("four", "lq-a", "1", count=4))
    engine.add_workload(wl("three", "lq-a", "1", count=3, created=1))
    result = engine.schedule(0)
    assert list(result.admissions) == ["ns/three"]
    assignment = result.admissions["ns/three"].pod_set_assignments[0]
    assert assignment.flavors == {"cpu": "f", "pods": "f"}
    assert assignment.resource_usage["pods"].milli == 3000


def _two_flavor_engine(first: ResourceFlavor, second: ResourceFlavor):  # type: ignore[no-untyped-def]
    queue = cq("a", {first.name: {"cpu": ("10",)}, second.name: {"cpu": ("10",)}})
    engine = engine_with(queue, flavors=())
    engine.add_resource_flavor(first)
    engine.add_resource_flavor(second)
    return engine


def _placed(name: str, **constraints: object) -> Workload:
    return Workload("ns", name, "lq-a", (PodSet("main", 1, {"cpu": "1"}, **constraints),))  # type: ignore[arg-type]


def test_flavor_taints_need_a_toleration() -> None:
    tainted = ResourceFlavor("gpu", node_taints=({"key": "gpu", "value": "yes", "effect": "NoSchedule"},))
    engine = _two_flavor_engine(tainted, ResourceFlavor("plain"))
    engine.add_workload(_placed("plain-pod"))
    engine.add_workload(_placed("tolerant", tolerations=({"key": "gpu", "operator": "Exists"},)))
    result = engine.schedule(0)
    flavors = {k: a.pod_set_assignments[0].flavors["cpu"] for k, a in result.admissions.items()}
    assert flavors == {"ns/plain-pod": "plain", "ns/tolerant": "gpu"}


def test_untolerated_taint_is_the_pending_reason() -> None:
    tainted = ResourceFlavor("gpu", node_taints=({"key": "gpu", "effect": "NoExecute"},))
    engine = engine_with(cq("a", {"gpu": {"cpu": ("10",)}}), flavors=())
    engine.add_resource_flavor(tainted)
    engine.add_workload(_placed("w"))
    info = engine.schedule(0).pending["ns/w"]
    assert info.kind == "NoMatchingFlavor"
    assert "untolerated taint gpu:NoExecute in flavor gpu" in info.message


def test_flavor_node_labels_must_match_node_selector_and_required_affinity() -> None:
    engine = _two_flavor_engine(
        ResourceFlavor("zone-a", node_labels={"zone": "a"}),
        ResourceFlavor("zone-b", node_labels={"zone": "b"}),
    )
    engine.add_workload(_placed("selector", node_selector={"zone": "b"}))
    engine.add_workload(_placed("affinity", node_affinity=((Requirement("zone", "NotIn", ("a",)),),)))
    engine.add_workload(_placed("other-key", node_selector={"disk": "ssd"}))  # no flavor sets it: ignored
    result = engine.schedule(0)
    flavors = {k: a.pod_set_assignments[0].flavors["cpu"] for k, a in result.admissions.items()}
    assert flavors == {"ns/selector": "zone-b", "ns/affinity": "zone-b", "ns/other-key": "zone-a"}


def test_reclaim_while_under_nominal_must_then_fit_without_borrowing() -> None:
    policy = Preemption(within_cluster_queue="LowerPriority", reclaim_within_cohort="Any")
    a = cq("a", {"f": {"cpu": ("6",)}}, cohort="c", preemption=policy)
    b = cq("b", {"f": {"cpu": ("6",)}}, cohort="c")
    engine = engine_with(a, b, flavors=("f",))
    engine.add_workload(wl("a-high", "lq-a", "4", priority=100))
    engine.add_workload(wl("a-low", "lq-a", "1", priority=0))
    for i in range(7):
        engine.add_workload(wl(f"b{i}", "lq-b", "1", created=i))
    engine.schedule(0)  # a uses 5 of 6, b 7 of 6 (borrowing 1)
    engine.add_workload(wl("new", "lq-a", "2", priority=10, created=10))
    result = engine.schedule(1)
    # a would borrow at current usage (5 + 2 > 6) but is under nominal in cpu: it reclaims b's
    # borrowed unit and evicts its own lower-priority workload, then fits within nominal
    victims = sorted((p.cluster_queue, p.reason) for p in result.preemptions)
    assert victims == [("a", "InClusterQueue"), ("b", "InCohortReclamation")]
    assert "ns/a-low" in {p.victim for p in result.preemptions}


def test_a_flavor_without_preemption_candidates_is_passed_over() -> None:
    queue = ClusterQueue(
        "a",
        (
            ResourceGroup(
                ("cpu",),
                (
                    FlavorQuotas("f1", (ResourceQuota("cpu", "2"),)),
                    FlavorQuotas("f2", (ResourceQuota("cpu", "2"),)),
                ),
            ),
        ),
        preemption=Preemption(within_cluster_queue="LowerPriority"),
        flavor_fungibility=FlavorFungibility(when_can_preempt="Preempt"),
    )
    engine = engine_with(flavors=("f1", "f2"))
    engine.add_cluster_queue(queue)
    engine.add_local_queue(LocalQueue("ns", "lq-a", "a"))
    engine.add_workload(wl("high", "lq-a", "2", priority=100))
    engine.schedule(0)
    engine.add_workload(wl("low", "lq-a", "2", priority=1, created=1))
    result = engine.schedule(1)
    assert result.preemptions == []
    assert result.admissions["ns/low"].pod_set_assignments[0].flavors == {"cpu": "f2"}
