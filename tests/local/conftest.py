"""Fixtures for local-mode tests: an API server, a node agent running real Ray, cleanup.

Every Ray cluster a test creates is deleted by the ``cleanup`` fixture and its processes
are checked gone (and, only if a test failed midway, killed by pid), so no test leaks Ray
processes into the next one. This machine has 2 cores: tests keep at most two small clusters.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psutil
import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from tests.support import local_agent as la
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ensure_namespace, install_crds, wait_for

READY_TIMEOUT = 120.0
T = TypeVar("T")


def agent_env(extra_path: str | None = None) -> dict[str, str]:
    """The environment of an activated venv: ``python`` in job entrypoints is ours."""
    path = os.pathsep.join(p for p in (extra_path, str(Path(sys.executable).parent), os.environ["PATH"]) if p)
    return {"PATH": path}


@dataclass
class LocalPlane:
    """An API server, a Kube client and a node agent; remembers every cluster's processes."""

    server: ServerProcess
    kube: Kube
    agent: la.AgentProcess
    seen: list[psutil.Process] = field(default_factory=list)

    def wait_ready(self, name: str, timeout: float = READY_TIMEOUT) -> dict[str, Any]:
        obj = self.wait(lambda: la.is_ready(self.kube, name), timeout, f"RayCluster {name} ready")
        self.seen.extend(la.cluster_processes(self.kube, name))
        return obj

    def wait(self, predicate: Callable[[], T | None], timeout: float, what: str) -> T:
        """``wait_for`` whose failure message ends with the agent's log at that moment."""
        try:
            result = wait_for(predicate, timeout, 0.2, what=what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nagent log:\n{self.agent.log()}") from None
        assert result is not None
        return result

    def delete_and_wait(self, name: str, timeout: float = 60.0) -> None:
        self.kube.delete(kinds.RAYCLUSTER, name, "default")
        wait_for(
            lambda: self.kube.find(kinds.RAYCLUSTER, name, "default") is None,
            timeout,
            0.2,
            what=f"RayCluster {name} gone",
        )


def start_plane(base: Path) -> LocalPlane:
    server = ServerProcess(base / "state").start()
    kube = Kube(config.from_kubeconfig(server.kubeconfig))
    install_crds(kube)
    ensure_namespace(kube, "default")
    agent = la.AgentProcess(base / "home", server.kubeconfig, env=agent_env()).start()
    wait_for(lambda: kube.list(kinds.NODE), 30, 0.1, what="the agent's Node")
    return LocalPlane(server, kube, agent)


def stop_plane(plane: LocalPlane) -> None:
    """Delete every RayCluster (the agent stops its processes), stop agent and server, then make
    sure nothing we saw survives."""
    try:
        if plane.agent.running:
            for obj in plane.kube.list(kinds.RAYCLUSTER, all_namespaces=True):
                plane.kube.delete(kinds.RAYCLUSTER, obj["metadata"]["name"], obj["metadata"]["namespace"])
            wait_for(lambda: not plane.kube.list(kinds.RAYCLUSTER, all_namespaces=True), 60, 0.2)
    finally:
        plane.agent.stop()
        plane.kube.close()
        plane.server.stop()
        leftovers = la.alive(plane.seen)
        la.kill_leftovers(leftovers)
        assert not leftovers, f"Ray processes survived the test: {[p.pid for p in leftovers]}"


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalPlane]:
    """One API server and agent per module (clusters are cleaned per test by ``clean``)."""
    p = start_plane(tmp_path_factory.mktemp("local"))
    try:
        yield p
    finally:
        stop_plane(p)


@pytest.fixture
def clean(plane: LocalPlane) -> Iterator[LocalPlane]:
    """The module's plane; every RayCluster and RayJob the test made is deleted afterwards."""
    yield plane
    for kind in (kinds.RAYJOB, kinds.RAYCLUSTER):
        for obj in plane.kube.list(kind, "default"):
            plane.kube.delete(kind, obj["metadata"]["name"], "default")
    wait_for(lambda: not plane.kube.list(kinds.RAYCLUSTER, "default"), 60, 0.2, what="clusters deleted")
    leftovers = la.alive(plane.seen)
    la.kill_leftovers(leftovers)
    assert not leftovers, f"Ray processes survived: {[p.pid for p in leftovers]}"
