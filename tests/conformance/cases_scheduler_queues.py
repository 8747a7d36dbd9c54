"""Kueue v0.14.8 test/integration/singlecluster/scheduler/scheduler_test.go (StrictFIFO, deleting and
stopping queues, several flavors), ported as data."""

from __future__ import annotations

from tests.conformance.cases_common import (
    ON_DEMAND,
    RECLAIM_ANY,
    SELECTED,
    S,
    case,
    cq_lq,
)
from tests.conformance.controller_dsl import (
    admitted,
    cluster_queue,
    condition,
    create,
    delete,
    evicted,
    finalized,
    finish,
    flavor,
    gone,
    has_finalizer,
    local_queue,
    namespace,
    patch,
    pending,
    pod_set,
    quotas,
    workload,
)

# -- scheduler_test.go: StrictFIFO ----
STRICT = (
    ON_DEMAND,
    namespace("matching", {"dep": "eng"}),
    cluster_queue(
        "strict-fifo-cq",
        quotas("on-demand", cpu=("5", "0")),
        cohort="cohort",
        queueingStrategy="StrictFIFO",
        selector=SELECTED,
    ),
)


def in_matching(obj: dict) -> dict:  # type: ignore[type-arg]
    obj["metadata"]["namespace"] = "matching"
    return obj


case(
    f"{S}: Queueing with StrictFIFO / Should schedule workloads by their priority strictly",
    (*STRICT, in_matching(local_queue("strict-fifo-q", "strict-fifo-cq"))),
    create(workload("wl1", "strict-fifo-q", cpu="2", priority=100, namespace="matching")),
    create(workload("wl2", "strict-fifo-q", cpu="5", priority=10, namespace="matching")),
    create(workload("wl3", "strict-fifo-q", cpu="1", priority=1, namespace="matching")),
    admitted("strict-fifo-cq", "matching/wl1"),
    pending("matching/wl2", "matching/wl3"),
)
case(
    f"{S}: Queueing with StrictFIFO / Workloads not matching namespaceSelector should not block others",
    (
        *STRICT,
        local_queue("not-matching-queue", "strict-fifo-cq"),
        in_matching(local_queue("matching-queue", "strict-fifo-cq")),
    ),
    create(workload("wl1", "matching-queue", cpu="2", priority=100, namespace="matching")),
    create(workload("wl2", "not-matching-queue", cpu="5", priority=10)),
    create(workload("wl3", "matching-queue", cpu="1", priority=1, namespace="matching")),
    admitted("strict-fifo-cq", "matching/wl1", "matching/wl3"),
    # Kueue 0.19 (scheduler.go nominate): a namespace mismatch is Misconfigured ("Pending" in v0.14)
    pending("wl2", reason="Misconfigured", message="Workload namespace doesn't match ClusterQueue selector"),
)

# -- scheduler_test.go: deleting queues, stop policies ----
case(
    f"{S}: Deleting clusterQueues / Should not admit new created workloads",
    (
        ON_DEMAND,
        cluster_queue("cluster-queue", quotas("on-demand", cpu="5")),
        local_queue("queue", "cluster-queue"),
    ),
    create(workload("workload1", "queue")),
    admitted("cluster-queue", "workload1"),
    has_finalizer("ClusterQueue", "cluster-queue"),
    delete("ClusterQueue", "cluster-queue"),
    finalized("ClusterQueue", "cluster-queue"),
    create(workload("workload2", "queue")),
    pending("workload2", reason="Inadmissible", message="ClusterQueue <cluster-queue> is inactive"),
    finish("workload1"),
    gone("ClusterQueue", "cluster-queue"),
    pending("workload2", reason="Inadmissible", message="ClusterQueue <cluster-queue> doesn't exist"),
)
STOPPABLE = (
    ON_DEMAND,
    cluster_queue("cluster-queue", quotas("on-demand", cpu=("5", "5")), cohort="cohort"),
    local_queue("queue", "cluster-queue"),
)
case(
    f"{S}: Using clusterQueue stop policy / Should evict workloads when stop policy is drain",
    STOPPABLE,
    create(workload("one", "queue")),
    admitted("cluster-queue", "one"),
    patch("ClusterQueue", "cluster-queue", {"spec": {"stopPolicy": "HoldAndDrain"}}),
    evicted("one", reason="ClusterQueueStopped"),
    condition(
        "ClusterQueue",
        "cluster-queue",
        "Active",
        "False",
        "Stopped",
        "Can't admit new workloads: is stopped.",
    ),
    create(workload("two", "queue")),
    pending("one", "two", reason="Inadmissible", message="ClusterQueue <cluster-queue> is inactive"),
    patch("ClusterQueue", "cluster-queue", {"spec": {"stopPolicy": None}}),
    admitted("cluster-queue", "one", "two"),
    finish("one", "two"),
)
case(
    f"{S}: Using localQueue stop policy / Should evict workloads when stop policy is drain",
    STOPPABLE,
    create(workload("wl1", "queue")),
    admitted("cluster-queue", "wl1"),
    condition("LocalQueue", "queue", "Active", "True", "Ready", "Can submit new workloads to localQueue"),
    patch("LocalQueue", "queue", {"spec": {"stopPolicy": "HoldAndDrain"}}),
    evicted("wl1", reason="LocalQueueStopped"),
    condition("Workload", "wl1", "Evicted", "True", "LocalQueueStopped", "The LocalQueue is stopped"),
    condition("LocalQueue", "queue", "Active", "False", "Stopped", "LocalQueue is stopped"),
    create(workload("wl2", "queue")),
    pending("wl1", "wl2", reason="Inadmissible", message="LocalQueue queue is inactive"),
    patch("LocalQueue", "queue", {"spec": {"stopPolicy": None}}),
    condition("LocalQueue", "queue", "Active", "True", "Ready", "Can submit new workloads to localQueue"),
    admitted("cluster-queue", "wl1", "wl2"),
    finish("wl1", "wl2"),
)
case(
    f"{S}: Deleting resources from borrowing clusterQueue / shouldn't admit second workload on over "
    "admission",
    (
        ON_DEMAND,
        cluster_queue("cq1", quotas("on-demand", cpu="1", memory="1Gi"), cohort="cohort"),
        cluster_queue("cq2", quotas("on-demand", cpu="2", memory="1Gi"), cohort="cohort"),
        local_queue("lq1", "cq1"),
        local_queue("lq2", "cq2"),
    ),
    create(workload("wl1", "lq1", pod_set("main", 1, cpu="2", memory="2Gi"))),
    admitted("cq1", "wl1"),
    create(workload("wl2", "lq2", pod_set("main", 1, cpu="1", memory="1Gi"))),
    pending("wl2"),
    patch(
        "ClusterQueue",
        "cq1",
        {
            "spec": {
                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [quotas("on-demand", cpu="1")]}]
            }
        },
    ),
    admitted("cq1", "wl1"),
    pending("wl2"),
)
case(
    f"{S}: Deleting ClusterQueue should update cohort borrowable resources / Should prevent incorrect "
    "admission "
    "through borrowing after ClusterQueue deletion",
    (
        ON_DEMAND,
        *cq_lq("queue-1", quotas("on-demand", cpu="8"), cohort="bug-test"),
        *cq_lq("queue-2", quotas("on-demand", cpu="0"), cohort="bug-test"),
    ),
    create(workload("borrower", "queue-2", cpu="8", priority=1000)),
    admitted("queue-2", "borrower"),
    finish("borrower"),
    delete("ClusterQueue", "queue-1"),
    gone("ClusterQueue", "queue-1"),
    create(workload("late", "queue-2", cpu="8", priority=1000)),
    pending("late"),
)

# -- scheduler_test.go: multiple flavors and preemption ----
F1, F2 = flavor("f1"), flavor("f2")
TRY_NEXT = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
case(
    f"{S}: Multiple flavors can be considered for preemption / finds correct flavor by discarding the "
    "first one "
    "in which preemption is not possible",
    (
        F1,
        F2,
        *cq_lq(
            "cq1",
            quotas("f1", cpu="0"),
            quotas("f2", cpu="1"),
            cohort="cohort",
            flavorFungibility=TRY_NEXT,
            preemption=RECLAIM_ANY,
        ),
        *cq_lq("cq2", quotas("f1", cpu="1"), quotas("f2", cpu="0"), cohort="cohort", preemption=RECLAIM_ANY),
    ),
    create(workload("cq1-low", "cq1", cpu="1", priority=0)),
    admitted("cq1", "cq1-low", flavors={"cpu": "f2"}),
    create(workload("cq1-high", "cq1", cpu="1", priority=9999)),
    admitted("cq1", "cq1-high", flavors={"cpu": "f1"}),
    create(workload("cq2-mid", "cq2", cpu="1", priority=105)),
    evicted("cq1-high", reason="Preempted"),
    admitted("cq2", "cq2-mid", flavors={"cpu": "f1"}),
    evicted("cq1-low", reason="Preempted"),
    admitted("cq1", "cq1-high", flavors={"cpu": "f2"}),
)
case(
    f"{S}: FlavorFungibilityImplicitPreferenceDefault / chooses a correct flavor when borrowing is preferred",
    (
        F1,
        F2,
        *cq_lq(
            "cq1",
            quotas("f1", cpu="1"),
            quotas("f2", cpu="0"),
            cohort="cohort",
            flavorFungibility={"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"},
            preemption=RECLAIM_ANY,
        ),
        *cq_lq("cq2", quotas("f1", cpu="0"), quotas("f2", cpu="1"), cohort="cohort", preemption=RECLAIM_ANY),
    ),
    create(workload("cq1-low", "cq1", cpu="1", priority=0)),
    admitted("cq1", "cq1-low", flavors={"cpu": "f1"}),
    create(workload("cq1-high", "cq1", cpu="1", priority=9999)),
    admitted("cq1", "cq1-high", flavors={"cpu": "f2"}),
    create(workload("cq2-mid", "cq2", cpu="1", priority=105)),
    evicted("cq1-high", reason="Preempted"),
    admitted("cq2", "cq2-mid", flavors={"cpu": "f2"}),
)
