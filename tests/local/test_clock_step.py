"""A wall-clock step does not make local mode lose track of its processes.

The whole of local mode (``local up``: API server, operator, agent, and the Ray nodes the agent
starts) runs in a mount namespace whose ``/proc/stat`` is a file the test controls: stepping the
clock is rewriting the boot time (``btime``) in it, which is exactly what the kernel shows after
``date -s``, an NTP step or a VM restore, and what psutil's create times are computed from. After
a step forward and one backward, the agent still knows its cluster's processes: a reconcile pass
provably ran after each step (a worker group scaled, reaching ready), yet the head is the process
it was (same pid, no Failed pod); ``local status`` sees every component running; and
``local down``, itself run under the stepped clock, stops everything, leaving no process behind.
The cluster lives in a namespace without a default LocalQueue, so resizing it is not a queueing
event (an admitted workload whose size changes is evicted and requeued, which would restart it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from codeflare.local.mode import components
from tests.local.conftest import agent_env
from tests.support import local_agent as la
from tests.support.control_plane import wait_for
from tests.support.environment import unavailable

pytestmark = pytest.mark.ray

# Runs "$@" with `$0` bind-mounted over /proc/stat, in a mount namespace of its own.
_WITH_CLOCK = 'mount --bind "$0" /proc/stat && exec "$@"'
NS = "unqueued"


class SteppedClock:
    """A copy of /proc/stat whose boot time the test moves; :meth:`run` runs a command seeing it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.step(0)

    def step(self, seconds: int) -> None:
        """Step the wall clock by ``seconds`` as the kernel would show it (in place: same inode)."""
        self.offset += seconds
        lines = []
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                line = f"btime {int(line.split()[1]) + self.offset}"
            lines.append(line)
        with open(self.path, "r+" if self.path.exists() else "w") as out:
            out.seek(0)
            out.truncate()
            out.write("\n".join(lines) + "\n")

    def argv(self, *command: str) -> list[str]:
        return [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            _WITH_CLOCK,
            str(self.path),
            *command,
        ]

    def btime(self) -> int:
        out = subprocess.run(
            self.argv("grep", "btime", "/proc/stat"), capture_output=True, text=True, check=True
        )
        return int(out.stdout.split()[1])


def codeflare(
    clock: SteppedClock, home: Path, *args: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **agent_env(), "CODEFLARE_HOME": str(home)}
    return subprocess.run(
        clock.argv(sys.executable, "-m", "codeflare.cli.main", "local", *args, "--home", str(home)),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def clock(tmp_path: Path) -> SteppedClock:
    if shutil.which("unshare") is None:
        unavailable("needs unshare(1)")
    clock = SteppedClock(tmp_path / "stat")
    probe = subprocess.run(clock.argv("true"), capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        unavailable(f"needs mount namespaces (root): {probe.stderr.strip()}")
    return clock


@pytest.fixture
def home(tmp_path: Path, clock: SteppedClock) -> Iterator[Path]:
    home = tmp_path / "cf-home"
    try:
        yield home
    finally:
        if (home / "processes.json").exists():
            codeflare(clock, home, "down")


def head_pid(obj: dict[str, Any]) -> int:
    return la.recorded_node_pids(obj)["head"][0]


def scaled(kube: Kube, name: str, workers: int) -> dict[str, Any] | None:
    """The cluster once ready with exactly ``workers`` ready workers (a completed reconcile pass)."""
    obj = la.is_ready(kube, name, NS)
    if obj is None:
        return None
    status = obj.get("status") or {}
    if status.get("desiredWorkerReplicas") != workers or status.get("readyWorkerReplicas") != workers:
        return None
    return obj


def failed_pods(kube: Kube, name: str) -> list[str]:
    pods = kube.list(kinds.POD, NS, labels={"ray.io/cluster": name})
    return [p["metadata"]["name"] for p in pods if (p.get("status") or {}).get("phase") == "Failed"]


def set_workers(kube: Kube, name: str, workers: int) -> None:
    obj = kube.get(kinds.RAYCLUSTER, name, NS)
    groups = obj["spec"]["workerGroupSpecs"]
    groups[0].update(replicas=workers, maxReplicas=max(workers, 1))
    kube.patch(kinds.RAYCLUSTER, name, {"spec": {"workerGroupSpecs": groups}}, NS)


def test_a_clock_step_restarts_nothing_and_down_still_stops_everything(
    clock: SteppedClock, home: Path
) -> None:
    up = codeflare(clock, home, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    started = components.load(home / "processes.json")
    ours = [psutil.Process(c.pid) for c in started.values()]
    kube = Kube(config.from_kubeconfig(home / "kubeconfig"))
    seen = []
    try:
        kube.create(kinds.NAMESPACE, {"metadata": {"name": NS}})
        kube.create(kinds.RAYCLUSTER, la.raycluster("steady", NS, workers=0))
        ready = la.wait_ready(kube, "steady", 180, NS)
        assert ready["spec"]["suspend"] is False and not ready["metadata"].get("labels")
        head = head_pid(ready)
        seen.extend(la.cluster_processes(kube, "steady", NS))

        for step, workers in ((2, 1), (-3600, 0)):
            before = clock.btime()
            clock.step(step)
            assert clock.btime() == before + step, "the stepped view did not move"
            # A pass over the cluster after the step: it must scale, and become ready again.
            set_workers(kube, "steady", workers)
            obj = wait_for(lambda w=workers: scaled(kube, "steady", w), 150, 0.2, what=f"{workers} workers")
            assert obj is not None
            assert head_pid(obj) == head, f"the head was restarted after a {step:+d} s clock step"
            assert la.pod_pids(kube, "steady", NS) >= {head}
            assert failed_pods(kube, "steady") == []
            seen.extend(la.cluster_processes(kube, "steady", NS))
            status = codeflare(clock, home, "status")
            assert status.returncode == 0, f"a component looks stopped after the step:\n{status.stdout}"
    finally:
        kube.close()

    down = codeflare(clock, home, "down")
    assert down.returncode == 0, down.stdout + down.stderr
    for name, comp in started.items():
        assert f"stopped {name} (pid {comp.pid})" in down.stdout
    assert not la.alive(seen), "a Ray process survived `local down`"
    assert not la.alive(ours), "a control-plane process survived `local down`"
    assert not (home / "processes.json").exists()
