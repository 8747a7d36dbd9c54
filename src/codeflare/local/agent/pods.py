"""The Pod mirror: one Pod object per Ray node of a RayCluster, with the node's real state.

:func:`wanted_pods` is pure: from the cluster, its running nodes (and which are ready) and the
nodes that just exited, the Pods that should exist (exited nodes become Failed Pods carrying the
exit code). :class:`PodSync` makes the API match: deletes Pods of nodes that are gone (Failed ones
stay, as a kubelet leaves them), server-side applies the others and writes their status, skipping
writes that would not change anything. It never starts or stops a process.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codeflare.api.raycluster import ELASTIC_JOB_SCHEDULING_GATE
from codeflare.k8s.constants import RAY_CLUSTER_LABEL
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.local.agent import shapes
from codeflare.local.agent.cluster_runner import NodeExit, RayNode

log = logging.getLogger(__name__)

#: The field manager of the agent's writes (its Pods are server-side applied under it).
FIELD_MANAGER = "codeflare-local-agent"


@dataclass(frozen=True)
class NodeView:
    """What the Pod of one running Ray node shows."""

    node: RayNode
    ready: bool


def wanted_pods(
    rc: Obj,
    running: Iterable[NodeView],
    exited: Sequence[NodeExit],
    node_name: str,
    now: str,
    gated: Sequence[tuple[str, str]] = (),
) -> dict[str, Obj]:
    """Pod name -> Pod for every node of ``rc``: Running for live nodes, Failed for exited ones,
    and Pending behind Kueue's elastic-job scheduling gate for the ``gated`` (node, group) ones:
    workers wanted but not admitted yet."""
    spec = rc.get("spec") or {}
    groups = {str(g.get("groupName")): g for g in spec.get("workerGroupSpecs") or []}
    wanted: dict[str, Obj] = {}
    for view in running:
        node = view.node
        head = node.role == "head"
        group_spec = spec.get("headGroupSpec") or {} if head else groups.get(node.group, {})
        pod = shapes.pod_for(
            rc,
            node.name,
            node.group,
            head,
            group_spec.get("template") or {},
            node_name,
            phase="Running",
            ready=view.ready,
            pid=node.handle.pid,
            started=format_rfc3339(node.handle.start_time),
        )
        wanted[pod["metadata"]["name"]] = pod
    for exit_info in exited:
        pod = shapes.pod_for(
            rc,
            exit_info.node,
            exit_info.node.rpartition("-")[0],
            exit_info.node == "head",
            {},
            node_name,
            phase="Failed",
            ready=False,
            exit_code=exit_info.exit_code,
            finished=now,
        )
        wanted[pod["metadata"]["name"]] = pod
    for gated_node, group in gated:
        pod = shapes.pod_for(
            rc,
            gated_node,
            group,
            False,
            groups.get(group, {}).get("template") or {},
            node_name,
            phase="Pending",
            ready=False,
        )
        pod["spec"]["schedulingGates"] = [{"name": ELASTIC_JOB_SCHEDULING_GATE}]
        pod["status"]["conditions"] = [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
             "message": "Scheduling is blocked due to non-empty scheduling gates"},
        ]
        pod["status"].pop("podIP", None)
        pod["status"].pop("hostIP", None)
        wanted.setdefault(pod["metadata"]["name"], pod)
    return wanted


class PodSync:
    """Writes the Pods :func:`wanted_pods` describes; remembers what it wrote to skip no-ops."""

    def __init__(self, kube: AsyncKube, node_name: str) -> None:
        self.kube = kube
        self.node_name = node_name
        self._written: dict[tuple[str, str], str] = {}

    async def sync(
        self,
        rc: Obj,
        running: Iterable[NodeView],
        exited: Sequence[NodeExit],
        now: str,
        gated: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Make the Pod objects of ``rc`` mirror its Ray nodes (none running: ``running`` empty)
        and its gated workers."""
        meta = rc["metadata"]
        namespace, cluster = meta.get("namespace", ""), meta["name"]
        for exit_info in exited:
            log.warning(
                "RayCluster %s/%s: node %s exited with code %s",
                namespace,
                cluster,
                exit_info.node,
                exit_info.exit_code,
            )
        wanted = wanted_pods(rc, running, exited, self.node_name, now, gated)
        existing = await self.kube.list(kinds.POD, namespace, labels={RAY_CLUSTER_LABEL: cluster})
        for pod in existing:
            pod_name = pod["metadata"]["name"]
            if pod_name not in wanted and (pod.get("status") or {}).get("phase") != "Failed":
                with contextlib.suppress(errors.NotFound):
                    await self.kube.delete(kinds.POD, pod_name, namespace)
                self._written.pop((namespace, pod_name), None)
        for pod_name, pod in wanted.items():
            key = (namespace, pod_name)
            comparable = json.dumps(pod, sort_keys=True)
            if self._written.get(key) == comparable:
                continue
            status = pod.pop("status")
            try:
                await self.kube.apply(kinds.POD, pod, field_manager=FIELD_MANAGER)
                await self.kube.patch(kinds.POD, pod_name, {"status": status}, namespace, status=True)
            except errors.NotFound:
                continue
            self._written[key] = comparable

    async def clear(self, rc: Obj, now: str) -> None:
        """No Ray node of ``rc`` runs: its Pods go (Failed ones stay)."""
        await self.sync(rc, (), (), now)
