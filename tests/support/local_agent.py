"""Runs ``codeflare local agent`` as a child process against a test API server, plus Ray checks.

The agent runs as users run it (its own process, its own session), so tests can SIGKILL and
restart it. The helpers here read what the agent publishes (RayCluster annotations, Pod pids)
and turn it into the set of host processes a cluster owns, so a test can check that none of
them survives a delete. Nothing here stops a process it did not start, and only by pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from codeflare.k8s.constants import (
    DASHBOARD_URL_ANNOTATION,
    LOCAL_PID_ANNOTATION,
    LOCAL_PROCESSES_ANNOTATION,
    QUEUE_NAME_LABEL,
)
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from tests.support.child_process import ChildProcess, spawn_cli, terminate
from tests.support.control_plane import wait_for

STATE_ANNOTATION = LOCAL_PROCESSES_ANNOTATION
DASHBOARD_ANNOTATION = DASHBOARD_URL_ANNOTATION
PID_ANNOTATION = LOCAL_PID_ANNOTATION
QUEUE_LABEL = QUEUE_NAME_LABEL


@dataclass
class AgentProcess(ChildProcess):
    """``codeflare local agent --home H --kubeconfig K`` as a child process.

    ``kill`` SIGKILLs the agent alone (its Ray nodes live in their own sessions and keep running).
    """

    home: Path
    kubeconfig: Path
    env: Mapping[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        return self.home / "agent.log"

    def start(self) -> AgentProcess:
        self.home.mkdir(parents=True, exist_ok=True)
        self.proc = spawn_cli(
            ["local", "agent", "--home", str(self.home), "--kubeconfig", str(self.kubeconfig)],
            self.log_path,
            self.env,
            stdin=subprocess.DEVNULL,
        )
        return self

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM: the agent stops every Ray process it runs on its way out."""
        return None if self.proc is None else terminate(self.proc, timeout)

    def log(self, tail: int = 60) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-tail:])


def raycluster(
    name: str,
    namespace: str = "default",
    *,
    workers: int = 1,
    suspend: bool = False,
    queue: str | None = None,
    cpu: str = "1",
    memory: str = "1Gi",
) -> dict[str, Any]:
    """A small RayCluster: 1-CPU, 1Gi head and ``workers`` workers of the same shape."""

    def template(container: str) -> dict[str, Any]:
        resources = {"cpu": cpu, "memory": memory}
        return {
            "spec": {
                "containers": [
                    {
                        "name": container,
                        "image": "rayproject/ray:2.60.0",
                        "resources": {"requests": dict(resources), "limits": dict(resources)},
                    }
                ]
            }
        }

    labels = {QUEUE_LABEL: queue} if queue else {}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "suspend": suspend,
            "headGroupSpec": {"rayStartParams": {}, "template": template("ray-head")},
            "workerGroupSpecs": [
                {
                    "groupName": "small",
                    "replicas": workers,
                    "minReplicas": 0,
                    "maxReplicas": max(workers, 1),
                    "rayStartParams": {},
                    "template": template("ray-worker"),
                }
            ],
        },
    }


def state(kube: Kube, name: str, namespace: str = "default") -> str | None:
    obj = kube.find(kinds.RAYCLUSTER, name, namespace)
    return None if obj is None else (obj.get("status") or {}).get("state")


def is_ready(kube: Kube, name: str, namespace: str = "default") -> dict[str, Any] | None:
    obj = kube.find(kinds.RAYCLUSTER, name, namespace)
    if obj is None or (obj.get("status") or {}).get("state") != "ready":
        return None
    return obj


def wait_ready(kube: Kube, name: str, timeout: float, namespace: str = "default") -> dict[str, Any]:
    """The RayCluster once its state is ready (AssertionError after ``timeout``)."""
    obj = wait_for(lambda: is_ready(kube, name, namespace), timeout, 0.2, what=f"RayCluster {name} ready")
    assert obj is not None
    return obj


def dashboard_url(obj: Mapping[str, Any]) -> str:
    url = (obj["metadata"].get("annotations") or {}).get(DASHBOARD_ANNOTATION)
    if url:
        return str(url)
    port = obj["status"]["endpoints"]["dashboard"]
    return f"http://127.0.0.1:{port}"


def http_ok(url: str, timeout: float = 3.0, headers: Mapping[str, str] | None = None) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with opener.open(request, timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def ray_headers(kube: Kube, name: str, namespace: str = "default") -> dict[str, str]:
    """The Authorization header a local cluster's dashboard wants (its token Secret's token)."""
    from codeflare.api.ray_auth import bearer_headers, token_from_secret, token_secret_name

    secret = kube.find(kinds.SECRET, token_secret_name(name), namespace)
    return bearer_headers(token_from_secret(secret) if secret is not None else None)


def recorded_node_pids(obj: Mapping[str, Any]) -> dict[str, tuple[int, float]]:
    """Ray node name -> (pid, start time) from the cluster's process-state annotation."""
    raw = (obj["metadata"].get("annotations") or {}).get(STATE_ANNOTATION)
    if not raw:
        return {}
    nodes = json.loads(raw).get("nodes", [])
    return {n["name"]: (int(n["handle"]["pid"]), float(n["handle"]["start_time"])) for n in nodes}


def pod_pids(kube: Kube, cluster: str, namespace: str = "default") -> set[int]:
    pods = kube.list(kinds.POD, namespace, labels={"ray.io/cluster": cluster})
    out = set()
    for pod in pods:
        pid = (pod["metadata"].get("annotations") or {}).get(PID_ANNOTATION)
        if pid:
            out.add(int(pid))
    return out


def process_tree(pids: Iterable[int]) -> list[psutil.Process]:
    """The given processes and all their descendants that run now (pid-reuse safe via psutil)."""
    found: dict[int, psutil.Process] = {}
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc = psutil.Process(pid)
            found[proc.pid] = proc
            for child in proc.children(recursive=True):
                found[child.pid] = child
    return list(found.values())


def cluster_processes(kube: Kube, name: str, namespace: str = "default") -> list[psutil.Process]:
    """Every host process of a running cluster: the recorded node leaders (annotation and Pod
    annotations) and their whole trees, plus anything in their process groups."""
    obj = kube.get(kinds.RAYCLUSTER, name, namespace)
    leaders = {pid for pid, _ in recorded_node_pids(obj).values()} | pod_pids(kube, name, namespace)
    tree = {p.pid: p for p in process_tree(leaders)}
    for proc in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
            if os.getpgid(proc.pid) in leaders:
                tree.setdefault(proc.pid, proc)
    return list(tree.values())


def alive(procs: Iterable[psutil.Process]) -> list[psutil.Process]:
    """Those of ``procs`` that still run (psutil checks the start time, so pid reuse is safe)."""
    out = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except psutil.NoSuchProcess:
            continue
    return out


def kill_leftovers(procs: Iterable[psutil.Process]) -> None:
    """Last-resort cleanup for a failed test: SIGKILL these exact processes (by pid, checked)."""
    for proc in alive(procs):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.kill()
