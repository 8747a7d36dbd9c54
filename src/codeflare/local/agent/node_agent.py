"""The local node agent: plays kubelet + KubeRay on one host with real Ray processes.

:class:`NodeAgent` only composes the units and schedules their work: :class:`NodeRegistration`
(the Node and its Lease), the RayCluster informer feeding :class:`RayClusterRunner` (one reconcile
at a time per cluster, changed clusters first, every cluster each ``resync`` seconds), and
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
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.informer import Informer
from codeflare.local.agent.node import NodeRegistration
from codeflare.local.agent.pods import FIELD_MANAGER
from codeflare.local.agent.ports import PortAllocator
from codeflare.local.agent.raycluster import RayClusterRunner
from codeflare.local.agent.rayjob import RayJobRunner

log = logging.getLogger(__name__)

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
        self.clusters = RayClusterRunner(kube, self.home, self.node_name, ports or PortAllocator(), ray_env())
        self.rayclusters = Informer(kube, kinds.RAYCLUSTER, self._on_cluster)
        self.rayjobs = RayJobRunner(kube, self.rayclusters.cache, resync=resync)
        self._dirty: set[tuple[str, str]] = set()
        self._running: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._wake = asyncio.Event()

    def _on_cluster(self, event: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        self.mark(meta.get("namespace", ""), meta["name"])

    def mark(self, namespace: str, name: str) -> None:
        self._dirty.add((namespace, name))
        self._wake.set()

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
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self.resync)
                self._wake.clear()
                if not self._dirty:
                    self._dirty.update(self.rayclusters.cache)
                for ref in sorted(self._dirty):
                    task = self._running.get(ref)
                    if task is None or task.done():
                        self._dirty.discard(ref)
                        self._running[ref] = asyncio.create_task(self._reconcile(*ref))
        finally:
            for task in tasks:
                task.cancel()
            for task in self._running.values():
                task.cancel()
            for task in [*tasks, *self._running.values()]:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _reconcile(self, namespace: str, name: str) -> None:
        rc = self.rayclusters.cache.get((namespace, name))
        if rc is None:
            return
        try:
            again = await self.clusters.reconcile(rc)
        except errors.KubeError as exc:
            log.warning("RayCluster %s/%s: %s; will retry", namespace, name, exc)
            again = True
        except Exception:
            log.exception("RayCluster %s/%s: reconcile failed", namespace, name)
            again = True
        if again:
            self.mark(namespace, name)

    def _by_uid(self) -> dict[str, Obj]:
        return {str(o["metadata"].get("uid")): o for o in self.rayclusters.cache.values()}

    async def shutdown(self, grace: float = 3.0) -> None:
        """Stop every Ray process this agent runs (objects stay; ``local up`` restarts them)."""
        await self.clusters.shutdown(self._by_uid(), grace)
