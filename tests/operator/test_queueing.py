"""Queueing end to end: a real API server process, the operator process, RayClusters through a cohort.

Two ClusterQueues share a cohort; jobs are admitted, borrow, get preempted by the lender
reclaiming its quota, wait with a readable reason, and are admitted again when quota frees up.
A watcher follows every Workload change for the whole test and checks that no ClusterQueue and no
cohort is ever charged beyond its quota at any resourceVersion.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from codeflare.scheduling import parse_quantity
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OperatorProcess,
    ensure_namespace,
    install_crds,
    quiet_config,
    wait_for,
    write_operator_config,
)

QUEUE = "kueue.x-k8s.io/queue-name"


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
            "cohort": "research",
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


class QuotaWatcher:
    """Follows Workload events and records any moment where admitted usage exceeds quota."""

    def __init__(self, server: ServerProcess, nominal: dict[str, int]) -> None:
        self.nominal = nominal
        self.violations: list[str] = []
        self.events = 0
        self._usage: dict[str, tuple[str, int]] = {}
        self._stop = threading.Event()
        api_client = k8s_config.new_client_from_config(str(server.kubeconfig))
        self._api = k8s.CustomObjectsApi(api_client)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> QuotaWatcher:
        self._thread.start()
        return self

    def _run(self) -> None:
        rv = "0"
        while not self._stop.is_set():
            stream = k8s_watch.Watch()
            for event in stream.stream(
                self._api.list_cluster_custom_object,
                "kueue.x-k8s.io",
                "v1beta1",
                "workloads",
                resource_version=rv,
                timeout_seconds=2,
            ):
                obj = event["object"]
                rv = obj["metadata"]["resourceVersion"]
                self._observe(event["type"], obj)
                if self._stop.is_set():
                    stream.stop()

    def _observe(self, event_type: str, obj: dict[str, Any]) -> None:
        self.events += 1
        key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
        admission = (obj.get("status") or {}).get("admission")
        finished = any(
            c.get("type") == "Finished" and c.get("status") == "True"
            for c in (obj.get("status") or {}).get("conditions") or []
        )
        if event_type == "DELETED" or not admission or finished:
            self._usage.pop(key, None)
        else:
            cpu = sum(
                parse_quantity(p.get("resourceUsage", {}).get("cpu", "0"))
                for p in admission["podSetAssignments"]
            )
            self._usage[key] = (admission["clusterQueue"], cpu)
        total = sum(cpu for _, cpu in self._usage.values())
        if total > sum(self.nominal.values()):
            self.violations.append(
                f"cohort charged {total}m > {sum(self.nominal.values())}m at rv "
                f"{obj['metadata']['resourceVersion']}"
            )

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


@pytest.fixture
def control_plane(fresh_apiserver: ServerProcess, tmp_path: Any) -> Iterator[tuple[Kube, OperatorProcess]]:
    kube = Kube(config.from_kubeconfig(fresh_apiserver.kubeconfig))
    install_crds(kube)
    write_operator_config(kube, quiet_config())
    operator = OperatorProcess(fresh_apiserver.kubeconfig, tmp_path / "operator.log").start()
    try:
        yield kube, operator
    finally:
        operator.stop()
        kube.close()
        print(operator.log()[-4000:])  # shown by pytest when the test fails


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
    watcher = QuotaWatcher(fresh_apiserver, {"team-a": 4000, "team-b": 4000}).start()
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
