"""Kueue v1beta2 stored, v1beta1 served: the operator's conversion webhook through the real server.

A real embedded API server installs our Kueue CRDs (Webhook strategy, v1beta2 stored); a real
operator (in a thread) serves ``/convert`` and points the CRDs at it. The official ``kubernetes``
client and kubectl then write and read in both versions: what is created in one version reads back
in the other with that version's field names, v1beta1 answers carry Kueue's deprecation warning,
and a v1beta2 read never needs the webhook (the start-up order relies on it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

from codeflare.api.crds import crd_for
from codeflare.api.kueue import FlavorQuota, build_cluster_queue, build_local_queue, build_resource_flavor
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.operator.webhooks.controller import CONVERSION_RECHECK
from codeflare.operator.webhooks.conversion import CONVERTED_KINDS, crd_name
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace, wait_for
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl

Obj = dict[str, Any]
GROUP = "kueue.x-k8s.io"
WARNING = "This version is deprecated. Use v1beta2 instead."
NS = "conv-ns"


@pytest.fixture(scope="module")
def operator(apiserver: ServerProcess) -> Iterator[ThreadedOperator]:
    running = ThreadedOperator(
        apiserver, {"queueing": {"enabled": False}, "appwrapper": {"enabled": False}}
    ).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def kube(operator: ThreadedOperator) -> Iterator[Kube]:
    with Kube(operator.connection) as client:
        ensure_namespace(client, NS)
        yield client


@pytest.fixture(scope="module")
def custom(apiserver: ServerProcess, kube: Kube) -> k8s.CustomObjectsApi:
    api_client = k8s_config.new_client_from_config(str(apiserver.kubeconfig))
    return k8s.CustomObjectsApi(api_client)


def test_the_operator_points_every_kueue_crd_at_its_convert_endpoint(kube: Kube) -> None:
    for kind in CONVERTED_KINDS:
        crd = kube.get(kinds.CRD, crd_name(kind))
        config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
        assert config["url"].endswith("/convert") and config["caBundle"]
        assert "service" not in config
        assert [v["name"] for v in crd["spec"]["versions"] if v["storage"]] == ["v1beta2"]


def test_created_in_v1beta1_reads_in_v1beta2_with_its_names(custom: k8s.CustomObjectsApi) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "conv-cq-1"},
        "spec": {
            "cohort": "research",
            "namespaceSelector": {},
            "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "2"}]}],
                }
            ],
        },
    }
    created = custom.create_cluster_custom_object(GROUP, "v1beta1", "clusterqueues", body)
    assert created["apiVersion"] == f"{GROUP}/v1beta1" and created["spec"]["cohort"] == "research"
    v2 = custom.get_cluster_custom_object(GROUP, "v1beta2", "clusterqueues", "conv-cq-1")
    assert v2["spec"]["cohortName"] == "research" and "cohort" not in v2["spec"]
    assert v2["spec"]["flavorFungibility"] == {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "MayStopSearch",
    }
    back = custom.get_cluster_custom_object(GROUP, "v1beta1", "clusterqueues", "conv-cq-1")
    assert back["spec"]["cohort"] == "research" and "cohortName" not in back["spec"]


def test_created_in_v1beta2_reads_and_updates_in_v1beta1(custom: k8s.CustomObjectsApi, kube: Kube) -> None:
    workload = {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "conv-wl", "namespace": NS},
        "spec": {
            "queueName": "q",
            "priority": 10,
            "priorityClassRef": {"group": GROUP, "kind": "WorkloadPriorityClass", "name": "high"},
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                }
            ],
        },
    }
    kube.create(kinds.WORKLOAD, workload)
    old = custom.get_namespaced_custom_object(GROUP, "v1beta1", NS, "workloads", "conv-wl")
    assert (old["spec"]["priorityClassName"], old["spec"]["priorityClassSource"]) == (
        "high",
        "kueue.x-k8s.io/workloadpriorityclass",
    )
    assert "priorityClassRef" not in old["spec"]
    old["spec"]["queueName"] = "other"  # what a v1beta1 client changes and writes back
    custom.replace_namespaced_custom_object(GROUP, "v1beta1", NS, "workloads", "conv-wl", old)
    stored = kube.get(kinds.WORKLOAD, "conv-wl", NS)
    assert stored["spec"]["queueName"] == "other"
    assert stored["spec"]["priorityClassRef"] == workload["spec"]["priorityClassRef"]


def test_local_queue_usage_is_flavor_usage_in_v1beta1(custom: k8s.CustomObjectsApi, kube: Kube) -> None:
    kube.create(kinds.LOCAL_QUEUE, build_local_queue("conv-lq", NS, "conv-cq-1"))
    usage = [{"name": "f", "resources": [{"name": "cpu", "total": "1"}]}]
    kube.patch(kinds.LOCAL_QUEUE, "conv-lq", {"status": {"flavorsUsage": usage}}, NS, status=True)
    old = custom.get_namespaced_custom_object(GROUP, "v1beta1", NS, "localqueues", "conv-lq")
    assert old["status"]["flavorUsage"] == usage and "flavorsUsage" not in old["status"]


def test_a_v1beta1_list_is_converted(custom: k8s.CustomObjectsApi, kube: Kube) -> None:
    for i in range(3):
        kube.create(kinds.RESOURCE_FLAVOR, build_resource_flavor(f"conv-rf-{i}", {"pool": str(i)}))
    items = custom.list_cluster_custom_object(GROUP, "v1beta1", "resourceflavors")["items"]
    mine = [o for o in items if o["metadata"]["name"].startswith("conv-rf-")]
    assert len(mine) == 3 and all(o["apiVersion"] == f"{GROUP}/v1beta1" for o in mine)


def needs_kubectl(test: Any) -> Any:
    for mark in NEEDS_KUBECTL:
        test = mark(test)
    return test


@needs_kubectl
def test_kubectl_lists_both_versions_with_their_field_names_and_warns_for_v1beta1(
    apiserver: ServerProcess, kube: Kube, tmp_path: Path
) -> None:
    queue = build_cluster_queue("conv-cq-kubectl", flavors=[FlavorQuota("f", {"cpu": 1})], cohort="team")
    kube.create(kinds.CLUSTER_QUEUE, queue)
    kubectl = Kubectl(apiserver, tmp_path)
    v2 = kubectl.get("clusterqueues.v1beta2.kueue.x-k8s.io")["items"]
    v1 = kubectl.run("get", "clusterqueues.v1beta1.kueue.x-k8s.io", "-o", "json")
    v1_items = json.loads(v1.stdout)["items"]
    assert sorted(o["metadata"]["name"] for o in v1_items) == sorted(o["metadata"]["name"] for o in v2)
    by_name = {o["metadata"]["name"]: o for o in v1_items}
    assert by_name["conv-cq-kubectl"]["spec"]["cohort"] == "team"
    assert {o["metadata"]["name"]: o for o in v2}["conv-cq-kubectl"]["spec"]["cohortName"] == "team"
    assert WARNING in v1.stderr
    assert WARNING not in kubectl.run("get", "clusterqueues.v1beta2.kueue.x-k8s.io").stderr
    table = kubectl.run("get", "clusterqueues.v1beta1.kueue.x-k8s.io", "conv-cq-kubectl").stdout
    assert "team" in table  # the Cohort column reads .spec.cohort in v1beta1


def test_v1beta2_reads_need_no_webhook_but_v1beta1_reads_do(custom: k8s.CustomObjectsApi, kube: Kube) -> None:
    # Point the ClusterQueue CRD at nothing (as before the operator is up): v1beta2, the storage
    # version, still reads; v1beta1 answers a 500 Status, as kube-apiserver does.
    name = crd_name(kinds.CLUSTER_QUEUE)
    before = kube.get(kinds.CRD, name)["spec"]["conversion"]
    nowhere = {"url": "https://127.0.0.1:1/convert", "service": None}
    kube.patch(kinds.CRD, name, {"spec": {"conversion": {"webhook": {"clientConfig": nowhere}}}})
    try:
        assert custom.get_cluster_custom_object(GROUP, "v1beta2", "clusterqueues", "conv-cq-1")["spec"][
            "cohortName"
        ]
        wait_for(lambda: _v1beta1_status(custom) == 500, 10, what="a 500 for a v1beta1 read")
    finally:
        kube.patch(kinds.CRD, name, {"spec": {"conversion": before}})
    wait_for(lambda: _v1beta1_status(custom) == 200, 10, what="v1beta1 reads again")


def test_a_reapplied_crd_is_pointed_back_at_the_operator(custom: k8s.CustomObjectsApi, kube: Kube) -> None:
    # `kubectl apply -f deploy/crds` puts back the shipped clientConfig (a Service that local mode
    # does not have); the operator's periodic check points the CRD at its /convert again.
    name = crd_name(kinds.LOCAL_QUEUE)
    shipped = crd_for("kueue.x-k8s.io", "localqueues")["spec"]["conversion"]
    ours = kube.get(kinds.CRD, name)["spec"]["conversion"]["webhook"]["clientConfig"]
    shipped["webhook"]["clientConfig"].update(url=None, caBundle=None)  # a merge patch: drop ours
    kube.patch(kinds.CRD, name, {"spec": {"conversion": shipped}})
    assert "service" in kube.get(kinds.CRD, name)["spec"]["conversion"]["webhook"]["clientConfig"]

    def pointed_back() -> bool:
        config = kube.get(kinds.CRD, name)["spec"]["conversion"]["webhook"]["clientConfig"]
        return config.get("url") == ours["url"] and "service" not in config

    wait_for(pointed_back, 3 * CONVERSION_RECHECK, what="the operator re-pointing the CRD")
    assert custom.list_namespaced_custom_object(GROUP, "v1beta1", NS, "localqueues")["items"]


def _v1beta1_status(custom: k8s.CustomObjectsApi) -> int:
    try:
        custom.get_cluster_custom_object(GROUP, "v1beta1", "clusterqueues", "conv-cq-1")
    except ApiException as exc:
        assert exc.status != 500 or "conversion webhook" in str(exc.body)
        return int(exc.status)
    return 200
