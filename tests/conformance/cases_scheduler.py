"""Kueue v0.14.8 test/integration/singlecluster/scheduler/scheduler_test.go, ported as data."""

from __future__ import annotations

from tests.conformance.cases_common import (
    HIGH,
    INSTANCE,
    LOW,
    LOWER_PRIORITY,
    MID,
    ON_DEMAND,
    SELECTED,
    SPOT_TAINTED,
    SPOT_TOLERATION,
    SPOT_UNTAINTED,
    S,
    case,
    one_queue,
    prod_dev,
)
from tests.conformance.controller_dsl import (
    admitted,
    cluster_queue,
    condition,
    counts,
    create,
    delete,
    evicted,
    finish,
    flavor,
    local_queue,
    namespace,
    patch,
    pending,
    pod_set,
    quotas,
    workload,
)

# -- scheduler_test.go: Scheduling workloads on clusterQueues ----
case(
    f"{S}: Scheduling workloads on clusterQueues / Should admit workloads as they fit in their ClusterQueue",
    prod_dev(),
    create(workload("prod-wl1", "prod-queue", cpu="2")),
    admitted("prod-cq", "prod-wl1", flavors={"cpu": "on-demand"}),
    create(workload("prod-wl2", "prod-queue", cpu="5")),
    pending("prod-wl2"),
    create(workload("empty-wl", "prod-queue", pod_set("main", 0, cpu="1"))),
    admitted("prod-cq", "empty-wl", flavors={"cpu": "on-demand"}, count=0),
    finish("empty-wl"),
    create(workload("dev-wl", "dev-queue", cpu="5")),
    admitted("dev-cq", "dev-wl", flavors={"cpu": "spot-untainted"}),
    finish("prod-wl1"),
    admitted("prod-cq", "prod-wl2", flavors={"cpu": "on-demand"}),
    counts("prod-cq", 0, 1),
)

PODS = (
    ON_DEMAND,
    cluster_queue("pods-count-cq", quotas("on-demand", cpu="100", pods="5")),
    local_queue("pods-count-queue", "pods-count-cq"),
    cluster_queue("pods-count-only-cq", quotas("on-demand", pods="5")),
    local_queue("pods-count-only-queue", "pods-count-only-cq"),
)
case(
    f"{S}: Scheduling workloads on clusterQueues / Should admit workloads as number of pods allows it",
    PODS,
    create(workload("wl1", "pods-count-queue", pod_set("main", 3, cpu="2"))),
    admitted("pods-count-cq", "wl1", flavors={"cpu": "on-demand", "pods": "on-demand"}, count=3),
    create(
        workload("wl2", "pods-count-queue", pod_set("main", 3, cpu="2")),
        workload("wl3", "pods-count-queue", pod_set("main", 2, cpu="2")),
    ),
    admitted("pods-count-cq", "wl1", "wl3"),
    pending("wl2"),
    finish("wl1"),
    admitted("pods-count-cq", "wl2", "wl3"),
    counts("pods-count-cq", 0, 2),
)
case(
    f"{S}: Scheduling workloads on clusterQueues / Should admit workloads as the number of pods "
    "(only) allows it",
    PODS,
    create(workload("wl1", "pods-count-only-queue", pod_set("main", 3))),
    admitted("pods-count-only-cq", "wl1", flavors={"pods": "on-demand"}, count=3),
    create(
        workload("wl2", "pods-count-only-queue", pod_set("main", 3)),
        workload("wl3", "pods-count-only-queue", pod_set("main", 2)),
    ),
    admitted("pods-count-only-cq", "wl1", "wl3"),
    pending("wl2"),
    finish("wl1"),
    admitted("pods-count-only-cq", "wl2", "wl3"),
)

PRIORITIES = ("wl-low", LOW), ("wl-mid-1", MID), ("wl-mid-2", MID), ("wl-high-1", HIGH), ("wl-high-2", HIGH)
case(
    f"{S}: Hold ClusterQueue at startup / Should admit workloads according to their priorities",
    (
        ON_DEMAND,
        cluster_queue("prod-cq", quotas("on-demand", cpu="5"), stopPolicy="Hold"),
        local_queue("prod-queue", "prod-cq"),
    ),
    create(*(workload(n, "prod-queue", cpu="2", priority=p) for n, p in PRIORITIES)),
    pending(*(n for n, _ in PRIORITIES), reason="Inadmissible", message="ClusterQueue <prod-cq> is inactive"),
    counts("prod-cq", 5, 0),
    patch("ClusterQueue", "prod-cq", {"spec": {"stopPolicy": "None"}}),
    admitted("prod-cq", "wl-high-1", "wl-high-2"),
    pending("wl-low", "wl-mid-1", "wl-mid-2"),
    finish("wl-high-1", "wl-high-2"),
    admitted("prod-cq", "wl-mid-1", "wl-mid-2"),
    counts("prod-cq", 1, 2),
)
case(
    f"{S}: Hold LocalQueue at startup / Should admit workloads according to their priorities",
    (
        ON_DEMAND,
        cluster_queue("prod-cq", quotas("on-demand", cpu="5")),
        local_queue("prod-queue", "prod-cq", stop="Hold"),
    ),
    create(*(workload(n, "prod-queue", cpu="2", priority=p) for n, p in PRIORITIES)),
    pending(*(n for n, _ in PRIORITIES), reason="Inadmissible", message="LocalQueue prod-queue is inactive"),
    counts("prod-cq", 0, 0),
    patch("LocalQueue", "prod-queue", {"spec": {"stopPolicy": "None"}}),
    admitted("prod-cq", "wl-high-1", "wl-high-2"),
    pending("wl-low", "wl-mid-1", "wl-mid-2"),
    finish("wl-high-1", "wl-high-2"),
    admitted("prod-cq", "wl-mid-1", "wl-mid-2"),
    counts("prod-cq", 1, 2),
)
case(
    f"{S}: Scheduling workloads on clusterQueues / Should admit two small workloads after a big one finishes",
    prod_dev(),
    create(workload("big-wl", "prod-queue", cpu="5")),
    admitted("prod-cq", "big-wl"),
    create(workload("small-wl-1", "prod-queue", cpu="2.5"), workload("small-wl-2", "prod-queue", cpu="2.5")),
    pending("small-wl-1", "small-wl-2"),
    counts("prod-cq", 2, 1),
    finish("big-wl"),
    admitted("prod-cq", "small-wl-1", "small-wl-2"),
    counts("prod-cq", 0, 2),
)

# -- scheduler_test.go: Handling workloads and clusterQueue events ----
EVENTS = (
    ON_DEMAND,
    SPOT_TAINTED,
    cluster_queue(
        "cluster-queue", quotas("spot-tainted", cpu=("5", "5")), quotas("on-demand", cpu="5"), cohort="prod"
    ),
    local_queue("queue", "cluster-queue"),
)
case(
    f"{S}: Handling workloads events / Should re-enqueue by the delete event of workload belonging to "
    "the same "
    "ClusterQueue",
    EVENTS,
    create(workload("on-demand-wl1", "queue", cpu="4")),
    admitted("cluster-queue", "on-demand-wl1", flavors={"cpu": "on-demand"}),
    create(workload("on-demand-wl2", "queue", cpu="4")),
    pending("on-demand-wl2"),
    create(workload("on-demand-wl3", "queue", cpu="1")),
    admitted("cluster-queue", "on-demand-wl3", flavors={"cpu": "on-demand"}),
    delete("Workload", "on-demand-wl1"),
    admitted("cluster-queue", "on-demand-wl2", flavors={"cpu": "on-demand"}),
    counts("cluster-queue", 0, 2),
)
case(
    f"{S}: Handling workloads events / Should re-enqueue by the delete event of workload belonging to "
    "the same "
    "Cohort",
    (
        *EVENTS,
        cluster_queue("foo-clusterqueue", quotas("on-demand", cpu="5"), cohort="prod"),
        local_queue("foo-queue", "foo-clusterqueue"),
    ),
    create(workload("on-demand-wl1", "foo-queue", cpu="8")),
    admitted("foo-clusterqueue", "on-demand-wl1", flavors={"cpu": "on-demand"}),
    create(workload("on-demand-wl2", "queue", cpu="8")),
    pending("on-demand-wl2"),
    create(workload("on-demand-wl3", "foo-queue", cpu="2")),
    admitted("foo-clusterqueue", "on-demand-wl3", flavors={"cpu": "on-demand"}),
    delete("Workload", "on-demand-wl1"),
    admitted("cluster-queue", "on-demand-wl2", flavors={"cpu": "on-demand"}),
)
case(
    f"{S}: Handling clusterQueue events / Should re-enqueue by the update event of ClusterQueue",
    one_queue("5", "cluster-queue"),
    create(workload("on-demand-wl", "queue", cpu="6")),
    pending("on-demand-wl"),
    counts("cluster-queue", 1, 0),
    # the queue joins cohort "cohort" with nominal 6 and borrowingLimit 0 (Kueue main; v0.14.8 only
    # raised the nominal quota)
    patch(
        "ClusterQueue",
        "cluster-queue",
        {
            "spec": {
                "cohort": "cohort",
                "resourceGroups": [
                    {"coveredResources": ["cpu"], "flavors": [quotas("on-demand", cpu=("6", "0"))]}
                ],
            }
        },
    ),
    admitted("cluster-queue", "on-demand-wl", flavors={"cpu": "on-demand"}),
)

# -- scheduler_test.go: NamespaceSelector, flavors, taints, affinity ----
case(
    f"{S}: Using clusterQueue NamespaceSelector / Should admit workloads from the selected namespaces",
    (
        ON_DEMAND,
        namespace("foo", {"dep": "eng"}),
        cluster_queue("cluster-queue-with-selector", quotas("on-demand", cpu="5"), selector=SELECTED),
        local_queue("queue", "cluster-queue-with-selector"),
        {
            **local_queue("foo", "cluster-queue-with-selector"),
            "metadata": {"name": "foo", "namespace": "foo"},
        },
    ),
    create(workload("wl1", "queue", cpu="1")),
    # Kueue 0.19 (scheduler.go nominate): a namespace mismatch is Misconfigured ("Pending" in v0.14)
    pending("wl1", reason="Misconfigured", message="Workload namespace doesn't match ClusterQueue selector"),
    create(workload("wl2", "foo", cpu="1", namespace="foo")),
    patch("Namespace", "ns", {"metadata": {"labels": {"dep": "eng"}}}),
    admitted("cluster-queue-with-selector", "wl1"),
    differs="Kueue's wl2 lives in a namespace labelled dep=eng later too; here the second namespace is "
    "labelled from the start and only wl1's namespace is relabelled (same rule, one fewer step).",
)
case(
    f"{S}: Referencing resourceFlavors in clusterQueue / Should be inactive until the flavor is created",
    (
        cluster_queue("foo-cq", quotas("foo-flavor", cpu="15"), queueingStrategy="BestEffortFIFO"),
        local_queue("foo-queue", "foo-cq"),
    ),
    create(workload("workload", "foo-queue", cpu="1")),
    pending("workload", reason="Inadmissible", message="ClusterQueue <foo-cq> is inactive"),
    condition(
        "ClusterQueue",
        "foo-cq",
        "Active",
        "False",
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): <foo-flavor>.",
    ),
    create(flavor("foo-flavor")),
    admitted("foo-cq", "workload"),
)
case(
    f"{S}: Using taints in resourceFlavors / Should schedule workloads on tolerated flavors",
    (
        ON_DEMAND,
        SPOT_TAINTED,
        cluster_queue(
            "cluster-queue",
            quotas("spot-tainted", cpu=("5", "5")),
            quotas("on-demand", cpu="5"),
            cohort="cohort",
            queueingStrategy="BestEffortFIFO",
        ),
        local_queue("queue", "cluster-queue"),
    ),
    create(workload("on-demand-wl1", "queue", cpu="5")),
    admitted("cluster-queue", "on-demand-wl1", flavors={"cpu": "on-demand"}),
    create(workload("on-demand-wl2", "queue", cpu="5")),
    pending("on-demand-wl2"),
    create(workload("on-demand-wl3", "queue", cpu="5", tolerations=[SPOT_TOLERATION])),
    admitted("cluster-queue", "on-demand-wl3", flavors={"cpu": "spot-tainted"}),
)
case(
    f"{S}: Using affinity in resourceFlavors / Should admit workloads with affinity to specific flavor",
    (
        ON_DEMAND,
        SPOT_UNTAINTED,
        cluster_queue("cluster-queue", quotas("spot-untainted", cpu="5"), quotas("on-demand", cpu="5")),
        local_queue("queue", "cluster-queue"),
    ),
    create(workload("no-affinity-workload", "queue", cpu="1")),
    admitted("cluster-queue", "no-affinity-workload", flavors={"cpu": "spot-untainted"}),
    create(workload("affinity-wl", "queue", cpu="1", node_selector={INSTANCE: "on-demand", "foo": "bar"})),
    admitted("cluster-queue", "affinity-wl", flavors={"cpu": "on-demand"}),
)

OUT_OF_ORDER = {
    "ResourceFlavor->LocalQueue->Workload->ClusterQueue": ("flavor", "lq", "wl", "cq"),
    "Workload->ResourceFlavor->LocalQueue->ClusterQueue": ("wl", "flavor", "lq", "cq"),
    "Workload->ResourceFlavor->ClusterQueue->LocalQueue": ("wl", "flavor", "cq", "lq"),
    "Workload->ClusterQueue->LocalQueue->ResourceFlavor": ("wl", "cq", "lq", "flavor"),
}
for order, parts in OUT_OF_ORDER.items():
    made = {
        "flavor": ON_DEMAND,
        "cq": cluster_queue("cq", quotas("on-demand", cpu="5")),
        "lq": local_queue("queue", "cq"),
        "wl": workload("workload", "queue", cpu="2"),
    }
    case(
        f"{S}: Creating objects out-of-order / Should admit workload when creating {order}",
        (),
        *(create(made[p]) for p in parts),
        admitted("cq", "workload"),
    )

# -- scheduler_test.go: cohorts ----
case(
    f"{S}: Using cohorts for sharing unused resources / Should admit workloads using borrowed ClusterQueue",
    (
        ON_DEMAND,
        SPOT_TAINTED,
        cluster_queue(
            "prod-cq", quotas("spot-tainted", cpu=("5", "0")), quotas("on-demand", cpu="5"), cohort="all"
        ),
        local_queue("queue", "prod-cq"),
    ),
    create(workload("wl", "queue", cpu="10", tolerations=[SPOT_TOLERATION])),
    pending("wl"),
    create(
        cluster_queue(
            "fallback-cq", quotas("spot-tainted", cpu="5"), quotas("on-demand", cpu="5"), cohort="all"
        )
    ),
    admitted("prod-cq", "wl", flavors={"cpu": "on-demand"}),
)
case(
    f"{S}: Using cohorts for sharing unused resources / Should schedule workloads borrowing quota from "
    "ClusterQueues in the same Cohort",
    (
        ON_DEMAND,
        cluster_queue("prod-cq", quotas("on-demand", cpu=("5", "10")), cohort="all"),
        cluster_queue("dev-cq", quotas("on-demand", cpu=("5", "10")), cohort="all"),
        local_queue("prod-queue", "prod-cq"),
        local_queue("dev-queue", "dev-cq"),
    ),
    create(workload("wl-1", "prod-queue", cpu="11"), workload("wl-2", "dev-queue", cpu="11")),
    pending("wl-1", "wl-2"),
    create(cluster_queue("test-cq", quotas("on-demand", cpu=("15", "0")), cohort="all")),
    admitted("prod-cq", "wl-1"),
    admitted("dev-cq", "wl-2"),
)
case(
    f"{S}: Using cohorts for sharing unused resources / Should start workloads that are under min "
    "quota before "
    "borrowing",
    (
        ON_DEMAND,
        cluster_queue("prod-cq", quotas("on-demand", cpu="2"), cohort="all", queueingStrategy="StrictFIFO"),
        cluster_queue("dev-cq", quotas("on-demand", cpu="0"), cohort="all", queueingStrategy="StrictFIFO"),
        local_queue("prod-queue", "prod-cq"),
        local_queue("dev-queue", "dev-cq"),
    ),
    create(workload("p-wl-1", "prod-queue", cpu="2")),
    admitted("prod-cq", "p-wl-1"),
    create(workload("d-wl-1", "dev-queue", cpu="1"), workload("p-wl-2", "prod-queue", cpu="2")),
    pending("d-wl-1", "p-wl-2"),
    finish("p-wl-1"),
    admitted("prod-cq", "p-wl-2"),
    pending("d-wl-1"),
    finish("p-wl-2"),
    admitted("dev-cq", "d-wl-1"),
)
case(
    f"{S}: Using cohorts for sharing unused resources / Should try next flavor if can't preempt on first",
    (
        ON_DEMAND,
        SPOT_UNTAINTED,
        cluster_queue(
            "prod-cq",
            quotas("on-demand", cpu="2"),
            quotas("spot-untainted", cpu="2"),
            cohort="all",
            queueingStrategy="StrictFIFO",
            preemption=LOWER_PRIORITY,
            flavorFungibility={"whenCanPreempt": "Preempt"},
        ),
        local_queue("prod-queue", "prod-cq"),
    ),
    create(workload("wl-1", "prod-queue", cpu="1"), workload("wl-2", "prod-queue", cpu="1")),
    admitted("prod-cq", "wl-1", "wl-2", flavors={"cpu": "on-demand"}),
    create(workload("wl-3", "prod-queue", cpu="1")),
    admitted("prod-cq", "wl-3", flavors={"cpu": "spot-untainted"}),
)
case(
    f"{S}: Using cohorts for sharing unused resources / Should try next flavor instead of borrowing",
    (
        ON_DEMAND,
        SPOT_TAINTED,
        cluster_queue("prod-cq", quotas("on-demand", cpu=("10", "10")), cohort="all"),
        cluster_queue(
            "dev-cq",
            quotas("on-demand", cpu=("10", "10")),
            quotas("spot-tainted", cpu="11"),
            cohort="all",
            flavorFungibility={"whenCanBorrow": "TryNextFlavor"},
        ),
        local_queue("prod-queue", "prod-cq"),
        local_queue("dev-queue", "dev-cq"),
    ),
    create(workload("wl-1", "prod-queue", cpu="9")),
    admitted("prod-cq", "wl-1", flavors={"cpu": "on-demand"}),
    create(workload("wl-2", "dev-queue", cpu="11", tolerations=[SPOT_TOLERATION])),
    admitted("dev-cq", "wl-2", flavors={"cpu": "spot-tainted"}),
)
case(
    f"{S}: Using cohorts for sharing unused resources / Should preempt before try next flavor",
    (
        ON_DEMAND,
        SPOT_UNTAINTED,
        cluster_queue(
            "prod-cq",
            quotas("on-demand", cpu=("10", "10")),
            quotas("spot-untainted", cpu="11"),
            cohort="all",
            preemption={"reclaimWithinCohort": "Any"},
            flavorFungibility={"whenCanPreempt": "Preempt"},
        ),
        cluster_queue(
            "dev-cq",
            quotas("on-demand", cpu=("10", "10")),
            cohort="all",
            flavorFungibility={"whenCanBorrow": "TryNextFlavor"},
        ),
        local_queue("prod-queue", "prod-cq"),
        local_queue("dev-queue", "dev-cq"),
    ),
    create(
        workload("wl-1", "dev-queue", cpu="9", priority=0), workload("wl-2", "dev-queue", cpu="9", priority=1)
    ),
    admitted("dev-cq", "wl-1", "wl-2"),
    create(workload("wl-3", "prod-queue", cpu="5")),
    evicted("wl-1", reason="Preempted"),
    admitted("prod-cq", "wl-3", flavors={"cpu": "on-demand"}),
)
case(
    f"{S}: Using cohorts for sharing with LendingLimit / Should admit workloads using borrowed ClusterQueue",
    (
        ON_DEMAND,
        cluster_queue("prod-cq", quotas("on-demand", cpu=("5", None, "1")), cohort="all"),
        local_queue("queue", "prod-cq"),
    ),
    create(workload("wl", "queue", cpu="9")),
    pending("wl"),
    create(cluster_queue("dev-cq", quotas("on-demand", cpu=("5", None, "4")), cohort="all")),
    admitted("prod-cq", "wl", flavors={"cpu": "on-demand"}),
)
case(
    f"{S}: Using cohorts for sharing with LendingLimit / Should admit workloads after updating lending limit",
    (
        ON_DEMAND,
        cluster_queue("prod-cq", quotas("on-demand", cpu=("5", None, "0")), cohort="all"),
        cluster_queue("dev-cq", quotas("on-demand", cpu=("5", None, "0")), cohort="all"),
        local_queue("prod-queue", "prod-cq"),
        local_queue("dev-queue", "dev-cq"),
    ),
    create(workload("wl-1", "prod-queue", cpu="5"), workload("wl-2", "prod-queue", cpu="5")),
    admitted("prod-cq", "wl-1"),
    pending("wl-2"),
    patch(
        "ClusterQueue",
        "dev-cq",
        {
            "spec": {
                "resourceGroups": [
                    {"coveredResources": ["cpu"], "flavors": [quotas("on-demand", cpu=("5", None, "5"))]}
                ]
            }
        },
    ),
    admitted("prod-cq", "wl-2"),
)
