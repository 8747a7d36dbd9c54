"""Kueue's webhook unit tables, ported as data: each case is (name, object, expected field errors).

Sources (kubernetes-sigs/kueue v0.14.8): pkg/webhooks/clusterqueue_webhook_test.go
(TestValidateClusterQueue, TestValidateTotalFlavors, TestValidateTotalCoveredResources,
TestValidateFlavorResourceCombinations), resourceflavor_webhook_test.go
(TestValidateResourceFlavor) and workload_webhook_test.go (TestValidateWorkload,
TestValidateWorkloadUpdate). As Kueue's tables do, errors are compared by type and field, not
by wording. Cases about fields we do not validate or serve (admissionChecksStrategy,
admissionChecks' podSetUpdates, clusterName) are listed in docs/conformance/validation.md.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.api.kueue_validation import cluster_queue_errors, resource_flavor_errors, workload_errors
from codeflare.k8s.schema.field import ErrorType

INVALID, DUPLICATE, REQUIRED = ErrorType.INVALID, ErrorType.DUPLICATE, ErrorType.REQUIRED
NOT_SUPPORTED = ErrorType.NOT_SUPPORTED
RG = "spec.resourceGroups"
Q0 = f"{RG}[0].flavors[0].resources[0]"


def res(name: str, nominal: Any = "0", borrowing: Any = None, lending: Any = None) -> dict[str, Any]:
    """utiltestingapi.MakeFlavorQuotas(...).Resource(name, nominal, borrowing, lending)."""
    entry: dict[str, Any] = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        entry["borrowingLimit"] = borrowing
    if lending is not None:
        entry["lendingLimit"] = lending
    return entry


def flavor(name: str, *resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "resources": list(resources)}


def group(*flavors: dict[str, Any], covered: list[str] | None = None) -> dict[str, Any]:
    """MakeClusterQueue().ResourceGroup(...): covered resources are the first flavor's."""
    names = covered if covered is not None else [r["name"] for r in flavors[0]["resources"]]
    return {"coveredResources": names, "flavors": list(flavors)}


def cq(*groups: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "kind": "ClusterQueue",
        "metadata": {"name": "cluster-queue"},
        "spec": {"resourceGroups": list(groups), **spec},
    }


def found(errors: list[Any]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errors]


# clusterqueue_webhook_test.go TestValidateClusterQueue (name: Kueue's case name).
CLUSTER_QUEUE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("built-in resources with qualified names", cq(group(flavor("default", res("cpu")))), []),
    (
        "invalid resource name",
        cq(group(flavor("default", res("@cpu")))),
        [(INVALID, f"{RG}[0].coveredResources[0]")],
    ),
    ("in cohort", cq(cohort="prod"), []),
    ("extended resources with qualified names", cq(group(flavor("default", res("example.com/gpu")))), []),
    ("flavor with qualified names", cq(group(flavor("x86", res("cpu")))), []),
    (
        "flavor quota with negative value",
        cq(group(flavor("x86", res("cpu", "-1")))),
        [(INVALID, f"{Q0}.nominalQuota")],
    ),
    ("flavor quota with zero value", cq(group(flavor("x86", res("cpu", "0")))), []),
    (
        "flavor quota with borrowingLimit 0",
        cq(group(flavor("x86", res("cpu", "1", "0"))), cohort="cohort"),
        [],
    ),
    (
        "flavor quota with negative borrowingLimit",
        cq(group(flavor("x86", res("cpu", "1", "-1"))), cohort="cohort"),
        [(INVALID, f"{Q0}.borrowingLimit")],
    ),
    (
        "flavor quota with lendingLimit 0",
        cq(group(flavor("x86", res("cpu", "1", None, "0"))), cohort="cohort"),
        [],
    ),
    (
        "flavor quota with negative lendingLimit",
        cq(group(flavor("x86", res("cpu", "1", None, "-1"))), cohort="cohort"),
        [(INVALID, f"{Q0}.lendingLimit")],
    ),
    (
        "flavor quota with lendingLimit and empty cohort",
        cq(group(flavor("x86", res("cpu", "1", None, "1")))),
        [(INVALID, f"{Q0}.lendingLimit")],
    ),
    (
        "flavor quota with lendingLimit greater than nominalQuota",
        cq(group(flavor("x86", res("cpu", "1", None, "2"))), cohort="cohort"),
        [(INVALID, f"{Q0}.lendingLimit")],
    ),
    # Also refused by the CRD rule (422 before any webhook); Kueue's webhook reports it as well.
    (
        "borrowingLimit and empty cohort",
        cq(group(flavor("x86", res("cpu", "1", "1")))),
        [(INVALID, f"{Q0}.borrowingLimit")],
    ),
    (
        "namespaceSelector with invalid labels",
        cq(namespaceSelector={"matchLabels": {"nospecialchars^=@": "bar"}}),
        [(INVALID, "spec.namespaceSelector.matchLabels")],
    ),
    (
        "namespaceSelector with invalid expressions",
        cq(namespaceSelector={"matchExpressions": [{"key": "key", "operator": "In"}]}),
        [(REQUIRED, "spec.namespaceSelector.matchExpressions[0].values")],
    ),
    # Not in Kueue's table (metav1 ValidateLabelSelector cases): the unknown operator the issue
    # names, and values given to Exists.
    (
        "namespaceSelector with an unknown operator",
        cq(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "in", "values": ["a"]}]}),
        [(NOT_SUPPORTED, "spec.namespaceSelector.matchExpressions[0].operator")],
    ),
    (
        "namespaceSelector Exists with values",
        cq(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["a"]}]}),
        [(ErrorType.FORBIDDEN, "spec.namespaceSelector.matchExpressions[0].values")],
    ),
    (
        "multiple resource groups",
        cq(
            group(flavor("alpha", res("cpu"), res("memory")), flavor("beta", res("cpu"), res("memory"))),
            group(flavor("gamma", res("example.com/gpu")), flavor("omega", res("example.com/gpu"))),
        ),
        [],
    ),
    (
        "resources in a flavor in different order",
        cq(
            group(flavor("alpha", res("cpu"), res("memory")), flavor("beta", res("memory"), res("cpu"))),
        ),
        [
            (INVALID, f"{RG}[0].flavors[1].resources[0].name"),
            (INVALID, f"{RG}[0].flavors[1].resources[1].name"),
        ],
    ),
    (
        "resource in more than one resource group",
        cq(
            group(flavor("alpha", res("cpu"), res("memory"))),
            group(flavor("beta", res("memory"))),
        ),
        [(DUPLICATE, f"{RG}[1].coveredResources[0]")],
    ),
    (
        "flavor in more than one resource group",
        cq(
            group(flavor("alpha", res("cpu")), flavor("beta", res("cpu"))),
            group(flavor("beta", res("memory"))),
        ),
        [(DUPLICATE, f"{RG}[1].flavors[0].name")],
    ),
    (
        "valid preemption with borrowWithinCohort",
        cq(
            preemption={
                "reclaimWithinCohort": "LowerPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 10},
            }
        ),
        [],
    ),
    ("nil borrowWithinCohort from an older Kueue", cq(preemption={"reclaimWithinCohort": "Never"}), []),
    ("integer quantities", cq(group(flavor("x86", res("cpu", 4, 2, 1))), cohort="c"), []),
]


@pytest.mark.parametrize(
    ("name", "obj", "expected"), CLUSTER_QUEUE_CASES, ids=[c[0] for c in CLUSTER_QUEUE_CASES]
)
def test_cluster_queue_webhook_table(name: str, obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert found(cluster_queue_errors(obj)) == expected


def _flavors(n: int) -> list[dict[str, Any]]:
    return [flavor(f"f{i:03d}", res("cpu", "1")) for i in range(n)]


# TestValidateTotalFlavors / TestValidateTotalCoveredResources / TestValidateFlavorResourceCombinations.
@pytest.mark.parametrize(("flavors", "refused"), [(10, False), (256, False), (257, True)])
def test_total_flavors(flavors: int, refused: bool) -> None:
    groups = [group(*_flavors(flavors)[i : i + 64]) for i in range(0, flavors, 64)]
    for i, g in enumerate(groups):  # one covered resource per group, never in two groups
        for f in g["flavors"]:
            f["resources"] = [res(f"r{i}")]
        g["coveredResources"] = [f"r{i}"]
    assert (found(cluster_queue_errors(cq(*groups))) == [(INVALID, RG)]) is refused
    assert refused or cluster_queue_errors(cq(*groups)) == []


@pytest.mark.parametrize(("resources", "refused"), [(10, False), (256, False), (257, True)])
def test_total_covered_resources(resources: int, refused: bool) -> None:
    groups = [
        group(flavor(f"f{i}", *(res(f"r{j}") for j in range(i, min(i + 16, resources)))))
        for i in range(0, resources, 16)
    ]
    assert found(cluster_queue_errors(cq(*groups))) == ([(INVALID, RG)] if refused else [])


@pytest.mark.parametrize(("flavors", "resources", "refused"), [(1, 10, False), (8, 64, False), (9, 64, True)])
def test_flavor_resource_combinations(flavors: int, resources: int, refused: bool) -> None:
    names = [f"r{j}" for j in range(resources)]
    one = group(*(flavor(f"f{i}", *(res(n) for n in names)) for i in range(flavors)))
    assert found(cluster_queue_errors(cq(one))) == ([(INVALID, f"{RG}[0]")] if refused else [])


@given(st.lists(st.integers(min_value=-5, max_value=5), min_size=1, max_size=4))
def test_exactly_the_negative_nominal_quotas_are_refused(quotas: list[int]) -> None:
    obj = cq(group(flavor("f", *(res(f"r{i}", str(q)) for i, q in enumerate(quotas)))))
    expected = [
        (INVALID, f"{RG}[0].flavors[0].resources[{i}].nominalQuota") for i, q in enumerate(quotas) if q < 0
    ]
    assert found(cluster_queue_errors(obj)) == expected


# resourceflavor_webhook_test.go TestValidateResourceFlavor, plus the taint rules of its
# validateNodeTaints (extracted from Kubernetes' core validation).
def rf(**spec: Any) -> dict[str, Any]:
    return {"kind": "ResourceFlavor", "metadata": {"name": "resource-flavor"}, "spec": spec}


SPOT = {"key": "spot", "value": "true", "effect": "NoSchedule"}
RESOURCE_FLAVOR_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("empty", rf(), []),
    ("valid", rf(nodeLabels={"foo": "bar"}, nodeTaints=[SPOT]), []),
    ("invalid label name", rf(nodeLabels={"@abc": "foo"}), [(INVALID, "spec.nodeLabels")]),
    ("invalid label value", rf(nodeLabels={"foo": "@abc"}), [(INVALID, "spec.nodeLabels")]),
    ("invalid taint key", rf(nodeTaints=[{**SPOT, "key": "@spot"}]), [(INVALID, "spec.nodeTaints[0].key")]),
    (
        "invalid taint value",
        rf(nodeTaints=[{**SPOT, "value": "@x"}]),
        [(INVALID, "spec.nodeTaints[0].value")],
    ),
    (
        "duplicate taint key and effect",
        rf(nodeTaints=[SPOT, {**SPOT, "value": "false"}]),
        [(DUPLICATE, "spec.nodeTaints[1]")],
    ),
    ("same key, other effect", rf(nodeTaints=[SPOT, {**SPOT, "effect": "NoExecute"}]), []),
]


@pytest.mark.parametrize(
    ("name", "obj", "expected"), RESOURCE_FLAVOR_CASES, ids=[c[0] for c in RESOURCE_FLAVOR_CASES]
)
def test_resource_flavor_webhook_table(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert found(resource_flavor_errors(obj)) == expected


# workload_webhook_test.go TestValidateWorkload / TestValidateWorkloadUpdate.
def pod_set(
    name: str = "main", count: int = 1, min_count: int | None = None, requests: Any = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests}
    entry: dict[str, Any] = {"name": name, "count": count, "template": {"spec": {"containers": [container]}}}
    if min_count is not None:
        entry["minCount"] = min_count
    return entry


def wl(*pod_sets: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "ns"},
        "spec": {"podSets": list(pod_sets or [pod_set()])},
    }
    if status is not None:
        obj["status"] = status
    return obj


RESERVED = [
    {
        "type": "QuotaReserved",
        "status": "True",
        "reason": "QuotaReserved",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
]


def admitted(*assignments: dict[str, Any], **status: Any) -> dict[str, Any]:
    return {
        "conditions": RESERVED,
        "admission": {"clusterQueue": "cq", "podSetAssignments": list(assignments)},
        **status,
    }


WORKLOAD_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("valid", wl(pod_set("driver"), pod_set("workers", 100)), []),
    (
        "should not request num-pods resource",
        wl(pod_set(requests={"pods": "1"})),
        [(INVALID, "spec.podSets[0].template.spec.containers[0].resources.requests[pods]")],
    ),
    (
        "too many variable count podSets",
        wl(pod_set("ps1", 3, 2), pod_set("ps2", 3, 1)),
        [(INVALID, "spec.podSets")],
    ),
    ("one variable count podSet", wl(pod_set("ps1", 3, 2), pod_set("ps2", 3)), []),
    (
        "mismatched names in admission with names in podSets",
        wl(pod_set("main1"), status=admitted({"name": "main2", "count": 1})),
        [(INVALID, "status.admission.podSetAssignments[0].name")],
    ),
    (
        "assignment usage should be divisible by count",
        wl(pod_set(count=3), status=admitted({"name": "main", "count": 3, "resourceUsage": {"cpu": "1"}})),
        [(INVALID, "status.admission.podSetAssignments[0].resourceUsage[cpu]")],
    ),
    (
        "assignment usage divisible by count",
        wl(
            pod_set(count=3),
            status=admitted({"name": "main", "count": 3, "resourceUsage": {"cpu": "3", "memory": "3Gi"}}),
        ),
        [],
    ),
    (
        "admission without quota reservation is not checked",
        wl(status={"admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "other"}]}}),
        [],
    ),
    (
        "reclaimable pods of an unknown pod set",
        wl(status={"reclaimablePods": [{"name": "other", "count": 1}]}),
        [(NOT_SUPPORTED, "status.reclaimablePods[other].name")],
    ),
    (
        "reclaimable pods above the count",
        wl(pod_set(count=2), status={"reclaimablePods": [{"name": "main", "count": 3}]}),
        [(INVALID, "status.reclaimablePods[main].count")],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), WORKLOAD_CASES, ids=[c[0] for c in WORKLOAD_CASES])
def test_workload_webhook_table(name: str, obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert found(workload_errors(obj)) == expected


def _changed(obj: dict[str, Any], **pod_set_fields: Any) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    new["spec"]["podSets"][0].update(pod_set_fields)
    return new


ADMITTED = wl(pod_set(count=1), status=admitted({"name": "main", "count": 1}))
PENDING = wl(pod_set(count=1))
WORKLOAD_UPDATE_CASES: list[tuple[str, dict[str, Any], dict[str, Any], list[tuple[str, str]]]] = [
    (
        "podSets should not be updated when has quota reservation: count",
        ADMITTED,
        _changed(ADMITTED, count=2),
        [(INVALID, "spec.podSets[0]")],
    ),
    (
        "podSets should not be updated: podSpec",
        ADMITTED,
        _changed(ADMITTED, template={"spec": {"containers": [{"name": "c", "image": "other"}]}}),
        [(INVALID, "spec.podSets[0]")],
    ),
    ("podSets may change before quota is reserved", PENDING, _changed(PENDING, count=2), []),
    ("admission can be set", PENDING, {**PENDING, "status": admitted({"name": "main", "count": 1})}, []),
    ("admission can be unset", ADMITTED, {**ADMITTED, "status": {"conditions": []}}, []),
    (
        "admission should not be updated once set",
        ADMITTED,
        {
            **ADMITTED,
            "status": {
                **ADMITTED["status"],
                "admission": {"clusterQueue": "other", "podSetAssignments": [{"name": "main", "count": 1}]},
            },
        },
        [(INVALID, "status.admission")],
    ),
    (
        "reclaimable pod count can change up",
        {**ADMITTED, "status": {**ADMITTED["status"], "reclaimablePods": [{"name": "main", "count": 0}]}},
        {**ADMITTED, "status": {**ADMITTED["status"], "reclaimablePods": [{"name": "main", "count": 1}]}},
        [],
    ),
    (
        "reclaimable pod count cannot change down",
        {**ADMITTED, "status": {**ADMITTED["status"], "reclaimablePods": [{"name": "main", "count": 1}]}},
        {**ADMITTED, "status": {**ADMITTED["status"], "reclaimablePods": [{"name": "main", "count": 0}]}},
        [(INVALID, "status.reclaimablePods[main].count")],
    ),
    (
        "reclaimable pods cannot be removed while reserved",
        {**ADMITTED, "status": {**ADMITTED["status"], "reclaimablePods": [{"name": "main", "count": 1}]}},
        ADMITTED,
        [(REQUIRED, "status.reclaimablePods[main]")],
    ),
]


@pytest.mark.parametrize(
    ("name", "old", "new", "expected"), WORKLOAD_UPDATE_CASES, ids=[c[0] for c in WORKLOAD_UPDATE_CASES]
)
def test_workload_update_webhook_table(
    name: str, old: dict[str, Any], new: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert found(workload_errors(new, old)) == expected


def test_messages_name_the_field_and_the_rule() -> None:
    (error,) = cluster_queue_errors(cq(group(flavor("x86", res("cpu", "-1")))))
    assert error.message() == f'{Q0}.nominalQuota: Invalid value: "-1": must be greater than or equal to 0'
