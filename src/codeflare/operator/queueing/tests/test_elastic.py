"""Workload slices of elastic RayClusters: the pure decisions and the quota arithmetic.

Cases follow Kueue's lifecycle (site/content/en/docs/concepts/elastic_workload.md and
keps/77-dynamically-sized-jobs): scale-down is written into the admitted Workload, scale-up
creates a replacement slice whose demand is its counts minus the replaced slice's admitted ones,
and once it is admitted the old slice finishes. Properties: completing a replacement's admission
adds the old usage to the growth's, and scaling down and back up restores the usage.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.api.raycluster import ELASTIC_JOB_ANNOTATION, WORKLOAD_SLICE_REPLACEMENT_FOR
from codeflare.k8s.quantity import milli_value
from codeflare.operator.queueing import elastic
from codeflare.operator.queueing.elastic import Step
from codeflare.scheduling import PodSet, Workload

UID = "job-uid"


def pod_sets(head: int = 1, workers: int = 1) -> list[dict[str, Any]]:
    return [{"name": "head", "count": head}, {"name": "small", "count": workers}]


def assignment(name: str, count: int, cpu_each: int = 1) -> dict[str, Any]:
    return {"name": name, "count": count, "flavors": {"cpu": "default-flavor"},
            "resourceUsage": {"cpu": str(count * cpu_each)}}


def workload(name: str, workers: int, *, admitted: int | None = None, replaces: str | None = None,
             finished: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "labels": {"kueue.x-k8s.io/job-uid": UID}}
    if replaces:
        meta["annotations"] = {WORKLOAD_SLICE_REPLACEMENT_FOR: f"ns/{replaces}"}
    status: dict[str, Any] = {}
    if admitted is not None:
        status["admission"] = {"clusterQueue": "cq", "podSetAssignments": [
            assignment("head", 1), assignment("small", admitted)]}
    if finished:
        status["conditions"] = [{"type": "Finished", "status": "True", "reason": "WorkloadSliceReplaced"}]
    spec = {"queueName": "q", "podSets": pod_sets(workers=workers)}
    return {"metadata": meta, "spec": spec, "status": status}


CASES = [
    ("not admitted yet: queued as any job", [workload("a", 1)], 3, None),
    ("same size: nothing", [workload("a", 2, admitted=2)], 2, Step.NOTHING),
    ("smaller: written into the admitted slice", [workload("a", 3, admitted=3)], 1, Step.SCALE_DOWN),
    ("larger: a new slice", [workload("a", 1, admitted=1)], 3, Step.SCALE_UP),
    ("larger again while one waits: the waiting slice follows",
     [workload("a", 1, admitted=1), workload("b", 2, replaces="a")], 3, Step.RESIZE_SLICE),
    ("the waiting slice already asks for it: nothing",
     [workload("a", 1, admitted=1), workload("b", 3, replaces="a")], 3, Step.NOTHING),
    ("growth no longer wanted: the waiting slice goes",
     [workload("a", 1, admitted=1), workload("b", 3, replaces="a")], 1, Step.DROP_SLICE),
    ("the replacement was admitted: swap",
     [workload("a", 1, admitted=1), workload("b", 3, admitted=2, replaces="a")], 3, Step.SWAP),
    ("after the swap the new slice is the one that counts",
     [workload("a", 1, admitted=1, finished=True), workload("b", 3, admitted=3, replaces="a")], 3,
     Step.NOTHING),
]


@pytest.mark.parametrize(("what", "workloads", "wanted", "step"), CASES, ids=[c[0] for c in CASES])
def test_decide(what: str, workloads: list[dict[str, Any]], wanted: int, step: Step | None) -> None:
    decision = elastic.decide(pod_sets(workers=wanted), elastic.slices_of(UID, workloads))
    assert (decision.step if decision else None) is step


def test_a_pending_replacement_asks_the_engine_only_for_its_growth() -> None:
    old = workload("a", 1, admitted=1)
    new = workload("b", 3, replaces="a")
    engine = Workload("ns", "b", "q", (PodSet("head", 1, {"cpu": "1"}), PodSet("small", 3, {"cpu": "1"})))
    seen = elastic.engine_view(new, engine, {"ns/a": old}.get)
    assert [(ps.name, ps.count) for ps in seen.pod_sets] == [("head", 0), ("small", 2)]
    # once the old slice is finished (or the replacement admitted) it is seen whole
    done = workload("a", 1, admitted=1, finished=True)
    assert elastic.engine_view(new, engine, {"ns/a": done}.get) == engine


def test_a_new_slice_keeps_the_queue_owner_and_labels_and_names_the_old_one() -> None:
    base = workload("raycluster-grow-1a2b3", 1, admitted=1)
    base["metadata"]["ownerReferences"] = [{"kind": "RayCluster", "name": "grow", "uid": UID}]
    made = elastic.slice_manifest(base, pod_sets(workers=3))
    renamed = {**made, "metadata": {**made["metadata"], "uid": "x"}}
    again = elastic.slice_manifest(renamed, pod_sets(workers=2))
    assert made["metadata"]["annotations"] == {
        WORKLOAD_SLICE_REPLACEMENT_FOR: "ns/raycluster-grow-1a2b3", ELASTIC_JOB_ANNOTATION: "true"}
    assert made["metadata"]["ownerReferences"] == base["metadata"]["ownerReferences"]
    assert made["spec"]["queueName"] == "q" and made["spec"]["podSets"][1]["count"] == 3
    assert again["metadata"]["name"].startswith("raycluster-grow-1a2b3-s")  # suffixes do not pile up
    assert again["metadata"]["name"].count("-s") == made["metadata"]["name"].count("-s")


@given(old=st.integers(0, 20), growth=st.integers(0, 20), milli_each=st.integers(1, 4000))
def test_completing_a_replacement_adds_the_old_usage(old: int, growth: int, milli_each: int) -> None:
    def adm(count: int) -> dict[str, Any]:
        return {"podSetAssignments": [{"name": "small", "count": count, "flavors": {"cpu": "f"},
                                       "resourceUsage": {"cpu": f"{count * milli_each}m"}}]}

    done = elastic.completed_admission(adm(old), adm(growth))["podSetAssignments"][0]
    assert done["count"] == old + growth
    assert milli_value(done["resourceUsage"]["cpu"]) == (old + growth) * milli_each


@given(count=st.integers(1, 20), lower=st.integers(0, 20), milli_each=st.integers(1, 4000))
def test_scaling_down_lowers_usage_in_proportion(count: int, lower: int, milli_each: int) -> None:
    lower = min(lower, count)
    admission = {"podSetAssignments": [{"name": "small", "count": count,
                                        "resourceUsage": {"cpu": f"{count * milli_each}m"}}]}
    down = elastic.scaled_down_admission(admission, {"small": lower})["podSetAssignments"][0]
    assert down["count"] == lower
    assert milli_value(down["resourceUsage"]["cpu"]) == lower * milli_each


def test_only_an_elastic_slice_may_be_resized_while_reserved() -> None:
    from codeflare.api.kueue_validation import workload_errors

    reserved = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"}]

    def slice_(workers: int, elastic_job: bool) -> dict[str, Any]:
        wl = workload("a", workers, admitted=workers)
        wl["status"]["conditions"] = reserved
        for ps in wl["spec"]["podSets"]:
            ps["template"] = {"spec": {"containers": [{"name": "main"}]}}
        if elastic_job:
            wl["metadata"]["annotations"] = {ELASTIC_JOB_ANNOTATION: "true"}
        return wl

    assert workload_errors(slice_(1, True), slice_(3, True)) == []
    refused = {e.field for e in workload_errors(slice_(1, False), slice_(3, False))}
    assert refused == {"spec.podSets[1]", "status.admission"}
    moved = slice_(1, True)
    moved["status"]["admission"]["clusterQueue"] = "other"
    assert {e.field for e in workload_errors(moved, slice_(3, True))} == {"status.admission"}
