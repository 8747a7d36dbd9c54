"""Provider objects as node groups, the request record, and when the controller starts at all."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from codeflare.k8s.constants import SCALE_OUT_REQUESTS_ANNOTATION
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.operator.config import OperatorConfig
from codeflare.operator.scaleout import controller, groups, removal
from codeflare.scheduling.scaleout import ScaleRequest

T0, T1 = "2026-11-30T10:00:00Z", "2026-11-30T10:05:00Z"


def machine_set(
    name: str, namespace: str, labels: dict[str, str], cpu: int, memory_mb: int, gpu: int = 0
) -> Obj:
    annotations = {"machine.openshift.io/vCPU": str(cpu), "machine.openshift.io/memoryMb": str(memory_mb)}
    if gpu:
        annotations["machine.openshift.io/GPU"] = str(gpu)
    template = {
        "metadata": {"labels": {"machine.openshift.io/cluster-api-machineset": name}},
        "spec": {"metadata": {"labels": labels}},
    }
    return {
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "MachineSet",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {"replicas": 0, "template": template},
    }


def machine_deployment(
    name: str, namespace: str, labels: dict[str, str], cpu: int, memory: str, gpu: int
) -> Obj:
    prefix = "capacity.cluster-autoscaler.kubernetes.io/"
    annotations = {prefix + "cpu": str(cpu), prefix + "memory": memory, prefix + "gpu-count": str(gpu)}
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineDeployment",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {"replicas": 0, "template": {"metadata": {"labels": labels}}},
    }


def test_machine_set_shape_and_labels_come_from_openshift_annotations_and_template() -> None:
    obj = machine_set("gpu", "openshift-machine-api", {"node-type": "gpu"}, cpu=8, memory_mb=32768, gpu=1)
    group = groups.to_node_group(obj)
    assert group.name == "openshift-machine-api/gpu" and group.kind == "MachineSet"
    assert group.labels == {"node-type": "gpu"}
    assert group.allocatable == {"cpu": 8000, "memory": 32 * 2**30 * 1000, "nvidia.com/gpu": 1000}


def test_machine_deployment_shape_comes_from_cluster_autoscaler_annotations() -> None:
    obj = machine_deployment("md", "capi", {"node-type": "gpu"}, cpu=16, memory="64Gi", gpu=2)
    group = groups.to_node_group(obj)
    assert group.labels == {"node-type": "gpu"}
    assert group.allocatable == {"cpu": 16000, "memory": 64 * 2**30 * 1000, "nvidia.com/gpu": 2000}


def test_requests_and_replicas_are_written_together_and_read_back() -> None:
    obj = machine_set("gpu", "ns", {"t": "g"}, cpu=8, memory_mb=1024)
    entry = {"nodes": 2, "requestedAt": "2026-11-30T10:00:00Z", "releasedAt": "2026-11-30T10:05:00Z"}
    written = groups.with_requests(obj, {"team/wl": entry}, 3)
    assert written["spec"]["replicas"] == 3
    assert json.loads(written["metadata"]["annotations"][SCALE_OUT_REQUESTS_ANNOTATION]) == {"team/wl": entry}
    (record,) = groups.recorded(written)
    assert (record.workload, record.group, record.nodes) == ("team/wl", "ns/gpu", 2)
    assert record.released_at is not None and record.released_at - record.requested_at == 300
    cleared = groups.with_requests(written, {}, 1)
    assert SCALE_OUT_REQUESTS_ANNOTATION not in cleared["metadata"]["annotations"]


def test_request_release_and_give_back_edit_requests_and_replicas_in_one_object() -> None:
    obj = machine_set("gpu", "ns", {"t": "g"}, cpu=8, memory_mb=1024)
    asks = [ScaleRequest("team/a", "ns/gpu", 2), ScaleRequest("team/b", "ns/gpu", 1)]
    owners = {"team/a": {"kind": "RayCluster", "name": "a", "namespace": "team"}}
    grown = groups.request_nodes(obj, asks, T0, owners)
    assert grown is not None and groups.replicas_of(grown) == 3
    assert groups.read_requests(grown)["team/a"] == {"nodes": 2, "requestedAt": T0, "owner": owners["team/a"]}
    assert groups.request_nodes(grown, asks, T1, owners) is None  # recorded already: nothing to ask
    released = groups.release(grown, ["team/a", "team/gone"], T1)
    assert released is not None and groups.read_requests(released)["team/a"]["releasedAt"] == T1
    assert groups.release(released, ["team/a"], T1) is None
    after = groups.give_back(released, {"team/a": 1}, {"team/a"}, 1)
    assert groups.replicas_of(after) == 2
    assert {k: v["nodes"] for k, v in groups.read_requests(after).items()} == {"team/a": 1, "team/b": 1}
    gone = groups.give_back(after, {}, {"team/a"}, 1)
    assert list(groups.read_requests(gone)) == ["team/b"] and groups.replicas_of(gone) == 1


def node(name: str, *, ready: bool = True, marked: bool = False) -> Obj:
    annotations = {"machine.openshift.io/delete-machine": "true"} if marked else {}
    return {"metadata": {"name": name, "labels": {"t": "g"}, "annotations": annotations},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "allocatable": {"cpu": "8"}}}


def test_removal_order_and_busy_nodes() -> None:
    group = groups.to_node_group(groups.with_requests(machine_set("gpu", "ns", {"t": "g"}, 8, 1024), {}, 3))
    members = [node("n-1"), node("n-2", ready=False), node("n-3")]
    busy_pod = {"metadata": {"namespace": "team", "labels": {"ray.io/cluster": "other"}},
                "spec": {"nodeName": "n-3"}, "status": {"phase": "Running"}}
    released_pod = {"metadata": {"namespace": "team", "labels": {"ray.io/cluster": "a"}},
                    "spec": {"nodeName": "n-1"}, "status": {"phase": "Running"}}
    chosen = removal.removable(group, members, [{"namespace": "team", "name": "a"}],
                               pods=[busy_pod, released_pod], flavors=[], workloads=[], nodes=members)
    assert chosen == ["n-2", "n-1"]  # not-Ready first; n-3 runs another workload's pod
    assert removal.removal_rank(node("x", marked=True)) < removal.removal_rank(node("x", ready=False))


class _Kube:
    def __init__(self, served: dict[str, list[str]]) -> None:
        self.served = served

    async def api_groups(self) -> dict[str, list[str]]:
        return self.served


def _ctx(served: dict[str, list[str]], **instascale: Any) -> Any:
    cfg = OperatorConfig.from_dict({"instascale": instascale}) if instascale else OperatorConfig.default()
    return type("Ctx", (), {"config": cfg, "kube": _Kube(served)})()


def test_auto_uses_whichever_provider_api_is_served() -> None:
    async def providers(served: dict[str, list[str]], **cfg: Any) -> list[str]:
        return [p.kind.kind for p in await controller.served_providers(_ctx(served, **cfg))]

    assert asyncio.run(providers({})) == []
    assert asyncio.run(providers({"machine.openshift.io": ["v1beta1"]})) == ["MachineSet"]
    assert asyncio.run(providers({"cluster.x-k8s.io": ["v1beta1"]})) == ["MachineDeployment"]
    assert asyncio.run(providers({"cluster.x-k8s.io": ["v1beta1"]}, provider="machineset")) == []


def test_disabled_registers_nothing() -> None:
    assert controller.register(_ctx({}, enabled=False)) == []
    assert kinds.MACHINE_SET.group == "machine.openshift.io"
