"""The local node agent: plays kubelet + KubeRay on one host with real Ray processes.

:class:`NodeAgent` only composes the units and schedules their work: :class:`NodeRegistration`
(the Node and its Lease), the RayCluster informer feeding :class:`RayClusterRunner` through the
controllers' work queue (:mod:`codeflare.k8s.workqueue`: one reconcile at a time per cluster,
every cluster again each ``resync`` seconds, sooner while it is not ready), and
:class:`RayJobRunner`. At start it cleans up clusters deleted while it was down (the journal);
on shutdown it stops every Ray process it runs, leaving the objects for the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
from pathlib import Path

from codeflare.k8s.types import Obj
from codeflare.k8s.workqueue import ReconcileQueue
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.informer import Informer, Key, key_of
from codeflare.local.agent.node import NodeRegistration
from codeflare.local.agent.pods import FIELD_MANAGER
from codeflare.local.agent.ports import PortAllocator
from codeflare.local.agent.ray_jobs import RayJobsAPI
from codeflare.local.agent.raycluster import RayClusterRunner
from codeflare.local.agent.rayjob import RayJobRunner

log = logging.getLogger(__name__)

#: RayClusters reconciled side by side (a head start holds its worker for up to 90 s).
CLUSTER_WORKERS = 16

__all__ = ["FIELD_MANAGER", "NodeAgent", "ray_env"]


def ray_env() -> dict[str, str]:
    """The environment of Ray nodes: ours, with this interpreter's bin directory first on PATH, so a
    job's ``python ...`` entrypoint runs with the Python that has Ray installed."""
    env = dict(os.environ)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(
        [bin_dir, *[p for p in env.get("PATH", "").split(os.pathsep) if p != bin_dir]]
    )
    return env


class NodeAgent:
    """One agent per host; :meth:`run` until cancelled, then :meth:`shutdown`."""

    def __init__(
        self,
        kube: AsyncKube,
        home: Path,
        *,
        node_name: str | None = None,
        resync: float = 2.0,
        heartbeat: float = 10.0,
        ports: PortAllocator | None = None,
    ) -> None:
        self.home = Path(home)
        self.node_name = node_name or socket.gethostname().lower() or "local-node"
        self.resync = resync
        self.node = NodeRegistration(kube, self.node_name, heartbeat)
        # The host-wide registry, not one per home: agents of different homes (two `local up`s,
        # parallel test runs) must never hand out the same port.
        self.rayclusters = Informer(kube, kinds.RAYCLUSTER, self._on_cluster)
        self.clusters = RayClusterRunner(
            kube,
            self.home,
            self.node_name,
            ports or PortAllocator(),
            ray_env(),
            latest=lambda rc: self.rayclusters.cache.get(key_of(rc)),
        )
        self.rayjobs = RayJobRunner(
            kube, self.rayclusters.cache, resync=resync, ray=RayJobsAPI(self.clusters.dashboard_headers)
        )
        self.queue: ReconcileQueue[Key] = ReconcileQueue(
            self._reconcile,
            workers=CLUSTER_WORKERS,
            max_delay=resync,
            expected_errors=(errors.KubeError,),
            name="RayCluster reconcile",
        )

    def _on_cluster(self, event: str, obj: Obj, old: Obj | None) -> None:
        self.queue.add(key_of(obj))

    async def run(self) -> None:
        """Register, adopt, then reconcile until cancelled."""
        await self.node.register()
        tasks = [
            asyncio.create_task(self.node.run()),
            asyncio.create_task(self.rayclusters.run()),
            *self.rayjobs.tasks(),
        ]
        try:
            await self.rayclusters.synced.wait()
            await self.clusters.clean_orphans(set(self._by_uid()))
            # the informer queued every cluster it listed; work through them, then keep going
            await self.queue.run()
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _reconcile(self, key: Key) -> float | None:
        """One pass over a RayCluster; it is looked at again after ``resync`` seconds at the
        latest (sooner when the runner asks), and after a backoff when the pass failed."""
        rc = self.rayclusters.cache.get(key)
        if rc is None:
            return None
        again = await self.clusters.reconcile(rc)
        return self.resync if again is None else again

    def _by_uid(self) -> dict[str, Obj]:
        return {str(o["metadata"].get("uid")): o for o in self.rayclusters.cache.values()}

    async def shutdown(self, grace: float = 3.0) -> None:
        """Stop every Ray process this agent runs (objects stay; ``local up`` restarts them)."""
        await self.clusters.shutdown(self._by_uid(), grace)
