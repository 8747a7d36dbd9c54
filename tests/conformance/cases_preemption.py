"""Kueue v0.14.8 test/integration/singlecluster/scheduler/preemption_test.go, ported as data."""

from __future__ import annotations

from tests.conformance.cases_common import (
    HIGH,
    LOW,
    MID,
    RECLAIM_ANY,
    P,
    case,
    cq_lq,
)
from tests.conformance.controller_dsl import (
    admitted,
    cluster_queue,
    condition,
    create,
    evicted,
    finish,
    flavor,
    local_queue,
    next_second,
    pending,
    quotas,
    workload,
)

# -- preemption_test.go ----
ALPHA = flavor("alpha")
SINGLE = (
    ALPHA,
    cluster_queue(
        "cq", quotas("alpha", cpu="4"), preemption={"withinClusterQueue": "LowerOrNewerEqualPriority"}
    ),
    local_queue("q", "cq"),
)
case(
    f"{P}: In a single ClusterQueue / Should preempt Workloads with lower priority when there is not "
    "enough quota",
    SINGLE,
    create(
        workload("low-wl-1", "q", cpu="1", priority=LOW),
        workload("low-wl-2", "q", cpu="1", priority=LOW),
        workload("mid-wl", "q", cpu="1", priority=MID),
        workload("high-wl-1", "q", cpu="1", priority=HIGH),
    ),
    admitted("cq", "low-wl-1", "low-wl-2", "mid-wl", "high-wl-1"),
    create(workload("low-wl-3", "q", cpu="1", priority=LOW)),
    pending("low-wl-3"),
    create(workload("high-wl-2", "q", cpu="2", priority=HIGH)),
    evicted("low-wl-1", "low-wl-2", reason="Preempted"),
    admitted("cq", "high-wl-2", "mid-wl", "high-wl-1"),
    pending("low-wl-1", "low-wl-2"),
)
case(
    f"{P}: In a single ClusterQueue / Should retry on failed preemptions",
    SINGLE,
    create(workload("low-wl", "q", cpu="3", priority=LOW)),
    admitted("cq", "low-wl"),
    create(workload("high-wl", "q", cpu="3", priority=HIGH)),
    evicted("low-wl", reason="Preempted"),
    admitted("cq", "high-wl"),
    pending("low-wl"),
    differs="Kueue makes the first eviction write fail on purpose; our test does not inject write failures "
    "here (tests/operator/test_conflicts.py covers conflicting writes), so only the outcome is ported.",
)
case(
    f"{P}: In a single ClusterQueue / Should preempt newer Workloads with the same priority when "
    "there is not "
    "enough quota",
    SINGLE,
    create(workload("wl-1", "q", cpu="1", priority=LOW), workload("wl-2", "q", cpu="1", priority=LOW)),
    admitted("cq", "wl-1", "wl-2"),
    next_second(),
    create(workload("wl-3", "q", cpu="3", priority=LOW)),
    pending("wl-3"),
    next_second(),
    create(workload("wl-4", "q", cpu="1", priority=LOW)),
    admitted("cq", "wl-1", "wl-2", "wl-4"),
    pending("wl-3"),
    finish("wl-1"),
    evicted("wl-4", reason="Preempted"),
    admitted("cq", "wl-3"),
    pending("wl-4"),
)
case(
    f"{P}: In a single ClusterQueue / Should include job UID in preemption condition when the label is set",
    SINGLE,
    create(workload("low", "q", cpu="4", priority=LOW)),
    admitted("cq", "low"),
    create(workload("high", "q", cpu="4", priority=HIGH)),
    evicted("low", reason="Preempted"),
    condition("Workload", "low", "Preempted", "True", "InClusterQueue"),
    admitted("cq", "high"),
    differs="Kueue's preemption message names the preemptor's UID and job UID; ours names the preemptor "
    "workload, so only the Preempted condition's reason (InClusterQueue) is compared.",
)
COHORT3 = (
    ALPHA,
    *cq_lq("alpha-cq", quotas("alpha", cpu="2"), cohort="all", preemption=RECLAIM_ANY),
    *cq_lq("beta-cq", quotas("alpha", cpu="2"), cohort="all"),
    *cq_lq("gamma-cq", quotas("alpha", cpu="2"), cohort="all", preemption=RECLAIM_ANY),
)
case(
    f"{P}: In a ClusterQueue that is part of a cohort / Should preempt Workloads in the cohort "
    "borrowing quota, "
    "when the ClusterQueue is using less than nominal quota",
    COHORT3,
    create(workload("alpha-low", "alpha-cq", cpu="1", priority=LOW)),
    create(workload("beta-mid", "beta-cq", cpu="1", priority=MID)),
    create(workload("beta-high", "beta-cq", cpu="4", priority=HIGH)),
    admitted("alpha-cq", "alpha-low"),
    admitted("beta-cq", "beta-mid", "beta-high"),
    create(workload("alpha-mid", "alpha-cq", cpu="2", priority=MID)),
    evicted("alpha-low", "beta-mid", reason="Preempted"),
    admitted("alpha-cq", "alpha-mid"),
    admitted("beta-cq", "beta-high"),
    pending("alpha-low", "beta-mid"),
    finish("alpha-mid"),
    admitted("alpha-cq", "alpha-low"),
    admitted("beta-cq", "beta-mid", "beta-high"),
)
case(
    f"{P}: In a ClusterQueue that is part of a cohort / Should not preempt Workloads in the cohort, if the "
    "ClusterQueue requires borrowing",
    COHORT3,
    create(workload("alpha-high-1", "alpha-cq", cpu="2", priority=HIGH)),
    create(workload("beta-low", "beta-cq", cpu="4", priority=LOW)),
    admitted("alpha-cq", "alpha-high-1"),
    admitted("beta-cq", "beta-low"),
    create(workload("alpha-high-2", "alpha-cq", cpu="2", priority=HIGH)),
    pending("alpha-high-2"),
    admitted("alpha-cq", "alpha-high-1"),
    admitted("beta-cq", "beta-low"),
)
case(
    f"{P}: In a ClusterQueue that is part of a cohort / Should preempt all necessary workloads in concurrent "
    "scheduling with different priorities",
    COHORT3,
    create(
        workload("beta-mid", "beta-cq", cpu="3", priority=MID),
        workload("beta-high", "beta-cq", cpu="3", priority=HIGH),
    ),
    admitted("beta-cq", "beta-mid", "beta-high"),
    create(
        workload("alpha-mid", "alpha-cq", cpu="2", priority=MID),
        workload("gamma-mid", "gamma-cq", cpu="2", priority=MID),
    ),
    evicted("beta-mid", "beta-high", reason="Preempted"),
    admitted("alpha-cq", "alpha-mid"),
    admitted("gamma-cq", "gamma-mid"),
)
case(
    f"{P}: In a cohort with StrictFIFO / Should reclaim from cohort even if another CQ has pending workloads",
    (
        flavor("one"),
        cluster_queue(
            "alpha-cq",
            quotas("one", cpu="2"),
            cohort="all",
            queueingStrategy="StrictFIFO",
            preemption=RECLAIM_ANY,
        ),
        cluster_queue(
            "beta-cq",
            quotas("one", cpu="2"),
            cohort="all",
            queueingStrategy="StrictFIFO",
            preemption=RECLAIM_ANY,
        ),
        local_queue("alpha-lq", "alpha-cq"),
        local_queue("beta-lq", "beta-cq"),
    ),
    create(workload("use-all", "alpha-lq", cpu="4", priority=1)),
    admitted("alpha-cq", "use-all"),
    create(workload("pending", "alpha-lq", cpu="1", priority=0)),
    pending("pending"),
    create(workload("preemptor", "beta-lq", cpu="1", priority=-1)),
    evicted("use-all", reason="Preempted"),
    admitted("beta-cq", "preemptor"),
    pending("use-all"),
)
case(
    f"{P}: With lending limit / Should be able to preempt when lending limit enabled",
    (
        ALPHA,
        cluster_queue(
            "prod-cq",
            quotas("alpha", cpu=("5", None, "4")),
            cohort="all",
            preemption={"reclaimWithinCohort": "Any"},
        ),
        cluster_queue("dev-cq", quotas("alpha", cpu="5"), cohort="all"),
        local_queue("prod-queue", "prod-cq"),
        local_queue("dev-queue", "dev-cq"),
    ),
    create(
        workload("wl-1", "dev-queue", cpu="4", priority=0), workload("wl-2", "dev-queue", cpu="5", priority=1)
    ),
    admitted("dev-cq", "wl-1", "wl-2"),
    create(workload("wl-3", "prod-queue", cpu="4")),
    evicted("wl-1", reason="Preempted"),
    admitted("prod-cq", "wl-3", flavors={"cpu": "alpha"}),
)
