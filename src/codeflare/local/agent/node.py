"""Node registration and heartbeat: the agent's host as a Node with a Lease, as a kubelet keeps it.

:func:`node_object` is pure (name, detected capacity, time -> the Node's labels and status);
:class:`NodeRegistration` creates the Node, patches its labels and status, and renews the Lease
in ``kube-node-lease`` every ``heartbeat`` seconds. It knows nothing of Ray clusters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from codeflare.k8s.constants import LOCAL_AGENT_LABEL
from codeflare.k8s.quantity import Format, format_quantity
from codeflare.k8s.timestamps import now_micro, now_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.local.agent import node_info
from codeflare.local.agent.ray_node import LOOPBACK

log = logging.getLogger(__name__)

LEASE_DURATION_SECONDS = 40
LEASE_NAMESPACE = "kube-node-lease"


def node_object(name: str, capacity: node_info.NodeCapacity, now: str) -> Obj:
    """The Node this host is: allocatable from the detected capacity (CPUs overcommitted as
    configured), GPU labels, Ready/MemoryPressure/DiskPressure conditions stamped ``now``."""
    allocatable = dict(capacity.allocatable)
    allocatable["cpu"] = str(capacity.cpus * node_info.cpu_overcommit())
    allocatable["memory"] = format_quantity(capacity.memory_bytes, Format.BINARY_SI)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node-role.kubernetes.io/local": "",
        LOCAL_AGENT_LABEL: "true",
        **capacity.labels,
    }
    conditions = [
        _node_condition("Ready", "True", "AgentReady", now, "codeflare local agent is running"),
        _node_condition("MemoryPressure", "False", "AgentHasSufficientMemory", now),
        _node_condition("DiskPressure", "False", "AgentHasNoDiskPressure", now),
    ]
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "capacity": allocatable,
            "allocatable": allocatable,
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": LOOPBACK},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "codeflare-local",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "containerRuntimeVersion": "ray-processes",
            },
        },
    }


def _node_condition(type_: str, status: str, reason: str, now: str, message: str | None = None) -> Obj:
    condition: Obj = {"type": type_, "status": status, "reason": reason}
    if message is not None:
        condition["message"] = message
    condition.update(lastHeartbeatTime=now, lastTransitionTime=now)
    return condition


class NodeRegistration:
    """Registers the Node once, then heartbeats (Lease and Node conditions) until cancelled."""

    def __init__(self, kube: AsyncKube, name: str, heartbeat: float = 10.0) -> None:
        self.kube = kube
        self.name = name
        self.heartbeat = heartbeat

    def node(self) -> Obj:
        return node_object(self.name, node_info.detect_node_capacity(), now_rfc3339())

    async def register(self) -> None:
        node = self.node()
        existing = await self.kube.find(kinds.NODE, self.name)
        if existing is None:
            with contextlib.suppress(errors.AlreadyExists):
                await self.kube.create(kinds.NODE, {"metadata": node["metadata"], "spec": {}})
        await self.kube.patch(kinds.NODE, self.name, {"metadata": {"labels": node["metadata"]["labels"]}})
        await self.kube.patch(kinds.NODE, self.name, {"status": node["status"]}, status=True)
        log.info("registered node %s", self.name)

    async def run(self) -> None:
        while True:
            try:
                await self.renew_lease()
                conditions = self.node()["status"]["conditions"]
                await self.kube.patch(
                    kinds.NODE, self.name, {"status": {"conditions": conditions}}, status=True
                )
            except errors.KubeError as exc:
                log.warning("heartbeat failed: %s", exc)
            await asyncio.sleep(self.heartbeat)

    async def renew_lease(self) -> None:
        spec = {
            "holderIdentity": self.name,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": now_micro(),
        }
        lease = await self.kube.find(kinds.LEASE, self.name, LEASE_NAMESPACE)
        if lease is None:
            with contextlib.suppress(errors.AlreadyExists):
                await self.kube.create(
                    kinds.LEASE, {"metadata": {"name": self.name, "namespace": LEASE_NAMESPACE}, "spec": spec}
                )
            return
        await self.kube.patch(kinds.LEASE, self.name, {"spec": spec}, LEASE_NAMESPACE)
