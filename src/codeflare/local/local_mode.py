"""``codeflare local up|down|status``: the embedded control plane as background processes.

``up`` starts the API server, the operator and the node agent (each its own process, logs under
``<home>/logs``), installs the CRDs, and creates namespace ``default``, a ResourceFlavor, a
ClusterQueue sized to this machine and a default LocalQueue; it returns once the Node is Ready
and the operator is ready. It is idempotent. ``down`` stops exactly the processes ``up``
started (by pid and start time); the agent stops every Ray process it started on its way out.
Objects survive a down/up: the state lives in ``<home>/apiserver/state.db``.

Identities: the operator runs as ServiceAccount ``codeflare-system/codeflare-operator`` with the
ClusterRole and Role shipped in deploy/ (installed from the packaged copy), through
``<home>/operator.kubeconfig`` carrying a TokenRequest token issued at each start, so local mode
exercises the same least-privilege RBAC as a cluster install. The node agent keeps the admin
kubeconfig: it plays kubelet and KubeRay (Nodes, Pods, RayCluster/RayJob status), whose cluster
identities are out of deploy/'s scope. Users get the admin kubeconfig (``<home>/kubeconfig``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeflare.kube.config import local_home

log = logging.getLogger(__name__)

COMPONENTS = ("apiserver", "operator", "agent")
OPERATOR_NAMESPACE = "codeflare-system"
FLAVOR = "default-flavor"
CLUSTER_QUEUE = "local-cluster-queue"
LOCAL_QUEUE = "local-queue"


@dataclass
class Component:
    name: str
    pid: int
    start_time: float
    log: str

    def alive(self) -> bool:
        from codeflare.local import processes

        return processes.pid_matches(self.pid, self.start_time)


class LocalMode:
    """One local-mode installation rooted at ``home``."""

    def __init__(self, home: str | Path | None = None, port: int | None = None) -> None:
        self.home = local_home(home)
        self.port = port
        self.record = self.home / "processes.json"

    @property
    def kubeconfig(self) -> Path:
        return self.home / "kubeconfig"

    @property
    def operator_kubeconfig(self) -> Path:
        """The operator's own credentials (its ServiceAccount's token), never admin's."""
        return self.home / "operator.kubeconfig"

    def components(self) -> dict[str, Component]:
        if not self.record.exists():
            return {}
        try:
            data = json.loads(self.record.read_text())
        except ValueError:
            return {}
        return {k: Component(**v) for k, v in data.items()}

    def _save(self, components: dict[str, Component]) -> None:
        self.record.write_text(json.dumps({k: vars(v) for k, v in components.items()}, indent=2))

    def _spawn(self, name: str, args: list[str], env: dict[str, str] | None = None) -> Component:
        from codeflare.local import processes

        logs = self.home / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / f"{name}.log"
        with open(log_path, "ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "codeflare.cli.main", *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            )
        return Component(name, proc.pid, processes.process_start_time(proc.pid) or 0.0, str(log_path))

    def _port(self) -> int:
        if self.port:
            return self.port
        saved = self.home / "apiserver" / "port"
        if saved.exists():
            return int(saved.read_text().strip())
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(str(port))
        return port

    def up(self, timeout: float = 120.0) -> dict[str, Component]:
        """Start whatever is not running and wait until the control plane is ready."""
        self.home.mkdir(parents=True, exist_ok=True)
        components = {k: v for k, v in self.components().items() if v.alive()}
        state_dir = self.home / "apiserver"
        if "apiserver" not in components:
            (state_dir / "kubeconfig").unlink(missing_ok=True)
            components["apiserver"] = self._spawn(
                "apiserver", ["server", "--state-dir", str(state_dir), "--port", str(self._port())]
            )
            self._save(components)
            _wait(
                lambda: (state_dir / "kubeconfig").exists(),
                timeout,
                "the API server to listen",
                components["apiserver"],
            )
        self.kubeconfig.write_text((state_dir / "kubeconfig").read_text())
        os.chmod(self.kubeconfig, 0o600)
        probe_port = self._bootstrap()
        if "operator" not in components:
            from codeflare.local.operator_identity import write_operator_kubeconfig

            write_operator_kubeconfig(self.kubeconfig, self.operator_kubeconfig)
            components["operator"] = self._spawn(
                "operator",
                [
                    "operator",
                    "--kubeconfig",
                    str(self.operator_kubeconfig),
                    "--namespace",
                    OPERATOR_NAMESPACE,
                ],
            )
        if "agent" not in components:
            components["agent"] = self._spawn("agent", ["local", "agent", "--home", str(self.home)])
        self._save(components)
        _wait(
            lambda: _http_ok(f"http://127.0.0.1:{probe_port}/readyz"),
            timeout,
            "the operator to be ready",
            components["operator"],
        )
        _wait(self._node_ready, timeout, "the node agent to register a Ready node", components["agent"])
        return components

    def _bootstrap(self) -> int:
        """CRDs, namespaces, operator config, queue objects (idempotent). Returns the probe port."""
        from codeflare.api.crds import load_crds
        from codeflare.kube import config, errors, kinds
        from codeflare.kube.client import Kube
        from codeflare.local.node_info import cpu_overcommit, detect_node_capacity
        from codeflare.local.operator_identity import install_rbac
        from codeflare.operator.config import CONFIG_KEY, CONFIGMAP_NAME, OperatorConfig, config_map

        kube = Kube(config.from_kubeconfig(self.kubeconfig), field_manager="codeflare-local")
        try:
            for crd in load_crds():
                # Look first: the embedded server answers a duplicate CRD with 422 (plural
                # already served), not 409, so a second `up` would fail on create alone.
                if kube.find(kinds.CRD, crd["metadata"]["name"]) is not None:
                    continue
                with contextlib.suppress(errors.AlreadyExists):
                    kube.create(kinds.CRD, crd)
            for ns in (OPERATOR_NAMESPACE, "default"):
                with contextlib.suppress(errors.AlreadyExists):
                    kube.create(kinds.NAMESPACE, {"metadata": {"name": ns}})
            install_rbac(kube)  # the operator's ServiceAccount, ClusterRole, Role and bindings (deploy/'s)
            existing = kube.find(kinds.CONFIGMAP, CONFIGMAP_NAME, OPERATOR_NAMESPACE)
            if existing is None:
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", 0))
                    probe_port = int(sock.getsockname()[1])
                doc = OperatorConfig.default().to_dict()
                doc["health"]["bindAddress"] = f"127.0.0.1:{probe_port}"
                doc["metrics"]["bindAddress"] = "0"
                doc["queueing"]["backoffTime"] = "2s"
                doc["instascale"]["enabled"] = False
                # Ray nodes are host processes here: no init containers to mint certificates, no
                # OpenShift OAuth proxy; the dashboard is served on 127.0.0.1 only.
                doc["kuberay"]["mTLSEnabled"] = False
                doc["kuberay"]["rayDashboardOAuthEnabled"] = False
                kube.create(kinds.CONFIGMAP, config_map(OPERATOR_NAMESPACE, OperatorConfig.from_dict(doc)))
            else:
                cfg = OperatorConfig.from_yaml(str((existing.get("data") or {}).get(CONFIG_KEY, "")))
                listen = cfg.health.listen
                probe_port = listen[1] if listen else 0
            capacity = detect_node_capacity()
            resources = [
                {"name": "cpu", "nominalQuota": str(capacity.cpus * cpu_overcommit())},
                {"name": "memory", "nominalQuota": str(capacity.memory_bytes)},
            ]
            covered = ["cpu", "memory"]
            if capacity.gpus:
                resources.append({"name": "nvidia.com/gpu", "nominalQuota": str(len(capacity.gpus))})
                covered.append("nvidia.com/gpu")
            objects: list[tuple[Any, dict[str, Any]]] = [
                (kinds.RESOURCE_FLAVOR, {"metadata": {"name": FLAVOR}, "spec": {}}),
                (
                    kinds.CLUSTER_QUEUE,
                    {
                        "metadata": {"name": CLUSTER_QUEUE},
                        "spec": {
                            "namespaceSelector": {},
                            "resourceGroups": [
                                {
                                    "coveredResources": covered,
                                    "flavors": [{"name": FLAVOR, "resources": resources}],
                                }
                            ],
                        },
                    },
                ),
                (
                    kinds.LOCAL_QUEUE,
                    {
                        "metadata": {
                            "name": LOCAL_QUEUE,
                            "namespace": "default",
                            "annotations": {"kueue.x-k8s.io/default-queue": "true"},
                        },
                        "spec": {"clusterQueue": CLUSTER_QUEUE},
                    },
                ),
            ]
            for kind, body in objects:
                with contextlib.suppress(errors.AlreadyExists):
                    kube.create(kind, body)
            return probe_port
        finally:
            kube.close()

    def _node_ready(self) -> bool:
        from codeflare.kube import config, kinds
        from codeflare.kube.client import Kube

        kube = Kube(config.from_kubeconfig(self.kubeconfig))
        try:
            for node in kube.list(kinds.NODE):
                for cond in (node.get("status") or {}).get("conditions") or []:
                    if cond.get("type") == "Ready" and cond.get("status") == "True":
                        return True
            return False
        finally:
            kube.close()

    def down(self, timeout: float = 60.0) -> list[str]:
        """Stop the agent (which stops its Ray processes), the operator, then the API server."""
        stopped = []
        components = self.components()
        for name in ("agent", "operator", "apiserver"):
            comp = components.get(name)
            if comp is None or not comp.alive():
                continue
            with contextlib.suppress(ProcessLookupError):
                os.kill(comp.pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while comp.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            if comp.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(comp.pid, signal.SIGKILL)
            stopped.append(name)
        self._stop_leftover_ray()
        self.record.unlink(missing_ok=True)
        return stopped

    def _stop_leftover_ray(self) -> None:
        """Stop Ray nodes recorded in the agent journal (only if the agent died without cleaning up)."""
        from codeflare.local import processes
        from codeflare.local.cluster_runner import RayNode

        for path in sorted((self.home / "clusters").glob("*.json")):
            with contextlib.suppress(OSError, ValueError, KeyError):
                for data in json.loads(path.read_text()).get("nodes", []):
                    processes.stop(RayNode.from_dict(data).handle, grace=1.0)
                path.unlink()

    def status(self) -> dict[str, Any]:
        comps = self.components()
        return {
            "home": str(self.home),
            "kubeconfig": str(self.kubeconfig) if self.kubeconfig.exists() else None,
            "components": {
                name: {
                    "running": bool(c and c.alive()),
                    "pid": c.pid if c else None,
                    "log": c.log if c else None,
                }
                for name in COMPONENTS
                for c in [comps.get(name)]
            },
        }


def _http_ok(url: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _wait(predicate: Any, timeout: float, what: str, component: Component) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if predicate():
                return
        if not component.alive():
            tail = (
                Path(component.log).read_text(errors="replace")[-2000:]
                if Path(component.log).exists()
                else ""
            )
            raise RuntimeError(
                f"{component.name} exited while waiting for {what}; its log ends with:\n{tail}"
            )
        time.sleep(0.2)
    raise TimeoutError(
        f"timed out after {timeout:.0f}s waiting for {what} (logs in {Path(component.log).parent})"
    )
