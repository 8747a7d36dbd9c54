"""Validation at the door for Kueue's kinds, black-box: Kueue's webhook integration tables as data.

Each case writes one object through the real embedded API server with the official
``kubernetes`` client while the operator serves its webhooks, and expects what Kueue's own
integration tests expect: success, ``Invalid`` (422, refused by the CRD schema or a CEL rule)
or ``Forbidden`` (403, refused by a validating webhook), with the message naming the field.
Sources (kubernetes-sigs/kueue v0.14.8, test/integration/singlecluster/webhook/core/):
clusterqueue_test.go ("Should have valid ... when creating ClusterQueue" table),
resourceflavor_test.go, localqueue_test.go, workload_test.go and cohort_test.go (the same at
v0.19.2, where the Cohort cases also run at v1beta2); case names are Kueue's.
Cases of fields we do not serve are listed, with the reason, in docs/conformance/validation.md.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace
from tests.support.kubectl import KUBECTL, KUBECTL_REQUIRED, Kubectl

GROUP, VERSION = "kueue.x-k8s.io", "v1beta1"
NAMESPACE = "kueue-validation"
OK, INVALID, FORBIDDEN = 0, 422, 403
Q0 = "spec.resourceGroups[0].flavors[0].resources[0]"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def api(apiserver: ServerProcess) -> Iterator[k8s.CustomObjectsApi]:
    # The controllers are off: nothing but the test writes these objects' status.
    config = {
        "queueing": {"enabled": False},
        "appwrapper": {"enabled": False},
        "webhook": {"failurePolicy": "Fail"},
    }
    operator = ThreadedOperator(apiserver, config).start()
    api_client = k8s_config.new_client_from_config(str(apiserver.kubeconfig))
    try:
        ensure_namespace(_kube(apiserver), NAMESPACE)
        yield k8s.CustomObjectsApi(api_client)
    finally:
        api_client.close()
        operator.stop()


def _kube(server: ServerProcess) -> Any:
    from codeflare.kube.client import Kube
    from codeflare.kube.config import from_kubeconfig

    return Kube(from_kubeconfig(server.kubeconfig))


# --- object makers (Kueue's utiltestingapi builders, as dicts) ----------------------------------


def res(name: str, nominal: Any = "0", borrowing: Any = None, lending: Any = None) -> Obj:
    entry: Obj = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        entry["borrowingLimit"] = borrowing
    if lending is not None:
        entry["lendingLimit"] = lending
    return entry


def flavor(name: str, *resources: Obj) -> Obj:
    return {"name": name, "resources": list(resources)}


def group(*flavors: Obj, covered: list[str] | None = None) -> Obj:
    names = (
        covered if covered is not None else [r["name"] for r in (flavors[0]["resources"] if flavors else [])]
    )
    return {"coveredResources": names, "flavors": list(flavors)}


def cq(*groups: Obj, **spec: Any) -> Obj:
    body: Obj = {"namespaceSelector": {}, **spec}
    if groups:
        body["resourceGroups"] = list(groups)
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {}, "spec": body}


def many(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


# clusterqueue_test.go: (Kueue's entry name, object, expected, field the refusal names)
CLUSTER_QUEUE_CASES: list[tuple[str, Obj, int, str]] = [
    (
        "Should have non-negative borrowing limit",
        cq(group(flavor("x86", res("cpu", "2", "-1"))), cohort="cohort"),
        FORBIDDEN,
        f"{Q0}.borrowingLimit",
    ),
    (
        "Should have non-negative quota value",
        cq(group(flavor("x86", res("cpu", "-1")))),
        FORBIDDEN,
        f"{Q0}.nominalQuota",
    ),
    ("Should have at least one flavor", cq(group()), INVALID, "spec.resourceGroups[0].coveredResources"),
    ("Should have at least one resource", cq(group(flavor("foo"))), INVALID, "spec.resourceGroups[0]"),
    (
        "Should have qualified flavor name",
        cq(group(flavor("invalid_name", res("cpu", "5")))),
        INVALID,
        "spec.resourceGroups[0].flavors[0].name",
    ),
    (
        "Should have qualified resource name",
        cq(group(flavor("x86", res("@cpu", "5")))),
        FORBIDDEN,
        "spec.resourceGroups[0].coveredResources[0]",
    ),
    (
        "Should have valid resources quantity",
        cq(group(flavor("flavor", *(res(n) for n in many("r", 65))))),
        INVALID,
        "spec.resourceGroups[0].coveredResources",
    ),
    (
        "Should have valid flavors quantity",
        cq(group(*(flavor(f, res("cpu")) for f in many("f", 65)))),
        INVALID,
        "spec.resourceGroups[0].flavors",
    ),
    (
        "Should forbid clusterQueue creation with unqualified labelSelector",
        cq(namespaceSelector={"matchLabels": {"nospecialchars^=@": "bar"}}),
        FORBIDDEN,
        "spec.namespaceSelector",
    ),
    (
        "Should forbid to create clusterQueue with unknown clusterQueueingStrategy",
        cq(queueingStrategy="unknown"),
        INVALID,
        "spec.queueingStrategy",
    ),
    ("Should allow to create clusterQueue with empty clusterQueueingStrategy", cq(), OK, ""),
    ("Should allow to create clusterQueue with empty preemption", cq(preemption={}), OK, ""),
    (
        "Should allow to create clusterQueue with preemption policies",
        cq(
            preemption={"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            flavorFungibility={"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"},
        ),
        OK,
        "",
    ),
    (
        "Should forbid to create clusterQueue with unknown preemption.withinCohort",
        cq(preemption={"reclaimWithinCohort": "unknown"}),
        INVALID,
        "spec.preemption.reclaimWithinCohort",
    ),
    (
        "Should forbid to create clusterQueue with unknown preemption.withinClusterQueue",
        cq(preemption={"withinClusterQueue": "unknown"}),
        INVALID,
        "spec.preemption.withinClusterQueue",
    ),
    (
        "Should allow to create clusterQueue with built-in resources with qualified names",
        cq(group(flavor("default", res("cpu")))),
        OK,
        "",
    ),
    (
        "Should forbid to create clusterQueue with invalid resource name",
        cq(group(flavor("default", res("@cpu")))),
        FORBIDDEN,
        "spec.resourceGroups[0].coveredResources[0]",
    ),
    ("Should allow to create clusterQueue with valid cohort", cq(cohort="prod"), OK, ""),
    ("Should forbid to create clusterQueue with invalid cohort", cq(cohort="@prod"), INVALID, "spec.cohort"),
    (
        "Should allow to create clusterQueue with extended resources with qualified names",
        cq(group(flavor("default", res("example.com/gpu")))),
        OK,
        "",
    ),
    (
        "Should allow to create clusterQueue with flavor with qualified names",
        cq(group(flavor("x86", res("cpu")))),
        OK,
        "",
    ),
    (
        "Should forbid to create clusterQueue with flavor with unqualified names",
        cq(group(flavor("invalid_name"))),
        INVALID,
        "spec.resourceGroups[0].flavors[0].name",
    ),
    (
        "Should forbid to create clusterQueue with flavor quota with negative value",
        cq(group(flavor("x86", res("cpu", "-1")))),
        FORBIDDEN,
        f"{Q0}.nominalQuota",
    ),
    (
        "Should allow to create clusterQueue with flavor quota with zero values",
        cq(group(flavor("x86", res("cpu")))),
        OK,
        "",
    ),
    (
        "Should allow to create clusterQueue with flavor quota with borrowingLimit 0",
        cq(group(flavor("x86", res("cpu", "1", "0"))), cohort="cohort"),
        OK,
        "",
    ),
    (
        "Should forbid to create clusterQueue with flavor quota with negative borrowingLimit",
        cq(group(flavor("x86", res("cpu", "1", "-1"))), cohort="cohort"),
        FORBIDDEN,
        f"{Q0}.borrowingLimit",
    ),
    (
        "Should forbid to create clusterQueue with flavor quota with borrowingLimit and empty cohort",
        cq(group(flavor("x86", res("cpu", "1", "1")))),
        INVALID,
        "borrowingLimit must be nil when cohort is empty",
    ),
    (
        "Should forbid to create clusterQueue with namespaceSelector with invalid labels",
        cq(namespaceSelector={"matchLabels": {"nospecialchars^=@": "bar"}}),
        FORBIDDEN,
        "spec.namespaceSelector.matchLabels",
    ),
    (
        "Should forbid to create clusterQueue with namespaceSelector with invalid expressions",
        cq(namespaceSelector={"matchExpressions": [{"key": "key", "operator": "In"}]}),
        FORBIDDEN,
        "spec.namespaceSelector.matchExpressions[0].values",
    ),
    (
        "Should allow to create clusterQueue with multiple resource groups",
        cq(
            group(flavor("alpha", res("cpu"), res("memory")), flavor("beta", res("cpu"), res("memory"))),
            group(flavor("gamma", res("example.com/gpu")), flavor("omega", res("example.com/gpu"))),
        ),
        OK,
        "",
    ),
    (
        "Should forbid to create clusterQueue with resources in a flavor in different order",
        cq(group(flavor("alpha", res("cpu"), res("memory")), flavor("beta", res("memory"), res("cpu")))),
        FORBIDDEN,
        "spec.resourceGroups[0].flavors[1].resources[0].name",
    ),
    (
        "Should forbid to create clusterQueue missing resources in a flavor",
        cq(group(flavor("alpha", res("cpu")), covered=["cpu", "memory"])),
        INVALID,
        "flavors must have the same number of resources as the coveredResources",
    ),
    (
        "Should forbid to create clusterQueue missing resources in a flavor (one covered, two given)",
        cq(group(flavor("alpha", res("cpu"), res("memory")), covered=["cpu"])),
        INVALID,
        "flavors must have the same number of resources as the coveredResources",
    ),
    (
        "Should forbid to create clusterQueue missing resources in a flavor and mismatch",
        cq(group(flavor("alpha", res("cpu"), res("memory")), covered=["blah"])),
        INVALID,
        "flavors must have the same number of resources as the coveredResources",
    ),
    (
        "Should forbid to create clusterQueue with resource in more than one resource group",
        cq(group(flavor("alpha", res("cpu"), res("memory"))), group(flavor("beta", res("memory")))),
        FORBIDDEN,
        "spec.resourceGroups[1].coveredResources[0]",
    ),
    (
        "Should forbid to create clusterQueue with flavor in more than one resource group",
        cq(
            group(flavor("alpha", res("cpu")), flavor("beta", res("cpu"))),
            group(flavor("beta", res("memory"))),
        ),
        FORBIDDEN,
        "spec.resourceGroups[1].flavors[0].name",
    ),
    (
        "Should forbid to create clusterQueue missing with invalid preemption due to "
        "reclaimWithinCohort=Never, while borrowWithinCohort!=nil",
        cq(preemption={"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "LowerPriority"}}),
        INVALID,
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
    ),
    (
        "Should allow to create clusterQueue with valid preemption with borrowWithinCohort",
        cq(
            preemption={
                "reclaimWithinCohort": "LowerPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 10},
            }
        ),
        OK,
        "",
    ),
    (
        "Should allow to create clusterQueue with existing cluster queue created with older Kueue "
        "version that has a nil borrowWithinCohort field",
        cq(preemption={"reclaimWithinCohort": "Never"}),
        OK,
        "",
    ),
    # The table's FairSharing weight entries (the same at v0.14.8 and v0.19.2): refused by the
    # webhook's validateFairSharing (pkg/webhooks/common.go), at spec.fairSharing.
    ("Should allow zero FairSharing weight", cq(fairSharing={"weight": "0"}), OK, ""),
    ("Should allow fractional FairSharing weight", cq(fairSharing={"weight": "0.1"}), OK, ""),
    ("Should allow small FairSharing weight", cq(fairSharing={"weight": "1m"}), OK, ""),
    ("Should allow even smaller FairSharing weight", cq(fairSharing={"weight": "1u"}), OK, ""),
    ("Should allow smallest FairSharing weight", cq(fairSharing={"weight": "2n"}), OK, ""),
    (
        "Should forbid threshold FairSharing weight",
        cq(fairSharing={"weight": "1n"}),
        FORBIDDEN,
        'spec.fairSharing: Invalid value: "1n": When not 0, weight must be > 10e-9',
    ),
    (  # 10^-10: a Quantity rounds it up to 1n
        "Should forbid collapsed FairSharing weight",
        cq(fairSharing={"weight": "0.0000000001"}),
        FORBIDDEN,
        'spec.fairSharing: Invalid value: "1n": When not 0, weight must be > 10e-9',
    ),
    (
        "Should forbid negative FairSharing weight",
        cq(fairSharing={"weight": "-1"}),
        FORBIDDEN,
        'spec.fairSharing: Invalid value: "-1": must be greater than or equal to 0',
    ),
    # Not in Kueue's integration table; its unit table (clusterqueue_webhook_test.go) and
    # metav1 ValidateLabelSelector have them. The issue's "typo `in`" case first.
    (
        "unknown label-selector operator",
        cq(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "in", "values": ["a"]}]}),
        FORBIDDEN,
        "spec.namespaceSelector.matchExpressions[0].operator",
    ),
    (
        "Exists with values",
        cq(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["a"]}]}),
        FORBIDDEN,
        "spec.namespaceSelector.matchExpressions[0].values",
    ),
    (
        "flavor quota with lendingLimit and empty cohort",
        cq(group(flavor("x86", res("cpu", "1", None, "1")))),
        FORBIDDEN,
        f"{Q0}.lendingLimit",
    ),
    (
        "flavor quota with lendingLimit greater than nominalQuota",
        cq(group(flavor("x86", res("cpu", "1", None, "2"))), cohort="c"),
        FORBIDDEN,
        f"{Q0}.lendingLimit",
    ),
    (
        "negative lendingLimit",
        cq(group(flavor("x86", res("cpu", "1", None, "-1"))), cohort="c"),
        FORBIDDEN,
        f"{Q0}.lendingLimit",
    ),
    (
        "too many resource groups",
        cq(*(group(flavor(f"f{i}", res(f"r{i}"))) for i in range(17))),
        INVALID,
        "spec.resourceGroups",
    ),
    ("unknown stopPolicy", cq(stopPolicy="Pause"), INVALID, "spec.stopPolicy"),
    (
        "unknown flavorFungibility.whenCanBorrow",
        cq(flavorFungibility={"whenCanBorrow": "Maybe"}),
        INVALID,
        "spec.flavorFungibility.whenCanBorrow",
    ),
    (
        "unknown borrowWithinCohort.policy",
        cq(preemption={"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "Always"}}),
        INVALID,
        "spec.preemption.borrowWithinCohort.policy",
    ),
]


def as_obj(value: object) -> Obj:
    """The client's answer (typed ``object`` by its stubs) as the dict it is."""
    assert isinstance(value, dict)
    return value


def refusal(error: ApiException) -> tuple[int, str]:
    body = json.loads(error.body or "{}")
    return error.status, str(body.get("message", ""))


def _check(create: Any, expected: int, names: str) -> Obj | None:
    try:
        created = create()
    except ApiException as error:
        status, message = refusal(error)
        assert (status, names in message) == (expected, True), message
        return None
    assert expected == OK, f"accepted, expected {expected}"
    return created


@pytest.mark.parametrize(
    ("name", "obj", "expected", "names"), CLUSTER_QUEUE_CASES, ids=[c[0] for c in CLUSTER_QUEUE_CASES]
)
def test_cluster_queue(api: k8s.CustomObjectsApi, name: str, obj: Obj, expected: int, names: str) -> None:
    index = next(i for i, case in enumerate(CLUSTER_QUEUE_CASES) if case[0] == name)
    body = copy.deepcopy(obj)
    body["metadata"]["name"] = f"cq-{index}"
    created = _check(
        lambda: api.create_cluster_custom_object(GROUP, VERSION, "clusterqueues", body), expected, names
    )
    if created is not None:
        assert created["spec"]["queueingStrategy"] == "BestEffortFIFO"  # defaults applied, as Kueue checks
        api.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", body["metadata"]["name"])


# Kueue 0.19 defaults whenCanBorrow to MayStopSearch in both versions (v1beta1's "Borrow", the
# v0.14 default this case was ported with, is that value's deprecated name).
DEFAULT_FUNGIBILITY = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}
OVERRIDDEN = {
    "withinClusterQueue": "LowerPriority",
    "reclaimWithinCohort": "Any",
    "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
}
# clusterqueue_test.go "Defaulting on creation" (the spec only: the resource-in-use finalizer
# Kueue's mutating webhook adds is not ours, see docs/conformance/validation.md).
DEFAULTING_CASES = [
    (
        "All defaults",
        {},
        {
            "queueingStrategy": "BestEffortFIFO",
            "stopPolicy": "None",
            "flavorFungibility": DEFAULT_FUNGIBILITY,
            "preemption": {
                "withinClusterQueue": "Never",
                "reclaimWithinCohort": "Never",
                "borrowWithinCohort": {"policy": "Never"},
            },
        },
    ),
    (
        "Preemption overridden",
        {"flavorFungibility": DEFAULT_FUNGIBILITY, "preemption": OVERRIDDEN},
        {
            "queueingStrategy": "BestEffortFIFO",
            "stopPolicy": "None",
            "flavorFungibility": DEFAULT_FUNGIBILITY,
            "preemption": OVERRIDDEN,
        },
    ),
    (  # the FairSharing weight's CRD default (fairsharing_types.go, +kubebuilder:default=1)
        "Default fair sharing",
        {"fairSharing": {}},
        {
            "queueingStrategy": "BestEffortFIFO",
            "stopPolicy": "None",
            "flavorFungibility": DEFAULT_FUNGIBILITY,
            "preemption": {
                "withinClusterQueue": "Never",
                "reclaimWithinCohort": "Never",
                "borrowWithinCohort": {"policy": "Never"},
            },
            "fairSharing": {"weight": 1},
        },
    ),
]


@pytest.mark.parametrize(("name", "spec", "expected"), DEFAULTING_CASES, ids=[c[0] for c in DEFAULTING_CASES])
def test_cluster_queue_defaulting(api: k8s.CustomObjectsApi, name: str, spec: Obj, expected: Obj) -> None:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterQueue",
        "metadata": {"name": "foo"},
        "spec": spec,
    }
    created = as_obj(api.create_cluster_custom_object(GROUP, VERSION, "clusterqueues", body))
    api.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", "foo")
    assert created["spec"] == expected


# --- ResourceFlavor (resourceflavor_test.go) -----------------------------------------------------


def rf(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": spec,
    }


def taints(n: int) -> list[Obj]:
    return [{"key": f"t{i}", "effect": "NoExecute"} for i in range(n)]


TOLERATION = {"key": "abc", "operator": "Equal", "value": "v", "effect": "NoSchedule"}
RESOURCE_FLAVOR_CASES: list[tuple[str, Obj, int, str]] = [
    ("invalid number of taint", rf("rf-0", nodeTaints=taints(9)), INVALID, "spec.nodeTaints"),
    (
        "invalid number of nodeSelector",
        rf("rf-1", nodeLabels={f"l{i}": "" for i in range(9)}),
        INVALID,
        "spec.nodeLabels",
    ),
    (
        "valid number of nodeSelector and taint",
        rf("rf-2", nodeTaints=taints(8), nodeLabels={f"l{i}": "" for i in range(8)}),
        OK,
        "",
    ),
    (
        "Should fail to create with invalid taints",
        rf("rf-3", nodeTaints=[{"key": "skdajf"}, {"key": "@foo", "value": "bar", "effect": "NoSchedule"}]),
        INVALID,
        "spec.nodeTaints[0].effect",
    ),
    (
        "Should fail to create with invalid label name",
        rf("rf-4", nodeLabels={"@abc": "foo"}),
        FORBIDDEN,
        "spec.nodeLabels",
    ),
    (
        "Should fail to create with invalid tolerations: Exists with a value",
        rf("rf-5", tolerations=[{**TOLERATION, "operator": "Exists"}]),
        INVALID,
        "a value must be empty when 'operator' is 'Exists'",
    ),
    (
        "Should fail to create with invalid tolerations: unknown effect",
        rf("rf-6", tolerations=[{**TOLERATION, "effect": "not-valid"}]),
        INVALID,
        "spec.tolerations[0].effect",
    ),
    (
        "Should fail to create with invalid tolerations: tolerationSeconds without NoExecute",
        rf("rf-7", tolerations=[{**TOLERATION, "tolerationSeconds": 5}]),
        INVALID,
        "effect must be 'NoExecute' when 'tolerationSeconds' is set",
    ),
    (
        "Should fail to create with invalid tolerations: no key needs Exists",
        rf("rf-8", tolerations=[{"operator": "Equal", "value": "v"}]),
        INVALID,
        "operator must be Exists when 'key' is empty",
    ),
    (
        "invalid taint value (validateNodeTaints)",
        rf("rf-9", nodeTaints=[{"key": "spot", "value": "@x", "effect": "NoSchedule"}]),
        FORBIDDEN,
        "spec.nodeTaints[0].value",
    ),
    (
        "duplicate taint key and effect (validateNodeTaints)",
        rf(
            "rf-10",
            nodeTaints=[
                {"key": "spot", "effect": "NoSchedule"},
                {"key": "spot", "value": "x", "effect": "NoSchedule"},
            ],
        ),
        FORBIDDEN,
        "taints must be unique by key and effect pair",
    ),
    (
        "topologyName needs a node label",
        rf("rf-11", topologyName="default"),
        INVALID,
        "at least one nodeLabel is required when topology is set",
    ),
]


@pytest.mark.parametrize(
    ("name", "obj", "expected", "names"), RESOURCE_FLAVOR_CASES, ids=[c[0] for c in RESOURCE_FLAVOR_CASES]
)
def test_resource_flavor(api: k8s.CustomObjectsApi, name: str, obj: Obj, expected: int, names: str) -> None:
    created = _check(
        lambda: api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", obj), expected, names
    )
    if created is not None:
        api.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", obj["metadata"]["name"])


def test_resource_flavor_update_with_an_invalid_taint_is_refused(api: k8s.CustomObjectsApi) -> None:
    """resourceflavor_test.go "Updating a ResourceFlavor with invalid taints": Should fail to update."""
    created = as_obj(api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", rf("rf-update")))
    created["spec"]["nodeTaints"] = [{"key": "foo", "value": "bar", "effect": "Invalid"}]
    _check(
        lambda: api.replace_cluster_custom_object(GROUP, VERSION, "resourceflavors", "rf-update", created),
        INVALID,
        "spec.nodeTaints[0].effect",
    )


def test_resource_flavor_with_a_topology_is_immutable(api: k8s.CustomObjectsApi) -> None:
    """resourceflavor_types.go rule: the spec is immutable once topologyName is set."""
    created = as_obj(
        api.create_cluster_custom_object(
            GROUP,
            VERSION,
            "resourceflavors",
            rf("rf-topology", topologyName="default", nodeLabels={"a": "b"}),
        )
    )
    created["spec"]["nodeLabels"] = {"a": "c"}
    _check(
        lambda: api.replace_cluster_custom_object(GROUP, VERSION, "resourceflavors", "rf-topology", created),
        INVALID,
        "resourceFlavorSpec are immutable when topologyName is set",
    )


# --- Cohort (cohort_test.go) ----------------------------------------------------------------------
# kubernetes-sigs/kueue test/integration/singlecluster/webhook/core/cohort_test.go, "Validate Cohort
# on creation" table and the "Updating a Cohort" specs: the same entries at v0.14.8 (2f2a452, v1beta1)
# and v0.19.2 (8eab687, v1beta2; unchanged on main ff69552). Rules: cohort_types.go markers (the CRD:
# 422) and pkg/webhooks/cohort_webhook.go validateCohort (the webhook: 403), whose limit message says
# "parent" where a ClusterQueue's says "cohort", and which, unlike the ClusterQueue's, lets a
# lendingLimit exceed the nominalQuota and checks no totals over the groups.


def co(name: str, *groups: Obj, parent: str | None = None, weight: str | None = None) -> Obj:
    spec: Obj = {}
    if parent is not None:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = list(groups)
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def _explicit(covered: list[str], *flavors: Obj) -> Obj:
    """A group written out by hand (the cases whose flavors do not all list the covered resources)."""
    return {"coveredResources": covered, "flavors": list(flavors)}


NO_PARENT = "must be nil when parent is empty"
COLLAPSED = "When not 0, weight must be > 10e-9"
# (Kueue's entry name, object, expected, what the refusal names). Every entry's Cohort is named
# "cohort" in Kueue; here "cohort-<index>" (the empty name stays empty).
COHORT_CASES: list[tuple[str, Obj, int, str]] = [
    ("Should disallow empty name", co(""), INVALID, "metadata.name"),
    ("Should allow default Cohort", co("cohort"), OK, ""),
    ("Should allow valid parent name", co("cohort", parent="prod"), OK, ""),
    ("Should reject invalid parent name", co("cohort", parent="@prod"), INVALID, "spec.parentName"),
    (
        "ResourceGroup should have at least one flavor",
        co("cohort", group()),
        INVALID,
        "spec.resourceGroups[0].flavors",
    ),
    (
        "FlavorQuota should have at least one resource",
        co("cohort", group(flavor("foo"))),
        INVALID,
        "spec.resourceGroups[0].flavors[0].resources",
    ),
    (
        "Should reject invalid flavor name",
        co("cohort", group(flavor("@x86", res("cpu", "5")))),
        INVALID,
        "spec.resourceGroups[0].flavors[0].name",
    ),
    (  # Kueue's name; the entry expects the refusal of "@cpu"
        "Should allow valid resource name",
        co("cohort", group(flavor("x86", res("@cpu", "5")))),
        FORBIDDEN,
        "spec.resourceGroups[0].coveredResources[0]",
    ),
    (
        "Should reject too many flavors in resource group",
        co("cohort", group(*(flavor(f, res("cpu")) for f in many("f", 65)))),
        INVALID,
        "spec.resourceGroups[0].flavors",
    ),
    (
        "Should reject too many resources in resource group",
        co("cohort", group(flavor("flavor", *(res(n) for n in many("cpu", 65))))),
        INVALID,
        "spec.resourceGroups[0].coveredResources",
    ),
    ("Should allow resource with valid name", co("cohort", group(flavor("default", res("cpu")))), OK, ""),
    (
        "Should reject resource with invalid name",
        co("cohort", group(flavor("default", res("@cpu")))),
        FORBIDDEN,
        "spec.resourceGroups[0].coveredResources[0]",
    ),
    (
        "Should allow extended resources with valid name",
        co("cohort", group(flavor("default", res("example.com/gpu")))),
        OK,
        "",
    ),
    ("Should allow flavor with valid name", co("cohort", group(flavor("x86", res("cpu")))), OK, ""),
    (
        "Should reject flavor with invalid name",
        co("cohort", group(flavor("x_86", res("cpu")))),
        INVALID,
        "spec.resourceGroups[0].flavors[0].name",
    ),
    (
        "Should reject negative nominal quota",
        co("cohort", group(flavor("x86", res("cpu", "-1")))),
        FORBIDDEN,
        f'{Q0}.nominalQuota: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "Should reject negative borrowing limit",
        co("cohort", group(flavor("x86", res("cpu", "1", "-1")))),
        FORBIDDEN,
        f'{Q0}.borrowingLimit: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "Should reject negative lending limit",
        co("cohort", group(flavor("x86", res("cpu", "1", None, "-1")))),
        FORBIDDEN,
        f'{Q0}.lendingLimit: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "Should reject borrowingLimit when no parent",
        co("cohort", group(flavor("x86", res("cpu", "1", "1")))),
        FORBIDDEN,
        f'{Q0}.borrowingLimit: Invalid value: "1": {NO_PARENT}',
    ),
    (
        "Should allow borrowingLimit 0 when parent exists",
        co("cohort", group(flavor("x86", res("cpu", "1", "0"))), parent="parent"),
        OK,
        "",
    ),
    (
        "Should allow borrowingLimit when parent exists",
        co("cohort", group(flavor("x86", res("cpu", "1", "1"))), parent="parent"),
        OK,
        "",
    ),
    (
        "Should reject lendingLimit when no parent",
        co("cohort", group(flavor("x86", res("cpu", "1", None, "1")))),
        FORBIDDEN,
        f'{Q0}.lendingLimit: Invalid value: "1": {NO_PARENT}',
    ),
    (
        "Should allow lendingLimit when parent exists",
        co("cohort", group(flavor("x86", res("cpu", "1", None, "1"))), parent="parent"),
        OK,
        "",
    ),
    (
        "Should allow lendingLimit 0 when parent exists",
        co("cohort", group(flavor("x86", res("cpu", "0", None, "0"))), parent="parent"),
        OK,
        "",
    ),
    (
        "Should allow lending limit to exceed nominal quota",
        co("cohort", group(flavor("x86", res("cpu", "3", None, "5"))), parent="parent"),
        OK,
        "",
    ),
    (
        "Should allow multiple resource groups",
        co(
            "cohort",
            group(flavor("alpha", res("cpu"), res("memory")), flavor("beta", res("cpu"), res("memory"))),
            group(flavor("gamma", res("example.com/gpu")), flavor("omega", res("example.com/gpu"))),
        ),
        OK,
        "",
    ),
    (
        "Should reject resources in a flavor in different order",
        co(
            "cohort",
            _explicit(
                ["cpu", "memory"],
                flavor("alpha", res("cpu"), res("memory")),
                flavor("beta", res("memory"), res("cpu")),
            ),
        ),
        FORBIDDEN,
        "spec.resourceGroups[0].flavors[1].resources[0].name",
    ),
    (
        "Should reject missing resources in a flavor",
        co("cohort", _explicit(["cpu", "memory"], flavor("alpha", res("cpu")))),
        INVALID,
        "flavors must have the same number of resources as the coveredResources",
    ),
    (
        "Should reject resource not defined in resource group",
        co("cohort", _explicit(["cpu"], flavor("alpha", res("cpu"), res("memory")))),
        INVALID,
        "flavors must have the same number of resources as the coveredResources",
    ),
    (
        "Should reject resource in more than one resource group",
        co("cohort", group(flavor("alpha", res("cpu"), res("memory"))), group(flavor("beta", res("memory")))),
        FORBIDDEN,
        "spec.resourceGroups[1].coveredResources[0]",
    ),
    (
        "Should reject flavor in more than one resource group",
        co(
            "cohort",
            group(flavor("alpha", res("cpu")), flavor("beta", res("cpu"))),
            group(flavor("beta", res("memory"))),
        ),
        FORBIDDEN,
        "spec.resourceGroups[1].flavors[0].name",
    ),
    ("Should allow FairSharing weight", co("cohort", weight="1"), OK, ""),
    ("Should allow zero FairSharing weight", co("cohort", weight="0"), OK, ""),
    (
        "Should forbid negative FairSharing weight",
        co("cohort", weight="-1"),
        FORBIDDEN,
        'spec.fairSharing: Invalid value: "-1": must be greater than or equal to 0',
    ),
    ("Should allow fractional FairSharing weight", co("cohort", weight="0.5"), OK, ""),
    ("Should allow small FairSharing weight", co("cohort", weight="1m"), OK, ""),
    ("Should allow even smaller FairSharing weight", co("cohort", weight="1u"), OK, ""),
    ("Should allow smallest FairSharing weight", co("cohort", weight="2n"), OK, ""),
    (
        "Should forbid threshold FairSharing weight",
        co("cohort", weight="1n"),
        FORBIDDEN,
        f'spec.fairSharing: Invalid value: "1n": {COLLAPSED}',
    ),
    (  # 10^-10: a Quantity rounds it up to 1n (Kueue's client even sends it as "1n")
        "Should forbid collapsed FairSharing weight",
        co("cohort", weight="0.0000000001"),
        FORBIDDEN,
        f'spec.fairSharing: Invalid value: "1n": {COLLAPSED}',
    ),
    # "Updating a Cohort" / "Should reject negative borrowing limit": Kueue's spec creates a Cohort
    # with a negative nominalQuota (not a borrowingLimit) and expects the create to fail.
    (
        "Updating a Cohort: Should reject negative borrowing limit",
        co("cohort", group(flavor("x86", res("cpu", "-1")))),
        FORBIDDEN,
        f"{Q0}.nominalQuota",
    ),
    # pkg/webhooks/cohort_webhook_test.go TestValidateCohort (its one entry; the same at v0.14.8
    # and v0.19.2): Invalid, at the lendingLimit, "must be nil when parent is empty".
    (
        "flavor quota with lendingLimit and empty parent",
        co("cohort", group(flavor("x86", res("cpu", "1", None, "1")))),
        FORBIDDEN,
        f'{Q0}.lendingLimit: Invalid value: "1": {NO_PARENT}',
    ),
    # Not in Kueue's tables: validateCohort has none of the ClusterQueue's totals (at most 256
    # flavors over the groups), so 257 flavors over five groups are accepted.
    (
        "more than 256 flavors over the resource groups (no totals for a Cohort)",
        co(
            "cohort",
            *(group(*(flavor(f"g{i}-f{j}", res(f"r{i}")) for j in range(64))) for i in range(4)),
            group(flavor("g4-f0", res("r4"))),
        ),
        OK,
        "",
    ),
]


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
@pytest.mark.parametrize(("name", "obj", "expected", "names"), COHORT_CASES, ids=[c[0] for c in COHORT_CASES])
def test_cohort(
    api: k8s.CustomObjectsApi, version: str, name: str, obj: Obj, expected: int, names: str
) -> None:
    """At v1beta1 as Kueue v0.14.8 writes them and at v1beta2 as v0.19.2 does (one schema, one
    webhook for both)."""
    index = next(i for i, case in enumerate(COHORT_CASES) if case[0] == name)
    body = copy.deepcopy(obj)
    body["apiVersion"] = f"{GROUP}/{version}"
    if body["metadata"]["name"]:
        body["metadata"]["name"] = f"cohort-{index}"
    created = _check(
        lambda: api.create_cluster_custom_object(GROUP, version, "cohorts", body), expected, names
    )
    if created is not None:
        api.delete_cluster_custom_object(GROUP, version, "cohorts", body["metadata"]["name"])


# "Updating a Cohort": (name, spec created, spec written over it, expected, what the refusal names)
COHORT_UPDATE_CASES: list[tuple[str, Obj, Obj, int, str]] = [
    ("Should update parent", {}, {"parentName": "cohort2"}, OK, ""),
    ("Should reject invalid parent", {}, {"parentName": "@cohort2"}, INVALID, "spec.parentName"),
    # Not in Kueue's table: ValidateUpdate runs validateCohort on the new object.
    (
        "adding a borrowingLimit without a parent is refused on update",
        co("c", group(flavor("x86", res("cpu", "1"))))["spec"],
        co("c", group(flavor("x86", res("cpu", "1", "1"))))["spec"],
        FORBIDDEN,
        f'{Q0}.borrowingLimit: Invalid value: "1": {NO_PARENT}',
    ),
]


@pytest.mark.parametrize(
    ("name", "before", "after", "expected", "names"),
    COHORT_UPDATE_CASES,
    ids=[c[0] for c in COHORT_UPDATE_CASES],
)
def test_cohort_update(
    api: k8s.CustomObjectsApi, name: str, before: Obj, after: Obj, expected: int, names: str
) -> None:
    index = next(i for i, case in enumerate(COHORT_UPDATE_CASES) if case[0] == name)
    cohort_name = f"cohort-update-{index}"
    body = {**co(cohort_name), "spec": copy.deepcopy(before)}
    created = as_obj(api.create_cluster_custom_object(GROUP, VERSION, "cohorts", body))
    try:
        created["spec"] = copy.deepcopy(after)
        replace = api.replace_cluster_custom_object
        _check(lambda: replace(GROUP, VERSION, "cohorts", cohort_name, created), expected, names)
    finally:
        api.delete_cluster_custom_object(GROUP, VERSION, "cohorts", cohort_name)


# --- LocalQueue (localqueue_test.go) and WorkloadPriorityClass -------------------------------------


def test_local_queue_rules(api: k8s.CustomObjectsApi) -> None:
    """localqueue_test.go: "Should reject bad value for spec.clusterQueue" and "Should reject the
    change of spec.clusterQueue"; and the stopPolicy enum."""

    def lq(name: str, cluster_queue: str) -> Obj:
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"clusterQueue": cluster_queue},
        }

    create = api.create_namespaced_custom_object
    _check(
        lambda: create(GROUP, VERSION, NAMESPACE, "localqueues", lq("bad", "invalid_name")),
        INVALID,
        "spec.clusterQueue",
    )
    created = as_obj(create(GROUP, VERSION, NAMESPACE, "localqueues", lq("moving", "foo")))
    created["spec"]["clusterQueue"] = "bar"
    _check(
        lambda: api.replace_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, "localqueues", "moving", created
        ),
        INVALID,
        'spec.clusterQueue: Invalid value: "string": field is immutable',
    )
    _check(
        lambda: create(
            GROUP,
            VERSION,
            NAMESPACE,
            "localqueues",
            {**lq("held", "foo"), "spec": {"clusterQueue": "foo", "stopPolicy": "Pause"}},
        ),
        INVALID,
        "spec.stopPolicy",
    )


@pytest.mark.parametrize(
    ("value", "expected"), [(1000, OK), (-5, OK), (2**31, INVALID), ("high", INVALID), (None, INVALID)]
)
def test_workload_priority_class_value(api: k8s.CustomObjectsApi, value: Any, expected: int) -> None:
    """workloadpriorityclass_types.go: ``value`` is a required int32."""
    name = f"wpc-{str(value).lower().replace('-', 'm')}"
    body: Obj = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name},
    }
    if value is not None:
        body["value"] = value
    created = _check(
        lambda: api.create_cluster_custom_object(GROUP, VERSION, "workloadpriorityclasses", body),
        expected,
        "value",
    )
    if created is not None:
        api.delete_cluster_custom_object(GROUP, VERSION, "workloadpriorityclasses", name)


# --- Workload (workload_test.go) -----------------------------------------------------------------


def pod_set(
    name: str = "main", count: int = 1, min_count: int | None = None, requests: Obj | None = None
) -> Obj:
    container: Obj = {"name": "c", "image": "busybox", "resources": {"requests": requests or {"cpu": "1"}}}
    entry: Obj = {"name": name, "count": count, "template": {"spec": {"containers": [container]}}}
    if min_count is not None:
        entry["minCount"] = min_count
    return entry


def wl(name: str, *pod_sets: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"podSets": list(pod_sets) if pod_sets else [pod_set()], **spec},
    }


WORKLOAD_CASES: list[tuple[str, Obj, int, str]] = [
    ("podSets count less than 1", {**wl("w-0"), "spec": {"podSets": []}}, INVALID, "spec.podSets"),
    ("podSets count more than 8", wl("w-1", *(pod_set(f"ps{i}") for i in range(9))), INVALID, "spec.podSets"),
    ("valid podSet, count can be 0", wl("w-2", *(pod_set(f"ps{i}", 0) for i in range(3))), OK, ""),
    ("valid podSet", wl("w-3", *(pod_set(f"ps{i}", 3) for i in range(3))), OK, ""),
    ("valid workload", wl("w-4", pod_set("driver"), pod_set("workers", 100)), OK, ""),
    ("invalid podSet name", wl("w-5", pod_set("@driver")), INVALID, "spec.podSets[0].name"),
    (
        "invalid priorityClassName",
        wl("w-6", priorityClassName="invalid_class", priority=0),
        INVALID,
        "spec.priorityClassName",
    ),
    ("empty priorityClassName is valid", wl("w-7"), OK, ""),
    (
        "priority should not be nil when priorityClassName is set",
        wl("w-8", priorityClassName="priority"),
        INVALID,
        "priority should not be nil when priorityClassName is set",
    ),
    ("invalid queueName", wl("w-9", queueName="@invalid"), INVALID, "spec.queueName"),
    (
        "should not request num-pods resource",
        wl("w-10", pod_set(requests={"pods": "1"})),
        FORBIDDEN,
        "spec.podSets[0].template.spec.containers[0].resources.requests[pods]",
    ),
    (
        "invalid podSet minCount (negative)",
        wl("w-11", pod_set("ps1", 3, -1)),
        INVALID,
        "spec.podSets[0].minCount",
    ),
    (
        "invalid podSet minCount (too big)",
        wl("w-12", pod_set("ps1", 3, 4)),
        INVALID,
        "minCount should be positive and less or equal to count",
    ),
    (
        "too many variable count podSets",
        wl("w-13", pod_set("ps1", 3, 2), pod_set("ps2", 3, 1)),
        FORBIDDEN,
        "at most one podSet can use minCount",
    ),
    (  # Kueue's entry names spell it "Exexcution"; the CRD's Minimum=1
        "invalid maximumExexcutionTimeSeconds",
        wl("w-14", maximumExecutionTimeSeconds=0),
        INVALID,
        "spec.maximumExecutionTimeSeconds",
    ),
    ("valid maximumExexcutionTimeSeconds", wl("w-15", maximumExecutionTimeSeconds=1), OK, ""),
]


@pytest.mark.parametrize(
    ("name", "obj", "expected", "names"), WORKLOAD_CASES, ids=[c[0] for c in WORKLOAD_CASES]
)
def test_workload(api: k8s.CustomObjectsApi, name: str, obj: Obj, expected: int, names: str) -> None:
    created = _check(
        lambda: api.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "workloads", obj),
        expected,
        names,
    )
    if created is not None:
        api.delete_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "workloads", obj["metadata"]["name"])


RESERVED = {
    "type": "QuotaReserved",
    "status": "True",
    "reason": "QuotaReserved",
    "message": "reserved",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}


def _reserve(
    api: k8s.CustomObjectsApi, obj: Obj, *assignments: Obj, cluster_queue: str = "cluster-queue"
) -> Obj:
    created = as_obj(api.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "workloads", obj))
    created["status"] = {
        "conditions": [RESERVED],
        "admission": {"clusterQueue": cluster_queue, "podSetAssignments": list(assignments)},
    }
    return created


def _status(api: k8s.CustomObjectsApi, obj: Obj) -> Obj:
    name = obj["metadata"]["name"]
    return as_obj(
        api.replace_namespaced_custom_object_status(GROUP, VERSION, NAMESPACE, "workloads", name, obj)
    )


# workload_test.go "Should have valid values when setting Admission": (name, pod sets, admission, ...)
ADMISSION_CASES: list[tuple[str, list[Obj], str, list[Obj], int, str]] = [
    (
        "invalid clusterQueue name",
        [pod_set()],
        "@invalid",
        [{"name": "main", "count": 1}],
        INVALID,
        "status.admission.clusterQueue",
    ),
    (
        "invalid podSet name in status assignment",
        [pod_set()],
        "cluster-queue",
        [{"name": "@invalid", "count": 1}],
        INVALID,
        "status.admission.podSetAssignments[0].name",
    ),
    (
        "mismatched names in admission with names in podSets",
        [pod_set("main2"), pod_set("main1")],
        "cluster-queue",
        [{"name": "main1", "count": 1}, {"name": "main", "count": 1}],
        FORBIDDEN,
        "status.admission.podSetAssignments[1].name",
    ),
    (
        "assignment usage should be divisible by count",
        [pod_set(count=3)],
        "cluster-queue",
        [{"name": "main", "count": 3, "resourceUsage": {"cpu": "1"}}],
        FORBIDDEN,
        "status.admission.podSetAssignments[0].resourceUsage[cpu]",
    ),
    (
        "podSetAssignments must have the same number of podSets as the spec",
        [pod_set("a"), pod_set("b")],
        "cluster-queue",
        [{"name": "a", "count": 1}],
        INVALID,
        "podSetAssignments must have the same number of podSets as the spec",
    ),
    (
        "valid admission",
        [pod_set(count=3)],
        "cluster-queue",
        [{"name": "main", "count": 3, "resourceUsage": {"cpu": "3"}}],
        OK,
        "",
    ),
]


@pytest.mark.parametrize(
    ("name", "pod_sets", "cluster_queue", "assignments", "expected", "names"),
    ADMISSION_CASES,
    ids=[c[0] for c in ADMISSION_CASES],
)
def test_workload_admission(
    api: k8s.CustomObjectsApi,
    name: str,
    pod_sets: list[Obj],
    cluster_queue: str,
    assignments: list[Obj],
    expected: int,
    names: str,
) -> None:
    index = next(i for i, case in enumerate(ADMISSION_CASES) if case[0] == name)
    reserved = _reserve(api, wl(f"adm-{index}", *pod_sets), *assignments, cluster_queue=cluster_queue)
    _check(lambda: _status(api, reserved), expected, names)


def test_admitted_workload_keeps_pod_sets_queue_and_priority_source(api: k8s.CustomObjectsApi) -> None:
    """workload_test.go "Should have valid values when updating": podSets (webhook), queueName,
    priorityClassSource (CRD rules) and admission itself (webhook) are frozen while quota is
    reserved; priority itself may change ("Should allow the change of priority")."""
    reserved = _status(
        api,
        _reserve(
            api, wl("frozen", queueName="q", priorityClassSource="", priority=1), {"name": "main", "count": 1}
        ),
    )

    def update(change: Any, expected: int, names: str) -> None:
        current = as_obj(api.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "workloads", "frozen"))
        change(current)
        replace = api.replace_namespaced_custom_object
        _check(lambda: replace(GROUP, VERSION, NAMESPACE, "workloads", "frozen", current), expected, names)

    update(lambda w: w["spec"]["podSets"][0].update(count=2), FORBIDDEN, "spec.podSets[0]: Invalid value")
    update(lambda w: w["spec"].update(queueName="other"), INVALID, "field is immutable")
    # The priority class source is checked at v1beta2, where it lives (priorityClassRef): stored at
    # v1beta2, the Workload has no priorityClassSource once converted to v1beta1, and Kueue 0.19's
    # v1beta1 rule (like ours) only compares two sources that are both set.
    current = as_obj(api.get_namespaced_custom_object(GROUP, "v1beta2", NAMESPACE, "workloads", "frozen"))
    current["spec"]["priorityClassRef"] = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "p"}
    replace_v2 = api.replace_namespaced_custom_object
    _check(
        lambda: replace_v2(GROUP, "v1beta2", NAMESPACE, "workloads", "frozen", current),
        INVALID,
        "priorityClassRef is immutable while workload quota reserved",
    )
    update(lambda w: w["spec"].update(priority=5), OK, "")
    assert reserved["status"]["admission"]["clusterQueue"] == "cluster-queue"
    moved = as_obj(api.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "workloads", "frozen"))
    moved["status"]["admission"]["clusterQueue"] = "other"
    _check(lambda: _status(api, moved), FORBIDDEN, "status.admission: Invalid value")


def test_pending_workload_may_change_its_pod_sets(api: k8s.CustomObjectsApi) -> None:
    """workload_test.go "updating podSets before setting reserve quota for workload"."""
    created = as_obj(
        api.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "workloads", wl("pending"))
    )
    created["spec"]["podSets"][0]["count"] = 4
    replace = api.replace_namespaced_custom_object
    updated = as_obj(replace(GROUP, VERSION, NAMESPACE, "workloads", "pending", created))
    assert updated["spec"]["podSets"][0]["count"] == 4


ADMITTED = {**RESERVED, "type": "Admitted", "reason": "Admitted", "message": "admitted"}
# The rule's message: Kueue v0.14.8's at v1beta1, v0.19.2's at v1beta2 (the same rule: Admitted
# before and after, whatever the message says).
MAX_EXECUTION_IMMUTABLE = {
    "v1beta1": "maximumExecutionTimeSeconds is immutable while admitted",
    "v1beta2": "maximumExecutionTimeSeconds is immutable while workload quota reserved",
}
# workload_test.go "Validate Workload on update", its maximumExecutionTimeSeconds entries (the same
# at v0.14.8 and v0.19.2; Kueue's "admitted" is quota reserved plus the Admitted condition): a CRD
# rule on the Workload (workload_types.go XValidation), so 422. (name, value before, value after
# (None: unset), state before the update, expected, what the refusal names: the version's message)
MAX_EXECUTION_UPDATE_CASES: list[tuple[str, int | None, int | None, str, int, str]] = [
    ("can add maximum execution time when not admitted", None, 1, "pending", OK, ""),
    ("can update maximum execution time when not admitted", 1, 2, "pending", OK, ""),
    ("cannot add maximum execution time when admitted", None, 1, "admitted", INVALID, "immutable"),
    ("cannot update maximum execution time when admitted", 1, 2, "admitted", INVALID, "immutable"),
    # Not in Kueue's table: the rule's other branches (an unset value counts as 0; the condition
    # it reads is Admitted, not QuotaReserved).
    ("cannot remove maximum execution time when admitted", 1, None, "admitted", INVALID, "immutable"),
    ("can update maximum execution time while quota is reserved but not admitted", 1, 2, "reserved", OK, ""),
]


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
@pytest.mark.parametrize(
    ("name", "before", "after", "state", "expected", "names"),
    MAX_EXECUTION_UPDATE_CASES,
    ids=[c[0] for c in MAX_EXECUTION_UPDATE_CASES],
)
def test_workload_maximum_execution_time_update(
    api: k8s.CustomObjectsApi,
    version: str,
    name: str,
    before: int | None,
    after: int | None,
    state: str,
    expected: int,
    names: str,
) -> None:
    index = next(i for i, case in enumerate(MAX_EXECUTION_UPDATE_CASES) if case[0] == name)
    workload_name = f"max-exec-{index}-{version}"
    obj = wl(workload_name) if before is None else wl(workload_name, maximumExecutionTimeSeconds=before)
    if state == "pending":
        api.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "workloads", obj)
    else:
        reserved = _reserve(api, obj, {"name": "main", "count": 1})
        if state == "admitted":
            reserved["status"]["conditions"].append(ADMITTED)
        _status(api, reserved)
    get = api.get_namespaced_custom_object
    current = as_obj(get(GROUP, version, NAMESPACE, "workloads", workload_name))
    if after is None:
        del current["spec"]["maximumExecutionTimeSeconds"]
    else:
        current["spec"]["maximumExecutionTimeSeconds"] = after
    replace = api.replace_namespaced_custom_object
    _check(
        lambda: replace(GROUP, version, NAMESPACE, "workloads", workload_name, current),
        expected,
        MAX_EXECUTION_IMMUTABLE[version] if names else "",
    )


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None and not KUBECTL_REQUIRED, reason="no kubectl binary on PATH")
def test_kubectl_apply_of_a_bad_cluster_queue_shows_the_field_and_the_rule(
    api: k8s.CustomObjectsApi, apiserver: ServerProcess, tmp_path: Path
) -> None:
    kubectl = Kubectl(apiserver, tmp_path)
    negative = {**cq(group(flavor("x86", res("cpu", "-1")))), "metadata": {"name": "by-kubectl"}}
    shown = kubectl.run("apply", "-f", kubectl.write("negative.yaml", negative), check=False)
    assert shown.returncode != 0
    assert (
        f'admission webhook "vclusterqueue.kb.io" denied the request: {Q0}.nominalQuota: '
        'Invalid value: "-1": must be greater than or equal to 0'
    ) in shown.stderr
    no_cohort = {**cq(group(flavor("x86", res("cpu", "1", "1")))), "metadata": {"name": "by-kubectl"}}
    shown = kubectl.run("apply", "-f", kubectl.write("no-cohort.yaml", no_cohort), check=False)
    assert shown.returncode != 0
    assert (
        'The ClusterQueue "by-kubectl" is invalid: spec: Invalid value: "object": '
        "borrowingLimit must be nil when cohort is empty"
    ) in shown.stderr


def test_every_case_is_listed_in_the_validation_document() -> None:
    """docs/conformance/validation.md lists every case of both tables (no case goes unlisted)."""
    from codeflare.api.tests import test_kueue_validation as unit

    document = (Path(__file__).resolve().parents[2] / "docs" / "conformance" / "validation.md").read_text()
    names = [
        case[0] for case in CLUSTER_QUEUE_CASES + RESOURCE_FLAVOR_CASES + WORKLOAD_CASES + ADMISSION_CASES
    ]
    names += [case[0] for case in unit.CLUSTER_QUEUE_CASES + unit.RESOURCE_FLAVOR_CASES + unit.WORKLOAD_CASES]
    names += [case[0] for case in unit.WORKLOAD_UPDATE_CASES]
    names += [case[0] for case in DEFAULTING_CASES]
    names += [case[0] for case in COHORT_CASES + COHORT_UPDATE_CASES]
    names += [case[0] for case in MAX_EXECUTION_UPDATE_CASES]
    assert [name for name in names if f"| {name} |" not in document] == []
