"""Kueue test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go, as data: the
cases of v0.14.8, then those added by v0.19.2 (``_case19``: their Case source says the version).

These run against an operator with ``queueing.fairSharing.enable`` (Kueue's suite starts its
manager with fair sharing on), so they have their own registry and control plane
(``test_fairsharing_controllers.py``). Kueue's ``ExpectClusterQueueWeightedShareMetric`` is
checked on ``status.fairSharing.weightedShare``, which the operator writes with the same value.
"""

from __future__ import annotations

from tests.conformance.controller_dsl import (
    Case,
    Step,
    admitted,
    admitted_count,
    cluster_queue,
    cohort,
    condition,
    counts,
    create,
    delete,
    evicted,
    finish,
    flavor,
    gone,
    lacks_condition,
    local_queue,
    lq_counts,
    next_second,
    patch,
    pending,
    pod_set,
    quotas,
    spec_is,
    workload,
)

F = "fair_sharing_test.go"
FAIR_CASES: dict[str, Case] = {}
DEFAULT = flavor("default")
RECLAIM = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}


def _case(key: str, objects: tuple, *steps: Step, differs: str = "") -> None:  # type: ignore[type-arg]
    FAIR_CASES[f"{F}: {key}"] = Case(F, objects, steps, differs)


def share(cq: str, value: int, kind: str = "ClusterQueue") -> Step:
    return spec_is(kind, cq, "status.fairSharing.weightedShare", value)


def queues(*specs: tuple[str, str, dict | None], cohort_name: str = "all") -> tuple[dict, ...]:  # type: ignore[type-arg]
    out: list[dict] = [DEFAULT]  # type: ignore[type-arg]
    for name, cpu, preemption in specs:
        out.append(cluster_queue(name, quotas("default", cpu=cpu), cohort=cohort_name, preemption=preemption))
        out.append(local_queue(name, name))
    return tuple(out)


def one_cpu(names: str, queue: str) -> tuple[dict, ...]:  # type: ignore[type-arg]
    return tuple(workload(name, queue, cpu="1") for name in names.split())


def zero_weight_queues() -> tuple[dict, ...]:  # type: ignore[type-arg]
    """top-cohort (8 CPUs) > best-effort-cq-a, best-effort-cq-b (0 CPUs, weight 0, reclaim Any)."""
    return (
        DEFAULT,
        cohort("top-cohort", quotas("default", cpu="8")),
        *(
            obj
            for name in ("best-effort-cq-a", "best-effort-cq-b")
            for obj in (
                cluster_queue(
                    name,
                    quotas("default", cpu="0"),
                    cohort="top-cohort",
                    fairSharing={"weight": "0"},
                    preemption={"reclaimWithinCohort": "Any"},
                ),
                local_queue(name, name),
            )
        ),
    )


_case(
    "Preemption is disabled / Admits workloads respecting fair share",
    queues(("a", "3", None), ("b", "1", None), ("shared", "4", None)),
    create(*one_cpu("a0 a1 a2 a3 a4 a5 a6 a7 a8 a9", "a")),
    admitted("a", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"),
    pending("a8", "a9"),
    share("a", 625),
    share("b", 0),
    share("shared", 0),
    next_second(),
    create(*one_cpu("b0 b1 b2 b3 b4", "b")),
    pending("b0", "b1", "b2", "b3", "b4"),
    counts("b", 5, 0),
    # the freed CPUs go to the queue whose share after admission is lower, one at a time
    finish("a0"),
    admitted("b", "b0"),
    finish("a1"),
    admitted("b", "b1"),
    finish("a2"),
    admitted("b", "b2"),
    finish("a3"),
    admitted("a", "a8"),
    counts("a", 1, 5),
    counts("b", 2, 3),
    share("a", 250),
    share("b", 250),
    finish("a4"),
    admitted("a", "a9"),
    finish("a5"),
    admitted("b", "b3"),
    counts("a", 0, 4),
    counts("b", 1, 4),
    share("a", 125),
    share("b", 375),
    share("shared", 0),
    differs="Kueue finishes 4 (then 2) running workloads of cqA at once (FinishRunningWorkloadsInCQ) and "
    "checks the totals; we finish them one at a time and check each admission, which gives those totals "
    "(1 from cqA and 3 from cqB, then 1 and 1) in the order the shares decide.",
)
_case(
    "Preemption is disabled / Shouldn't reserve quota because not enough resources",
    queues(("a", "3", None), ("b", "1", None), ("shared", "4", None)),
    create(workload("big", "a", cpu="10")),
    pending("big", message="8"),
    differs="Kueue's message names the flavor assigner's arithmetic (maximum capacity (8)); ours says the "
    "same numbers in the engine's words, so only the reason and the maximum are compared.",
)
_case(
    "Preemption is enabled / Admits workloads respecting fair share",
    queues(("a", "3", RECLAIM), ("b", "3", RECLAIM), ("c", "3", RECLAIM)),
    create(*one_cpu("a0 a1 a2 a3 a4 a5 a6 a7 a8 a9", "a")),
    counts("a", 1, 9),
    share("a", 667),
    share("b", 0),
    share("c", 0),
    create(*one_cpu("b0 b1 b2 b3 b4", "b")),
    # b reclaims its nominal quota, then stops where taking more would leave it above a's share
    counts("b", 1, 4),
    counts("a", 5, 5),
    share("a", 223),
    share("b", 112),
    share("c", 0),
    create(workload("c0", "c", cpu="1")),
    admitted("c", "c0"),
    counts("a", 6, 4),
    share("a", 112),
    share("b", 112),
    share("c", 0),
    differs="Kueue's test completes the evictions itself (FinishEvictionOfWorkloadsInCQ, no job controller); "
    "our operator evicts and requeues the preempted Workloads, so the evicted ones count as pending.",
)
# root > first-left > (second-left > cqL, second-right > cqR); root > first-right > bank (10 CPUs)
_case(
    "using hierarchical cohorts / admits workloads respecting fair share",
    (
        DEFAULT,
        cohort("first-left", parent="root"),
        cohort("first-right", parent="root"),
        cohort("second-left", parent="first-left"),
        cohort("second-right", parent="first-left"),
        cohort("bank", quotas("default", cpu="10"), parent="first-right"),
        cluster_queue("second-left", quotas("default", cpu="2"), cohort="second-left"),
        cluster_queue("second-right", quotas("default", cpu="2"), cohort="second-right"),
        local_queue("second-left", "second-left"),
        local_queue("second-right", "second-right"),
    ),
    share("first-left", 0, kind="Cohort"),
    share("first-right", 0, kind="Cohort"),
    share("bank", 0, kind="Cohort"),
    create(*one_cpu("l0 l1 l2 l3 l4", "second-left")),
    create(*one_cpu("r0 r1 r2 r3 r4", "second-right")),
    counts("second-left", 0, 5),
    counts("second-right", 0, 5),
    share("first-left", 429, kind="Cohort"),
    share("first-right", 0, kind="Cohort"),
    share("second-left", 215, kind="Cohort"),
    share("second-right", 215, kind="Cohort"),
    share("bank", 0, kind="Cohort"),
    differs="Kueue creates the workloads alternating between the queues; we create left's five, then "
    "right's (all ten fit either way).",
)
# root (12 CPUs) > best-effort (weight 0.5), research > chemistry, physics, llm (weight 2.0)
LOWER = {"reclaimWithinCohort": "LowerPriority"}
_case(
    "using hierarchical cohorts / preempts workloads to enforce fair share",
    (
        DEFAULT,
        cohort("root", quotas("default", cpu="12")),
        cohort("research", parent="root"),
        cohort("chemistry", parent="research"),
        cohort("physics", parent="research"),
        cohort("llm", parent="research", weight="2.0"),
        cohort("best-effort", parent="root", weight="0.5"),
        *(
            obj
            for name in ("chemistry", "physics", "llm", "best-effort")
            for obj in (
                cluster_queue(
                    f"{name}-queue",
                    quotas("default", cpu="0"),
                    cohort=name,
                    preemption=None if name == "best-effort" else LOWER,
                ),
                local_queue(f"{name}-queue", f"{name}-queue"),
            )
        ),
    ),
    create(
        *(
            workload(f"{q[0]}low{i}", f"{q}-queue", cpu="1", priority=-1)
            for i in range(6)
            for q in ("best-effort", "physics")
        )
    ),
    counts("best-effort-queue", 0, 6),
    counts("physics-queue", 0, 6),
    share("best-effort", 1000, kind="Cohort"),
    share("physics", 500, kind="Cohort"),
    next_second(),
    create(
        *(
            workload(f"{q[0]}{i}", f"{q}-queue", cpu="1", priority=100)
            for i in range(6)
            for q in ("chemistry", "physics", "llm", "best-effort")
        )
    ),
    share("best-effort", 667, kind="Cohort"),
    share("research", 667, kind="Cohort"),
    share("chemistry", 167, kind="Cohort"),
    share("physics", 167, kind="Cohort"),
    share("llm", 167, kind="Cohort"),
    spec_is("ClusterQueue", "best-effort-queue", "status.admittedWorkloads", 4),
    spec_is("ClusterQueue", "chemistry-queue", "status.admittedWorkloads", 2),
    spec_is("ClusterQueue", "physics-queue", "status.admittedWorkloads", 2),
    spec_is("ClusterQueue", "llm-queue", "status.admittedWorkloads", 4),
    differs="Kueue's test completes 2 evictions in best-effort and 4 in physics by hand "
    "(FinishEvictionOfWorkloadsInCQ); our operator evicts and requeues by itself, so only the end "
    "state is compared (shares and admitted counts).",
)
_case(
    "Preemption is enabled and CQs have 0 weight / should not cause an infinite preemption cycle",
    zero_weight_queues(),
    create(
        workload("a1", "best-effort-cq-a", cpu="4", priority=9001),
        workload("a2", "best-effort-cq-a", cpu="4", priority=100),
    ),
    admitted("best-effort-cq-a", "a1", "a2"),
    create(workload("b1", "best-effort-cq-b", cpu="4", priority=100)),
    # a2 goes, being lower priority than a1; then nothing more moves
    evicted("a2", reason="Preempted"),
    condition("Workload", "a2", "Preempted", "True", "InCohortFairSharing"),
    admitted("best-effort-cq-b", "b1"),
    admitted("best-effort-cq-a", "a1"),
    pending("a2"),
    counts("best-effort-cq-a", 1, 1),
    counts("best-effort-cq-b", 0, 1),
)
_case(
    "Scheduler with AdmissionFairSharing = nil / Using AdmissionFairSharing at Cohort level / "
    "should ignore FairSharing",
    (
        DEFAULT,
        cluster_queue(
            "cq1",
            quotas("default", cpu="32"),
            cohort="all",
            queueingStrategy="StrictFIFO",
            preemption={"withinClusterQueue": "Never"},
            admissionScope={"admissionMode": "UsageBasedAdmissionFairSharing"},
        ),
        local_queue("lq-a", "cq1", weight="1"),
    ),
    create(workload("a0", "lq-a", cpu="32")),
    admitted("cq1", "a0"),
    lq_counts("lq-a", 0, 1),
    # the operator runs without admission fair sharing: no usage is sampled or written
    spec_is("LocalQueue", "lq-a", "status.fairSharing", None),
    differs="Kueue checks status.fairSharing once the workload is admitted; so do we, after the "
    "LocalQueue's counts are written (so a status write has happened).",
)

# -- Kueue v0.19.2 (the cases added to fair_sharing_test.go after v0.14.8) ------------------------
V19 = "v0.19.2"
F1, F2 = flavor("flavor1"), flavor("flavor2")
TRY_NEXT = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
WEIGHT_1 = {"weight": "1"}


def _case19(key: str, objects: tuple, *steps: Step, differs: str = "", version: str = V19) -> None:  # type: ignore[type-arg]
    FAIR_CASES[f"{F}: {key}"] = Case(f"{F} ({version})", objects, steps, differs)


def fair_cq(name: str, *flavors: dict, cohort_name: str) -> tuple[dict, ...]:  # type: ignore[type-arg]
    """``createQueue`` of the several-flavor Describes: weight 1, TryNextFlavor on borrow and
    preempt, reclaim Any / within LowerPriority; and its LocalQueue of the same name."""
    return (
        cluster_queue(
            name,
            *flavors,
            cohort=cohort_name,
            fairSharing=WEIGHT_1,
            flavorFungibility=TRY_NEXT,
            preemption=RECLAIM,
        ),
        local_queue(name, name),
    )


_case19(
    "Preemption is enabled and CQs have 0 weight / "
    "Should prevent other workloads from stealing quota when preemptor is waiting for multiple evictions",
    (
        DEFAULT,
        cohort("thrash-cohort"),
        cluster_queue(
            "cq-1",
            quotas("default", cpu="10", memory="0"),
            cohort="thrash-cohort",
            preemption={"reclaimWithinCohort": "Any"},
        ),
        local_queue("cq-1", "cq-1"),
        cluster_queue(
            "cq-2",
            quotas("default", cpu="0", memory="10"),
            cohort="thrash-cohort",
            preemption={"reclaimWithinCohort": "Any"},
        ),
        local_queue("cq-2", "cq-2"),
    ),
    create(workload("wl-a", "cq-2", pod_set(cpu="1", memory="0"), priority=100)),
    create(workload("wl-b", "cq-2", pod_set(cpu="1", memory="0"), priority=100)),
    admitted("cq-2", "wl-a", "wl-b"),
    create(workload("preemptor", "cq-1", pod_set(cpu="10", memory="10"), priority=0)),
    evicted("wl-a", "wl-b", reason="Preempted"),
    admitted("cq-1", "preemptor"),
    pending("wl-a", "wl-b"),
    counts("cq-2", 2, 0),
    differs="Kueue's test completes the two evictions by hand, one at a time "
    "(FinishEvictionForWorkloads, feature gate PrioritizePreemptorWorkloads on), and checks wlA is not "
    "re-admitted in between; our operator's eviction write removes the admission at once and the "
    "preemptor is admitted in the next cycle, so there is no in-between to observe: the end state is "
    "compared (both preempted and pending, the preemptor admitted).",
)
_case19(
    "Preemption is enabled and CQs have 0 weight / should have NaN weighted share metric",
    zero_weight_queues(),
    create(workload("a1", "best-effort-cq-a", cpu="4", priority=100)),
    admitted("best-effort-cq-a", "a1"),
    counts("best-effort-cq-a", 0, 1),
    share("best-effort-cq-a", 2**63 - 1),
    differs="Kueue reads the kueue_cluster_queue_weighted_share gauge (NaN for weight 0 while borrowing); "
    "we serve no metrics, so the ClusterQueue's status.fairSharing.weightedShare is compared: the "
    "largest int64, which is what Kueue writes there for the same state.",
)
_case19(
    "RecomputeAssignmentUponPreemptionTargetsOverlap with multiple flavors / "
    "hero workload sticks to preferred flavor if overlap resolved",
    (
        DEFAULT,
        F1,
        F2,
        cohort("cohort-a"),
        *(
            obj
            for name, cpu in (("cq-hero", "100"), ("cq-tiny", "50"), ("cq-rest", "0"))
            for obj in (
                cluster_queue(
                    name,
                    quotas("flavor1", cpu=cpu),
                    quotas("flavor2", cpu=cpu),
                    cohort="cohort-a",
                    preemption=RECLAIM,
                ),
                local_queue(name, name),
            )
        ),
    ),
    create(workload("wl-a", "cq-rest", cpu="150", priority=10)),
    admitted("cq-rest", "wl-a", flavors={"cpu": "flavor1"}),
    create(workload("wl-b", "cq-rest", cpu="150", priority=10)),
    admitted("cq-rest", "wl-b", flavors={"cpu": "flavor2"}),
    create(
        workload("hero", "cq-hero", cpu="100", priority=100),
        workload("tiny", "cq-tiny", cpu="50", priority=50),
    ),
    evicted("wl-a", reason="Preempted"),
    admitted("cq-hero", "hero", flavors={"cpu": "flavor1"}),
    admitted("cq-tiny", "tiny", flavors={"cpu": "flavor1"}),
    admitted("cq-rest", "wl-b", flavors={"cpu": "flavor2"}),
    lacks_condition("Workload", "wl-b", "Preempted"),
    differs="Kueue completes wlA's eviction by hand (FinishEvictionForWorkloads); our operator evicts "
    "it itself. Kueue's test only checks hero and tiny are admitted; we also check they are admitted "
    "in flavor1 (the preferred flavor the case's name speaks of).",
)
# root-cohort > cohort-a (0 CPUs, borrowing limit 10 per flavor) > cq-p1, cq-p2 (3 + 3), cq-p3 (2 + 4);
# root-cohort > cohort-b > cq-p4 (2 + 0)
_case19(
    "using hierarchical cohorts with several flavors / "
    "Prefers flavor with remaining guarantees at Cohort level",
    (
        DEFAULT,
        F1,
        F2,
        cohort("root-cohort"),
        *(
            cohort(
                name,
                quotas("flavor1", cpu=("0", "10")),
                quotas("flavor2", cpu=("0", "10")),
                parent="root-cohort",
                weight="1",
            )
            for name in ("cohort-a", "cohort-b")
        ),
        *fair_cq(
            "cq-p1",
            quotas("flavor1", cpu=("3", "10")),
            quotas("flavor2", cpu=("3", "10")),
            cohort_name="cohort-a",
        ),
        *fair_cq(
            "cq-p2",
            quotas("flavor1", cpu=("3", "10")),
            quotas("flavor2", cpu=("3", "10")),
            cohort_name="cohort-a",
        ),
        *fair_cq(
            "cq-p3",
            quotas("flavor1", cpu=("2", "10")),
            quotas("flavor2", cpu=("4", "10")),
            cohort_name="cohort-a",
        ),
        *fair_cq(
            "cq-p4",
            quotas("flavor1", cpu=("2", "10")),
            quotas("flavor2", cpu=("0", "10")),
            cohort_name="cohort-b",
        ),
    ),
    create(*(workload(f"p1-{i}", "cq-p1", cpu="1") for i in range(18))),
    counts("cq-p1", 0, 18),
    # cq-p1 borrows 12 of the 20 CPUs cohort-a sees; cohort-a stays within its 18 (all of it guaranteed)
    share("cq-p1", 600),
    share("cohort-a", 0, kind="Cohort"),
)


def drs_queues() -> tuple[dict, ...]:  # type: ignore[type-arg]
    """kueue#7101: root-cohort (implicit) > cohort-a (9 CPUs of flavor1) > cq-p1, cq-p2 (0 CPUs)."""
    return (
        F1,
        cohort("cohort-a", quotas("flavor1", cpu="9"), parent="root-cohort", weight="1"),
        *fair_cq("cq-p1", quotas("flavor1", cpu="0"), cohort_name="cohort-a"),
        *fair_cq("cq-p2", quotas("flavor1", cpu="0"), cohort_name="cohort-a"),
    )


P1 = tuple(f"p1-{i}" for i in range(4))
DRS_DIFFERS = (
    "Kueue completes the two evictions in cq-p1 by hand (FinishEvictionOfWorkloadsInCQ) and compares the "
    "admitted-workloads total metric (4 in cq-p1: none re-admitted); our operator evicts and requeues "
    "by itself, so the two evicted Workloads count as pending and 2 as admitted."
)


def drs_case(it: str, blockers: tuple[str, ...], size: str, p2_share: int) -> None:
    """The four Its of "ClusterQueue head is ineligible for admission due to DominantResourceShare":
    cq-p1 fills the cohort with four 2-CPU workloads; the ``blockers`` (priority 999) can't find
    enough targets; a ``size`` workload (priority 0) behind them preempts two and is admitted."""
    _case19(
        f"ClusterQueue head is ineligible for admission due to DominantResourceShare / {it}",
        drs_queues(),
        create(*(workload(name, "cq-p1", cpu="2") for name in P1)),
        admitted("cq-p1", *P1),
        *(
            (
                create(
                    *(
                        workload(f"blocker-{i}", "cq-p2", cpu=cpu, priority=999)
                        for i, cpu in enumerate(blockers)
                    )
                ),
                pending(*(f"blocker-{i}" for i in range(len(blockers)))),
                counts("cq-p2", len(blockers), 0),
                counts("cq-p1", 0, 4),
            )
            if blockers
            else ()
        ),
        create(workload("p2", "cq-p2", cpu=size, priority=0)),
        admitted("cq-p2", "p2"),
        admitted_count("cq-p1", 2, *P1),
        counts("cq-p1", 2, 2),
        counts("cq-p2", len(blockers), 1),
        share("cq-p1", 445),  # 4 * 1000 / 9, rounded up
        share("cq-p2", p2_share),
        differs=DRS_DIFFERS,
    )


drs_case("workload of size 5 preempts using LessThanInitialShare policy and admits", (), "5", 556)
drs_case(
    "workload of size 5 admits with inadmissible higher priority workload at ClusterQueue head",
    ("6",),
    "5",
    556,
)
drs_case(
    "workload of size 4 admits with inadmissible higher priority workload at ClusterQueue head",
    ("6",),
    "4",
    445,
)
drs_case("workload admits when several higher priority blocking workloads in front", ("7", "6"), "5", 556)


def head_queues() -> tuple[dict, ...]:  # type: ignore[type-arg]
    """kueue#6929: root (implicit) > cohort-a (3 CPUs of flavor1) > cq1 (0); root > cq2 (0)."""
    return (
        F1,
        cohort("cohort-a", quotas("flavor1", cpu="3"), parent="root", weight="1"),
        *fair_cq("cq1", quotas("flavor1", cpu="0"), cohort_name="cohort-a"),
        *fair_cq("cq2", quotas("flavor1", cpu="0"), cohort_name="root"),
    )


HEAD = "ClusterQueue head has inadmissible workload / "
_case19(
    HEAD + "workload which fits behind ClusterQueue head is able to admit",
    head_queues(),
    create(workload("b0", "cq2", cpu="1"), workload("b1", "cq2", cpu="1")),
    admitted("cq2", "b0", "b1"),
    create(workload("big", "cq1", cpu="4", priority=999)),
    pending("big"),
    counts("cq1", 1, 0),
    create(workload("fits", "cq1", cpu="3", priority=0)),
    evicted("b0", "b1", reason="Preempted"),
    admitted("cq1", "fits"),
    counts("cq1", 1, 1),
    counts("cq2", 2, 0),
    share("cq1", 1000),
    share("cq2", 0),
    differs="Kueue completes cq2's two evictions by hand (FinishEvictionOfWorkloadsInCQ) and compares "
    "admitted totals (cq2: 2, none re-admitted); our operator evicts and requeues by itself, so cq2's "
    "two Workloads count as pending.",
)
_case19(
    HEAD + "sticky workload becomes inadmissible. next workload admits",
    head_queues(),
    create(workload("b0", "cq2", cpu="1"), workload("b1", "cq2", cpu="1")),
    admitted("cq2", "b0", "b1"),
    create(workload("high", "cq1", cpu="3", priority=99)),
    evicted("b0", "b1", reason="Preempted"),
    admitted("cq1", "high"),
    create(workload("second", "cq1", cpu="2", priority=9)),
    pending("second"),
    counts("cq1", 1, 1),
    # the cohort shrinks under the admitted workload: nothing is evicted, nothing more admitted
    patch(
        "Cohort",
        "cohort-a",
        {
            "spec": {
                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [quotas("flavor1", cpu="2")]}]
            }
        },
    ),
    share("cq1", 1500),  # borrowing 3 of the 2 CPUs cohort-a now lends: the shrink is seen
    admitted("cq1", "high"),
    pending("second"),
    counts("cq2", 2, 0),
    share("cq2", 0),
    differs="Kueue's priority-99 workload is left waiting for the two evictions it triggered (the "
    'test completes them only later, FinishEvictionOfWorkloadsInCQ), so it is still pending ("insufficient '
    'unused quota") when the cohort shrinks to 2 CPUs, becomes NoFit ("insufficient quota"), and the '
    "2-CPU workload behind it is admitted (cq1 share 1000). Our operator's eviction write removes the "
    "admission at once, so the priority-99 workload is admitted before the cohort shrinks; the 2-CPU "
    "workload then stays pending. The sticky head that turns NoFit has no counterpart here.",
)
_case19(
    HEAD + "sticky workload deleted, next workload can admit",
    head_queues(),
    create(workload("b0", "cq2", cpu="1", priority=0), workload("b1", "cq2", cpu="1", priority=0)),
    admitted("cq2", "b0", "b1"),
    create(workload("sticky", "cq1", cpu="3", priority=99)),
    admitted("cq1", "sticky"),
    create(workload("next", "cq1", cpu="3", priority=0)),
    pending("next"),
    counts("cq1", 1, 1),
    delete("Workload", "sticky"),
    gone("Workload", "sticky"),
    admitted("cq1", "next"),
    counts("cq1", 0, 1),
    counts("cq2", 2, 0),
    share("cq1", 1000),
    share("cq2", 0),
    differs="Kueue's sticky workload waits for the evictions it triggered (completed by the test later), "
    "so it is pending when deleted and the next one is admitted once the evictions finish; our operator "
    "evicts at once, so the sticky workload is admitted first and its deletion frees the quota for the "
    "next one. The end state is Kueue's (cq1 1 admitted, share 1000; cq2 none admitted, share 0), with "
    "cq2's evicted Workloads pending.",
)
_case19(
    "Preemption is enabled in fairsharing and there are large values of quota and weights / "
    "Queue can reclaim its nominal quota",
    (
        DEFAULT,
        *(
            obj
            for name in ("a", "b")
            for obj in (
                cluster_queue(
                    name,
                    quotas("default", cpu="600"),
                    cohort="all",
                    fairSharing={"weight": "300"},
                    preemption=RECLAIM,
                ),
                local_queue(name, name),
            )
        ),
    ),
    create(*(workload(f"a{i}", "a", cpu="100") for i in range(10))),
    counts("a", 0, 10),
    create(workload("b0", "b", cpu="500")),
    admitted("b", "b0"),
    counts("a", 3, 7),
    counts("b", 0, 1),
    differs="Kueue completes the three evictions by hand (FinishEvictionOfWorkloadsInCQ); our operator "
    "evicts and requeues them, so they count as pending in cqA.",
)
_case19(
    "Preemption is enabled in fairsharing and there are best effort and guaranteed workloads / "
    "Guaranteed workloads cause preemption of a single best effort workload",
    (
        DEFAULT,
        cluster_queue("best-effort-a", quotas("default", cpu="0"), cohort="all"),
        local_queue("best-effort-a", "best-effort-a"),
        cluster_queue("best-effort-b", quotas("default", cpu="0"), cohort="all"),
        local_queue("best-effort-b", "best-effort-b"),
        cluster_queue(
            "guaranteed", quotas("default", cpu="8"), cohort="all", preemption={"reclaimWithinCohort": "Any"}
        ),
        local_queue("guaranteed", "guaranteed"),
    ),
    create(workload("be-a", "best-effort-a", cpu="4", priority=2)),
    admitted("best-effort-a", "be-a"),
    counts("best-effort-a", 0, 1),
    create(workload("be-b", "best-effort-b", cpu="4", priority=1)),
    admitted("best-effort-b", "be-b"),
    counts("best-effort-b", 0, 1),
    create(workload("g", "guaranteed", cpu="4")),
    evicted("be-b", reason="Preempted"),
    admitted("guaranteed", "g"),
    admitted("best-effort-a", "be-a"),
    lacks_condition("Workload", "be-a", "Evicted"),
    counts("best-effort-b", 1, 0),
    differs="Kueue completes be-b's eviction by hand (FinishEvictionForWorkloads) and compares the "
    "evicted-workloads metric (0 in best-effort-a, 1 in best-effort-b); we check the Evicted "
    "conditions instead (be-b Preempted, none on be-a).",
)
