"""The Nodes data layer: allocation from pod requests, GPUs by product, scale-out requests."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from codeflare.dashboard.nodes import nodes_view, pod_requests
from codeflare.dashboard.snapshot import Snapshot
from codeflare.k8s.constants import SCALE_OUT_REQUESTS_ANNOTATION


def container(**requests: str) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": requests}}


def test_pod_requests_take_the_larger_of_containers_and_each_init_container() -> None:
    # Kubernetes' effective request (k8s.io/component-helpers/resource: PodRequests): the sum of
    # the containers, or the largest init container when that is larger, per resource.
    pod = {
        "spec": {
            "containers": [container(cpu="500m", memory="1Gi"), container(cpu="250m")],
            "initContainers": [container(cpu="2"), container(memory="512Mi")],
        }
    }
    assert pod_requests(pod) == {"cpu": Decimal(2), "memory": Decimal(2**30)}


def node(name: str, gpus: str = "0", product: str = "") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": product} if product else {}},
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": gpus},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(node_name: str, phase: str = "Running", **requests: str) -> dict[str, Any]:
    return {
        "spec": {"nodeName": node_name, "containers": [container(**requests)]},
        "status": {"phase": phase},
    }


def test_allocation_counts_pods_that_have_not_ended_and_gpus_group_by_product() -> None:
    snapshot = Snapshot(
        {
            "Node": [node("a", "4", "A100"), node("b", "2", "A100"), node("c")],
            "Pod": [
                pod("a", cpu="1", **{"nvidia.com/gpu": "2"}),
                pod("a", "Succeeded", cpu="7"),
                pod("b", cpu="2"),
                {"spec": {"containers": [container(cpu="3")]}, "status": {}},
            ],
        }
    )
    view = nodes_view(snapshot)
    a, b, c = view.nodes
    assert (a.allocated["cpu"], a.pods, b.allocated["cpu"], c.pods) == (Decimal(1), 1, Decimal(2), 0)
    assert view.gpus_by_product == {"A100": (Decimal(6), Decimal(2))}
    assert a.ready and a.schedulable


def test_scale_out_requests_are_read_from_node_groups() -> None:
    requests = {"ns/wl": {"nodes": 2, "requestedAt": "2026-01-01T00:00:00Z"}}
    group = {
        "metadata": {
            "name": "gpu",
            "namespace": "machines",
            "annotations": {SCALE_OUT_REQUESTS_ANNOTATION: json.dumps(requests)},
        }
    }
    (request,) = nodes_view(Snapshot({"MachineSet": [group]})).scale_out
    assert (request.group, request.workload, request.nodes) == ("MachineSet/machines/gpu", "ns/wl", 2)
    broken = {"metadata": {"name": "x", "annotations": {SCALE_OUT_REQUESTS_ANNOTATION: "{not json"}}}
    assert nodes_view(Snapshot({"MachineDeployment": [broken]})).scale_out == ()


def test_a_user_who_may_not_read_nodes_is_told() -> None:
    assert nodes_view(Snapshot({}, {"Node": frozenset({""})})).nodes_refused
