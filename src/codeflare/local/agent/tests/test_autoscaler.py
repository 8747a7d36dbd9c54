"""The autoscaler sidecar's pure parts and the elastic worker cap, without Ray.

What Ray's KubeRay provider needs (ray/autoscaler/_private/kuberay/node_provider.py): the
RayCluster (get, patch) and its pods (list by label), the API server from
KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT_HTTPS and RAY_KUBERAY_CA_CERT_PATH, and a
``scaleStrategy`` to JSON-patch ``replace`` into. Workers of an elastic queued cluster are capped
by what its slices admit; the rest are Pending Pods behind Kueue's scheduling gate.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.api.raycluster import ELASTIC_JOB_ANNOTATION, ELASTIC_JOB_SCHEDULING_GATE
from codeflare.local.agent import autoscaler, elastic, pods
from codeflare.local.agent.cluster_runner import NodeTemplate

ACCESS = autoscaler.ApiServerAccess("https://127.0.0.1:6443", "/h/ca.crt", "/h/token")


def cluster(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "demo", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
        "spec": {
            "enableInTreeAutoscaling": True,
            "headGroupSpec": {"template": {"spec": {"containers": [{"name": "ray-head"}]}}},
            "workerGroupSpecs": [{"groupName": "small", "replicas": 1, "minReplicas": 1, "maxReplicas": 3,
                                  "template": {"spec": {"containers": [{"name": "ray-worker"}]}}}],
            **spec,
        },
    }


def test_the_role_allows_its_own_cluster_and_listing_pods_only() -> None:
    objects = {obj["kind"]: obj for _, obj in autoscaler.identity_objects(cluster())}
    assert objects["ServiceAccount"]["metadata"]["name"] == "demo"  # KubeRay's default name
    assert objects["Role"]["rules"] == [
        {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "resourceNames": ["demo"],
         "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    ]
    subject = {"kind": "ServiceAccount", "name": "demo", "namespace": "ns"}
    assert objects["RoleBinding"]["subjects"] == [subject]
    assert all(o["metadata"]["ownerReferences"][0]["kind"] == "RayCluster" for o in objects.values())


def test_the_head_template_service_account_is_used() -> None:
    rc = cluster()
    rc["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "custom"
    assert autoscaler.service_account_name(rc) == "custom"


def test_the_environment_names_the_api_server_as_ray_reads_it() -> None:
    env = autoscaler.autoscaler_env({"PATH": "/bin", "RAY_AUTH_TOKEN": "host"}, ACCESS, metrics_port=21000,
                                    auth_token="tok", tls=None)
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"  # Ray adds the port and the https scheme
    assert env["KUBERNETES_SERVICE_PORT_HTTPS"] == "6443"
    assert env["RAY_KUBERAY_CA_CERT_PATH"] == "/h/ca.crt"
    assert env["AUTOSCALER_METRIC_PORT"] == "21000"
    assert (env["RAY_AUTH_MODE"], env["RAY_AUTH_TOKEN"]) == ("token", "tok")
    with pytest.raises(ValueError, match="https"):
        autoscaler.autoscaler_env({}, autoscaler.ApiServerAccess("http://x:1", "", ""), metrics_port=None,
                                  auth_token=None, tls=None)


def test_the_head_runs_no_monitor_and_the_v2_autoscaler() -> None:
    head = autoscaler.head_template(cluster(), NodeTemplate())
    assert head.ray_start_params["no-monitor"] == "true"
    assert head.env["RAY_enable_autoscaler_v2"] == "1"
    assert autoscaler.head_template(cluster(enableInTreeAutoscaling=False), NodeTemplate()) == NodeTemplate()


def test_groups_without_a_scale_strategy_get_one_guarded_by_the_resource_version() -> None:
    patch = autoscaler.scale_strategy_patch(cluster())
    assert patch == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
        {"op": "add", "path": "/spec/workerGroupSpecs/0/scaleStrategy", "value": {"workersToDelete": []}},
    ]
    rc = cluster()
    rc["spec"]["workerGroupSpecs"][0]["scaleStrategy"] = {}
    assert autoscaler.scale_strategy_patch(rc) == []


@given(desired=st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(0, 9)),
       admitted=st.none() | st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(0, 9)))
def test_runnable_workers_never_exceed_desired_nor_admitted(
    desired: dict[str, int], admitted: dict[str, int] | None
) -> None:
    run = elastic.runnable_workers(desired, admitted)
    assert set(run) == set(desired)
    for group, count in run.items():
        assert count <= desired[group]
        assert admitted is None or count <= admitted.get(group, 0)
    if admitted is None:
        assert run == desired


def test_admitted_counts_take_the_larger_of_unfinished_slices() -> None:
    def wl(count: int, finished: bool = False) -> dict[str, Any]:
        conds = [{"type": "Finished", "status": "True"}] if finished else []
        admission = {"podSetAssignments": [{"name": "small", "count": count}]}
        return {"status": {"conditions": conds, "admission": admission}}

    assert elastic.admitted_counts([wl(1), wl(2), wl(5, finished=True)]) == {"small": 2}


def test_only_queued_elastic_clusters_are_capped() -> None:
    rc = cluster()
    assert not elastic.is_elastic_queued(rc)
    rc["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "q"}
    assert not elastic.is_elastic_queued(rc)
    rc["metadata"]["annotations"] = {ELASTIC_JOB_ANNOTATION: "true"}
    assert elastic.is_elastic_queued(rc)


def test_gated_workers_are_pending_pods_behind_kueues_gate() -> None:
    now = "2026-01-01T00:00:00Z"
    wanted = pods.wanted_pods(cluster(), [], [], "node-1", now, gated=[("small-3", "small")])
    pod = wanted["demo-small-worker-3"]
    assert pod["spec"]["schedulingGates"] == [{"name": ELASTIC_JOB_SCHEDULING_GATE}]
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["conditions"][0]["reason"] == "SchedulingGated"
    assert "running" not in pod["status"]["containerStatuses"][0]["state"]  # Ray's provider: not running
    assert pod["metadata"]["labels"]["ray.io/group"] == "small"


def test_the_autoscaler_process_is_recorded_re_adopted_and_stopped_with_the_cluster(tmp_path: Any) -> None:
    import sys

    from codeflare.local.agent import processes
    from codeflare.local.agent.cluster_runner import LocalRayCluster
    from codeflare.local.agent.ports import PortAllocator

    ports = PortAllocator(tmp_path / "ports")
    cluster = LocalRayCluster("demo", NodeTemplate(), uid="u1", ports=ports, log_dir=tmp_path / "logs",
                              temp_root=str(tmp_path))
    cluster.sidecar = processes.start_process(
        [sys.executable, "-c", "import time; time.sleep(60)"], {}, tmp_path / "autoscaler.log"
    )
    state = cluster.to_state()
    assert state["sidecar"]["pid"] == cluster.sidecar.pid
    adopted = LocalRayCluster.adopt(state, NodeTemplate(), ports=ports)  # a restarted agent
    assert adopted.sidecar is not None and adopted.sidecar.pid == cluster.sidecar.pid
    assert adopted.stop(grace=1.0) == []
    assert not processes.is_alive(cluster.sidecar)
    assert "sidecar" not in adopted.to_state()
