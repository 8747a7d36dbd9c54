"""Node scale-out end to end: API server and operator processes, and a simulated node provider.

A GPU flavor's nodes come only from MachineSets/MachineDeployments that :class:`MachineSim` turns
into Ready Nodes after a delay. Workloads pending on node capacity make the operator grow the
matching group; the queueing controller (capacityCheck on) admits them once the nodes are Ready;
the group shrinks back after the workload is gone. The cap on added nodes holds across workloads,
a SIGKILLed operator does not scale out twice, busy nodes are never removed, and with
``instascale.enabled: false`` no group is ever written. Each "still not admitted" is asserted once
the scheduler has completed a cycle over the newest Nodes, each "the group stays" once the
scale-out controller has made two more passes (see :mod:`tests.operator.operator_metrics`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from tests.operator.operator_metrics import OperatorMetricsReader
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OperatorProcess,
    ensure_namespace,
    install_crds,
    quiet_config,
    wait_for,
    write_operator_config,
)
from tests.support.machine_sim import MachineSim, install_machine_crds, machine_deployment, machine_set

NS, MACHINES = "team", "openshift-machine-api"
GPU = "nvidia.com/gpu"
REQUESTS = "codeflare.dev/scale-out-requests"
Obj = dict[str, Any]


@dataclass
class Stack:
    kube: Kube
    sim: MachineSim
    operator: OperatorProcess
    metrics: OperatorMetricsReader

    def restart_operator(self) -> None:
        self.operator = OperatorProcess(self.operator.kubeconfig, self.operator.log_path).start()

    def wait_scheduled_over_nodes(self) -> None:
        """Until a scheduling cycle has run over every Node as it is now (capacityCheck is on)."""
        nodes = self.kube.list(kinds.NODE)
        if nodes:
            newest = max(nodes, key=lambda n: int(n["metadata"]["resourceVersion"]))
            self.metrics.wait_caught_up("scheduler", kinds.NODE, newest)


def raycluster(name: str, workers: int) -> Obj:
    """A queued RayCluster: a CPU-only head and ``workers`` one-GPU workers."""

    def template(requests: dict[str, str]) -> Obj:
        return {
            "spec": {"containers": [{"name": "ray", "image": "ray", "resources": {"requests": requests}}]}
        }

    return {
        "metadata": {"name": name, "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": "queue"}},
        "spec": {
            "suspend": True,
            "headGroupSpec": {"rayStartParams": {}, "template": template({"cpu": "1"})},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": workers,
                    "rayStartParams": {},
                    "template": template({"cpu": "1", GPU: "1"}),
                }
            ],
        },
    }


def _setup(server: ServerProcess, tmp_path: Path, *, enabled: bool, delay: float, **sim: float) -> Stack:
    kube = Kube(config.from_kubeconfig(server.kubeconfig))
    install_crds(kube)
    install_machine_crds(kube)
    for ns in (NS, MACHINES):
        ensure_namespace(kube, ns)
    kube.create(
        kinds.RESOURCE_FLAVOR, {"metadata": {"name": "gpu"}, "spec": {"nodeLabels": {"node-type": "gpu"}}}
    )
    quotas = [{"name": "cpu", "nominalQuota": "100"}, {"name": GPU, "nominalQuota": "16"}]
    kube.create(
        kinds.CLUSTER_QUEUE,
        {
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {"coveredResources": ["cpu", GPU], "flavors": [{"name": "gpu", "resources": quotas}]}
                ],
            },
        },
    )
    kube.create(
        kinds.LOCAL_QUEUE, {"metadata": {"name": "queue", "namespace": NS}, "spec": {"clusterQueue": "cq"}}
    )
    kube.create(
        kinds.MACHINE_SET, machine_set("cpu-ms", MACHINES, {"node-type": "cpu"}, cpu=16, memory_mb=65536)
    )
    kube.create(
        kinds.MACHINE_SET,
        machine_set("gpu-ms", MACHINES, {"node-type": "gpu"}, cpu=8, memory_mb=32768, gpu=1),
    )
    metrics = OperatorMetricsReader()
    write_operator_config(
        kube,
        quiet_config(
            queueing={"capacityCheck": True},
            instascale={"enabled": enabled, "maxScaleoutAllowed": 2, "scaleInDelay": "1s"},
            metrics=metrics.bind,
        ),
    )
    machines = MachineSim(kube, delay=delay, **sim).start()
    operator = OperatorProcess(server.kubeconfig, tmp_path / "operator.log").start()
    return Stack(kube, machines, operator, metrics)


@pytest.fixture
def stack_factory(fresh_apiserver: ServerProcess, tmp_path: Path) -> Iterator[Any]:
    made: list[Stack] = []

    def make(enabled: bool = True, delay: float = 1.0, **sim: float) -> Stack:
        made.append(_setup(fresh_apiserver, tmp_path, enabled=enabled, delay=delay, **sim))
        return made[-1]

    yield make
    for stack in made:
        stack.operator.stop()
        stack.sim.stop()
        stack.kube.close()
        print(stack.operator.log()[-6000:])  # shown by pytest when the test fails


def workload(kube: Kube, job: str) -> Obj | None:
    for wl in kube.list(kinds.WORKLOAD, NS):
        if any(o.get("name") == job for o in wl["metadata"].get("ownerReferences") or []):
            return wl
    return None


def reason(kube: Kube, job: str) -> str:
    for cond in ((workload(kube, job) or {}).get("status") or {}).get("conditions") or []:
        if cond["type"] == "QuotaReserved" and cond["status"] == "False":
            return str(cond.get("message", ""))
    return ""


def admitted(kube: Kube, job: str) -> bool:
    return bool(((workload(kube, job) or {}).get("status") or {}).get("admission"))


def scale_out_condition(kube: Kube, job: str) -> dict[str, Any] | None:
    conditions = ((workload(kube, job) or {}).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "ScaleOut"), None)


def reserved_for(kube: Kube, node: str) -> str | None:
    annotations = kube.get(kinds.NODE, node)["metadata"].get("annotations") or {}
    return annotations.get("codeflare.dev/reserved-for")


def node_ready(kube: Kube, node: str) -> bool:
    conditions = (kube.get(kinds.NODE, node).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def replicas(kube: Kube, kind: Any, name: str) -> int:
    return int(kube.get(kind, name, MACHINES)["spec"].get("replicas") or 0)


def requests_on(kube: Kube, kind: Any, name: str) -> dict[str, Any]:
    text = (kube.get(kind, name, MACHINES)["metadata"].get("annotations") or {}).get(REQUESTS)
    return dict(json.loads(text)) if text else {}


def event_reasons(kube: Kube, namespace: str, name: str) -> set[str]:
    return {
        e.get("reason", "") for e in kube.list(kinds.EVENT, namespace) if e["involvedObject"]["name"] == name
    }


def test_gpu_workload_scales_the_right_group_out_and_back_in(stack_factory: Any) -> None:
    stack = stack_factory(delay=2.0)
    kube, sim = stack.kube, stack.sim
    # a MachineDeployment with two-GPU nodes: one node of it is the smallest sufficient scale-out
    kube.create(
        kinds.MACHINE_DEPLOYMENT,
        machine_deployment(
            "gpu-md", MACHINES, {"node-type": "gpu", "zone": "b"}, cpu=8, memory="64Gi", gpu=2
        ),
    )
    kube.create(kinds.RAYCLUSTER, raycluster("train", workers=2))

    wait_for(
        lambda: (
            "waiting for 1 new node of MachineDeployment openshift-machine-api/gpu-md"
            in reason(kube, "train")
        ),
        30,
        what="pending reason naming the scale-out",
    )
    assert reason(kube, "train").startswith("insufficient node capacity")
    assert replicas(kube, kinds.MACHINE_DEPLOYMENT, "gpu-md") == 1
    wl_name = (workload(kube, "train") or {})["metadata"]["name"]
    assert requests_on(kube, kinds.MACHINE_DEPLOYMENT, "gpu-md")[f"{NS}/{wl_name}"]["nodes"] == 1
    wait_for(lambda: admitted(kube, "train"), 30, what="admission once the node is Ready")
    assert len(sim.nodes(kinds.MACHINE_DEPLOYMENT, MACHINES, "gpu-md")) == 1
    assert sim.max_replicas(kinds.MACHINE_SET, MACHINES, "gpu-ms") == 0
    assert sim.max_replicas(kinds.MACHINE_SET, MACHINES, "cpu-ms") == 0
    wait_for(
        lambda: "ScaleOut" in event_reasons(kube, NS, wl_name), 10, what="ScaleOut event on the workload"
    )
    assert "ScaleOut" in event_reasons(kube, MACHINES, "gpu-md")
    # once admitted, the workload no longer says it waits for nodes
    wait_for(
        lambda: (scale_out_condition(kube, "train") or {}).get("reason") == "Admitted",
        10,
        what="ScaleOut condition cleared after admission",
    )
    assert (scale_out_condition(kube, "train") or {}).get("status") == "False"

    kube.delete(kinds.RAYCLUSTER, "train", NS)
    wait_for(lambda: replicas(kube, kinds.MACHINE_DEPLOYMENT, "gpu-md") == 0, 30, what="scale-in")
    wait_for(lambda: not sim.nodes(kinds.MACHINE_DEPLOYMENT, MACHINES, "gpu-md"), 10, what="node removed")
    assert requests_on(kube, kinds.MACHINE_DEPLOYMENT, "gpu-md") == {}
    assert "ScaleIn" in event_reasons(kube, MACHINES, "gpu-md")
    assert sim.max_replicas(kinds.MACHINE_DEPLOYMENT, MACHINES, "gpu-md") == 1


def test_cap_holds_across_workloads_and_the_second_waits_with_the_reason(stack_factory: Any) -> None:
    stack = stack_factory(delay=1.0)
    kube, sim = stack.kube, stack.sim
    kube.create(kinds.RAYCLUSTER, raycluster("first", workers=2))
    wait_for(lambda: replicas(kube, kinds.MACHINE_SET, "gpu-ms") == 2, 30, what="first scale-out")
    # the same shape as the first: neither fits on one new node, so the first (older) is admitted once
    # both are Ready (a smaller second is the next test's business)
    kube.create(kinds.RAYCLUSTER, raycluster("second", workers=2))

    wait_for(lambda: "maxScaleoutAllowed (2)" in reason(kube, "second"), 30, what="second told about the cap")
    wait_for(lambda: admitted(kube, "first"), 30, what="first admitted")
    stack.wait_scheduled_over_nodes()
    assert not admitted(kube, "second")
    assert "maxScaleoutAllowed (2)" in reason(kube, "second")
    assert sim.max_replicas(kinds.MACHINE_SET, MACHINES, "gpu-ms") == 2
    assert sim.max_replicas(kinds.MACHINE_SET, MACHINES, "cpu-ms") == 0


def test_nodes_brought_up_for_a_workload_are_not_taken_by_a_smaller_one(stack_factory: Any) -> None:
    # machines come up one at a time and stay NotReady a moment after they register, as real ones do
    stack = stack_factory(delay=1.0, stagger=4.0, ready_after=2.0)
    kube, sim = stack.kube, stack.sim
    kube.create(kinds.RAYCLUSTER, raycluster("first", workers=2))
    wait_for(lambda: replicas(kube, kinds.MACHINE_SET, "gpu-ms") == 2, 30, what="first scale-out")
    first = f"{NS}/{(workload(kube, 'first') or {})['metadata']['name']}"
    # one GPU: it would fit on the first new node alone, but the cap leaves it no nodes of its own
    kube.create(kinds.RAYCLUSTER, raycluster("second", workers=1))
    wait_for(lambda: "maxScaleoutAllowed (2)" in reason(kube, "second"), 30, what="second told about the cap")

    wait_for(lambda: sim.nodes(kinds.MACHINE_SET, MACHINES, "gpu-ms"), 30, what="the first new node")
    node = sim.nodes(kinds.MACHINE_SET, MACHINES, "gpu-ms")[0]
    wait_for(lambda: reserved_for(kube, node) == first, 10, what="the node reserved for the first workload")
    wait_for(lambda: node_ready(kube, node), 10, what="the first new node Ready")
    stack.wait_scheduled_over_nodes()  # a capacity check would have admitted the second on it by now
    assert not admitted(kube, "second")
    assert len(sim.nodes(kinds.MACHINE_SET, MACHINES, "gpu-ms")) == 1

    wait_for(lambda: admitted(kube, "first"), 30, what="first admitted once both of its nodes are Ready")
    wait_for(
        lambda: all(reserved_for(kube, n) is None for n in sim.nodes(kinds.MACHINE_SET, MACHINES, "gpu-ms")),
        10,
        what="reservations lifted after the admission",
    )
    stack.wait_scheduled_over_nodes()
    assert not admitted(kube, "second")  # the first holds both GPUs
    assert "insufficient" in reason(kube, "second")


def test_sigkill_between_patch_and_admission_does_not_scale_out_twice(stack_factory: Any) -> None:
    stack = stack_factory(delay=4.0)
    kube, sim = stack.kube, stack.sim
    kube.create(kinds.RAYCLUSTER, raycluster("train", workers=2))
    wait_for(lambda: replicas(kube, kinds.MACHINE_SET, "gpu-ms") == 2, 30, interval=0.02, what="scale-out")
    stack.operator.kill()
    assert not sim.nodes(kinds.MACHINE_SET, MACHINES, "gpu-ms"), "nodes came up before the kill"
    stack.restart_operator()

    wait_for(lambda: admitted(kube, "train"), 40, what="admission after the restart")
    stack.metrics.wait_passes("scaleout")  # a pass that started after the admission asked for nothing
    assert sim.max_replicas(kinds.MACHINE_SET, MACHINES, "gpu-ms") == 2
    assert replicas(kube, kinds.MACHINE_SET, "gpu-ms") == 2
    (entry,) = requests_on(kube, kinds.MACHINE_SET, "gpu-ms").values()
    assert entry["nodes"] == 2


def test_nodes_running_other_workloads_pods_are_never_removed(stack_factory: Any) -> None:
    stack = stack_factory(delay=1.0)
    kube, sim = stack.kube, stack.sim
    kube.create(kinds.RAYCLUSTER, raycluster("train", workers=2))
    wait_for(lambda: admitted(kube, "train"), 30, what="admission")
    busy = sim.nodes(kinds.MACHINE_SET, MACHINES, "gpu-ms")[0]
    pod = {
        "metadata": {"name": "other-head", "namespace": NS, "labels": {"ray.io/cluster": "other"}},
        "spec": {"nodeName": busy, "containers": [{"name": "ray", "image": "ray"}]},
    }
    kube.create(kinds.POD, pod)
    kube.patch(kinds.POD, "other-head", {"status": {"phase": "Running"}}, NS, status=True)

    kube.delete(kinds.RAYCLUSTER, "train", NS)
    wait_for(lambda: replicas(kube, kinds.MACHINE_SET, "gpu-ms") == 1, 30, what="partial scale-in")
    stack.metrics.wait_passes("scaleout")  # scaleInDelay is past for both nodes: the busy one stays
    assert replicas(kube, kinds.MACHINE_SET, "gpu-ms") == 1
    assert sim.nodes(kinds.MACHINE_SET, MACHINES, "gpu-ms") == [busy]
    assert busy not in sim.removed

    kube.delete(kinds.POD, "other-head", NS)
    wait_for(lambda: replicas(kube, kinds.MACHINE_SET, "gpu-ms") == 0, 30, what="the rest given back")
    assert requests_on(kube, kinds.MACHINE_SET, "gpu-ms") == {}


def test_disabled_never_patches_a_node_group(stack_factory: Any) -> None:
    stack = stack_factory(enabled=False)
    kube, sim = stack.kube, stack.sim
    before = {
        n: kube.get(kinds.MACHINE_SET, n, MACHINES)["metadata"]["resourceVersion"]
        for n in ("cpu-ms", "gpu-ms")
    }
    kube.create(kinds.RAYCLUSTER, raycluster("train", workers=2))
    wait_for(
        lambda: reason(kube, "train").startswith("insufficient node capacity"), 30, what="capacity reason"
    )
    stack.metrics.wait_caught_up("scheduler", kinds.WORKLOAD, workload(kube, "train") or {})
    assert stack.metrics.passes("scaleout") == 0  # no scale-out controller runs at all
    after = {
        n: kube.get(kinds.MACHINE_SET, n, MACHINES)["metadata"]["resourceVersion"]
        for n in ("cpu-ms", "gpu-ms")
    }
    assert after == before
    assert "waiting for" not in reason(kube, "train")
    assert not admitted(kube, "train")
    assert sim.max_replicas(kinds.MACHINE_SET, MACHINES, "gpu-ms") == 0
    assert not kube.list(kinds.NODE)
