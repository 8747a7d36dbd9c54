"""Kueue v0.14.8 test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go, as data.

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
    cluster_queue,
    cohort,
    condition,
    counts,
    create,
    evicted,
    finish,
    flavor,
    local_queue,
    lq_counts,
    next_second,
    pending,
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
    (
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
    ),
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
