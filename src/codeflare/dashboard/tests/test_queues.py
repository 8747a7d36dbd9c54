"""The Queues data layer: pending order and positions, quota bars, lent/borrowed, cohorts."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.dashboard.queues import (
    AWAITING_DECISION,
    QuotaBar,
    cohorts,
    pending_by_queue,
    queues_view,
    quota_bars,
    with_lent,
)
from codeflare.dashboard.snapshot import Snapshot


def workload(name: str, created: str, priority: int = 0, queue: str = "lq", **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": created},
        "spec": {"queueName": queue, "priority": priority},
        "status": status,
    }


def snap(*workloads: dict[str, Any], queues: dict[str, str] | None = None) -> Snapshot:
    lqs = [
        {"metadata": {"name": lq, "namespace": "ns"}, "spec": {"clusterQueue": cq}}
        for lq, cq in (queues or {"lq": "cq"}).items()
    ]
    return Snapshot({"Workload": list(workloads), "LocalQueue": lqs})


T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"

# Kueue pkg/cache/queue/cluster_queue_test.go: TestFIFOClusterQueue (before, now, after) and
# TestStrictFIFO's priority/creation cases, as (workloads, expected order).
# Deliberate difference: Kueue (requeuingTimestamp: Eviction, its default) orders an evicted
# workload by its eviction time; our engine (codeflare.scheduling.queues.order_key) orders by
# creation time, Kueue's "Creation" setting, and the dashboard shows the engine's order.
ORDER_CASES = [
    ([("now", T1, 0), ("before", T0, 0), ("after", T2, 0)], ["before", "now", "after"]),
    ([("w1", T0, 100), ("w2", T1, 10)], ["w1", "w2"]),  # "w1.priority is higher than w2.priority"
    ([("w1", T0, 0), ("w2", T1, 0)], ["w1", "w2"]),  # equal priority, w1 created earlier
    ([("w1", T0, 10), ("w2", T1, 100)], ["w2", "w1"]),  # "p1.priority is lower than p2.priority"
]


@pytest.mark.parametrize(("items", "expected"), ORDER_CASES)
def test_pending_workloads_are_numbered_in_the_engines_order(
    items: list[tuple[str, str, int]], expected: list[str]
) -> None:
    waiting = pending_by_queue(snap(*(workload(n, c, p) for n, c, p in items)))["cq"]
    assert [w.name for w in waiting] == expected
    assert [w.position for w in waiting] == list(range(1, len(expected) + 1))


def test_positions_are_unknown_to_a_user_who_cannot_see_every_workload() -> None:
    # Listing Workloads across namespaces was refused (the store then watches namespaces one by
    # one): workloads of other namespaces may stand ahead, so no position is claimed.
    partial = snap(workload("w1", T0), workload("w2", T1))
    partial = Snapshot(partial.objects, {"Workload": frozenset({""})})
    waiting = pending_by_queue(partial)["cq"]
    assert [(w.name, w.position) for w in waiting] == [("w1", None), ("w2", None)]


def test_admitted_finished_and_deactivated_workloads_have_no_position() -> None:
    admitted = workload("a", T0, admission={"clusterQueue": "cq"})
    finished = workload("f", T0, conditions=[{"type": "Finished", "status": "True"}])
    inactive = workload("i", T0)
    inactive["spec"]["active"] = False
    waiting = workload(
        "w",
        T1,
        conditions=[
            {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "insufficient quota"}
        ],
    )
    assert [
        (w.name, w.position, w.message)
        for w in pending_by_queue(snap(admitted, finished, inactive, waiting))["cq"]
    ] == [("w", 1, "insufficient quota")]


def test_a_workload_not_decided_yet_and_one_whose_queue_is_unknown() -> None:
    fresh = workload("fresh", T0)
    lost = workload("lost", T0, queue="missing")
    waiting = pending_by_queue(snap(fresh, lost))
    assert waiting["cq"][0].message == AWAITING_DECISION
    assert [w.name for w in waiting[""]] == ["lost"]


def cq(name: str, nominal: str, used: str = "0", cohort: str = "", **limits: str) -> dict[str, Any]:
    resource = {"name": "cpu", "nominalQuota": nominal, **limits}
    return {
        "metadata": {"name": name},
        "spec": {
            "cohort": cohort,
            "resourceGroups": [
                {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [resource]}]}
            ],
        },
        "status": {"flavorsUsage": [{"name": "f", "resources": [{"name": "cpu", "total": used}]}]},
    }


def test_quota_bars_read_spec_and_status() -> None:
    (bar,) = quota_bars(cq("a", "4", "6", borrowingLimit="2", lendingLimit="1"))
    assert (bar.flavor, bar.resource, bar.nominal, bar.in_use) == ("f", "cpu", Decimal(4), Decimal(6))
    assert (bar.borrowed, bar.borrowing_limit, bar.lending_limit) == (Decimal(2), Decimal(2), Decimal(1))
    assert bar.reserved == Decimal(6)  # no flavorsReservation: what is in use is reserved
    assert bar.percent(bar.in_use) == 100.0


def test_the_lender_is_charged_what_its_cohort_borrows() -> None:
    view = queues_view(Snapshot({"ClusterQueue": [cq("a", "4", "6", "c"), cq("b", "4", "1", "c")]}))
    a, b = view.cluster_queues
    assert (a.bars[0].borrowed, a.bars[0].lent) == (Decimal(2), Decimal(0))
    assert (b.bars[0].borrowed, b.bars[0].lent) == (Decimal(0), Decimal(2))
    assert view.cohorts == {"c": ("a", "b")}


def test_cohort_tree_leaves_out_queues_of_no_cohort() -> None:
    assert cohorts([cq("x", "1"), cq("b", "1", cohort="c"), cq("a", "1", cohort="c")]) == {"c": ("a", "b")}


amounts = st.integers(min_value=0, max_value=20).map(Decimal)


@given(st.lists(st.tuples(amounts, amounts, st.one_of(st.none(), amounts)), min_size=1, max_size=6))
def test_never_more_is_lent_than_borrowed_nor_more_than_a_queue_may_lend(
    members: list[tuple[Decimal, Decimal, Decimal | None]],
) -> None:
    bars = {
        f"q{i}": [QuotaBar("f", "cpu", nominal=n, in_use=u, lending_limit=lend)]
        for i, (n, u, lend) in enumerate(members)
    }
    lent = with_lent(bars)
    total_borrowed = sum(b[0].borrowed for b in bars.values())
    total_lent = sum(b[0].lent for b in lent.values())
    assert total_lent <= total_borrowed
    for row in lent.values():
        assert Decimal(0) <= row[0].lent <= row[0].lendable
    lendable = sum(b[0].lendable for b in bars.values())
    assert total_lent == min(total_borrowed, lendable)  # borrowers lend nothing: all lending is charged


def test_the_default_local_queue_is_the_annotated_one_else_the_one_named_default() -> None:
    def lq(name: str, namespace: str, marked: bool = False) -> dict[str, Any]:
        annotations = {"kueue.x-k8s.io/default-queue": "true"} if marked else {}
        return {"metadata": {"name": name, "namespace": namespace, "annotations": annotations},
                "spec": {"clusterQueue": "cq"}}

    view = queues_view(Snapshot({"LocalQueue": [
        lq("default", "a"), lq("team", "a", marked=True),  # the annotation wins (api.kueue)
        lq("default", "b"), lq("other", "b"),  # Kueue >= 0.17: the one named default
        lq("team", "c"),  # none
    ]}))  # fmt: skip
    defaults = {(q.namespace, q.name) for q in view.local_queues if q.default}
    assert defaults == {("a", "team"), ("b", "default")}
