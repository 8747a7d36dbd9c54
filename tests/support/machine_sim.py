"""A test-only node provider: MachineSet/MachineDeployment replicas become Ready Nodes after a delay.

:func:`install_machine_crds` registers minimal CustomResourceDefinitions for OpenShift MachineSets
and Cluster API MachineDeployments (``spec.replicas`` typed, the rest preserved). :class:`MachineSim`
runs in a thread with its own client and plays the machine controllers: for each group, Nodes
labelled with the template's node labels and the group's label ``sim.codeflare.dev/group``, with
allocatable from the group's capacity annotations, created ``delay`` seconds after replicas grow;
on scale-in it deletes nodes annotated ``*/delete-machine`` first, then the newest. It records
every replicas value it sees per group, so tests can assert no group ever grew beyond a bound.
It shares no code with the operator on purpose.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from codeflare.kube import errors, kinds
from codeflare.kube.client import Kube
from codeflare.kube.kinds import Kind
from tests.support.polling import wait_for

log = logging.getLogger(__name__)

Obj = dict[str, Any]
GROUP_LABEL = "sim.codeflare.dev/group"


def _crd(kind: Kind) -> Obj:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"replicas": {"type": "integer"}},
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.plural}.{kind.group}"},
        "spec": {
            "group": kind.group,
            "scope": "Namespaced",
            "names": {
                "kind": kind.kind,
                "plural": kind.plural,
                "singular": kind.kind.lower(),
                "listKind": kind.kind + "List",
            },
            "versions": [
                {"name": kind.version, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
            ],
        },
    }


def install_machine_crds(kube: Kube) -> None:
    for kind in (kinds.MACHINE_SET, kinds.MACHINE_DEPLOYMENT):
        with contextlib.suppress(errors.AlreadyExists):
            kube.create(kinds.CRD, _crd(kind))
    # served once the server registered them (a KubeError until then)
    wait_for(lambda: [kube.list(kind, "default") for kind in (kinds.MACHINE_SET, kinds.MACHINE_DEPLOYMENT)],
             10, what="machine CRDs served")


def machine_set(
    name: str, namespace: str, labels: dict[str, str], cpu: int, memory_mb: int, gpu: int = 0
) -> Obj:
    """An OpenShift MachineSet with zero replicas, node labels and the capacity annotations."""
    annotations = {"machine.openshift.io/vCPU": str(cpu), "machine.openshift.io/memoryMb": str(memory_mb)}
    if gpu:
        annotations["machine.openshift.io/GPU"] = str(gpu)
    return {
        "apiVersion": kinds.MACHINE_SET.api_version,
        "kind": kinds.MACHINE_SET.kind,
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"machine.openshift.io/cluster-api-machineset": name}},
            "template": {
                "metadata": {"labels": {"machine.openshift.io/cluster-api-machineset": name}},
                "spec": {
                    "metadata": {"labels": dict(labels)},
                    "providerSpec": {"value": {"instanceType": "sim"}},
                },
            },
        },
    }


def machine_deployment(
    name: str, namespace: str, labels: dict[str, str], cpu: int, memory: str, gpu: int = 0
) -> Obj:
    """A Cluster API MachineDeployment with zero replicas and the cluster-autoscaler capacity annotations."""
    prefix = "capacity.cluster-autoscaler.kubernetes.io/"
    annotations = {prefix + "cpu": str(cpu), prefix + "memory": memory}
    if gpu:
        annotations[prefix + "gpu-count"] = str(gpu)
        annotations[prefix + "gpu-type"] = "nvidia.com/gpu"
    return {
        "apiVersion": kinds.MACHINE_DEPLOYMENT.api_version,
        "kind": kinds.MACHINE_DEPLOYMENT.kind,
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {
            "clusterName": "sim",
            "replicas": 0,
            "template": {"metadata": {"labels": dict(labels)}, "spec": {}},
        },
    }


def _template_labels(group: Obj) -> dict[str, str]:
    template = (group.get("spec") or {}).get("template") or {}
    if group.get("kind") == kinds.MACHINE_SET.kind:
        return dict(((template.get("spec") or {}).get("metadata") or {}).get("labels") or {})
    return dict((template.get("metadata") or {}).get("labels") or {})


def _allocatable(group: Obj) -> dict[str, str]:
    a = (group.get("metadata") or {}).get("annotations") or {}
    if group.get("kind") == kinds.MACHINE_SET.kind:
        out = {"cpu": a.get("machine.openshift.io/vCPU", "0"), "pods": "110"}
        out["memory"] = f"{int(a.get('machine.openshift.io/memoryMb', '0'))}Mi"
        if "machine.openshift.io/GPU" in a:
            out["nvidia.com/gpu"] = a["machine.openshift.io/GPU"]
        return out
    prefix = "capacity.cluster-autoscaler.kubernetes.io/"
    out = {"cpu": a.get(prefix + "cpu", "0"), "memory": a.get(prefix + "memory", "0"), "pods": "110"}
    if prefix + "gpu-count" in a:
        out[a.get(prefix + "gpu-type", "nvidia.com/gpu")] = a[prefix + "gpu-count"]
    return out


@dataclass
class MachineSim:
    """Plays the machine controllers of one API server in a background thread."""

    kube: Kube
    delay: float = 1.0
    interval: float = 0.1
    stagger: float = 0.0  # seconds between the births of machines asked for together
    ready_after: float = 0.0  # seconds a new Node stays NotReady (as kubelet and CNI set up)
    replicas_seen: dict[str, list[int]] = field(default_factory=dict)  # "Kind/ns/name" -> distinct values
    removed: list[str] = field(default_factory=list)
    _births: dict[str, list[float]] = field(default_factory=dict)
    _unready: dict[str, tuple[float, Obj]] = field(default_factory=dict)  # node -> (ready at, status)
    _counter: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> MachineSim:
        self._thread = threading.Thread(target=self._run, name="machine-sim", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def max_replicas(self, kind: Kind, namespace: str, name: str) -> int:
        return max(self.replicas_seen.get(f"{kind.kind}/{namespace}/{name}", [0]))

    def nodes(self, kind: Kind, namespace: str, name: str) -> list[str]:
        group = f"{kind.kind}.{namespace}.{name}"
        return sorted(n["metadata"]["name"] for n in self.kube.list(kinds.NODE, labels={GROUP_LABEL: group}))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except errors.KubeError as exc:
                log.debug("machine simulator step failed: %s", exc)
            self._stop.wait(self.interval)

    def step(self) -> None:
        now = time.monotonic()
        for name, (due, status) in sorted(self._unready.items()):
            if due <= now:
                del self._unready[name]
                with contextlib.suppress(errors.NotFound):
                    self.kube.patch(kinds.NODE, name, {"status": status}, status=True)
        nodes = self.kube.list(kinds.NODE)
        for kind in (kinds.MACHINE_SET, kinds.MACHINE_DEPLOYMENT):
            for group in self.kube.list(kind, all_namespaces=True):
                self._reconcile(kind, group, nodes)

    def _reconcile(self, kind: Kind, group: Obj, all_nodes: list[Obj]) -> None:
        meta = group["metadata"]
        ref = f"{kind.kind}/{meta['namespace']}/{meta['name']}"
        tag = f"{kind.kind}.{meta['namespace']}.{meta['name']}"
        replicas = int((group.get("spec") or {}).get("replicas") or 0)
        seen = self.replicas_seen.setdefault(ref, [])
        if not seen or seen[-1] != replicas:
            seen.append(replicas)
        mine = [n for n in all_nodes if (n["metadata"].get("labels") or {}).get(GROUP_LABEL) == tag]
        births = self._births.setdefault(ref, [])
        now = time.monotonic()
        missing = replicas - len(mine) - len(births)
        if missing > 0:
            last = max(births, default=now + self.delay - self.stagger)
            births.extend(max(now + self.delay, last + self.stagger * (i + 1)) for i in range(missing))
        elif missing < 0:
            while births and missing < 0:  # cancel machines not yet up
                births.pop()
                missing += 1
            order = sorted(mine, key=lambda n: (0 if _marked(n) else 1, -_serial(n)))
            for node in order[: max(0, -missing)]:
                self.kube.delete(kinds.NODE, node["metadata"]["name"])
                self.removed.append(node["metadata"]["name"])
        for _ in [b for b in births if b <= now]:
            births.remove(min(births))
            self._create_node(group, tag)

    def _create_node(self, group: Obj, tag: str) -> None:
        self._counter += 1
        name = f"{group['metadata']['name']}-{self._counter}"
        labels = {**_template_labels(group), GROUP_LABEL: tag, "kubernetes.io/hostname": name}
        self.kube.create(kinds.NODE, {"metadata": {"name": name, "labels": labels}, "spec": {}})
        allocatable = _allocatable(group)
        status = {
            "capacity": allocatable,
            "allocatable": allocatable,
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "simulated"}
            ],
        }
        if self.ready_after > 0:
            self._unready[name] = (time.monotonic() + self.ready_after, status)
            return
        self.kube.patch(kinds.NODE, name, {"status": status}, status=True)


def _serial(node: Obj) -> int:
    suffix = str(node["metadata"]["name"]).rpartition("-")[2]
    return int(suffix) if suffix.isdigit() else 0


def _marked(node: Obj) -> bool:
    return any(a.endswith("/delete-machine") for a in (node["metadata"].get("annotations") or {}))
