"""Kueue's v1beta1 <-> v1beta2 mapping: Kueue's own conversion cases as data, and round trips."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.api.kueue_conversion import (
    PRESERVED_ANNOTATION,
    V1BETA1,
    V1BETA2,
    ConversionError,
    convert,
    to_v1beta1,
    to_v1beta2,
)

Obj = dict[str, Any]


def _obj(kind: str, api_version: str, **top: Any) -> Obj:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, **top}


ADMISSION_MODES = ["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"]
AFS_STATUS = {"consumedResources": {"cpu": "31999m"}, "lastUpdate": "2025-06-03T14:25:15Z"}

# (name, v1beta1 object, its v1beta2 form); ported from Kueue apis/kueue/v1beta1/
# clusterqueue_conversion_test.go, localqueue_conversion_test.go, workload_conversion_test.go.
UP_CASES: list[tuple[str, Obj, Obj]] = [
    (
        "cohort to cohortName",
        _obj("ClusterQueue", V1BETA1, spec={"cohort": "test-cohort"}),
        _obj("ClusterQueue", V1BETA2, spec={"cohortName": "test-cohort"}),
    ),
    (
        "AdmissionChecks to AdmissionChecksStrategy",
        _obj("ClusterQueue", V1BETA1, spec={"admissionChecks": ["check1", "check2"]}),
        _obj(
            "ClusterQueue",
            V1BETA2,
            spec={"admissionChecksStrategy": {"admissionChecks": [{"name": "check1"}, {"name": "check2"}]}},
        ),
    ),
    (
        "empty AdmissionChecks",
        _obj("ClusterQueue", V1BETA1, spec={"admissionChecks": []}),
        _obj("ClusterQueue", V1BETA2, spec={}),
    ),
    (
        "FlavorFungibility Preempt and Borrow to MayStopSearch",
        _obj(
            "ClusterQueue",
            V1BETA1,
            spec={"flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}},
        ),
        _obj(
            "ClusterQueue",
            V1BETA2,
            spec={"flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}},
        ),
    ),
    (
        "FlavorFungibility TryNextFlavor preserved",
        _obj("ClusterQueue", V1BETA1, spec={"flavorFungibility": {"whenCanBorrow": "TryNextFlavor"}}),
        _obj("ClusterQueue", V1BETA2, spec={"flavorFungibility": {"whenCanBorrow": "TryNextFlavor"}}),
    ),
    (
        "pendingWorkloadsStatus dropped",
        _obj("ClusterQueue", V1BETA1, status={"pendingWorkloads": 2, "pendingWorkloadsStatus": {"head": []}}),
        _obj("ClusterQueue", V1BETA2, status={"pendingWorkloads": 2}),
    ),
    (
        "single FlavorUsage",
        _obj(
            "LocalQueue",
            V1BETA1,
            status={
                "flavorUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "1"}]}],
                "flavors": [],
            },
        ),
        _obj(
            "LocalQueue",
            V1BETA2,
            status={"flavorsUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "1"}]}]},
        ),
    ),
    (
        "empty FlavorUsage",
        _obj("LocalQueue", V1BETA1, status={"flavorUsage": []}),
        _obj("LocalQueue", V1BETA2, status={"flavorsUsage": []}),
    ),
    (
        "with WorkloadPriorityClassSource",
        _obj(
            "Workload",
            V1BETA1,
            spec={
                "priority": 100,
                "priorityClassName": "high",
                "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
            },
        ),
        _obj(
            "Workload",
            V1BETA2,
            spec={
                "priority": 100,
                "priorityClassRef": {
                    "group": "kueue.x-k8s.io",
                    "kind": "WorkloadPriorityClass",
                    "name": "high",
                },
            },
        ),
    ),
    (
        "with PodPriorityClassSource",
        _obj(
            "Workload",
            V1BETA1,
            spec={
                "priority": 5,
                "priorityClassName": "low",
                "priorityClassSource": "scheduling.k8s.io/priorityclass",
            },
        ),
        _obj(
            "Workload",
            V1BETA2,
            spec={
                "priority": 5,
                "priorityClassRef": {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "low"},
            },
        ),
    ),
    (
        "non-zero AccumulatedPastExexcutionTimeSeconds",
        _obj("Workload", V1BETA1, status={"accumulatedPastExexcutionTimeSeconds": 3600}),
        _obj("Workload", V1BETA2, status={"accumulatedPastExecutionTimeSeconds": 3600}),
    ),
    (
        "zero AccumulatedPastExexcutionTimeSeconds",
        _obj("Workload", V1BETA1, status={"accumulatedPastExexcutionTimeSeconds": 0}),
        _obj("Workload", V1BETA2, status={"accumulatedPastExecutionTimeSeconds": 0}),
    ),
    (
        # Kueue: AdmissionScope and LocalQueue fairSharing convert field by field (same JSON)
        "admission fair sharing fields unchanged",
        _obj("ClusterQueue", V1BETA1, spec={"admissionScope": {"admissionMode": "NoAdmissionFairSharing"}}),
        _obj("ClusterQueue", V1BETA2, spec={"admissionScope": {"admissionMode": "NoAdmissionFairSharing"}}),
    ),
    (
        "LocalQueue fairSharing unchanged",
        _obj(
            "LocalQueue",
            V1BETA1,
            spec={"clusterQueue": "cq", "fairSharing": {"weight": "2"}},
            status={"fairSharing": {"weightedShare": 0, "admissionFairSharingStatus": AFS_STATUS}},
        ),
        _obj(
            "LocalQueue",
            V1BETA2,
            spec={"clusterQueue": "cq", "fairSharing": {"weight": "2"}},
            status={"fairSharing": {"weightedShare": 0, "admissionFairSharingStatus": AFS_STATUS}},
        ),
    ),
    (
        "ResourceFlavor unchanged",
        _obj("ResourceFlavor", V1BETA1, spec={"nodeLabels": {"a": "b"}}),
        _obj("ResourceFlavor", V1BETA2, spec={"nodeLabels": {"a": "b"}}),
    ),
    (
        "WorkloadPriorityClass unchanged",
        _obj("WorkloadPriorityClass", V1BETA1, value=7, description="d"),
        _obj("WorkloadPriorityClass", V1BETA2, value=7, description="d"),
    ),
]


@pytest.mark.parametrize(("name", "v1beta1", "v1beta2"), UP_CASES, ids=[c[0] for c in UP_CASES])
def test_kueue_cases_convert_up(name: str, v1beta1: Obj, v1beta2: Obj) -> None:
    before = copy.deepcopy(v1beta1)
    assert convert(v1beta1, V1BETA2) == v1beta2
    assert v1beta1 == before  # the input is not touched


def test_down_is_kueue_convert_from() -> None:
    # Kueue keeps a strategy (not the list) and MayStopSearch on the way down: v1beta1 accepts both.
    v1beta2 = _obj(
        "ClusterQueue",
        V1BETA2,
        spec={
            "cohortName": "c",
            "admissionChecksStrategy": {"admissionChecks": [{"name": "a"}]},
            "flavorFungibility": {"whenCanBorrow": "MayStopSearch"},
        },
    )
    assert to_v1beta1(v1beta2)["spec"] == {
        "cohort": "c",
        "admissionChecksStrategy": {"admissionChecks": [{"name": "a"}]},
        "flavorFungibility": {"whenCanBorrow": "MayStopSearch"},
    }


def test_priority_class_name_without_a_source_has_no_v1beta2_form() -> None:
    # Kueue's switch on priorityClassSource has no case for "": the name is lost, as there.
    v1beta1 = _obj(
        "Workload", V1BETA1, spec={"priority": 1, "priorityClassName": "p", "priorityClassSource": ""}
    )
    assert to_v1beta2(v1beta1)["spec"] == {"priority": 1}


def test_v1beta2_only_fields_survive_a_v1beta1_update_through_the_annotation() -> None:
    stored = _obj(
        "Workload",
        V1BETA2,
        spec={"preemptionGates": [{"name": "g"}], "queueName": "q"},
        status={"preemptionGates": [{"name": "g", "position": "Open"}]},
    )
    seen = to_v1beta1(stored)
    assert "preemptionGates" not in seen["spec"]
    assert PRESERVED_ANNOTATION in seen["metadata"]["annotations"]
    seen["spec"]["queueName"] = "other"  # what a v1beta1 client changes and writes back
    back = to_v1beta2(seen)
    assert back["spec"] == {"preemptionGates": [{"name": "g"}], "queueName": "other"}
    assert back["status"] == stored["status"]
    assert "annotations" not in back["metadata"]


def test_a_broken_annotation_loses_the_fields_only() -> None:
    seen = _obj("ClusterQueue", V1BETA1, spec={"cohort": "c"})
    seen["metadata"]["annotations"] = {PRESERVED_ANNOTATION: "{not json", "keep": "me"}
    assert to_v1beta2(seen)["metadata"]["annotations"] == {"keep": "me"}


def test_in_place_converts_the_callers_object_itself() -> None:
    obj = _obj("ClusterQueue", V1BETA1, spec={"cohort": "c"})
    assert convert(obj, V1BETA2, in_place=True) is obj
    assert obj == _obj("ClusterQueue", V1BETA2, spec={"cohortName": "c"})
    same = _obj("LocalQueue", V1BETA2)
    assert convert(same, V1BETA2) == same and convert(same, V1BETA2) is not same


def test_unknown_versions_are_refused() -> None:
    with pytest.raises(ConversionError, match="v1alpha1"):
        convert(_obj("ClusterQueue", "kueue.x-k8s.io/v1alpha1"), V1BETA2)
    with pytest.raises(ConversionError, match="only"):
        convert(_obj("ClusterQueue", V1BETA1), "kueue.x-k8s.io/v1")


# --- properties ------------------------------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
quantities = st.sampled_from(["0", "1", "500m", "2Gi", "10"])
usage = st.lists(
    st.fixed_dictionaries(
        {
            "name": names,
            "resources": st.lists(st.fixed_dictionaries({"name": names, "total": quantities}), max_size=2),
        }
    ),
    max_size=2,
)
conditions = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["Active", "QuotaReserved"]), "status": st.sampled_from(["True", "False"])}
    ),
    max_size=2,
)


def _meta() -> st.SearchStrategy[Obj]:
    # An empty annotations map is no map to the API server (omitempty): not generated.
    return st.fixed_dictionaries(
        {"name": names},
        optional={
            "labels": st.dictionaries(names, names, max_size=2),
            "annotations": st.dictionaries(names, names, min_size=1, max_size=2),
        },
    )


def _v1beta2(
    kind: str, spec: st.SearchStrategy[Obj], status: st.SearchStrategy[Obj] | None = None
) -> st.SearchStrategy[Obj]:
    optional: dict[str, st.SearchStrategy[Any]] = {"spec": spec}
    if status is not None:
        optional["status"] = status
    return st.fixed_dictionaries(
        {"apiVersion": st.just(V1BETA2), "kind": st.just(kind), "metadata": _meta()}, optional=optional
    )


fungibility = st.fixed_dictionaries(
    {},
    optional={
        "whenCanBorrow": st.sampled_from(["MayStopSearch", "TryNextFlavor"]),
        "whenCanPreempt": st.sampled_from(["MayStopSearch", "TryNextFlavor"]),
    },
)
cluster_queues = _v1beta2(
    "ClusterQueue",
    st.fixed_dictionaries(
        {},
        optional={
            "cohortName": names,
            "queueingStrategy": st.sampled_from(["BestEffortFIFO", "StrictFIFO"]),
            "stopPolicy": st.sampled_from(["None", "Hold", "HoldAndDrain"]),
            "flavorFungibility": fungibility,
            "admissionChecksStrategy": st.fixed_dictionaries(
                {"admissionChecks": st.lists(st.fixed_dictionaries({"name": names}), max_size=2)}
            ),
            "concurrentAdmissionPolicy": st.fixed_dictionaries({"mode": st.just("TryPreferredFlavors")}),
            "admissionScope": st.fixed_dictionaries({"admissionMode": st.sampled_from(ADMISSION_MODES)}),
        },
    ),
    st.fixed_dictionaries(
        {}, optional={"pendingWorkloads": st.integers(0, 9), "flavorsUsage": usage, "conditions": conditions}
    ),
)
local_queues = _v1beta2(
    "LocalQueue",
    st.fixed_dictionaries(
        {"clusterQueue": names}, optional={"fairSharing": st.fixed_dictionaries({"weight": quantities})}
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "flavorsUsage": usage,
            "flavorsReservation": usage,
            "admittedWorkloads": st.integers(0, 9),
            "fairSharing": st.fixed_dictionaries(
                {"weightedShare": st.just(0)}, optional={"admissionFairSharingStatus": st.just(AFS_STATUS)}
            ),
        },
    ),
)
priority_refs = st.one_of(
    st.fixed_dictionaries(
        {"group": st.just("kueue.x-k8s.io"), "kind": st.just("WorkloadPriorityClass"), "name": names}
    ),
    st.fixed_dictionaries(
        {"group": st.just("scheduling.k8s.io"), "kind": st.just("PriorityClass"), "name": names}
    ),
)
workloads = _v1beta2(
    "Workload",
    st.fixed_dictionaries(
        {"queueName": names},
        optional={
            "priority": st.integers(-5, 5),
            "priorityClassRef": priority_refs,
            "active": st.booleans(),
            "preemptionGates": st.lists(st.fixed_dictionaries({"name": names}), max_size=2),
        },
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "accumulatedPastExecutionTimeSeconds": st.integers(0, 10**6),
            "conditions": conditions,
            "preemptionGates": st.lists(
                st.fixed_dictionaries({"name": names, "position": st.sampled_from(["Open", "Closed"])}),
                max_size=2,
            ),
        },
    ),
)
flavors = _v1beta2(
    "ResourceFlavor",
    st.fixed_dictionaries({}, optional={"nodeLabels": st.dictionaries(names, names, max_size=2)}),
)
any_v1beta2 = st.one_of(cluster_queues, local_queues, workloads, flavors)


@given(any_v1beta2)
def test_v1beta2_through_v1beta1_and_back_is_unchanged(obj: Obj) -> None:
    assert to_v1beta2(to_v1beta1(obj)) == obj


@given(any_v1beta2)
def test_v1beta1_through_v1beta2_and_back_keeps_every_field_both_carry(obj: Obj) -> None:
    # Start from what a v1beta1 client sees (so every v1beta1 field is one the hub can hold).
    v1beta1 = to_v1beta1(obj)
    assert to_v1beta1(to_v1beta2(v1beta1)) == v1beta1


@given(cluster_queues)
def test_cohort_and_usage_carry_the_same_values(obj: Obj) -> None:
    down = to_v1beta1(obj)
    assert down["apiVersion"] == V1BETA1
    assert (down.get("spec") or {}).get("cohort") == (obj.get("spec") or {}).get("cohortName")
    assert (down.get("status") or {}).get("flavorsUsage") == (obj.get("status") or {}).get("flavorsUsage")


legacy_fungibility = st.fixed_dictionaries(
    {},
    optional={
        "whenCanBorrow": st.sampled_from(["Borrow", "MayStopSearch", "TryNextFlavor"]),
        "whenCanPreempt": st.sampled_from(["Preempt", "MayStopSearch", "TryNextFlavor"]),
    },
)


@given(legacy_fungibility, st.lists(names, max_size=3))
def test_v1beta1_only_spellings_mean_the_same_after_a_round_trip(fung: Obj, checks: list[str]) -> None:
    v1beta1 = _obj("ClusterQueue", V1BETA1, spec={"flavorFungibility": fung, "admissionChecks": checks})
    back = to_v1beta1(to_v1beta2(v1beta1))["spec"]
    canonical = {k: "MayStopSearch" if v in ("Borrow", "Preempt") else v for k, v in fung.items()}
    assert back["flavorFungibility"] == canonical
    strategy = back.get("admissionChecksStrategy", {"admissionChecks": []})
    assert [c["name"] for c in strategy["admissionChecks"]] == checks
