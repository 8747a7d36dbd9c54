"""maximumExecutionTimeSeconds: the pure decision, the accumulation on eviction, the job label."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.k8s.conditions import conditions_of, find_condition
from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.kube import kinds
from codeflare.operator.queueing import jobs, maxexec, status
from codeflare.operator.queueing.maxexec import DEACTIVATE, NOTHING, MaxExecAction, decide

NOW = 1_800_000_000.0
MINUTE = 60.0


def workload(
    maximum: int | None, admitted_ago: float | None, past: int | None = None, **spec: Any
) -> dict[str, Any]:
    conds = []
    if admitted_ago is not None:
        conds.append(
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "The workload is admitted",
                "lastTransitionTime": format_rfc3339(NOW - admitted_ago),
            }
        )
    wl_status: dict[str, Any] = {"conditions": conds}
    if admitted_ago is not None:
        wl_status["admission"] = {"clusterQueue": "q1", "podSetAssignments": []}
    if past is not None:
        wl_status["accumulatedPastExecutionTimeSeconds"] = past
    wl_spec: dict[str, Any] = {"active": True, **spec}
    if maximum is not None:
        wl_spec["maximumExecutionTimeSeconds"] = maximum
    return {"metadata": {"name": "wl", "namespace": "ns"}, "spec": wl_spec, "status": wl_status}


# kueue pkg/controller/core/workload_controller_test.go, TestReconcile:
# "admitted workload with max execution time" (120s, admitted a minute ago: requeue after a minute)
# and "... - expired" (60s, admitted two minutes ago: DeactivationTarget, Warning event).
KUEUE_CASES = [
    (workload(120, MINUTE), MaxExecAction(recheck_in=MINUTE)),
    (workload(60, 2 * MINUTE), DEACTIVATE),
    (workload(None, 2 * MINUTE), NOTHING),  # no maximum: nothing to enforce
    (workload(60, None), NOTHING),  # not admitted: no time runs
    # test/integration/singlecluster/controller/core/workload_controller_test.go: accumulated time
    # set to maximum-1 and quota reserved again: deactivated about a second later
    (workload(10, 0, past=9), MaxExecAction(recheck_in=1.0)),
    (workload(10, 1, past=9), DEACTIVATE),
    (workload(60, 2 * MINUTE, active=False), NOTHING),  # already deactivated
]


@pytest.mark.parametrize(("wl", "want"), KUEUE_CASES)
def test_kueue_cases(wl: dict[str, Any], want: MaxExecAction) -> None:
    assert decide(wl, NOW) == want


def test_deactivation_status_sets_kueues_condition_and_drops_the_accumulated_time() -> None:
    new = maxexec.deactivation_status(workload(60, 2 * MINUTE, past=5), format_rfc3339(NOW))
    assert new is not None
    cond = find_condition(new["conditions"], "DeactivationTarget")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True",
        "MaximumExecutionTimeExceeded",
        "exceeding the maximum execution time",
    )
    assert "accumulatedPastExecutionTimeSeconds" not in new
    assert maxexec.deactivation_status({**workload(60, 0), "status": new}, format_rfc3339(NOW)) is None


def test_the_deactivating_eviction_names_the_target_and_accumulates() -> None:
    wl = workload(60, 2 * MINUTE, past=3)
    wl["status"] = maxexec.deactivation_status(wl, format_rfc3339(NOW))
    wl["spec"]["active"] = False
    reason, message = status.eviction_condition("InactiveWorkload", "")
    new = status.evicted_status(wl, reason, message, format_rfc3339(NOW))
    assert new is not None
    evicted = find_condition(new["conditions"], "Evicted")
    assert evicted is not None
    assert evicted["reason"] == "DeactivatedDueToMaximumExecutionTimeExceeded"
    assert evicted["message"] == "The workload is deactivated due to exceeding the maximum execution time"
    assert find_condition(new["conditions"], "DeactivationTarget") is None
    # the target dropped the earlier 3 s (Kueue sets it to nil); the ended admission is added
    assert new["accumulatedPastExecutionTimeSeconds"] == 120


def test_a_preemption_adds_the_admitted_whole_seconds() -> None:
    # kueue pkg/workload/admissionchecks.go SyncAdmittedCondition: += int(now - Admitted LTT)
    new = status.evicted_status(workload(60, 7, past=10), "Preempted", "preempted", format_rfc3339(NOW))
    assert new is not None and new["accumulatedPastExecutionTimeSeconds"] == 17
    evicted = find_condition(new["conditions"], "Evicted")
    assert evicted is not None and evicted["reason"] == "Preempted"


def test_no_maximum_no_accumulation() -> None:
    new = status.evicted_status(workload(None, 7), "Preempted", "preempted", format_rfc3339(NOW))
    assert new is not None and "accumulatedPastExecutionTimeSeconds" not in new


@given(
    maximum=st.integers(1, 10**6),
    past=st.integers(0, 10**6),
    admitted_ago=st.integers(0, 2 * 10**6),
    extra=st.floats(0, 0.999),
)
def test_never_before_the_maximum_always_after(
    maximum: int, past: int, admitted_ago: int, extra: float
) -> None:
    wl = workload(maximum, admitted_ago, past=past)
    action = decide(wl, NOW + extra)
    elapsed = past + admitted_ago + extra
    if elapsed < maximum:
        assert not action.deactivate
        # NOW + extra is a float near 1.8e9 s, spaced 2.4e-7 s apart: extra is kept to that much
        assert action.recheck_in == pytest.approx(maximum - elapsed, abs=1e-6)
    else:
        assert action == DEACTIVATE
        done = {**wl, "spec": {**wl["spec"], "active": False}}
        assert decide(done, NOW + extra) == NOTHING


def raycluster(labels: dict[str, str]) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "ray", "resources": {"requests": {"cpu": "1"}}}]}}
    return {
        "apiVersion": kinds.RAYCLUSTER.api_version,
        "kind": kinds.RAYCLUSTER.kind,
        "metadata": {"name": "rc", "namespace": "ns", "uid": "u1", "labels": labels},
        "spec": {"headGroupSpec": {"template": template}, "workerGroupSpecs": []},
    }


def test_the_job_label_sets_the_workload_field() -> None:
    job = raycluster({"kueue.x-k8s.io/queue-name": "q", MAX_EXEC_TIME_LABEL: "30"})
    assert jobs.workload_for(kinds.RAYCLUSTER, job, 0, None)["spec"]["maximumExecutionTimeSeconds"] == 30
    plain = raycluster({"kueue.x-k8s.io/queue-name": "q"})
    assert "maximumExecutionTimeSeconds" not in jobs.workload_for(kinds.RAYCLUSTER, plain, 0, None)["spec"]


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        ("0", "greater than 0"),
        ("-5", "greater than 0"),
        ("1.5", "integer"),
        ("ten", "integer"),
        ("", "integer"),
        ("\u00b2", "integer"),
    ],
)
def test_a_bad_label_names_the_label_and_the_rule(bad: str, rule: str) -> None:
    with pytest.raises(ValueError, match=rf"max-exec-time-seconds.*{rule}"):
        jobs.workload_for(kinds.RAYCLUSTER, raycluster({MAX_EXEC_TIME_LABEL: bad}), 0, None)


def test_unadmitted_workloads_keep_their_conditions() -> None:
    wl = workload(60, None)
    assert conditions_of(wl) == []
    assert maxexec.admitted_since(wl) is None
