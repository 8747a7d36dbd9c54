"""The job adapters (Kueue's GenericJob per kind) and the Kueue conditions the controller writes.

Finished/PodsReady follow kubernetes-sigs/kueue v0.14 pkg/controller/jobs/raycluster and rayjob
(``Finished``: done on jobDeploymentStatus Complete/Failed, success on jobStatus SUCCEEDED) and
the AppWrapper's own integration (project-codeflare/appwrapper, ``Finished``). Injection and
restore follow Kueue's podset.Merge / podset.RestorePodSpec for the keys we inject.
"""

from __future__ import annotations

import pytest

from codeflare.k8s.constants import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL, RESOURCE_IN_USE_FINALIZER
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.operator.queueing import convert, jobs, status
from codeflare.operator.queueing.adapters import ADAPTERS, PodSetInfo, adapter_for, original_infos
from codeflare.operator.queueing.finalizers import finalizers_change
from codeflare.operator.queueing.jobsync import JobStep, decide_job
from codeflare.scheduling import PendingInfo

GPU_A = PodSetInfo("head", {"pool": "a100"}, ({"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},))
GPU_B = PodSetInfo("head", {"pool": "h100"}, ({"key": "h100", "operator": "Exists"},))


def pod(**spec: object) -> Obj:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], **spec}}


def raycluster(**head_spec: object) -> Obj:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "ns", "uid": "u", "labels": {QUEUE_NAME_LABEL: "lq"}},
        "spec": {"suspend": True, "headGroupSpec": {"template": pod(**head_spec)}},
    }


def rayjob() -> Obj:
    cluster = raycluster(nodeSelector={"team": "ml"})
    return {
        "metadata": {"name": "rj", "namespace": "ns", "uid": "u2", "labels": {QUEUE_NAME_LABEL: "lq"}},
        "spec": {"suspend": True, "rayClusterSpec": cluster["spec"], "submitterPodTemplate": pod()},
    }


def head_spec(job: Obj, kind: object) -> Obj:
    base = job["spec"] if kind == kinds.RAYCLUSTER else job["spec"]["rayClusterSpec"]
    spec: Obj = base["headGroupSpec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("kind", [kinds.RAYCLUSTER, kinds.RAYJOB])
def test_eviction_restores_the_pod_templates_so_a_readmission_keeps_no_keys_of_the_first_flavor(
    kind: object,
) -> None:
    job = raycluster(nodeSelector={"team": "ml"}) if kind == kinds.RAYCLUSTER else rayjob()
    adapter = adapter_for(kind)  # type: ignore[arg-type]
    workload = jobs.workload_for(adapter.kind, job, 0, None)
    first = adapter.run_with_pod_set_infos(job, [GPU_A])
    assert head_spec(first, kind)["nodeSelector"] == {"team": "ml", "pool": "a100"}
    assert not first["spec"]["suspend"]
    evicted = adapter.restore_pod_set_infos(adapter.suspend(first), original_infos(workload))
    assert head_spec(evicted, kind)["nodeSelector"] == {"team": "ml"}
    assert "tolerations" not in head_spec(evicted, kind) and evicted["spec"]["suspend"]
    second = adapter.run_with_pod_set_infos(evicted, [GPU_B])
    assert head_spec(second, kind)["nodeSelector"] == {"team": "ml", "pool": "h100"}
    assert head_spec(second, kind)["tolerations"] == [{"key": "h100", "operator": "Exists"}]
    assert jobs.same_shape(jobs.workload_pod_sets(adapter.kind, second), workload["spec"]["podSets"])
    assert jobs.workload_pod_sets(adapter.kind, evicted) == workload["spec"]["podSets"]


def test_an_appwrappers_infos_go_to_its_components_and_eviction_clears_them() -> None:
    aw = {
        "metadata": {"name": "aw", "namespace": "ns"},
        "spec": {"suspend": True, "components": [{"template": raycluster()}]},
    }
    adapter = adapter_for(kinds.APPWRAPPER)
    admitted = adapter.run_with_pod_set_infos(aw, [PodSetInfo("c0-p0", {"pool": "a100"})])
    assert admitted["spec"]["components"][0]["podSetInfos"] == [{"nodeSelector": {"pool": "a100"}}]
    restored = adapter.restore_pod_set_infos(adapter.suspend(admitted), [])
    assert "podSetInfos" not in restored["spec"]["components"][0] and restored["spec"]["suspend"]


FINISHED = {
    # (kind, status) -> (message, success, done); success from status fields, never from words
    "rayjob succeeded, a message mentioning failure": (
        kinds.RAYJOB,
        {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED", "message": "no failures"},
        ("no failures", True, True),
    ),
    "rayjob complete with a failed ray job": (
        kinds.RAYJOB,
        {"jobDeploymentStatus": "Complete", "jobStatus": "FAILED", "message": "exit 1"},
        ("exit 1", False, True),
    ),
    "rayjob deployment failed": (
        kinds.RAYJOB,
        {"jobDeploymentStatus": "Failed", "jobStatus": "", "message": "deadline"},
        ("deadline", False, True),
    ),
    "rayjob running": (
        kinds.RAYJOB,
        {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"},
        ("", False, False),
    ),
    "raycluster failed is never finished": (kinds.RAYCLUSTER, {"state": "failed"}, ("", False, False)),
    "appwrapper succeeded": (
        kinds.APPWRAPPER,
        {"phase": "Succeeded"},
        ("AppWrapper finished successfully", True, True),
    ),
    "appwrapper failed, resources gone": (
        kinds.APPWRAPPER,
        {"phase": "Failed"},
        ("AppWrapper failed", False, True),
    ),
    "appwrapper failed, still deleting": (
        kinds.APPWRAPPER,
        {"phase": "Failed", "conditions": [{"type": "ResourcesDeployed", "status": "True"}]},
        ("", False, False),
    ),
}


@pytest.mark.parametrize("name", sorted(FINISHED))
def test_finished_from_status_fields(name: str) -> None:
    kind, job_status, expected = FINISHED[name]
    ended = adapter_for(kind).finished({"metadata": {}, "spec": {}, "status": job_status})
    assert (ended.message, ended.success, ended.done) == expected


def test_the_registry_holds_one_adapter_per_queued_kind() -> None:
    assert set(ADAPTERS) == {kinds.RAYCLUSTER, kinds.RAYJOB, kinds.APPWRAPPER}
    assert all(adapter.kind == kind for kind, adapter in ADAPTERS.items())


# -- job decisions -------------------------------------------------------------------------------
def test_a_running_job_without_admission_is_suspended_before_its_shape_is_compared() -> None:
    job = adapter_for(kinds.RAYCLUSTER).run_with_pod_set_infos(raycluster(), [GPU_A])
    workload = jobs.workload_for(kinds.RAYCLUSTER, raycluster(), 0, None)
    decision = decide_job(kinds.RAYCLUSTER, job, workload, default_queue=None, assumed=None)
    assert decision.step is JobStep.SUSPEND


def test_a_suspended_jobs_priority_class_label_change_retargets_its_workload() -> None:
    """kueue pkg/controller/jobframework/reconciler.go: "Job changed priority, updating workload",
    only while the job is suspended and only for WorkloadPriorityClass-based priority."""
    job = raycluster()
    job["metadata"]["labels"][PRIORITY_CLASS_LABEL] = "low"
    workload = jobs.workload_for(kinds.RAYCLUSTER, job, 10, "low")
    assert (
        decide_job(kinds.RAYCLUSTER, job, workload, default_queue=None, assumed=None).step is JobStep.NOTHING
    )
    job["metadata"]["labels"][PRIORITY_CLASS_LABEL] = "high"
    decision = decide_job(kinds.RAYCLUSTER, job, workload, default_queue=None, assumed=None)
    assert (decision.step, decision.priority_class) == (JobStep.RETARGET, "high")
    pod_based = jobs.workload_for(kinds.RAYCLUSTER, job, 10, "pods", "scheduling.k8s.io/priorityclass")
    assert (
        decide_job(kinds.RAYCLUSTER, job, pod_based, default_queue=None, assumed=None).step is JobStep.NOTHING
    )


# -- conditions as Kueue writes them ---------------------------------------------------------------
WL = {"metadata": {"namespace": "ns", "name": "w"}, "spec": {"queueName": "lq"}}
PENDING_CASES = {
    # kueue pkg/controller/core/workload_controller.go (Inadmissible) and pkg/scheduler/scheduler.go
    "missing LocalQueue": (
        PendingInfo("NoLocalQueue", "x"),
        False,
        ("Inadmissible", "LocalQueue lq doesn't exist"),
    ),
    "stopped LocalQueue": (
        PendingInfo("NoLocalQueue", "x"),
        True,
        ("Inadmissible", "LocalQueue lq is inactive"),
    ),
    "missing ClusterQueue": (
        PendingInfo("NoClusterQueue", "x", "cq"),
        False,
        ("Inadmissible", "ClusterQueue cq doesn't exist"),
    ),
    "stopped ClusterQueue": (
        PendingInfo("ClusterQueueStopped", "x", "cq"),
        False,
        ("Inadmissible", "ClusterQueue cq is inactive"),
    ),
    "inactive ClusterQueue": (
        PendingInfo("ClusterQueueInactive", "x", "cq"),
        False,
        ("Inadmissible", "ClusterQueue cq is inactive"),
    ),
    "namespace not selected": (
        PendingInfo("NamespaceNotSelected", "x", "cq"),
        False,
        ("Pending", "Workload namespace doesn't match ClusterQueue selector"),
    ),
    "quota": (
        PendingInfo("QuotaShortfall", "insufficient quota", "cq"),
        False,
        ("Pending", "insufficient quota"),
    ),
}


@pytest.mark.parametrize("name", sorted(PENDING_CASES))
def test_pending_conditions_as_kueue_words_them(name: str) -> None:
    info, stopped, expected = PENDING_CASES[name]
    assert status.pending_condition(info, WL, stopped) == expected


def test_deactivation_evicts_with_kueues_reason_and_requeues_only_after_preemption() -> None:
    admitted = {"status": {"admission": {"clusterQueue": "cq"}, "conditions": []}}
    reason, message = status.eviction_condition("InactiveWorkload", "workload ns/w was deactivated")
    assert (reason, message) == ("Deactivated", "The workload is deactivated")
    new = status.evicted_status(admitted, reason, message, "2026-01-01T00:00:00Z")
    assert new is not None
    conds = {c["type"]: c for c in new["conditions"]}
    assert (conds["Evicted"]["reason"], conds["Requeued"]["status"]) == ("Deactivated", "False")
    assert (conds["QuotaReserved"]["reason"], conds["QuotaReserved"]["status"]) == ("Pending", "False")
    preempted = status.evicted_status(
        admitted, "Preempted", "m", "2026-01-01T00:00:00Z", preemption_reason="InClusterQueue"
    )
    assert preempted is not None
    pconds = {c["type"]: c for c in preempted["conditions"]}
    assert (pconds["Requeued"]["status"], pconds["Preempted"]["reason"]) == ("True", "InClusterQueue")


def test_queue_active_conditions() -> None:
    cq = {
        "metadata": {"name": "cq"},
        "spec": {"stopPolicy": "Hold", "resourceGroups": [{"flavors": [{"name": "f"}]}]},
    }
    assert status.cluster_queue_active(cq, []) == (
        "False",
        "Stopped",
        "Can't admit new workloads: is stopped, references missing ResourceFlavor(s): f.",
    )
    cq["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert status.cluster_queue_active(cq, ["f"])[1] == "Terminating"
    lq = {"metadata": {"name": "lq"}, "spec": {"clusterQueue": "cq", "stopPolicy": "HoldAndDrain"}}
    new = status.local_queue_status(lq, pending=0, admitted=0, usage={}, cluster_queue_active=True, now="t")
    assert new is not None
    assert [(c["reason"], c["message"]) for c in new["conditions"]] == [("Stopped", "LocalQueue is stopped")]


def test_a_null_namespace_selector_selects_no_namespace_and_an_empty_one_all() -> None:
    def cq(selector: object) -> Obj:
        return {"metadata": {"name": "cq"}, "spec": {"namespaceSelector": selector, "resourceGroups": []}}

    assert convert.cluster_queue({"metadata": {"name": "cq"}, "spec": {}}).namespace_selector is None
    assert convert.cluster_queue(cq(None)).namespace_selector is None
    everything = convert.cluster_queue(cq({})).namespace_selector
    assert everything is not None and everything.matches({"any": "label"})


def test_resource_in_use_finalizer() -> None:
    """kueue pkg/controller/core/clusterqueue_controller.go: added while alive, removed on deletion
    only when nothing is in use."""
    alive: Obj = {"metadata": {"name": "cq", "finalizers": ["other"]}}
    assert finalizers_change(alive, in_use=False) == ["other", RESOURCE_IN_USE_FINALIZER]
    held = {"metadata": {"name": "cq", "finalizers": [RESOURCE_IN_USE_FINALIZER], "deletionTimestamp": "t"}}
    assert finalizers_change(held, in_use=True) is None
    assert finalizers_change(held, in_use=False) == []
