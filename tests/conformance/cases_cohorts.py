"""Kueue v0.19.2 test/integration/singlecluster/scheduler/scheduler_test.go, the hierarchical
Cohort cases (Cohort objects with quotas, parents, lending and borrowing limits), as data.

They run with the other scheduler cases (``test_controllers.py``: no fair sharing), filed in the
same registry (after the others, so their test ids stay) under ``scheduler_test.go: <When> /
<It>``; their Case source names the version.
Kueue generates some Cohort names (``GeneratedName("root-")``); ours are fixed (the runner
prefixes every cluster-scoped name per case). ``ExpectPendingWorkloadsMetric(cq, active,
inadmissible)`` and ``ExpectReservingActiveWorkloadsMetric`` are compared through the
ClusterQueue's ``pendingWorkloads`` (active + inadmissible) and ``admittedWorkloads``. Where Kueue
creates one workload right after another and expects the first admitted, the case waits for the
next second in between (``creationTimestamp`` has second resolution).
"""

from __future__ import annotations

from tests.conformance.cases_common import HIGH, MID, ON_DEMAND, RECLAIM_ANY, P, S, cq_lq
from tests.conformance.controller_dsl import (
    Case,
    Step,
    admitted,
    cluster_queue,
    cohort,
    counts,
    create,
    delete,
    evicted,
    finish,
    flavor,
    gone,
    local_queue,
    next_second,
    patch,
    pending,
    pod_set,
    quotas,
    workload,
)

V19 = "v0.19.2"
COHORT_CASES: dict[str, Case] = {}  # filed into CASES after the v0.14.8 cases (controller_cases)
OD = {"cpu": "on-demand"}


def _case(when: str, it: str, objects: tuple, *steps: Step, differs: str = "", source: str = S) -> None:  # type: ignore[type-arg]
    key = f"{source}: {when} / {it}"
    COHORT_CASES[key] = Case(f"{key} ({V19})", tuple(objects), steps, differs)


def cpu(amount: str) -> dict:  # type: ignore[type-arg]
    return quotas("on-demand", cpu=amount)


def half_cpus(queue: str, *names: str) -> tuple[dict, ...]:  # type: ignore[type-arg]
    return tuple(workload(name, queue, cpu="500m") for name in names)


DIRECT = "Cohort provides resources directly"
_case(
    DIRECT,
    "Should admit workload using resources borrowed from cohort",
    (
        ON_DEMAND,
        cluster_queue("clusterqueue", cpu("0"), cohort="cohort"),
        local_queue("queue", "clusterqueue"),
    ),
    create(workload("wl", "queue", cpu="10")),
    pending("wl"),
    counts("clusterqueue", 1, 0),
    create(cohort("cohort", cpu("5"))),
    pending("wl"),
    counts("clusterqueue", 1, 0),
    patch(
        "Cohort",
        "cohort",
        {"spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [cpu("10")]}]}},
    ),
    admitted("clusterqueue", "wl", flavors=OD),
    counts("clusterqueue", 0, 1),
)
_case(
    DIRECT,
    "Should admit workload borrowing from cohort when requesting zero of a resource not in ClusterQueue",
    (
        ON_DEMAND,
        cluster_queue("clusterqueue", cpu("0"), cohort="cohort"),
        local_queue("queue", "clusterqueue"),
        cohort("cohort", cpu("10")),
    ),
    create(workload("wl", "queue", pod_set(**{"cpu": "5", "example.com/gpu": "0"}))),
    # the admission's flavors hold cpu only (no example.com/gpu key)
    admitted("clusterqueue", "wl", flavors=OD),
    differs="Kueue also checks the pod set assignment's resourceUsage has no example.com/gpu key; the DSL "
    "compares the flavors map (exactly {cpu: on-demand}), not resourceUsage.",
)
_case(
    DIRECT,
    "Should admit workload when cq switches into cohort with capacity",
    (
        ON_DEMAND,
        cluster_queue("clusterqueue", cpu("0"), cohort="impecunious-cohort"),
        local_queue("queue", "clusterqueue"),
    ),
    create(workload("wl", "queue", cpu="10")),
    pending("wl"),
    counts("clusterqueue", 1, 0),
    create(cohort("cohort", cpu("10"))),
    patch("ClusterQueue", "clusterqueue", {"spec": {"cohort": "cohort"}}),
    admitted("clusterqueue", "wl", flavors=OD),
    counts("clusterqueue", 0, 1),
)
#         root
#        /    \
#      left    right
#     /           \
#    cq            bank (10 CPUs, created later)
_case(
    DIRECT,
    "Long distance resource allows workload to be scheduled",
    (
        ON_DEMAND,
        cluster_queue("cq", cpu("0"), cohort="left"),
        local_queue("queue", "cq"),
        cohort("left", parent="root"),
        cohort("right", parent="root"),
    ),
    create(workload("wl", "queue", cpu="10")),
    pending("wl"),
    counts("cq", 1, 0),
    create(cohort("bank", cpu("10"), parent="right")),
    admitted("cq", "wl", flavors=OD),
    counts("cq", 0, 1),
)
#    root-a (1 CPU)     root-b (2 CPU)
#        |
#      child (no quota)
#        |
#       cq (0 CPU)
_case(
    DIRECT,
    "Should admit overflow workload after reparenting child cohort to a larger root",
    (
        ON_DEMAND,
        cohort("root-a", cpu("1")),
        cohort("root-b", cpu("2")),
        cohort("child", parent="root-a"),
        cluster_queue("cq", cpu("0"), cohort="child"),
        local_queue("queue", "cq"),
    ),
    create(*half_cpus("queue", "wl-1", "wl-2")),
    admitted("cq", "wl-1", "wl-2"),
    create(*half_cpus("queue", "wl-overflow")),
    pending("wl-overflow"),
    counts("cq", 1, 2),
    patch("Cohort", "child", {"spec": {"parentName": "root-b"}}),
    admitted("cq", "wl-overflow", flavors=OD),
    admitted("cq", "wl-1", "wl-2"),
    counts("cq", 0, 3),
)
DELETING = "Deleting child Cohort should update borrowable resources for parent Cohort"
# root (0) > left (0) > cq-a (10); root > right (5) > cq-b (7)
_case(
    DELETING,
    "Should not admit from stale subtree quota after deleting sibling cohort",
    (
        ON_DEMAND,
        cohort("root"),
        cohort("left", cpu("0"), parent="root"),
        cohort("right", cpu("5"), parent="root"),
        *cq_lq("cq-a", cpu("10"), cohort="left"),
        *cq_lq("cq-b", cpu("7"), cohort="right"),
    ),
    create(workload("wl-base", "cq-a", cpu="10")),
    admitted("cq-a", "wl-base", flavors=OD),
    delete("Cohort", "right"),
    gone("Cohort", "right"),
    create(workload("wl-after-delete", "cq-a", cpu="8")),
    pending("wl-after-delete"),
    differs="Kueue waits for its cohort subtree-quota gauge to be cleaned (the cache saw the deletion); "
    "we serve no metrics, so the Cohort is waited for to be gone from the API before the new workload.",
)
# root (2) > mid (2) > cq-mid (1)
_case(
    DELETING,
    "Should not allow borrowing through deleted mid-tree cohort",
    (
        ON_DEMAND,
        cohort("root", cpu("2")),
        cohort("mid", cpu("2"), parent="root"),
        *cq_lq("cq-mid", cpu("1"), cohort="mid"),
    ),
    create(workload("wl-base", "cq-mid", cpu="1")),
    admitted("cq-mid", "wl-base", flavors=OD),
    delete("Cohort", "mid"),
    gone("Cohort", "mid"),
    create(workload("wl-after-delete", "cq-mid", cpu="2")),
    pending("wl-after-delete"),
    admitted("cq-mid", "wl-base", flavors=OD),
    counts("cq-mid", 1, 1),
    differs="Kueue waits for its cohort subtree-quota gauge to be cleaned and checks wl-base stays admitted "
    "with gomega.Consistently; we wait for the Cohort to be gone from the API, and check wl-base is still "
    "admitted once the new workload is seen pending.",
)
#       root (0 CPU)
#       /          \
#   lender          borrower (0 CPU)
#   (1 CPU, lendingLimit 500m)
#     |                 |
#   lender-cq (1)    borrower-cq (0)
_case(
    "Cohort lendingLimit caps sibling borrowing in hierarchy",
    "Should admit only up to the lendingLimit of sibling cohort",
    (
        ON_DEMAND,
        cohort("root", cpu("0")),
        cohort("lender", quotas("on-demand", cpu=("1", None, "500m")), parent="root"),
        cohort("borrower", parent="root"),
        *cq_lq("lender-cq", cpu("1"), cohort="lender"),
        *cq_lq("borrower-cq", cpu("0"), cohort="borrower"),
    ),
    create(*half_cpus("borrower-cq", "wl-1")),
    next_second(),  # wl-2 strictly newer, so that wl-1 is the one admitted (see the module docstring)
    create(*half_cpus("borrower-cq", "wl-2")),
    admitted("borrower-cq", "wl-1"),
    pending("wl-2"),
    counts("borrower-cq", 1, 1),
)
#         root (0 CPU)
#        /            \
#   research           production (0 CPU)
#   (0 CPU, borrowingLimit 0)
#      |                  |
#   research-cq (1)    production-cq (1)
_case(
    "Cohort borrowingLimit blocks sibling borrowing in hierarchy",
    "should allow production to borrow but block research from borrowing",
    (
        ON_DEMAND,
        cohort("root", cpu("0")),
        cohort("research", quotas("on-demand", cpu=("0", "0")), parent="root"),
        cohort("production", cpu("0"), parent="root"),
        *cq_lq("research-cq", cpu("1"), cohort="research"),
        *cq_lq("production-cq", cpu("1"), cohort="production"),
    ),
    create(*half_cpus("production-cq", "prod-1", "prod-2", "prod-3")),
    counts("production-cq", 0, 3),
    finish("prod-1", "prod-2", "prod-3"),
    counts("production-cq", 0, 0),
    create(*half_cpus("research-cq", "research-1", "research-2", "research-3")),
    counts("research-cq", 1, 2),
)
#              root (0 CPU)
#          /       |        \
#   org-a         org-b      burst-cq (0 CPU)
#   (0, borrow 0) (0, borrow 0)
#     |             |
#   org-a-cq (1)  org-b-cq (1)
_case(
    "Cohort borrowingLimit blocks sibling borrowing in hierarchy",
    "should allow burst queue to borrow idle capacity while orgs stay isolated",
    (
        ON_DEMAND,
        cohort("root", cpu("0")),
        cohort("org-a", quotas("on-demand", cpu=("0", "0")), parent="root"),
        cohort("org-b", quotas("on-demand", cpu=("0", "0")), parent="root"),
        *cq_lq("org-a-cq", cpu("1"), cohort="org-a"),
        *cq_lq("org-b-cq", cpu("1"), cohort="org-b"),
        *cq_lq("burst-cq", cpu("0"), cohort="root"),
    ),
    create(*half_cpus("org-a-cq", "org-a-1", "org-a-2")),
    next_second(),
    create(*half_cpus("org-a-cq", "org-a-overflow")),
    admitted("org-a-cq", "org-a-1", "org-a-2"),
    pending("org-a-overflow"),
    counts("org-a-cq", 1, 2),
    create(*half_cpus("burst-cq", "burst-1", "burst-2")),
    admitted("burst-cq", "burst-1", "burst-2"),
    counts("burst-cq", 0, 2),
    counts("org-a-cq", 1, 2),
    pending("org-a-overflow"),
)

# preemption_test.go (v0.19.2): root > guaranteed (3 CPUs) > guaranteed CQ (0); root > best-effort CQ (0)
_case(
    "In a multi-level cohort",
    "workloads in guaranteed cq should have preferential access to the resources",
    (
        flavor("default"),
        cohort("root"),
        cohort("guaranteed", quotas("default", cpu="3"), parent="root"),
        cluster_queue("best-effort", quotas("default", cpu="0"), cohort="root", preemption=RECLAIM_ANY),
        cluster_queue("guaranteed", quotas("default", cpu="0"), cohort="guaranteed", preemption=RECLAIM_ANY),
        local_queue("best-effort-lq", "best-effort"),
        local_queue("guaranteed-lq", "guaranteed"),
    ),
    create(workload("best-effort-wl", "best-effort-lq", cpu="3", priority=HIGH)),
    admitted("best-effort", "best-effort-wl"),
    create(workload("guaranteed-wl", "guaranteed-lq", cpu="3", priority=MID)),
    evicted("best-effort-wl", reason="Preempted"),
    pending("best-effort-wl"),
    admitted("guaranteed", "guaranteed-wl"),
    differs="Kueue completes the eviction by hand (FinishEvictionForWorkloads); our operator evicts by "
    "itself.",
    source=P,
)
