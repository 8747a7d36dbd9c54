"""Fixtures of the SDK tests: a control plane without Ray, and a fresh local mode with Ray.

``control_plane`` (no Ray, no node agent: fast) is a real API server process plus the operator
in a thread, and yields an admin SDK client; admitted clusters stay starting (no agent runs them).

``local`` is a local mode as users run it (``LocalMode(home).up()``): it starts the API server,
operator and node agent in a temporary home, adds ClusterQueue ``sdk-cq`` (3 CPUs, 4Gi: one tiny
cluster fits, a second does not) and LocalQueue ``sdk-queue`` in ``default``, and yields an SDK
client. Teardown deletes every RayJob and RayCluster (the agent stops their Ray processes), runs
``down``, and checks that no Ray process of any cluster it saw survived. Clusters stay tiny:
head 1 CPU/1Gi, workers 1 CPU/1Gi.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from codeflare.kube import kinds
from codeflare.local.mode import LocalMode
from codeflare.sdk import (
    Client,
    ClusterConfiguration,
    FlavorQuota,
    LocalAuthentication,
    create_cluster_queue,
    create_local_queue,
)
from tests.support import local_agent as la
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, quiet_config, wait_for

QUEUE = "sdk-queue"
CLUSTER_QUEUE = "sdk-cq"
FLAVOR = "default-flavor"  # created by local mode's bootstrap


def venv_path() -> str:
    """PATH with this interpreter's bin first: ``python`` in job entrypoints is ours."""
    return os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", "")))


def tiny(name: str, workers: int = 1, queue: str | None = QUEUE) -> ClusterConfiguration:
    """The smallest useful cluster: head 1 CPU/1Gi plus ``workers`` of 1 CPU/1Gi."""
    return ClusterConfiguration(
        name, namespace="default", num_workers=workers, local_queue=queue,
        head_cpu_requests=1, head_cpu_limits=1, head_memory_requests="1Gi", head_memory_limits="1Gi",
        worker_cpu_requests=1, worker_cpu_limits=1, worker_memory_requests="1Gi", worker_memory_limits="1Gi",
    )


@dataclass
class Local:
    """One running local mode and the SDK client bound to it."""

    mode: LocalMode
    client: Client
    seen: list[psutil.Process] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.mode.home

    def remember(self, cluster: str) -> None:
        """Note a running cluster's processes so teardown can prove they are gone."""
        self.seen.extend(la.cluster_processes(self.client.kube, cluster))

    def clean(self) -> None:
        """Delete every RayJob and RayCluster in ``default`` and wait until they are gone."""
        kube = self.client.kube
        for kind in (kinds.RAYJOB, kinds.RAYCLUSTER):
            for obj in kube.list(kind, "default"):
                kube.delete(kind, obj["metadata"]["name"], "default")
        wait_for(lambda: not kube.list(kinds.RAYCLUSTER, "default"), 90, 0.3, what="clusters deleted")
        wait_for(lambda: not la.alive(self.seen), 60, 0.3, what="Ray processes stopped")


def start_local(home: Path) -> Local:
    mode = LocalMode(home)
    mode.up()
    client = LocalAuthentication(home).login()
    create_cluster_queue(CLUSTER_QUEUE, [FlavorQuota(FLAVOR, {"cpu": "3", "memory": "4Gi"})],
                         namespace_selector={}, client=client)
    create_local_queue(QUEUE, CLUSTER_QUEUE, "default", client=client)
    return Local(mode, client)


def stop_local(local: Local) -> None:
    try:
        local.clean()
    finally:
        local.client.close()
        local.mode.down()
        leftovers = la.alive(local.seen)
        la.kill_leftovers(leftovers)
        assert not leftovers, f"Ray processes survived: {[p.pid for p in leftovers]}"


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Local]:
    """A local mode of the module's own (Ray processes see this venv's ``python`` first)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", venv_path())
        home = tmp_path_factory.mktemp("cf-home")
        patch.setenv("CODEFLARE_HOME", str(home))
        started = start_local(home)
        try:
            yield started
        finally:
            stop_local(started)


@pytest.fixture(scope="module")
def control_plane(apiserver: ServerProcess) -> Iterator[Client]:
    """The module's API server with the operator running in a thread; an admin client of the SDK."""
    config = quiet_config()
    for probes in ("metrics", "health"):  # the harness serves them on ports of its own
        del config[probes]
    operator = ThreadedOperator(apiserver, config).start()
    client = Client.default(apiserver.kubeconfig)
    try:
        yield client
    finally:
        client.close()
        operator.stop()
