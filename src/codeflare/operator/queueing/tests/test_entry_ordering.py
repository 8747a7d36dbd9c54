"""The order in which one scheduling cycle tries the heads of its ClusterQueues: Kueue v0.14.8
``pkg/scheduler/scheduler_test.go`` TestEntryOrdering, as data, through the operator's Workload
conversion (which turns Kueue's ``GetQueueOrderTimestamp`` into the engine's queue time) and the
engine's cycle.

Each case's workloads are the heads of ClusterQueues of their own: a workload whose Kueue entry
borrows (``assignment.Borrowing`` 1) sits in a queue without quota of a flat cohort, one
borrowing two levels up in a queue of a two-level tree, the others in queues of their own quota;
quota is plenty, so one round admits every head and the order of the admissions is the order the
cycle tried them. Kueue's cases with the PrioritySortingWithinCohort gate off ("Priority sorting is
disabled ...", "Some workloads are preempted; Priority sorting is disabled") are not run: feature
gates other than the defaults are not modelled. Kueue leaves equal entries in the order given
(its sort is stable for so few); ours breaks ties by name, so equal entries are compared as a group.
"""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.operator.queueing import convert
from codeflare.scheduling import (
    AdmissionEngine,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)

T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def _time(offset: int) -> str:
    return f"2026-01-01T00:00:{offset:02d}Z"


def _group(cpu: str) -> tuple[ResourceGroup, ...]:
    return (ResourceGroup(("cpu",), (FlavorQuotas("default", (ResourceQuota("cpu", cpu),)),)),)


def _entry(
    name: str,
    created: int,
    priority: int = 0,
    borrowing: int = 0,
    condition: tuple[str, str, int] | None = None,
) -> dict[str, Any]:
    """A Workload as Kueue's case builds it; ``condition``: (type, reason, seconds after T0), True."""
    status: dict[str, Any] = {}
    if condition is not None:
        type_, reason, at = condition
        status["conditions"] = [
            {"type": type_, "status": "True", "reason": reason, "lastTransitionTime": _time(at)}
        ]
    requests = {"cpu": "1"}
    pod_set = {
        "name": "main",
        "count": 1,
        "template": {"spec": {"containers": [{"resources": {"requests": requests}}]}},
    }
    return {
        "metadata": {"namespace": "ns", "name": name, "creationTimestamp": _time(created)},
        "spec": {"queueName": f"lq-{name}", "priority": priority, "podSets": [pod_set]},
        "status": status,
        "borrowing": borrowing,  # where its queue is put (not part of the Workload)
    }


EVICTED = ("Evicted", "PodsReadyTimeout", 2)
INPUT = [
    _entry("old_borrowing", 0, borrowing=1),
    _entry("old", 1),
    _entry("new", 3),
    _entry("high_pri_borrowing", 3, priority=1, borrowing=1),
    _entry("new_high_pri", 4, priority=1),
    _entry("new_borrowing", 3, borrowing=1),
    _entry("evicted_borrowing", 1, borrowing=1, condition=EVICTED),
    _entry("recently_evicted", 0, condition=EVICTED),
    _entry("high_pri_borrowing_more", 3, priority=1, borrowing=2),
]
PREEMPTED = [
    _entry("old-mid-recently-preempted-in-queue", 0, 1, condition=("Preempted", "InClusterQueue", 5)),
    _entry(
        "old-mid-recently-reclaimed-while-borrowing", 0, 1,
        condition=("Preempted", "InCohortReclaimWhileBorrowing", 6),
    ),
    _entry(
        "old-mid-more-recently-reclaimed-while-borrowing", 0, 1,
        condition=("Preempted", "InCohortReclaimWhileBorrowing", 7),
    ),
    _entry("old-mid-not-preempted-yet", 1, 1),
    _entry("preemptor", 7, 2),
]  # fmt: skip
# name: (input, waitForPodsReady.requeuingStrategy.timestamp, the order in groups of equal entries)
CASES = {
    "Priority sorting is enabled (default) using pods-ready Eviction timestamp (default)": (
        INPUT, "Eviction",
        [["new_high_pri"], ["old"], ["recently_evicted"], ["new"], ["high_pri_borrowing"], ["old_borrowing"],
         ["evicted_borrowing"], ["new_borrowing"], ["high_pri_borrowing_more"]],
    ),
    "Priority sorting is enabled (default) using pods-ready Creation timestamp": (
        INPUT, "Creation",
        [["new_high_pri"], ["recently_evicted"], ["old"], ["new"], ["high_pri_borrowing"], ["old_borrowing"],
         ["evicted_borrowing"], ["new_borrowing"], ["high_pri_borrowing_more"]],
    ),
    "Some workloads are preempted; Priority sorting is enabled": (
        PREEMPTED, "Eviction",
        [["preemptor"],
         ["old-mid-recently-preempted-in-queue", "old-mid-recently-reclaimed-while-borrowing",
          "old-mid-more-recently-reclaimed-while-borrowing"],
         ["old-mid-not-preempted-yet"]],
    ),
}  # fmt: skip


def _engine(entries: list[dict[str, Any]]) -> AdmissionEngine:
    engine = AdmissionEngine()
    engine.add_resource_flavor(ResourceFlavor("default"))
    engine.add_cluster_queue(ClusterQueue("lender", _group("100"), cohort="flat"))
    engine.add_cohort(Cohort("root", resource_groups=_group("100")))
    engine.add_cohort(Cohort("mid", parent="root"))
    for entry in entries:
        name = entry["metadata"]["name"]
        cohort = {0: None, 1: "flat", 2: "mid"}[entry["borrowing"]]
        engine.add_cluster_queue(
            ClusterQueue(f"cq-{name}", _group("1" if cohort is None else "0"), cohort=cohort)
        )
        engine.add_local_queue(LocalQueue("ns", f"lq-{name}", f"cq-{name}"))
    return engine


@pytest.mark.parametrize("case", list(CASES))
def test_cycle_tries_heads_in_kueues_entry_order(case: str) -> None:
    entries, timestamp, groups = CASES[case]
    engine = _engine(entries)
    for entry in entries:
        engine.add_workload(convert.workload(entry, requeuing_timestamp=timestamp))
    admitted = [key.split("/")[1] for key in engine.schedule(T0 + 60).admissions]
    assert len(admitted) == len(entries)
    sizes = [len(group) for group in groups]
    got = [set(admitted[sum(sizes[:i]) : sum(sizes[: i + 1])]) for i in range(len(groups))]
    assert got == [set(group) for group in groups]


@pytest.mark.parametrize(
    ("condition", "timestamp", "queued_from"),
    [
        (("Evicted", "PodsReadyTimeout", 2), "Eviction", 2),
        (("Evicted", "PodsReadyTimeout", 2), "Creation", 0),
        (("Evicted", "AdmissionCheck", 2), "Creation", 2),
        (("Evicted", "Preempted", 2), "Eviction", 0),
        (("Preempted", "InCohortReclaimWhileBorrowing", 2), "Eviction", 0),
        (None, "Eviction", 0),
    ],
)
def test_queue_order_time_is_kueues_queue_order_timestamp(
    condition: tuple[str, str, int] | None, timestamp: str, queued_from: int
) -> None:
    """pkg/workload/workload.go GetQueueOrderTimestamp (gate PrioritySortingWithinCohort on)."""
    assert convert.queue_order_time(_entry("w", 0, condition=condition), timestamp) == T0 + queued_from
