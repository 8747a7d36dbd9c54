"""The pure lifecycle decision: each phase transition from an AppWrapper, an observation and a time."""

from __future__ import annotations

import copy

from codeflare.k8s.conditions import find_condition
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.operator.appwrapper.faults import FaultTolerance, fault_tolerance
from codeflare.operator.appwrapper.lifecycle import (
    Action,
    ComponentObservation,
    Decision,
    Observation,
    PodCounts,
    component_outcome,
    decide,
    decide_deletion,
    deploy_failed,
    summarize_pods,
)
from codeflare.operator.config import FaultToleranceConfig

T0 = 1_800_000_000.0  # a whole second, so condition timestamps are exact
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"parallelism": 2}}


def knobs(**annotations: str) -> FaultTolerance:
    return fault_tolerance(
        FaultToleranceConfig(), {f"workload.codeflare.dev.appwrapper/{k}": v for k, v in annotations.items()}
    )[0]


def appwrapper(suspend: bool = False, status: Obj | None = None) -> Obj:
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "ns", "uid": "u", "generation": 1},
        "spec": {"suspend": suspend, "components": [{"template": JOB}]},
        "status": status or {},
    }


def job(exists: bool = True, outcome: str | None = None) -> ComponentObservation:
    return ComponentObservation("j", "Job", "batch/v1", exists, outcome)


def observed(pods: PodCounts | None = None, component: ComponentObservation | None = None) -> Observation:
    return Observation((component or job(),), pods or PodCounts(), expected_pods=2)


def apply(aw: Obj, decision: Decision) -> Obj:
    """The AppWrapper after the controller wrote the decision's status."""
    out = copy.deepcopy(aw)
    if decision.status is not None:
        out["status"] = decision.status
    return out


def cond(aw: Obj, type_: str) -> tuple[str, str]:
    c = find_condition(aw["status"].get("conditions"), type_)
    assert c is not None, type_
    return c["status"], c["reason"]


def running(now: float = T0) -> Obj:
    """An AppWrapper that reached Running at ``now``."""
    aw = apply(appwrapper(), decide(appwrapper(), observed(), knobs(), now))
    return apply(aw, decide(aw, Observation(), knobs(), now))


def test_created_suspended_waits_in_suspended() -> None:
    decision = decide(appwrapper(suspend=True), Observation(), knobs(), T0)
    aw = apply(appwrapper(suspend=True), decision)
    assert aw["status"]["phase"] == "Suspended"
    assert cond(aw, "QuotaReserved") == ("False", "Suspended")
    assert decision.action is Action.NONE and decision.requeue_after is None
    assert decide(aw, Observation(), knobs(), T0 + 5).status is None  # stays put


def test_unsuspended_resumes_then_deploys_into_running() -> None:
    aw = apply(appwrapper(suspend=True), decide(appwrapper(suspend=True), Observation(), knobs(), T0))
    aw["spec"]["suspend"] = False
    resuming = apply(aw, decide(aw, Observation(), knobs(), T0))
    assert resuming["status"]["phase"] == "Resuming"
    assert cond(resuming, "QuotaReserved")[0] == "True"

    deploy = decide(resuming, observed(), knobs(), T0)
    assert deploy.action is Action.DEPLOY
    aw = apply(resuming, deploy)
    assert aw["status"]["phase"] == "Running"
    assert cond(aw, "ResourcesDeployed") == ("True", "ComponentsCreated")
    assert aw["status"]["componentStatus"][0]["podSets"] == [
        {"path": "template.spec.template", "replicas": 2}
    ]
    assert aw["status"]["componentStatus"][0]["name"] == "j"


def test_not_suspended_and_not_queued_runs_directly() -> None:
    aw = apply(appwrapper(), decide(appwrapper(), Observation(), knobs(), T0))
    assert aw["status"]["phase"] == "Resuming"
    assert cond(aw, "QuotaReserved") == ("True", "NotQueued")


def test_ready_pods_set_pods_ready() -> None:
    aw = running()
    decision = decide(aw, observed(PodCounts(total=2, running=2, ready=2)), knobs(), T0 + 1)
    assert cond(apply(aw, decision), "PodsReady")[0] == "True"
    assert decision.requeue_after is None and decision.phase == "Running"


def test_pending_pods_requeue_for_the_admission_grace_period_then_turn_unhealthy() -> None:
    aw = running()
    waiting = decide(aw, observed(PodCounts(total=1, pending=1)), knobs(), T0 + 10)
    assert waiting.requeue_after == 50  # admissionGracePeriod 1m
    late = apply(aw, decide(aw, observed(PodCounts(total=1, pending=1)), knobs(), T0 + 60))
    assert cond(late, "Unhealthy") == ("True", "MissingPods")


def test_pods_not_ready_after_warmup_are_unhealthy() -> None:
    aw = running()
    pods = PodCounts(total=2, running=2, ready=1)
    assert (
        find_condition(apply(aw, decide(aw, observed(pods), knobs(), T0 + 299))["status"].get("conditions"),
                       "Unhealthy")
        is None
    )
    assert cond(apply(aw, decide(aw, observed(pods), knobs(), T0 + 300)), "Unhealthy") == (
        "True",
        "InsufficientPodsReady",
    )


def test_job_completion_succeeds_and_releases_quota() -> None:
    aw = running()
    decision = decide(
        aw, observed(PodCounts(total=2, succeeded=2), job(outcome="succeeded")), knobs(), T0 + 5
    )
    done = apply(aw, decision)
    assert done["status"]["phase"] == "Succeeded"
    assert cond(done, "QuotaReserved") == ("False", "Succeeded")
    assert decision.requeue_after == 168 * 3600


def test_all_pods_succeeded_is_success_even_without_component_status() -> None:
    aw = running()
    decision = decide(aw, observed(PodCounts(total=2, succeeded=2)), knobs(), T0 + 5)
    assert decision.phase == "Succeeded"


def test_success_ttl_deletes_the_appwrapper() -> None:
    aw = running()
    done = apply(aw, decide(aw, observed(PodCounts(total=2, succeeded=2)), knobs(successTTL="10s"), T0 + 5))
    waiting = decide(done, Observation(), knobs(successTTL="10s"), T0 + 10)
    assert waiting.action is Action.NONE and waiting.requeue_after == 5
    assert decide(done, Observation(), knobs(successTTL="10s"), T0 + 15).action is Action.DELETE_APPWRAPPER


def failed_pod(code: int = 1) -> PodCounts:
    return PodCounts(total=2, running=1, ready=1, failed=1, exit_codes=(code,), failed_names=("j-1",))


def test_failed_pod_is_unhealthy_for_the_grace_period_then_resets() -> None:
    aw = running()
    k = knobs(failureGracePeriod="10s")
    first = decide(aw, observed(failed_pod()), k, T0 + 5)
    unhealthy = apply(aw, first)
    assert cond(unhealthy, "Unhealthy") == ("True", "FoundFailedPods")
    assert first.requeue_after == 10 and first.event is not None and first.event[0] == "Unhealthy"
    still = decide(unhealthy, observed(failed_pod()), k, T0 + 14)
    assert still.status is None and still.requeue_after == 1

    reset = apply(unhealthy, decide(unhealthy, observed(failed_pod()), k, T0 + 15))
    assert reset["status"]["phase"] == "Resetting"
    assert reset["status"]["resettingCount"] == 1
    assert cond(reset, "DeletingResources")[0] == "True"


def test_recovery_within_the_grace_period_clears_unhealthy() -> None:
    aw = running()
    unhealthy = apply(aw, decide(aw, observed(failed_pod()), knobs(), T0 + 5))
    healthy = apply(
        unhealthy, decide(unhealthy, observed(PodCounts(total=2, running=2, ready=2)), knobs(), T0 + 6)
    )
    assert cond(healthy, "Unhealthy") == ("False", "Recovered")
    assert healthy["status"]["phase"] == "Running"


def test_resetting_deletes_pauses_and_resumes() -> None:
    aw = running()
    k = knobs(failureGracePeriod="0s", retryPausePeriod="30s", forcefulDeletionGracePeriod="1m")
    unhealthy = apply(aw, decide(aw, observed(failed_pod()), k, T0 + 5))
    reset = apply(unhealthy, decide(unhealthy, observed(failed_pod()), k, T0 + 5))
    assert reset["status"]["phase"] == "Resetting"

    assert decide(reset, observed(failed_pod()), k, T0 + 6).action is Action.DELETE
    assert decide(reset, observed(failed_pod()), k, T0 + 65).action is Action.DELETE_FORCEFULLY
    cleaned_decision = decide(reset, Observation((job(exists=False),)), k, T0 + 10)
    cleaned = apply(reset, cleaned_decision)
    assert cond(cleaned, "DeletingResources") == ("False", "DeletionComplete")
    assert cond(cleaned, "ResourcesDeployed")[0] == "False"
    assert cleaned_decision.requeue_after == 30
    assert decide(cleaned, Observation(), k, T0 + 39).status is None
    resumed = apply(cleaned, decide(cleaned, Observation(), k, T0 + 40))
    assert resumed["status"]["phase"] == "Resuming"
    assert cond(resumed, "Unhealthy")[0] == "False"
    assert resumed["status"]["resettingCount"] == 1


def test_retry_limit_exhausted_fails() -> None:
    aw = running()
    aw["status"]["resettingCount"] = 3
    k = knobs(failureGracePeriod="0s")
    unhealthy = apply(aw, decide(aw, observed(failed_pod()), k, T0))
    failed = apply(unhealthy, decide(unhealthy, observed(failed_pod()), k, T0))
    assert failed["status"]["phase"] == "Failed"
    assert cond(failed, "DeletingResources") == ("True", "RetryLimitExceeded")
    assert cond(failed, "QuotaReserved") == ("False", "RetryLimitExceeded")
    assert failed["status"]["resettingCount"] == 3
    assert decide(failed, observed(failed_pod()), k, T0 + 1).action is Action.DELETE
    finished = apply(failed, decide(failed, Observation(), k, T0 + 2))
    assert finished["status"]["phase"] == "Failed"
    assert cond(finished, "QuotaReserved")[1] == "RetryLimitExceeded"  # why it failed stays visible
    assert cond(finished, "DeletingResources")[0] == "False"


def test_terminal_exit_code_fails_without_retry() -> None:
    aw = running()
    k = knobs(failureGracePeriod="0s", terminalExitCodes="42")
    unhealthy = apply(aw, decide(aw, observed(failed_pod(42)), k, T0))
    failed = apply(unhealthy, decide(unhealthy, observed(failed_pod(42)), k, T0))
    assert failed["status"]["phase"] == "Failed"
    assert cond(failed, "DeletingResources")[1] == "TerminalExitCode"
    assert failed["status"].get("resettingCount", 0) == 0


def test_deleted_component_and_failed_component_are_unhealthy() -> None:
    aw = running()
    assert cond(apply(aw, decide(aw, observed(component=job(exists=False)), knobs(), T0)), "Unhealthy")[
        1
    ] == ("MissingComponent")
    assert cond(apply(aw, decide(aw, observed(component=job(outcome="failed")), knobs(), T0)), "Unhealthy")[
        1
    ] == ("ComponentFailed")


def test_suspend_while_running_deletes_then_suspends() -> None:
    aw = running()
    aw["spec"]["suspend"] = True
    suspending = apply(aw, decide(aw, observed(), knobs(), T0 + 1))
    assert suspending["status"]["phase"] == "Suspending"
    assert decide(suspending, observed(), knobs(), T0 + 2).action is Action.DELETE
    suspended = apply(suspending, decide(suspending, Observation((job(exists=False),)), knobs(), T0 + 3))
    assert suspended["status"]["phase"] == "Suspended"
    assert cond(suspended, "QuotaReserved")[0] == "False"
    assert cond(suspended, "ResourcesDeployed")[0] == "False"


def test_decisions_depend_only_on_the_object_and_the_time() -> None:
    aw = running()
    unhealthy = apply(aw, decide(aw, observed(failed_pod()), knobs(), T0 + 5))
    first = decide(copy.deepcopy(unhealthy), observed(failed_pod()), knobs(), T0 + 100)
    again = decide(copy.deepcopy(unhealthy), observed(failed_pod()), knobs(), T0 + 100)
    assert first.status == again.status and first.action == again.action


def test_deploy_failure_fails_the_appwrapper() -> None:
    aw = apply(appwrapper(), decide(appwrapper(), Observation(), knobs(), T0))
    failed = apply(aw, deploy_failed(aw, "Job j already exists", T0))
    assert failed["status"]["phase"] == "Failed"
    assert cond(failed, "ResourcesDeployed") == ("False", "CreateFailed")


def test_deletion_waits_for_components_then_releases() -> None:
    aw = running()
    aw["metadata"]["deletionTimestamp"] = format_rfc3339(T0 + 10)
    k = knobs(forcefulDeletionGracePeriod="1m")
    decision, done = decide_deletion(aw, 3, k, T0 + 11)
    terminating = apply(aw, decision)
    assert not done and decision.action is Action.DELETE
    assert terminating["status"]["phase"] == "Terminating"
    assert cond(terminating, "DeletingResources")[0] == "True"
    assert decide_deletion(terminating, 3, k, T0 + 70)[0].action is Action.DELETE_FORCEFULLY
    final, done = decide_deletion(terminating, 0, k, T0 + 71)
    assert done and cond(apply(terminating, final), "DeletingResources")[0] == "False"


def test_summarize_pods() -> None:
    pods = [
        {
            "metadata": {"name": "a"},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        },
        {"metadata": {"name": "b"}, "status": {"phase": "Running"}},
        {
            "metadata": {"name": "c"},
            "status": {
                "phase": "Failed",
                "containerStatuses": [
                    {"state": {"terminated": {"exitCode": 137}}},
                    {"state": {"terminated": {"exitCode": 0}}},
                ],
            },
        },
        {"metadata": {"name": "d"}, "status": {"phase": "Succeeded"}},
        {"metadata": {"name": "e"}},
    ]
    counts = summarize_pods(pods)
    assert (counts.total, counts.running, counts.ready, counts.failed, counts.succeeded, counts.pending) == (
        5,
        2,
        1,
        1,
        1,
        1,
    )
    assert counts.exit_codes == (137,) and counts.failed_names == ("c",)


def test_component_outcomes() -> None:
    def job_with(type_: str) -> Obj:
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "status": {"conditions": [{"type": type_, "status": "True"}]},
        }

    assert component_outcome(job_with("Complete"))[0] == "succeeded"
    assert component_outcome(job_with("Failed"))[0] == "failed"
    assert component_outcome({"apiVersion": "ray.io/v1", "kind": "RayCluster", "status": {"state": "ready"}})[
        0
    ] == ("ready")
    assert component_outcome(
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "status": {"state": "failed"}}
    )[0] == ("failed")
    for deployment, job_status, outcome in (
        ("Complete", "SUCCEEDED", "succeeded"),
        ("Complete", "FAILED", "failed"),  # success from KubeRay's jobStatus, as Kueue's RayJob Finished()
        ("Failed", "", "failed"),
        ("Running", "RUNNING", None),
    ):
        rayjob = {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "status": {"jobDeploymentStatus": deployment, "jobStatus": job_status},
        }
        assert component_outcome(rayjob)[0] == outcome
    assert component_outcome({"apiVersion": "apps/v1", "kind": "Deployment", "status": {}})[0] is None
