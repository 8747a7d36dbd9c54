"""What the controller conformance cases share: Kueue's test fixtures as objects, and the registry.

The flavors, tolerations and priorities of Kueue's integration suites (kubernetes-sigs/kueue
v0.14.8 test/integration/singlecluster/scheduler/scheduler_test.go and preemption_test.go set
them up once per suite) and :func:`case`, which files a ported case under its source. The cases
themselves are in ``cases_scheduler``, ``cases_preemption`` and ``cases_core``.
"""

from __future__ import annotations

from tests.conformance.controller_dsl import (
    Case,
    cluster_queue,
    flavor,
    local_queue,
    quotas,
)

INSTANCE = "cloud.provider.com/instance"
ON_DEMAND = flavor("on-demand", {INSTANCE: "on-demand"})
SPOT_TAINTED = flavor(
    "spot-tainted",
    {INSTANCE: "spot-tainted"},
    [{"key": INSTANCE, "value": "spot-tainted", "effect": "NoSchedule"}],
)
SPOT_UNTAINTED = flavor("spot-untainted", {INSTANCE: "spot-untainted"})
SPOT_TOLERATION = {"key": INSTANCE, "operator": "Equal", "value": "spot-tainted", "effect": "NoSchedule"}
LOW, MID, HIGH = -1, 0, 1  # preemption_test.go: lowPriority int32 = iota - 1, midPriority, highPriority
LOWER_PRIORITY = {"withinClusterQueue": "LowerPriority"}
SELECTED = {"matchExpressions": [{"key": "dep", "operator": "In", "values": ["eng"]}]}
RECLAIM_ANY = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}


def cq_lq(name: str, *flavors: object, **spec: object) -> tuple[dict, dict]:  # type: ignore[type-arg]
    """A ClusterQueue and a LocalQueue of the same name pointing to it (S: createQueue)."""
    return cluster_queue(name, *flavors, **spec), local_queue(name, name)  # type: ignore[arg-type]


def prod_dev() -> tuple[dict, ...]:  # type: ignore[type-arg]
    """S "Scheduling workloads on clusterQueues": prod-cq (spot-tainted 5/5, on-demand 5, cohort
    prod-cohort) and dev-clusterqueue (spot-untainted 5, on-demand 5)."""
    return (
        ON_DEMAND,
        SPOT_TAINTED,
        SPOT_UNTAINTED,
        cluster_queue(
            "prod-cq",
            quotas("spot-tainted", cpu=("5", "5")),
            quotas("on-demand", cpu="5"),
            cohort="prod-cohort",
        ),
        cluster_queue("dev-cq", quotas("spot-untainted", cpu="5"), quotas("on-demand", cpu="5")),
        local_queue("prod-queue", "prod-cq"),
        local_queue("dev-queue", "dev-cq"),
    )


def one_queue(cpu: str = "5", name: str = "cq", **spec: object) -> tuple[dict, ...]:  # type: ignore[type-arg]
    return (ON_DEMAND, cluster_queue(name, quotas("on-demand", cpu=cpu), **spec), local_queue("queue", name))


S = "scheduler_test.go"
P = "preemption_test.go"
CQ = "clusterqueue_controller_test.go"
LQ = "localqueue_controller_test.go"
WL = "workload_controller_test.go"

CASES: dict[str, Case] = {}


def case(key: str, objects: tuple, *steps: object, differs: str = "") -> None:  # type: ignore[type-arg]
    CASES[key] = Case(key, tuple(objects), tuple(steps), differs)  # type: ignore[arg-type]
