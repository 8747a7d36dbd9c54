"""Kueue's jobframework semantics for our queued kinds, through the real server and operator.

With the official ``kubernetes`` client against the embedded API server and the operator (in a
thread): a job evicted from one flavor and admitted to another keeps none of the first flavor's
node selectors (Kueue's RestorePodSetsInfo); a suspended job's ``kueue.x-k8s.io/priority-class``
label change reaches its Workload (kueue pkg/controller/jobframework/reconciler.go, "Job changed
priority, updating workload"); a RayJob's Workload finishes with Kueue's success flag from
KubeRay's ``jobStatus`` (pkg/controller/jobs/rayjob, Finished). No KubeRay or node agent runs:
the job statuses are written here as KubeRay would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator
from tests.support.polling import wait_for

KUEUE, RAY = ("kueue.x-k8s.io", "v1beta1"), ("ray.io", "v1")
NS = "semantics"
QUEUE_LABEL, PRIORITY_LABEL = "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def api(apiserver: ServerProcess) -> Iterator[k8s.CustomObjectsApi]:
    operator = ThreadedOperator(
        apiserver,
        {"queueing": {"backoffTime": "1s", "capacityCheck": False}, "appwrapper": {"enabled": False}},
    ).start()
    client = k8s_config.new_client_from_config(str(apiserver.kubeconfig))
    with contextlib.suppress(ApiException):
        k8s.CoreV1Api(client).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=NS)))
    try:
        yield k8s.CustomObjectsApi(client)
    finally:
        client.close()
        operator.stop()


def create(api: k8s.CustomObjectsApi, group: tuple[str, str], plural: str, body: Obj) -> None:
    if body["metadata"].get("namespace"):
        api.create_namespaced_custom_object(*group, body["metadata"]["namespace"], plural, body)
    else:
        api.create_cluster_custom_object(*group, plural, body)


def queues(api: k8s.CustomObjectsApi, name: str, flavors: dict[str, dict[str, str]], cpu: str = "1") -> None:
    """ResourceFlavors (name -> nodeLabels), a ClusterQueue over them in order, LocalQueue ``name``."""
    for flavor, labels in flavors.items():
        create(api, KUEUE, "resourceflavors", {"metadata": {"name": flavor}, "spec": {"nodeLabels": labels}})
    create(
        api,
        KUEUE,
        "clusterqueues",
        {
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": f,
                                "resources": [
                                    {"name": "cpu", "nominalQuota": cpu},
                                    {"name": "memory", "nominalQuota": "4Gi"},
                                ],
                            }
                            for f in flavors
                        ],
                    }
                ],
            },
        },
    )
    create(
        api,
        KUEUE,
        "localqueues",
        {"metadata": {"name": name, "namespace": NS}, "spec": {"clusterQueue": name}},
    )


def pod_template(cpu: str, **spec: Any) -> Obj:
    return {
        "spec": {
            "containers": [
                {"name": "ray", "image": "ray", "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}}
            ],
            **spec,
        }
    }


def raycluster(name: str, queue: str, labels: dict[str, str] | None = None, **head: Any) -> Obj:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": NS, "labels": {QUEUE_LABEL: queue, **(labels or {})}},
        "spec": {
            "suspend": True,
            "headGroupSpec": {"rayStartParams": {}, "template": pod_template("500m", **head)},
        },
    }


def workload_of(api: k8s.CustomObjectsApi, job_uid: str) -> Obj | None:
    listed = api.list_namespaced_custom_object(*KUEUE, NS, "workloads")
    for wl in listed["items"]:
        if any(ref.get("uid") == job_uid for ref in wl["metadata"].get("ownerReferences") or []):
            return dict(wl)
    return None


def get_job(api: k8s.CustomObjectsApi, plural: str, name: str) -> Obj:
    return dict(api.get_namespaced_custom_object(*RAY, NS, plural, name))


def head_spec(job: Obj) -> Obj:
    spec: Obj = job["spec"]["headGroupSpec"]["template"]["spec"]
    return spec


def test_a_job_readmitted_to_another_flavor_keeps_none_of_the_first_flavors_node_selector(
    api: k8s.CustomObjectsApi,
) -> None:
    queues(api, "restore", {"restore-a": {"zone-a": "true"}, "restore-b": {"zone-b": "true"}})
    create(api, RAY, "rayclusters", raycluster("restore", "restore", nodeSelector={"team": "ml"}))

    def running_with(selector: dict[str, str]) -> Obj | None:
        job = get_job(api, "rayclusters", "restore")
        ok = job["spec"].get("suspend") is False and head_spec(job).get("nodeSelector") == selector
        return job if ok else None

    wait_for(lambda: running_with({"team": "ml", "zone-a": "true"}), 30, what="admission to restore-a")
    # HoldAndDrain evicts it; the eviction suspends the job and restores its template
    api.patch_cluster_custom_object(
        *KUEUE, "clusterqueues", "restore", {"spec": {"stopPolicy": "HoldAndDrain"}}
    )

    def suspended_as_queued() -> bool:
        job = get_job(api, "rayclusters", "restore")
        return job["spec"].get("suspend") is True and head_spec(job).get("nodeSelector") == {"team": "ml"}

    wait_for(suspended_as_queued, 30, what="the evicted job suspended with its own nodeSelector")
    # only restore-b is left; the job is admitted there with restore-b's keys alone
    api.patch_cluster_custom_object(
        *KUEUE,
        "clusterqueues",
        "restore",
        {
            "spec": {
                "stopPolicy": None,
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "restore-b",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "1"},
                                    {"name": "memory", "nominalQuota": "4Gi"},
                                ],
                            }
                        ],
                    }
                ],
            }
        },
    )
    wait_for(lambda: running_with({"team": "ml", "zone-b": "true"}), 30, what="admission to restore-b alone")


def test_a_suspended_jobs_priority_class_label_change_updates_its_workload(api: k8s.CustomObjectsApi) -> None:
    queues(api, "prio", {"prio-flavor": {}}, cpu="0")  # nothing fits: the job stays suspended
    for name, value in (("prio-low", 10), ("prio-high", 1000)):
        create(api, KUEUE, "workloadpriorityclasses", {"metadata": {"name": name}, "value": value})
    create(api, RAY, "rayclusters", raycluster("prio", "prio", {PRIORITY_LABEL: "prio-low"}))
    uid = get_job(api, "rayclusters", "prio")["metadata"]["uid"]

    def priority() -> tuple[Any, Any, Any] | None:
        wl = workload_of(api, uid)
        spec = (wl or {}).get("spec") or {}
        return (
            (spec.get("priority"), spec.get("priorityClassName"), spec.get("priorityClassSource"))
            if wl
            else None
        )

    source = "kueue.x-k8s.io/workloadpriorityclass"
    wait_for(lambda: priority() == (10, "prio-low", source), 30, what="the Workload at prio-low")
    api.patch_namespaced_custom_object(
        *RAY, NS, "rayclusters", "prio", {"metadata": {"labels": {PRIORITY_LABEL: "prio-high"}}}
    )
    wait_for(lambda: priority() == (1000, "prio-high", source), 30, what="the Workload following the label")


@pytest.mark.parametrize(("job_status", "reason"), [("SUCCEEDED", "Succeeded"), ("FAILED", "Failed")])
def test_a_rayjobs_workload_finishes_with_kuberays_success_flag(
    api: k8s.CustomObjectsApi, job_status: str, reason: str
) -> None:
    name = f"finish-{job_status.lower()}"
    queues(api, name, {f"{name}-flavor": {}}, cpu="4")
    cluster = raycluster(name, name)["spec"]
    create(
        api,
        RAY,
        "rayjobs",
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": name, "namespace": NS, "labels": {QUEUE_LABEL: name}},
            "spec": {"suspend": True, "entrypoint": "python -c 'print(1)'", "rayClusterSpec": cluster},
        },
    )
    wait_for(lambda: get_job(api, "rayjobs", name)["spec"].get("suspend") is False, 30, what="admission")
    job = get_job(api, "rayjobs", name)
    # as KubeRay writes an ended job: the deployment is Complete either way; the message is free text
    job["status"] = {"jobDeploymentStatus": "Complete", "jobStatus": job_status, "message": "no failure seen"}
    api.replace_namespaced_custom_object_status(*RAY, NS, "rayjobs", name, job)
    uid = job["metadata"]["uid"]

    def finished() -> Obj | None:
        conditions = ((workload_of(api, uid) or {}).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "Finished" and c["status"] == "True"), None)

    condition = wait_for(finished, 30, what="the Workload finished")
    assert (condition["reason"], condition["message"]) == (reason, "no failure seen")
