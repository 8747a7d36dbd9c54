"""``codeflare local up`` / ``down`` / ``up`` as a user runs them, with a real Ray cluster.

Objects survive a down/up (the state is in the API server's database); ``down`` leaves no
process of ours behind, neither the recorded control-plane processes nor any Ray process the
cluster's Pods pointed at; the next ``up`` brings the still-wanted cluster back to ready.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from tests.local.conftest import agent_env
from tests.support import local_agent as la

pytestmark = pytest.mark.ray


def codeflare(home: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **agent_env(), "CODEFLARE_HOME": str(home)}
    result = subprocess.run(
        [sys.executable, "-m", "codeflare.cli.main", "local", *args, "--home", str(home)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"codeflare local {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


def processes_naming(text: str) -> list[psutil.Process]:
    """This user's processes whose command line mentions ``text`` (our home dir)."""
    out = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if proc.pid != os.getpid() and any(text in arg for arg in proc.info["cmdline"] or []):
            out.append(proc)
    return out


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "cf-home"
    try:
        yield home
    finally:
        if (home / "processes.json").exists():
            codeflare(home, "down")


def test_up_down_up_keeps_objects_and_leaves_no_process(home: Path) -> None:
    started = codeflare(home, "up")
    recorded = json.loads((home / "processes.json").read_text())
    assert set(recorded) == {"apiserver", "operator", "agent", "dashboard"}
    url = (home / "dashboard" / "url").read_text().strip()
    assert f"dashboard: {url}" in started.stdout and url in codeflare(home, "status").stdout
    kube = Kube(config.from_kubeconfig(home / "kubeconfig"))
    try:
        assert kube.find(kinds.LOCAL_QUEUE, "local-queue", "default") is not None
        kube.create(
            kinds.CONFIGMAP, {"metadata": {"name": "notes", "namespace": "default"}, "data": {"k": "v"}}
        )
        kube.create(kinds.RAYCLUSTER, la.raycluster("kept", suspend=True, queue="local-queue"))
        ready = la.wait_ready(kube, "kept", 150)
        first_leaders = la.recorded_node_pids(ready)
        ray_procs = la.cluster_processes(kube, "kept")
        assert la.pod_pids(kube, "kept") == {pid for pid, _ in first_leaders.values()}
    finally:
        kube.close()
    ours = [psutil.Process(c["pid"]) for c in recorded.values()]

    codeflare(home, "down")
    assert not la.alive(ours), "a control-plane process survived `local down`"
    assert not la.alive(ray_procs), "a Ray process survived `local down`"
    assert not processes_naming(str(home)), "a process still names the local home"
    assert not list((home / "clusters").glob("*.json")), "the agent journal still lists clusters"

    codeflare(home, "up")
    kube = Kube(config.from_kubeconfig(home / "kubeconfig"))
    try:
        assert kube.get(kinds.CONFIGMAP, "notes", "default")["data"] == {"k": "v"}
        # `down` recorded that the cluster stopped: it does not claim ready with dead pids.
        assert la.state(kube, "kept") != "ready"
        again = la.wait_ready(kube, "kept", 150)
        assert again["metadata"]["uid"] == ready["metadata"]["uid"]
        new_leaders = la.recorded_node_pids(again)
        assert not {p for p, _ in new_leaders.values()} & {p for p, _ in first_leaders.values()}
        ray_procs = la.cluster_processes(kube, "kept")
    finally:
        kube.close()
    codeflare(home, "down")
    assert not la.alive(ray_procs)
    assert not processes_naming(str(home))
