"""From one evaluated Kueue test case to the YAML record our driver runs (used by ``extract``).

Each converter takes the case name, its evaluated fields, what could not be evaluated and the
test function's shared values, and returns a record: ``test``, ``name``, ``status`` (``run`` or
``differs`` with ``reason``), the arranged objects and the expectations. The reasons name the
Kueue feature we do not implement (topology-aware scheduling, fair sharing, workload slices,
partial admission, hierarchical Cohort objects, reclaimable pods, admission checks, ...).
"""

from __future__ import annotations

from typing import Any

FA = "pkg/scheduler/flavorassigner/flavorassigner_test.go"
PRE = "pkg/scheduler/preemption/preemption_test.go"
SCH = "pkg/scheduler/scheduler_test.go"
PRE_FAIR = "pkg/scheduler/preemption/preemption_fair_test.go"
PRE_HIER = "pkg/scheduler/preemption/preemption_hierarchical_test.go"

_IMPLICIT = "the FlavorFungibilityImplicitPreferenceDefault gate (alpha) is not implemented"
# feature fields of the case structs, and why a case setting one differs
_FEATURES = {
    "elasticJobsViaWorkloadSlicesEnabled": "elastic workload slices are not implemented",
    "enableElasticJobsViaWorkloadSlice": "elastic workload slices are not implemented",
    "preemptWorkloadSlice": "elastic workload slices are not implemented",
    "enableImplicitPreferenceDefault": _IMPLICIT,
    "flavorFungibilityImplicitPreferenceDefault": _IMPLICIT,
    "featureGates": "feature gates other than the defaults are not modelled",
    "wlReclaimablePods": "reclaimablePods are not implemented",
    "disableLendingLimit": "lending limits are always on (the LendingLimit gate is GA here)",
    "admissionError": "the API write of an admission is the operator's concern, not the engine's",
    "objects": "admission checks and other objects are not modelled by the engine",
    "disablePartialAdmission": "partial admission is not implemented",
}


_WITHIN_NOMINAL = (
    "Kueue 0.17+ (FairSharingPreemptWithinNominal, beta, on by default) reports a preemptor that stays"
    " within its nominal quota as InCohortReclamation, as Kueue v0.19.2's copy of this case expects;"
    " we decide as 0.19 (same victims, that reason) where this v0.14.8 case says InCohortFairSharing"
)
# cases that run but where we follow a newer Kueue than v0.14.8 on purpose: (test, case) -> why
_NEWER_KUEUE = {
    ("TestFairPreemptions", name): _WITHIN_NOMINAL
    for name in (
        "reclaim nominal from user using the most",
        "can reclaim from queue using less, if taking the latest workload from user using the most"
        " isn't enough",
        "preempt one from each CQ borrowing",
        "preempt huge workload if there is no other option, as long as the target CQ gets a lower share",
        "cq with zero weight can reclaim nominal quota",
    )
}


def _differs(record: dict[str, Any], data: dict[str, Any], unsupported: list[str]) -> dict[str, Any]:
    reasons = [why for key, why in _FEATURES.items() if data.get(key) not in (None, False, [], {}, 0)]
    newer = _NEWER_KUEUE.get((record["test"], record["name"]))
    if newer is not None:
        reasons.append(newer)
    if unsupported:
        reasons.append(
            "uses what the engine has no counterpart for: " + "; ".join(sorted(set(unsupported)))[:300]
        )
    if reasons:
        record["status"] = "differs"
        record["reason"] = "; ".join(dict.fromkeys(reasons))
    return record


def _usage(value: Any) -> list[list[Any]]:
    out = []
    for key, amount in (value or {}).items():
        fr = dict(key)
        out.append([fr["Flavor"], fr["Resource"], amount])
    return out


def _mode(value: Any) -> str | None:
    return value if isinstance(value, str) else "NoFit"  # the zero value of Kueue's FlavorAssignmentMode


def _want_assignment(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"podSets": []}
    for ps in (value or {}).get("PodSets") or []:
        flavors = {r: f.get("Name") for r, f in (ps.get("Flavors") or {}).items() if isinstance(f, dict)}
        out["podSets"].append({"name": ps.get("Name", "main"), "flavors": flavors})
    out["borrowing"] = int((value or {}).get("Borrowing") or 0)
    return out


def assign_flavors_case(
    name: str, data: dict[str, Any], unsupported: list[str], env: dict[str, Any]
) -> dict[str, Any]:
    """TestAssignFlavors: flavors chosen for a workload in a ClusterQueue snapshot."""
    oracle = [
        [*(dict(k)[n] for n in ("Flavor", "Resource")), *v]
        for k, v in (data.get("simulationResult") or {}).items()
    ]
    record = {
        "test": "TestAssignFlavors",
        "name": name,
        "status": "run",
        "clusterQueue": data.get("clusterQueue"),
        "usage": _usage(data.get("clusterQueueUsage")),
        "secondaryClusterQueue": data.get("secondaryClusterQueue"),
        "secondaryUsage": _usage(data.get("secondaryClusterQueueUsage")),
        "podSets": data.get("wlPods"),
        "oracle": oracle,
        "want": {"mode": _mode(data.get("wantRepMode")), **_want_assignment(data.get("wantAssignment"))},
    }
    _fair_and_cohorts(record, data)
    return _differs(record, data, unsupported)


def _fair_and_cohorts(record: dict[str, Any], data: dict[str, Any]) -> None:
    """Fair sharing on, and Cohort objects, when the case sets them."""
    if data.get("enableFairSharing"):
        record["enableFairSharing"] = True
    if data.get("cohorts"):
        record["cohorts"] = data["cohorts"]


def reclaim_case(
    name: str, data: dict[str, Any], unsupported: list[str], env: dict[str, Any]
) -> dict[str, Any]:
    """TestReclaimBeforePriorityPreemption: three flavors uno/due/tre of gpu (and compute)."""
    quotas = [
        {
            "name": f,
            "resources": [{"name": "gpu", "nominalQuota": "10"}, {"name": "compute", "nominalQuota": "10"}],
        }
        for f in ("uno", "due", "tre")
    ]
    cq = {
        "name": "test-cq",
        "cohort": "test-cohort",
        "resourceGroups": [{"coveredResources": ["gpu", "compute"], "flavors": quotas}],
        "preemption": {"WithinClusterQueue": "LowerPriority", "ReclaimWithinCohort": "Any"},
    }
    if data.get("flavorFungibility"):
        cq["flavorFungibility"] = data["flavorFungibility"]
    other = {
        "name": "other-cq",
        "cohort": "test-cohort",
        "resourceGroups": [
            {
                "coveredResources": ["gpu", "compute"],
                "flavors": [
                    {
                        "name": f,
                        "resources": [
                            {"name": "gpu", "nominalQuota": "0"},
                            {"name": "compute", "nominalQuota": "0"},
                        ],
                    }
                    for f in ("uno", "due", "tre")
                ],
            }
        ],
    }
    ps = data.get("workloadRequests")
    record = {
        "test": "TestReclaimBeforePriorityPreemption",
        "name": name,
        "status": "run",
        "flavors": [{"name": f} for f in ("uno", "due", "tre")],
        "clusterQueue": cq,
        "usage": _usage(data.get("testClusterQueueUsage")),
        "secondaryClusterQueue": other,
        "secondaryUsage": _usage(data.get("otherClusterQueueUsage")),
        "podSets": [ps] if ps else [],
        "oracle": [
            [*(dict(k)[n] for n in ("Flavor", "Resource")), *v]
            for k, v in (data.get("simulationResult") or {}).items()
        ],
        "want": {
            "mode": _mode(data.get("wantMode")),
            "podSets": [{"name": "main", "flavors": data.get("wantAssigment") or {}}],
            "borrowing": 0,
        },
        "note": "the Kueue test's queues (uno/due/tre of gpu and compute, nominal 10) are written out",
    }
    return _differs(record, data, unsupported)


def preemption_case(
    name: str, data: dict[str, Any], unsupported: list[str], env: dict[str, Any]
) -> dict[str, Any]:
    """TestPreemption: victims chosen for an incoming workload and a given flavor assignment."""
    preempted = []
    for wl in data.get("wantWorkloads") or []:
        for cond in wl.get("conditions") or []:
            if cond.get("type") == "WorkloadPreempted" and cond.get("status") in ("True", "ConditionTrue"):
                preempted.append([f"{wl['namespace']}/{wl['name']}", cond.get("reason")])
    assignment = data.get("assignment") or {}
    record = {
        "test": "TestPreemption",
        "name": name,
        "status": "run",
        "clusterQueues": "shared"
        if data.get("clusterQueues") == env.get("defaultClusterQueues")
        else data.get("clusterQueues"),
        "admitted": data.get("admitted") or [],
        "incoming": data.get("incoming"),
        "targetCQ": data.get("targetCQ"),
        "assignment": _want_assignment(assignment)["podSets"],
        "assignmentModes": [
            {r: f.get("Mode") for r, f in (ps.get("Flavors") or {}).items()}
            for ps in assignment.get("PodSets") or []
        ],
        "want": {"preempted": int(data.get("wantPreempted") or 0), "victims": sorted(preempted)},
    }
    _fair_and_cohorts(record, data)
    return _differs(record, data, unsupported)


def schedule_case(
    name: str, data: dict[str, Any], unsupported: list[str], env: dict[str, Any]
) -> dict[str, Any]:
    """TestSchedule: one scheduling cycle over the test's queues and the case's workloads."""
    unsupported = [u for u in unsupported if not u.startswith("wantWorkloads")]  # wantAssignments says it
    assignments = {}
    for key, adm in (data.get("wantAssignments") or {}).items():
        assignments[key] = {
            "clusterQueue": adm.get("ClusterQueue") or adm.get("clusterQueue"),
            "podSets": adm.get("PodSetAssignments") or adm.get("podSetAssignments"),
        }
    record = {
        "test": "TestSchedule",
        "name": name,
        "status": "run",
        "additionalClusterQueues": data.get("additionalClusterQueues") or [],
        "additionalLocalQueues": data.get("additionalLocalQueues") or [],
        "workloads": data.get("workloads") or [],
        "want": {
            "assignments": assignments,
            "left": data.get("wantLeft") or {},
            "inadmissibleLeft": data.get("wantInadmissibleLeft") or {},
        },
    }
    if "wantAssignments" not in data and "wantAssignments" not in " ".join(unsupported):
        record["want"]["assignmentsUnchecked"] = True
    _fair_and_cohorts(record, data)
    return _differs(record, data, unsupported)


def fair_preemption_case(
    name: str, data: dict[str, Any], unsupported: list[str], env: dict[str, Any]
) -> dict[str, Any]:
    """TestFairPreemptions: victims by fair sharing for one cpu assignment in flavor default."""
    victims = sorted(
        [("default" + key if key.startswith("/") else key), reason]
        for key, reason in data.get("wantPreempted") or []
    )
    record = {
        "test": "TestFairPreemptions",
        "name": name,
        "status": "run",
        "clusterQueues": "shared"
        if data.get("clusterQueues") == env.get("baseCQs")
        else data.get("clusterQueues"),
        "admitted": data.get("admitted") or [],
        "incoming": data.get("incoming"),
        "targetCQ": data.get("targetCQ"),
        "assignment": [{"name": "main", "flavors": {"cpu": "default"}}],
        "assignmentModes": [{"cpu": "Preempt"}],
        "enableFairSharing": True,
        "want": {"preempted": len(victims), "victims": victims},
    }
    if data.get("strategies"):
        record["strategies"] = data["strategies"]
    if data.get("cohorts"):
        record["cohorts"] = data["cohorts"]
    return _differs(record, data, unsupported)


def shared(func: str, env: dict[str, Any]) -> dict[str, Any]:
    """What a test function's cases share: its flavors, queues and namespaces."""
    if func == "TestAssignFlavors":
        return {"flavors": list((env.get("resourceFlavors") or {}).values())}
    if func == "TestPreemption":
        return {"flavors": env.get("flavors") or [], "clusterQueues": env.get("defaultClusterQueues") or []}
    if func == "TestFairPreemptions":
        return {"flavors": env.get("flavors") or [], "clusterQueues": env.get("baseCQs") or []}
    if func == "TestHierarchicalPreemptions":
        return {"flavors": env.get("flavors") or [], "clusterQueues": []}
    if func == "TestSchedule":
        return {
            "flavors": env.get("resourceFlavors") or [],
            "clusterQueues": env.get("clusterQueues") or [],
            "localQueues": env.get("queues") or [],
            "namespaces": {
                "default": {},
                "eng-alpha": {"dep": "eng"},
                "eng-beta": {"dep": "eng"},
                "eng-gamma": {"dep": "eng"},
                "sales": {"dep": "sales"},
                "lend": {"dep": "lend"},
            },
        }
    return {}


SOURCES = [
    ("flavorassigner.yaml", FA, "TestAssignFlavors", assign_flavors_case),
    ("flavorassigner.yaml", FA, "TestReclaimBeforePriorityPreemption", reclaim_case),
    ("preemption.yaml", PRE, "TestPreemption", preemption_case),
    ("preemption.yaml", PRE_HIER, "TestHierarchicalPreemptions", preemption_case),
    ("preemption.yaml", PRE_FAIR, "TestFairPreemptions", fair_preemption_case),
    ("scheduler.yaml", SCH, "TestSchedule", schedule_case),
]
