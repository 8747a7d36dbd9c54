"""Kueue v0.14.8 test/integration/singlecluster/controller/core/ (ClusterQueue, LocalQueue and Workload
controllers), ported as data; plus the ResourceFlavor finalizer, which Kueue tests only in units."""

from __future__ import annotations

from tests.conformance.cases_common import (
    CQ,
    LOWER_PRIORITY,
    LQ,
    ON_DEMAND,
    WL,
    case,
)
from tests.conformance.controller_dsl import (
    admitted,
    cluster_queue,
    condition,
    counts,
    create,
    delete,
    evicted,
    finalized,
    finish,
    flavor,
    gone,
    has_finalizer,
    local_queue,
    lq_counts,
    patch,
    pending,
    quotas,
    workload,
)

# -- clusterqueue_controller_test.go ----
case(
    f"{CQ}: Reconciling clusterQueue usage status / Should update status when workloads are assigned "
    "and finish",
    (
        ON_DEMAND,
        cluster_queue("cluster-queue", quotas("on-demand", cpu="5")),
        local_queue("queue", "cluster-queue"),
    ),
    create(workload("one", "queue", cpu="2"), workload("two", "queue", cpu="3")),
    admitted("cluster-queue", "one", "two"),
    create(workload("three", "queue", cpu="1")),
    pending("three"),
    counts("cluster-queue", 1, 2),
    finish("one", "two"),
    admitted("cluster-queue", "three"),
    counts("cluster-queue", 0, 1),
    finish("three"),
    counts("cluster-queue", 0, 0),
    differs="Kueue's case also checks flavorsReservation per flavor and the metrics; the counters are "
    "compared here (usage is covered by tests/operator/test_queueing.py).",
)
case(
    f"{CQ}: Reconciling clusterQueue usage status / Should update status and report metrics when a pending "
    "workload is deleted",
    (
        ON_DEMAND,
        cluster_queue("cluster-queue", quotas("on-demand", cpu="5")),
        local_queue("queue", "cluster-queue"),
    ),
    create(workload("big", "queue", cpu="6")),
    pending("big"),
    counts("cluster-queue", 1, 0),
    delete("Workload", "big"),
    counts("cluster-queue", 0, 0),
)
case(
    f"{CQ}: Reconciling clusterQueue status condition / Should update status conditions when flavors "
    "are created",
    (cluster_queue("cluster-queue", quotas("on-demand", cpu="5"), quotas("spot", cpu="5")),),
    condition(
        "ClusterQueue",
        "cluster-queue",
        "Active",
        "False",
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): <on-demand>,<spot>.",
    ),
    create(ON_DEMAND),
    condition(
        "ClusterQueue",
        "cluster-queue",
        "Active",
        "False",
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): <spot>.",
    ),
    create(flavor("spot")),
    condition("ClusterQueue", "cluster-queue", "Active", "True", "Ready", "Can admit new workloads"),
)
case(
    f"{CQ}: Deleting clusterQueues / Should delete clusterQueues successfully when no admitted workloads are "
    "running",
    (ON_DEMAND, cluster_queue("cluster-queue", quotas("on-demand", cpu="5"))),
    condition("ClusterQueue", "cluster-queue", "Active", "True", "Ready"),
    delete("ClusterQueue", "cluster-queue"),
    gone("ClusterQueue", "cluster-queue"),
)
case(
    f"{CQ}: Deleting clusterQueues / Should be stuck in termination until admitted workloads finished "
    "running",
    (
        ON_DEMAND,
        cluster_queue("cluster-queue", quotas("on-demand", cpu="5")),
        local_queue("queue", "cluster-queue"),
    ),
    create(workload("wl", "queue", cpu="1")),
    admitted("cluster-queue", "wl"),
    has_finalizer("ClusterQueue", "cluster-queue"),
    delete("ClusterQueue", "cluster-queue"),
    finalized("ClusterQueue", "cluster-queue"),
    condition(
        "ClusterQueue",
        "cluster-queue",
        "Active",
        "False",
        "Terminating",
        "Can't admit new workloads; clusterQueue is terminating",
    ),
    finish("wl"),
    gone("ClusterQueue", "cluster-queue"),
)
case(
    "resourceflavor_controller.go (Kueue has no integration test of its own): a ResourceFlavor named by a "
    "ClusterQueue keeps the resource-in-use finalizer until the ClusterQueue is gone",
    (flavor("held"), cluster_queue("user", quotas("held", cpu="1"))),
    condition("ClusterQueue", "user", "Active", "True", "Ready"),
    has_finalizer("ResourceFlavor", "held"),
    delete("ResourceFlavor", "held"),
    finalized("ResourceFlavor", "held"),
    delete("ClusterQueue", "user"),
    gone("ClusterQueue", "user"),
    gone("ResourceFlavor", "held"),
)

# -- localqueue_controller_test.go ----
case(
    f"{LQ}: Should update conditions when clusterQueues that its localQueue references are updated",
    (local_queue("queue", "cluster-queue"),),
    condition(
        "LocalQueue",
        "queue",
        "Active",
        "False",
        "ClusterQueueDoesNotExist",
        "Can't submit new workloads to clusterQueue",
    ),
    create(cluster_queue("cluster-queue", quotas("on-demand", cpu="5"))),
    condition(
        "LocalQueue",
        "queue",
        "Active",
        "False",
        "ClusterQueueIsInactive",
        "Can't submit new workloads to clusterQueue",
    ),
    create(ON_DEMAND),
    condition("LocalQueue", "queue", "Active", "True", "Ready", "Can submit new workloads to localQueue"),
)
case(
    f"{LQ}: Should update status when workloads are created",
    (
        ON_DEMAND,
        cluster_queue("cluster-queue", quotas("on-demand", cpu="5")),
        local_queue("queue", "cluster-queue"),
    ),
    create(workload("one", "queue", cpu="2"), workload("two", "queue", cpu="3")),
    admitted("cluster-queue", "one", "two"),
    create(workload("three", "queue", cpu="1")),
    pending("three"),
    lq_counts("queue", 1, 2),
    finish("one", "two"),
    lq_counts("queue", 0, 1),
    finish("three"),
    lq_counts("queue", 0, 0),
)
case(
    f"{LQ}: Should update status when ClusterQueue are forcefully deleted",
    (
        ON_DEMAND,
        cluster_queue("cluster-queue", quotas("on-demand", cpu="5")),
        local_queue("queue", "cluster-queue"),
    ),
    condition("LocalQueue", "queue", "Active", "True", "Ready", "Can submit new workloads to localQueue"),
    delete("ClusterQueue", "cluster-queue"),
    gone("ClusterQueue", "cluster-queue"),
    condition(
        "LocalQueue",
        "queue",
        "Active",
        "False",
        "ClusterQueueDoesNotExist",
        "Can't submit new workloads to clusterQueue",
    ),
)

# -- workload_controller_test.go ----
case(
    f"{WL}: the queue doesn't exist / Should update status when workloads are created",
    (),
    create(workload("one", "non-created-queue")),
    pending("one", reason="Inadmissible", message="LocalQueue non-created-queue doesn't exist"),
)
case(
    f"{WL}: the clusterqueue doesn't exist / Should update status when workloads are created",
    (local_queue("queue", "fooclusterqueue"),),
    create(workload("one", "queue")),
    pending("one", reason="Inadmissible", message="ClusterQueue <fooclusterqueue> doesn't exist"),
)
case(
    f"{WL}: a workload is manually deactivated / should clear workload requeue state after deactivation",
    (ON_DEMAND, cluster_queue("cq", quotas("on-demand", cpu="5")), local_queue("queue", "cq")),
    create(workload("wl", "queue", cpu="1")),
    admitted("cq", "wl"),
    patch("Workload", "wl", {"spec": {"active": False}}),
    evicted("wl", reason="Deactivated"),
    condition("Workload", "wl", "Evicted", "True", "Deactivated", "The workload is deactivated"),
    condition("Workload", "wl", "Requeued", "False", "Deactivated"),
    differs="Kueue's case starts from a workload with a requeueState and checks it is cleared; we keep "
    "requeueState.count (it counts evictions), so the case checks the eviction conditions.",
)
case(
    f"{WL}: the workload is admitted / Should set the Admitted condition",
    (ON_DEMAND, cluster_queue("cq", quotas("on-demand", cpu="5")), local_queue("queue", "cq")),
    create(workload("wl", "queue", cpu="1")),
    admitted("cq", "wl"),
    condition(
        "Workload", "wl", "QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue <cq>"
    ),
    condition("Workload", "wl", "Admitted", "True", "Admitted", "The workload is admitted"),
)
case(
    f"{WL}: changing the priority value of PriorityClass doesn't affect the priority of the workload "
    "/ case of "
    "WorkloadPriorityClass",
    (
        ON_DEMAND,
        cluster_queue("cq", quotas("on-demand", cpu="1"), preemption=LOWER_PRIORITY),
        local_queue("queue", "cq"),
    ),
    create(workload("running", "queue", cpu="1", priority=100)),
    admitted("cq", "running"),
    create(workload("waiting", "queue", cpu="1", priority=50)),
    pending("waiting"),
    patch("Workload", "waiting", {"spec": {"priority": 200}}),
    evicted("running", reason="Preempted"),
    admitted("cq", "waiting"),
    differs="Kueue changes the WorkloadPriorityClass value and checks spec.priority stays; our Workload's "
    "priority is read from spec.priority alone (the class is looked up once, at creation), so the "
    "case checks the other half: a changed spec.priority is what scheduling uses.",
)
case(
    'apis/kueue/v1beta1/clusterqueue_types.go (namespaceSelector: "If set to nil, no namespace is selected; '
    'an empty selector selects all"; Kueue tests it only in units): a ClusterQueue without namespaceSelector '
    "admits from no namespace",
    (
        ON_DEMAND,
        cluster_queue("cq", quotas("on-demand", cpu="5"), selector="null"),
        local_queue("queue", "cq"),
    ),
    create(workload("wl", "queue", cpu="1")),
    # Kueue 0.19 (scheduler.go nominate): a namespace mismatch is Misconfigured ("Pending" in v0.14)
    pending("wl", reason="Misconfigured", message="Workload namespace doesn't match ClusterQueue selector"),
    patch("ClusterQueue", "cq", {"spec": {"namespaceSelector": {}}}),
    admitted("cq", "wl"),
)
