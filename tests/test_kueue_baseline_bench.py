"""Kueue's scheduler baseline benchmark cannot rot: its recorder arithmetic, and a tiny real replay.

The recorder cases are ported from Kueue's ``test/performance/scheduler/runner/recorder/
recorder_test.go`` (TestRecordWLEventAdmissionLatency, as data: observation time, creation and
Admitted timestamps -> time to admission); the usage case follows ``checker/checker_test.go``'s
formula. The smoke test replays the baseline at scale 0.01 (180 Workloads) through a real
``codeflare server`` and ``codeflare operator``: every Workload is admitted and finished by the
benchmark's runner, no queue or cohort ever holds more than its limits, and the report renders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchmarks.kueue_baseline.recorder import Recorder, conditions
from benchmarks.kueue_baseline.scenario import CLASS_LABEL, load
from benchmarks.kueue_baseline_bench import report, run_once

from codeflare.k8s.timestamps import format_rfc3339

T0 = 1_782_907_200.0  # 2026-07-01T12:00:00Z, recorder_test.go's creationTime
Obj = dict[str, Any]


def workload_obj(creation: float | None, admitted_at: float | None, admitted: bool, cq: str = "") -> Obj:
    meta: Obj = {"namespace": "ns", "name": "wl", "labels": {CLASS_LABEL: "small"}}
    if creation is not None:
        meta["creationTimestamp"] = format_rfc3339(T0 + creation)
    status: Obj = {}
    if admitted:
        cond: Obj = {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}
        if admitted_at is not None:
            cond["lastTransitionTime"] = format_rfc3339(T0 + admitted_at)
        status["conditions"] = [cond]
        if cq:
            status["admission"] = {
                "clusterQueue": cq,
                "podSetAssignments": [{"resourceUsage": {"cpu": "30"}}],
            }
    return {"metadata": meta, "status": status}


# recorder_test.go TestRecordWLEventAdmissionLatency: [(observed at, creation, admission, admitted)], want s
Event = tuple[float, float | None, float | None, bool]
ADMISSION_LATENCY: dict[str, tuple[list[Event], float]] = {
    "first observed event is admitted": ([(30, 0, 20, True)], 20),
    "pending event precedes admission": ([(1, 0, None, False), (30, 0, 20, True)], 20),
    "missing admission timestamp preserves observation times": (
        [(1, 0, None, False), (30, 0, None, True)],
        29,
    ),
    "missing creation timestamp preserves observation baseline": (
        [(1, None, None, False), (30, None, 20, True)],
        29,
    ),
    "admission before creation preserves observation baseline": (
        [(1, 0, None, False), (30, 0, -1, True)],
        29,
    ),
    "object timestamps do not depend on observation clock": ([(-1, 0, 20, True)], 20),
}


@pytest.mark.parametrize("case", sorted(ADMISSION_LATENCY))
def test_time_to_admission_as_kueues_recorder(case: str) -> None:
    events, want = ADMISSION_LATENCY[case]
    recorder = Recorder(load("baseline", 0.01))
    for observed, creation, admission, admitted in events:
        recorder.workload_event(workload_obj(creation, admission, admitted), T0 + observed)
    assert recorder.workloads["ns/wl"].to_admit_s == pytest.approx(want)


def cq_obj(name: str, usage: str) -> Obj:
    flavor = {"name": "rf", "resources": [{"name": "cpu", "nominalQuota": "20"}]}
    return {
        "metadata": {"name": name, "labels": {CLASS_LABEL: "cq"}},
        "spec": {"resourceGroups": [{"flavors": [flavor]}]},
        "status": {"flavorsUsage": [{"name": "rf", "resources": [{"name": "cpu", "total": usage}]}]},
    }


def test_cluster_queue_usage_is_integrated_between_status_events_as_kueues_checker() -> None:
    scenario = load("baseline", 0.01)
    recorder = Recorder(scenario)
    name = scenario.queues[0].name
    for at, usage in ((0, "0"), (10, "20"), (20, "0")):  # 20 CPU held for 10 of 20 s
        recorder.cluster_queue_event(cq_obj(name, usage), at)
    assert recorder.class_usage() == {"cq": pytest.approx(50.0)}
    result = {"wall_s": 1.0, "to_admit_s": {}, "kueue_usage_pct": recorder.class_usage()}
    usage_check = [c for c in conditions(scenario, result) if "usage" in c[0]]
    assert usage_check == [("cq usage >= 55%", "50.0%", False)]


def test_a_queue_over_its_limit_is_a_violation() -> None:
    scenario = load("baseline", 0.01)
    recorder = Recorder(scenario)
    queue = scenario.queues[0]  # nominal 20 + borrowing limit 100: 30 CPU fits, 120 is the cap
    recorder.workload_event(workload_obj(0, 0, True, queue.name), T0)
    assert recorder.violations == []
    for i in range(4):  # 4 x 30 CPU = 120 in one queue: the cohort (6 x 20 = 120) is full
        obj = workload_obj(0, 0, True, queue.name)
        obj["metadata"]["name"] = f"more-{i}"
        recorder.workload_event(obj, T0 + 1)
    assert any("holds 150000m of 120000m" in v for v in recorder.violations), recorder.violations


def test_the_baseline_replays_end_to_end_at_scale_0_01(tmp_path: Path) -> None:
    scenario = load("baseline", 0.01)
    result = run_once(scenario, None, timeout=240, trace=tmp_path)
    assert result["created"] == result["workloads"] == 180
    assert result["finished"] == 180, result["operator_log_tail"]
    assert result["violation_count"] == 0, result["violations"]
    assert result["runner_errors"] == []
    assert result["quota_checks"] >= 180
    assert set(result["to_admit_s"]) == {"small", "medium", "large"}
    markdown = report(scenario, [result])
    assert "| wall (s) |" in markdown and "avg time to admission" in markdown
    # the operator's scheduling cycles, from Kueue's admission-attempt metrics
    assert result["cycles"]["count"] >= 1 and result["cycles"]["sum"] > 0
    assert "| scheduling cycles |" in markdown
    # --trace: every creation, and each admission with its ClusterQueue and decision second
    rows = [line.split("\t") for line in (tmp_path / "workloads.tsv").read_text().splitlines()]
    assert sum(what == "create" for _, _, what in rows) == 180
    admitted = {key for _, key, what in rows if what.startswith("QuotaReserved,Admitted@")}
    assert len(admitted) == 180
    assert all(what.rsplit("|", 1)[1].isdigit() for _, _, what in rows if "Admitted@" in what)
    assert "queueing controller synced" in (tmp_path / "operator.log").read_text()
