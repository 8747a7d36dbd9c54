"""Kueue v0.14.8 test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go, the
admission fair sharing cases ("Using AdmissionFairSharing at ClusterQueue level" and "at Cohort
level"), as data; then the admission fair sharing cases added by v0.19.2 and Kueue's main branch
(their Case source says which).

They run against an operator with ``queueing.admissionFairSharing`` (half-life 1 s, sampling
interval 1 s, as Kueue's suite starts its manager for these Describes) and fair sharing on
(``test_admission_fairsharing_controllers.py``). Kueue's "Scheduler with AdmissionFairSharing =
nil" case runs with the other fair-sharing cases (an operator without admission fair sharing).
Kueue's test finishes the saturating workloads together (``util.FinishWorkloads``); ours finishes
them one after the other, and the operator may admit between the two: each case's expectation
holds either way, as noted where it matters.
"""

from __future__ import annotations

from tests.conformance.controller_dsl import (
    Case,
    Step,
    admitted,
    admitted_count,
    cluster_queue,
    counts,
    create,
    evicted,
    finish,
    flavor,
    local_queue,
    lq_usage,
    next_second,
    patch,
    pending,
    quotas,
    workload,
)

F = "fair_sharing_test.go"
AFS_CASES: dict[str, Case] = {}
DEFAULT = flavor("default")
USAGE_BASED = {"admissionMode": "UsageBasedAdmissionFairSharing"}


def _case(key: str, objects: tuple, *steps: Step, differs: str = "", version: str = "") -> None:  # type: ignore[type-arg]
    """A case of Kueue v0.14.8 unless ``version`` names the release (or ``main``) it comes from."""
    AFS_CASES[f"{F}: {key}"] = Case(f"{F} ({version})" if version else F, objects, steps, differs)


def cq_level() -> tuple[dict, ...]:  # type: ignore[type-arg]
    """cq1: 8 cpu, usage-based; lq-a, lq-b and lq-c of weight 1 on it."""
    return (
        DEFAULT,
        cluster_queue("cq1", quotas("default", cpu="8"), admissionScope=USAGE_BASED),
        *(local_queue(f"lq-{x}", "cq1", weight="1") for x in "abc"),
    )


def cohort_level() -> tuple[dict, ...]:  # type: ignore[type-arg]
    """cq1 (16 cpu, StrictFIFO, no preemption, usage-based) and cq2 (16 cpu, reclaims) in cohort
    "all"; lq-a and lq-b on cq1, lq-c on cq2."""
    reclaim = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    return (
        DEFAULT,
        cluster_queue(
            "cq1", quotas("default", cpu="16"), cohort="all", queueingStrategy="StrictFIFO",
            preemption={"withinClusterQueue": "Never"}, admissionScope=USAGE_BASED,
        ),
        cluster_queue("cq2", quotas("default", cpu="16"), cohort="all", preemption=reclaim),
        local_queue("lq-a", "cq1", weight="1"),
        local_queue("lq-b", "cq1", weight="1"),
        local_queue("lq-c", "cq2", weight="1"),
    )  # fmt: skip


def four(name: str, lq: str) -> dict:  # type: ignore[type-arg]
    return workload(name, lq, cpu="4")


_case(
    "Using AdmissionFairSharing at ClusterQueue level / "
    "admits one workload from each LocalQueue when quota is limited",
    cq_level(),
    create(four("a0", "lq-a"), four("b0", "lq-b")),
    admitted("cq1", "a0", "b0"),
    create(four("a1", "lq-a"), four("a2", "lq-a")),
    counts("cq1", 2, 2),
    create(four("b1", "lq-b"), four("b2", "lq-b")),
    counts("cq1", 4, 2),
    lq_usage("lq-a", ">", 3_900),
    lq_usage("lq-b", ">", 3_900),
    finish("a0", "b0"),
    admitted_count("cq1", 1, "a1", "a2"),
    admitted_count("cq1", 1, "b1", "b2"),
)
_case(
    "Using AdmissionFairSharing at ClusterQueue level / "
    "prioritizes workloads from less active LocalQueues to maintain fairness",
    cq_level(),
    create(four("a0", "lq-a"), four("a1", "lq-a")),
    admitted("cq1", "a0", "a1"),
    create(four("a2", "lq-a"), four("a3", "lq-a")),
    counts("cq1", 2, 2),
    create(four("b0", "lq-b")),
    counts("cq1", 3, 2),
    lq_usage("lq-a", ">", 7_500),
    lq_usage("lq-b", "==", 0),
    finish("a0", "a1"),
    admitted("cq1", "b0"),
)
_case(
    "Using AdmissionFairSharing at ClusterQueue level / "
    "admits workload from new LocalQueue when all others have high usage",
    cq_level(),
    create(four("a0", "lq-a"), four("b0", "lq-b")),
    admitted("cq1", "a0", "b0"),
    create(four("a1", "lq-a"), four("a2", "lq-a"), four("b1", "lq-b"), four("b2", "lq-b")),
    counts("cq1", 4, 2),
    create(four("c0", "lq-c")),
    counts("cq1", 5, 2),
    lq_usage("lq-a", ">", 3_900),
    lq_usage("lq-b", ">", 3_900),
    lq_usage("lq-c", "==", 0),
    finish("a0", "b0"),
    admitted("cq1", "c0"),
)
_case(
    "Using AdmissionFairSharing at ClusterQueue level / "
    "admits workloads from less active LocalQueues after quota is released",
    cq_level(),
    create(four("a0", "lq-a"), four("a1", "lq-a")),
    admitted("cq1", "a0", "a1"),
    create(four("b0", "lq-b"), four("b1", "lq-b")),
    counts("cq1", 2, 2),
    create(four("c0", "lq-c")),
    counts("cq1", 3, 2),
    lq_usage("lq-a", ">", 7_500),
    lq_usage("lq-b", "==", 0),
    lq_usage("lq-c", "==", 0),
    finish("a0", "a1"),
    admitted_count("cq1", 1, "b0", "b1"),
    admitted("cq1", "c0"),
)
_case(
    "Using AdmissionFairSharing at Cohort level / should promote a workload from LQ with lower recent usage",
    cohort_level(),
    create(workload("a0", "lq-a", cpu="32")),
    admitted("cq1", "a0"),
    lq_usage("lq-a", ">", 0),
    create(workload("a1", "lq-a", cpu="32"), workload("b1", "lq-b", cpu="32")),
    finish("a0"),
    admitted("cq1", "b1"),
    pending("a1"),
)
_case(
    "Using AdmissionFairSharing at Cohort level / should preempt a workload from LQ with higher recent usage",
    cohort_level(),
    create(
        workload("a-high", "lq-a", cpu="20", priority=10), workload("b-low", "lq-b", cpu="12", priority=1)
    ),
    admitted("cq1", "a-high", "b-low"),
    lq_usage("lq-a", ">", 12_000),
    create(workload("c0", "lq-c", cpu="10")),
    evicted("a-high", reason="Preempted"),
    admitted("cq2", "c0"),
)


# -- Kueue v0.19.2 and main (cases added to fair_sharing_test.go after v0.14.8) -------------------
_case(
    "Using AdmissionFairSharing at ClusterQueue level / "
    "should update consumed resources and subtract entry penalties on workload admission",
    cq_level(),
    create(four("a1", "lq-a")),
    admitted("cq1", "a1"),
    lq_usage("lq-a", ">", 0),
    create(four("a2", "lq-a")),
    admitted("cq1", "a2"),
    lq_usage("lq-a", ">", 3_900),
    differs="Kueue also reads its queue manager's ledger (AfsUsageLedger.HasPendingPenalty: no entry "
    "penalty left once the workload is admitted), which no API shows; the consumed resources the "
    "LocalQueue reports are compared (our engine settles the penalty at admission, scheduling/afs.py).",
    version="v0.19.2",
)
_case(
    "Self-triggered reconciles do not truncate CPU / "
    "should maintain non-zero CPU ConsumedResources across sampling intervals",
    (
        DEFAULT,
        cluster_queue("cq-afs-cpu", quotas("default", cpu="4"), cohort="cohort"),
        local_queue("lq-afs-cpu", "cq-afs-cpu"),
    ),
    create(workload("wl", "lq-afs-cpu", cpu="500m")),
    admitted("cq-afs-cpu", "wl"),
    lq_usage("lq-afs-cpu", ">", 0),
    next_second(),
    next_second(),
    lq_usage("lq-afs-cpu", ">", 0),
    next_second(),
    next_second(),
    lq_usage("lq-afs-cpu", ">", 0),
    differs="Kueue checks the CPU stays above zero with gomega.Consistently (ConsistentDuration); the "
    "DSL has no such step, so it is read again after two and after four more seconds (two and four "
    "sampling intervals).",
    version="v0.19.2",
)
_case(
    "Using AdmissionFairSharing at Cohort level / "
    "admits from the LocalQueue whose weight is raised through the API",
    cohort_level(),
    create(workload("b-usage", "lq-b", cpu="32")),
    admitted("cq1", "b-usage"),
    lq_usage("lq-b", ">", 0),
    finish("b-usage"),
    create(workload("blocker", "lq-a", cpu="32")),
    admitted("cq1", "blocker"),
    create(workload("a0", "lq-a", cpu="32"), workload("b0", "lq-b", cpu="32")),
    pending("a0", "b0"),
    patch("LocalQueue", "lq-a", {"spec": {"fairSharing": {"weight": "1000000"}}}),
    finish("blocker"),
    admitted("cq1", "a0"),
    pending("b0"),
    version="main (after v0.19.2)",
)
