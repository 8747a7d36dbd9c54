"""``codeflare local up|down|status``: the embedded control plane as background processes.

``up`` starts the API server, the operator, the node agent and the dashboard (each its own process
and process group, logs under ``<home>/logs``), bootstraps the API (:mod:`bootstrap`), and returns once the
Node is Ready and the operator is ready. It is idempotent. ``down`` stops everything ``up``
started, by the process groups it created (:mod:`components`), even where a process's identity is
in doubt; the agent stops every Ray process it started on its way out, and Ray nodes an agent left
behind are stopped from its journal. ``down`` reports each thing it stopped and each it could not;
the record of what survives is kept so a later ``down`` can try again. Objects survive a
down/up: the state lives in ``<home>/apiserver/state.db``.

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
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeflare.k8s.files import write_private
from codeflare.kube.config import local_home
from codeflare.local.mode import components
from codeflare.local.mode.bootstrap import OPERATOR_NAMESPACE, bootstrap
from codeflare.local.mode.components import Component, DownReport, Stopped

COMPONENTS = ("apiserver", "operator", "agent", "dashboard")
STOP_ORDER = ("dashboard", "agent", "operator", "apiserver")
DASHBOARD_PORT = 8686  # the dashboard's port when free at the first `up` (then kept)


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

    @property
    def dashboard_url_file(self) -> Path:
        return self.home / "dashboard" / "url"

    def dashboard_url(self) -> str | None:
        """The URL the running dashboard printed (None before the first ``up``)."""
        try:
            return self.dashboard_url_file.read_text().strip() or None
        except OSError:
            return None

    def components(self) -> dict[str, Component]:
        return components.load(self.record)

    def running(self, comp: Component) -> bool:
        return components.running(comp, self.home)

    def _spawn(self, name: str, args: list[str], env: dict[str, str] | None = None) -> Component:
        return components.spawn(
            name,
            [sys.executable, "-m", "codeflare.cli.main", *args],
            self.home / "logs" / f"{name}.log",
            {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )

    def _port(self) -> int:
        return self.port or _saved_port(self.home / "apiserver" / "port")

    def up(self, timeout: float = 120.0) -> dict[str, Component]:
        """Start whatever is not running and wait until the control plane is ready."""
        self.home.mkdir(parents=True, exist_ok=True)
        started = {
            k: components.upgraded(v, self.home) for k, v in self.components().items() if self.running(v)
        }
        state_dir = self.home / "apiserver"
        if "apiserver" not in started:
            (state_dir / "kubeconfig").unlink(missing_ok=True)
            started["apiserver"] = self._spawn(
                "apiserver", ["server", "--state-dir", str(state_dir), "--port", str(self._port())]
            )
            components.save(self.record, started)
            self._wait(
                lambda: (state_dir / "kubeconfig").exists(),
                timeout,
                "the API server to listen",
                started["apiserver"],
            )
        write_private(self.kubeconfig, (state_dir / "kubeconfig").read_text())
        probe_port = bootstrap(self.kubeconfig)
        if "operator" not in started:
            from codeflare.local.mode.operator_identity import write_operator_kubeconfig

            write_operator_kubeconfig(self.kubeconfig, self.operator_kubeconfig)
            started["operator"] = self._spawn(
                "operator",
                [
                    "operator",
                    "--kubeconfig",
                    str(self.operator_kubeconfig),
                    "--namespace",
                    OPERATOR_NAMESPACE,
                ],
            )
        if "agent" not in started:
            started["agent"] = self._spawn("agent", ["local", "agent", "--home", str(self.home)])
        if "dashboard" not in started:
            started["dashboard"] = self._spawn_dashboard(probe_port)
        components.save(self.record, started)
        self._wait(self.dashboard_url_file.exists, timeout, "the dashboard to listen", started["dashboard"])
        self._wait(
            lambda: _http_ok(f"http://127.0.0.1:{probe_port}/readyz"),
            timeout,
            "the operator to be ready",
            started["operator"],
        )
        self._wait(self._node_ready, timeout, "the node agent to register a Ready node", started["agent"])
        return started

    def _spawn_dashboard(self, probe_port: int) -> Component:
        """The dashboard, with the admin kubeconfig users get, on a port kept across ups."""
        self.dashboard_url_file.unlink(missing_ok=True)
        port = _saved_port(self.home / "dashboard" / "port", DASHBOARD_PORT)
        args = ["dashboard", "--kubeconfig", str(self.kubeconfig), "--port", str(port)]
        args += ["--operator-health", f"http://127.0.0.1:{probe_port}/readyz"]
        return self._spawn("dashboard", [*args, "--url-file", str(self.dashboard_url_file)])

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

    def down(self, timeout: float = 60.0) -> DownReport:
        """Stop the agent (which stops its Ray processes), the operator, then the API server, each
        by its process group, then any Ray node a dead agent left behind. Whatever survives stays
        in the record (and in the report)."""
        report = DownReport()
        recorded = self.components()
        survivors: dict[str, Component] = {}
        for name in STOP_ORDER:
            comp = recorded.get(name)
            if comp is None:
                continue
            result = components.stop(comp, self.home, timeout)
            report.results.append(result)
            if not result.ok:
                survivors[name] = comp
        report.results.extend(self._stop_leftover_ray())
        if survivors:
            components.save(self.record, survivors)
        else:
            self.record.unlink(missing_ok=True)
        return report

    def _stop_leftover_ray(self) -> list[Stopped]:
        """Stop Ray nodes recorded in the agent journal (only if the agent died without cleaning up)."""
        from codeflare.local.agent import processes
        from codeflare.local.agent.cluster_runner import RayNode

        results = []
        for path in sorted((self.home / "clusters").glob("*.json")):
            try:
                state = json.loads(path.read_text())
                nodes = [RayNode.from_dict(data) for data in state.get("nodes", [])]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            left = False
            for node in nodes:
                stopped = processes.stop(node.handle, grace=1.0, in_doubt="stop")
                what = f"Ray node {node.name} of cluster {state.get('name')} (pid {node.handle.pid})"
                results.append(Stopped(what, stopped.stopped, stopped.survivors))
                left = left or bool(stopped.survivors)
            if not left:
                path.unlink(missing_ok=True)
        return results

    def status(self) -> dict[str, Any]:
        comps = self.components()
        return {
            "home": str(self.home),
            "kubeconfig": str(self.kubeconfig) if self.kubeconfig.exists() else None,
            "dashboard": self.dashboard_url(),
            "components": {
                name: {
                    "running": bool(c and self.running(c)),
                    "pid": c.pid if c else None,
                    "log": c.log if c else None,
                }
                for name in COMPONENTS
                for c in [comps.get(name)]
                if name != "dashboard" or c is not None  # a home an older version started has none
            },
        }

    def _wait(self, predicate: Callable[[], bool], timeout: float, what: str, component: Component) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                if predicate():
                    return
            if not self.running(component):
                log = Path(component.log)
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(
                    f"{component.name} exited while waiting for {what}; its log ends with:\n{tail}"
                )
            time.sleep(0.2)
        raise TimeoutError(
            f"timed out after {timeout:.0f}s waiting for {what} (logs in {Path(component.log).parent})"
        )


def _saved_port(saved: Path, preferred: int = 0) -> int:
    """The port recorded in ``saved``; else ``preferred`` when free (any free one otherwise), recorded."""
    if saved.exists():
        return int(saved.read_text().strip())
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", preferred))
        except OSError:
            sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(str(port))
    return port


def _http_ok(url: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False
