"""Queueing end to end: a real API server process, the operator process, RayClusters through a cohort.

Two ClusterQueues share a cohort; jobs are admitted, borrow, get preempted by the lender
reclaiming its quota, wait with a readable reason, and are admitted again when quota frees up.
A watcher follows every Workload change for the whole test and checks that no ClusterQueue and no
cohort is ever charged beyond its quota at any resourceVersion.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.k8s.timestamps import parse_rfc3339
from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from tests.operator.operator_metrics import OperatorMetricsReader
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OperatorProcess,
    ensure_namespace,
    install_crds,
    operator_plane,
    quiet_config,
    wait_for,
    write_operator_config,
)
from tests.support.quota_watch import QuotaWatcher

QUEUE = "kueue.x-k8s.io/queue-name"
TIMEOUT_S = 2  # waitForPodsReady timeout of the pods-ready test


def raycluster(name: str, namespace: str, head_cpu: str, worker_cpu: str, workers: int = 1) -> dict[str, Any]:
    def template(cpu: str) -> dict[str, Any]:
        return {
            "spec": {"containers": [{"name": "ray", "image": "ray", "resources": {"requests": {"cpu": cpu}}}]}
        }

    return {
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE: "queue"}},
        "spec": {
            "suspend": True,
            "headGroupSpec": {"rayStartParams": {}, "template": template(head_cpu)},
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": workers,
                    "rayStartParams": {},
                    "template": template(worker_cpu),
                }
            ],
        },
    }


def cluster_queue(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "cohortName": "research",
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
                }
            ],
            **spec,
        },
    }


@pytest.fixture
def control_plane(fresh_apiserver: ServerProcess, tmp_path: Any) -> Iterator[tuple[Kube, OperatorProcess]]:
    with operator_plane(fresh_apiserver, tmp_path / "operator.log", flavor=False) as plane:
        yield plane


def _workload(kube: Kube, namespace: str, job: str) -> dict[str, Any] | None:
    for wl in kube.list(kinds.WORKLOAD, namespace):
        owners = wl["metadata"].get("ownerReferences") or []
        if any(o.get("name") == job for o in owners):
            return wl
    return None


def _admitted_in(kube: Kube, namespace: str, job: str) -> str | None:
    wl = _workload(kube, namespace, job)
    return ((wl or {}).get("status") or {}).get("admission", {}).get("clusterQueue") if wl else None


def _reason(kube: Kube, namespace: str, job: str) -> str:
    wl = _workload(kube, namespace, job) or {}
    for cond in (wl.get("status") or {}).get("conditions") or []:
        if cond["type"] == "QuotaReserved" and cond["status"] == "False":
            return str(cond.get("message", ""))
    return ""


def _running(kube: Kube, namespace: str, name: str) -> bool:
    return kube.get(kinds.RAYCLUSTER, name, namespace)["spec"].get("suspend") is False


def test_cohort_admit_borrow_reclaim_release(
    control_plane: tuple[Kube, OperatorProcess], fresh_apiserver: ServerProcess
) -> None:
    kube, operator = control_plane
    watcher = QuotaWatcher(
        fresh_apiserver,
        {"team-a": 4000, "team-b": 4000},
        cohorts={"team-a": "research", "team-b": "research"},
    ).start()
    try:
        kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
        kube.create(kinds.CLUSTER_QUEUE, cluster_queue("team-a", "4"))
        kube.create(
            kinds.CLUSTER_QUEUE, cluster_queue("team-b", "4", preemption={"reclaimWithinCohort": "Any"})
        )
        for team in ("team-a", "team-b"):
            ensure_namespace(kube, team)
            kube.create(
                kinds.LOCAL_QUEUE,
                {"metadata": {"name": "queue", "namespace": team}, "spec": {"clusterQueue": team}},
            )

        # admitted within nominal quota, unsuspended
        kube.create(kinds.RAYCLUSTER, raycluster("a1", "team-a", "1", "2"))
        wait_for(lambda: _admitted_in(kube, "team-a", "a1") == "team-a", what="a1 admitted")
        wait_for(lambda: _running(kube, "team-a", "a1"), what="a1 unsuspended")

        # a2 needs 3 more CPUs than team-a has: it borrows team-b's unused quota
        kube.create(kinds.RAYCLUSTER, raycluster("a2", "team-a", "1", "2"))
        wait_for(lambda: _admitted_in(kube, "team-a", "a2") == "team-a", what="a2 admitted by borrowing")

        # a third cluster cannot fit anywhere in the cohort: it waits with a reason naming the shortage
        kube.create(kinds.RAYCLUSTER, raycluster("a3", "team-a", "1", "2"))
        reason = wait_for(lambda: _reason(kube, "team-a", "a3"), what="a3 pending reason")
        assert "cpu" in reason and "team-a" in reason, reason
        assert kube.get(kinds.RAYCLUSTER, "a3", "team-a")["spec"]["suspend"] is True

        # team-b reclaims its lent quota: the borrowing workload is preempted and suspended again
        kube.create(kinds.RAYCLUSTER, raycluster("b1", "team-b", "2", "2"))
        wait_for(lambda: _admitted_in(kube, "team-b", "b1") == "team-b", what="b1 admitted after reclaim")
        preempted = [name for name in ("a1", "a2") if _admitted_in(kube, "team-a", name) is None]
        assert len(preempted) == 1, preempted
        wait_for(
            lambda: kube.get(kinds.RAYCLUSTER, preempted[0], "team-a")["spec"]["suspend"] is True,
            what="victim suspended",
        )

        # deleting an admitted cluster releases its quota; the victim comes back
        survivor = "a2" if preempted == ["a1"] else "a1"
        kube.delete(kinds.RAYCLUSTER, survivor, "team-a")
        wait_for(lambda: _admitted_in(kube, "team-a", preempted[0]) == "team-a", what="victim re-admitted")

        cq = wait_for(
            lambda: (
                kube.get(kinds.CLUSTER_QUEUE, "team-b").get("status", {}).get("admittedWorkloads") == 1
                and kube.get(kinds.CLUSTER_QUEUE, "team-b")
            ),
            what="team-b status counters",
        )
        assert cq["status"]["flavorsUsage"][0]["resources"][0] == {"name": "cpu", "total": "4"}
    finally:
        watcher.stop()
    assert watcher.events > 5
    assert watcher.violations == [], watcher.violations
    assert operator.running, operator.log()[-3000:]


def test_priority_comes_from_the_workload_priority_class_or_the_pod_priority_class(
    control_plane: tuple[Kube, OperatorProcess],
) -> None:
    kube, operator = control_plane
    kube.create(kinds.WORKLOAD_PRIORITY_CLASS, {"metadata": {"name": "urgent"}, "value": 500})
    kube.create(kinds.PRIORITY_CLASS, {"metadata": {"name": "high"}, "value": 1000})
    ensure_namespace(kube, "prio")
    labelled = raycluster("by-label", "prio", "1", "1")
    labelled["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent"
    kube.create(kinds.RAYCLUSTER, labelled)
    by_pods = raycluster("by-pods", "prio", "1", "1")
    by_pods["spec"]["headGroupSpec"]["template"]["spec"]["priorityClassName"] = "high"
    kube.create(kinds.RAYCLUSTER, by_pods)
    kube.create(kinds.RAYCLUSTER, raycluster("plain", "prio", "1", "1"))

    def spec_of(job: str) -> dict[str, Any]:
        return (wait_for(lambda: _workload(kube, "prio", job), what=f"Workload of {job}") or {})["spec"]

    assert spec_of("by-label")["priority"] == 500
    assert spec_of("by-label")["priorityClassRef"]["kind"] == "WorkloadPriorityClass"
    assert spec_of("by-pods")["priority"] == 1000
    assert spec_of("by-pods")["priorityClassRef"] == {
        "group": "scheduling.k8s.io",
        "kind": "PriorityClass",
        "name": "high",
    }
    assert spec_of("plain")["priority"] == 0
    assert operator.running, operator.log()[-3000:]


def test_a_rayjob_is_charged_for_its_submitter_pod_set(control_plane: tuple[Kube, OperatorProcess]) -> None:
    """K8sJobMode (the default): the Workload has Kueue's "submitter" pod set, so its quota is charged."""
    kube, operator = control_plane
    kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
    quotas = [{"name": "cpu", "nominalQuota": "4"}, {"name": "memory", "nominalQuota": "8Gi"}]
    group = {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default", "resources": quotas}]}
    kube.create(
        kinds.CLUSTER_QUEUE,
        {"metadata": {"name": "jobs"}, "spec": {"namespaceSelector": {}, "resourceGroups": [group]}},
    )
    ensure_namespace(kube, "team-j")
    kube.create(
        kinds.LOCAL_QUEUE,
        {"metadata": {"name": "queue", "namespace": "team-j"}, "spec": {"clusterQueue": "jobs"}},
    )
    cluster_spec = raycluster("unused", "team-j", "1", "1")["spec"]
    del cluster_spec["suspend"]
    job = {
        "metadata": {"name": "pi", "namespace": "team-j", "labels": {QUEUE: "queue"}},
        "spec": {"entrypoint": "python pi.py", "suspend": True, "rayClusterSpec": cluster_spec},
    }
    created = kube.create(kinds.RAYJOB, job)
    assert created["spec"]["submissionMode"] == "K8sJobMode"  # the CRD's default

    wait_for(lambda: _admitted_in(kube, "team-j", "pi") == "jobs", what="RayJob admitted")
    workload = _workload(kube, "team-j", "pi") or {}
    submitter = workload["spec"]["podSets"][-1]
    assert (submitter["name"], submitter["count"]) == ("submitter", 1)
    assert submitter["template"]["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "500m",
        "memory": "200Mi",
    }
    assignment = workload["status"]["admission"]["podSetAssignments"][-1]
    assert (assignment["name"], assignment["resourceUsage"]) == (
        "submitter",
        {"cpu": "500m", "memory": "200Mi"},
    )

    def usage() -> dict[str, str] | None:
        flavors = kube.get(kinds.CLUSTER_QUEUE, "jobs").get("status", {}).get("flavorsUsage") or []
        totals = {r["name"]: r["total"] for f in flavors for r in f["resources"]}
        return totals if totals.get("cpu") not in (None, "0") else None

    # head 1 + worker 1 + the submitter's 500m; the submitter's 200Mi is the only memory asked for
    assert wait_for(usage, what="ClusterQueue usage") == {"cpu": "2500m", "memory": "200Mi"}
    wait_for(
        lambda: kube.get(kinds.RAYJOB, "pi", "team-j")["spec"]["suspend"] is False, what="RayJob unsuspended"
    )
    assert operator.running, operator.log()[-3000:]


def test_wait_for_pods_ready_evicts_a_workload_whose_pods_never_come_up(
    fresh_apiserver: ServerProcess, tmp_path: Any
) -> None:
    metrics = OperatorMetricsReader()
    kube = Kube(config.from_kubeconfig(fresh_apiserver.kubeconfig))
    install_crds(kube)
    write_operator_config(
        kube,
        quiet_config(
            queueing={
                "waitForPodsReady": {"enabled": True, "timeout": f"{TIMEOUT_S}s"},
                "backoffTime": "30s",
            },
            metrics=metrics.bind,
        ),
    )
    operator = OperatorProcess(fresh_apiserver.kubeconfig, tmp_path / "operator.log").start()
    try:
        kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
        kube.create(kinds.CLUSTER_QUEUE, cluster_queue("team-a", "4"))
        ensure_namespace(kube, "team-a")
        kube.create(
            kinds.LOCAL_QUEUE,
            {"metadata": {"name": "queue", "namespace": "team-a"}, "spec": {"clusterQueue": "team-a"}},
        )
        # nobody runs "stuck": it is admitted, its pods never become ready, and it is evicted
        kube.create(kinds.RAYCLUSTER, raycluster("stuck", "team-a", "1", "1"))
        wait_for(lambda: _admitted_in(kube, "team-a", "stuck") == "team-a", what="stuck admitted")

        def evicted() -> bool:
            wl = _workload(kube, "team-a", "stuck") or {}
            return any(
                c["type"] == "Evicted" and c["status"] == "True" and c["reason"] == "PodsReadyTimeout"
                for c in (wl.get("status") or {}).get("conditions") or []
            )

        wait_for(evicted, timeout=30, what="eviction after the pods-ready timeout")
        wait_for(
            lambda: kube.get(kinds.RAYCLUSTER, "stuck", "team-a")["spec"]["suspend"] is True,
            what="evicted cluster suspended again",
        )

        # a cluster whose pods come up keeps its admission and is marked PodsReady
        kube.create(kinds.RAYCLUSTER, raycluster("healthy", "team-a", "1", "1"))
        wait_for(lambda: _admitted_in(kube, "team-a", "healthy") == "team-a", what="healthy admitted")
        kube.patch(kinds.RAYCLUSTER, "healthy", {"status": {"state": "ready"}}, "team-a", status=True)

        def pods_ready() -> bool:
            wl = _workload(kube, "team-a", "healthy") or {}
            return any(
                c["type"] == "PodsReady" and c["status"] == "True"
                for c in (wl.get("status") or {}).get("conditions") or []
            )

        wait_for(pods_ready, what="PodsReady=True")
        # past the timeout since its admission, a complete waitForPodsReady check has left it admitted
        reserved = next(
            c
            for c in (_workload(kube, "team-a", "healthy") or {})["status"]["conditions"]
            if c["type"] == "QuotaReserved"
        )
        deadline = parse_rfc3339(reserved["lastTransitionTime"]).timestamp() + TIMEOUT_S
        wait_for(lambda: time.time() > deadline, timeout=10, what="the pods-ready timeout to pass")
        metrics.wait_passes("pods-ready")
        assert _admitted_in(kube, "team-a", "healthy") == "team-a"
        assert operator.running, operator.log()[-3000:]
    finally:
        operator.stop()
        kube.close()
