"""One Ray cluster run as host processes: a head, worker groups, readiness, scaling, teardown.

:class:`LocalRayCluster` is what the node agent drives for one RayCluster: it reserves ports,
builds ``ray start`` commands (:mod:`ray_node`), starts and stops processes (:mod:`processes`),
and learns readiness from the head's dashboard HTTP API (``/api/version``, ``/api/jobs/``,
``/nodes?view=summary``), never by importing Ray, which is slow and heavy. Its whole state
serialises to a JSON-able dict so a restarted agent can re-adopt running nodes
(:meth:`LocalRayCluster.adopt`); its credentials (the Ray token, the cluster CA) are given by the
agent and never part of that state. With a CA each node gets its own certificate signed by it,
in the node's temp dir. It does not talk to the Kubernetes API or decide how many workers to
run: the agent tells it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeflare.api.ray_auth import bearer_headers
from codeflare.local.agent import processes
from codeflare.local.agent.ports import DEFAULT_WORKER_PORTS, PortAllocator, RayNodePorts
from codeflare.local.agent.processes import ProcessHandle
from codeflare.local.agent.ray_node import (
    LOOPBACK,
    NodeTLS,
    RayNodeSpec,
    Role,
    build_ray_start,
    cluster_temp_root,
    node_temp_dir,
)

if TYPE_CHECKING:
    from codeflare.k8s.certs import CertPair

logger = logging.getLogger(__name__)

HEAD_NODE = "head"
_POLL_INTERVAL_S = 0.25
_HTTP_TIMEOUT_S = 2.0
# Loopback requests must never go through an HTTP proxy taken from the environment.
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class RayNodeFailedError(RuntimeError):
    """A node's ``ray start`` process exited; carries its exit code and the log's last lines."""

    def __init__(self, cluster: str, node: str, exit_code: int | None, log_tail: str) -> None:
        status = "unknown status" if exit_code is None else f"exit code {exit_code}"
        super().__init__(f"Ray node {node!r} of cluster {cluster!r} exited ({status}); log tail:\n{log_tail}")
        self.node = node
        self.exit_code = exit_code
        self.log_tail = log_tail


class ClusterNotReadyError(TimeoutError):
    """The cluster did not reach the awaited state in time; the message says what was missing."""


class StartAborted(ClusterNotReadyError):
    """Waiting for the cluster was given up on request (it is being deleted or suspended)."""


@dataclass(frozen=True)
class NodeTemplate:
    """The resources and options of the nodes of one group (from its pod template)."""

    num_cpus: int = 1
    num_gpus: int = 0
    memory_bytes: int | None = None
    object_store_memory_bytes: int | None = None
    resources: Mapping[str, float] = field(default_factory=dict)
    ray_start_params: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    gpu_ids: tuple[int, ...] | None = None


@dataclass(frozen=True)
class RayNode:
    """One started Ray node: its name in the cluster, ports and process handle."""

    name: str
    role: Role
    group: str
    ports: RayNodePorts
    handle: ProcessHandle

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RayNode:
        role: Role = "head" if data["role"] == "head" else "worker"
        return cls(
            name=str(data["name"]),
            role=role,
            group=str(data["group"]),
            ports=RayNodePorts.from_dict(dict(data["ports"])),
            handle=ProcessHandle.from_dict(data["handle"]),
        )


@dataclass(frozen=True)
class ClusterEndpoints:
    """Where the head listens; names follow RayCluster ``status.endpoints``."""

    gcs_server: int
    dashboard: int
    client: int
    host: str = LOOPBACK

    @property
    def gcs_address(self) -> str:
        return f"{self.host}:{self.gcs_server}"

    @property
    def dashboard_url(self) -> str:
        return f"http://{self.host}:{self.dashboard}"

    def as_status(self) -> dict[str, str]:
        """The RayCluster ``status.endpoints`` map (name -> port string)."""
        return {
            "gcs-server": str(self.gcs_server),
            "dashboard": str(self.dashboard),
            "client": str(self.client),
        }


@dataclass(frozen=True)
class NodeExit:
    """A node whose process is gone."""

    node: str
    exit_code: int | None


class LocalRayCluster:
    """A Ray cluster of host processes. Not thread-safe: one agent task drives one instance.

    ``name`` is for logs and node owners; ``uid`` must be unique on the host (the RayCluster's
    ``metadata.uid``) because it keys port reservations and temp dirs.
    """

    def __init__(
        self,
        name: str,
        head: NodeTemplate,
        *,
        uid: str | None = None,
        log_dir: Path | None = None,
        ports: PortAllocator | None = None,
        temp_root: str = "/tmp",
        ray_executable: str | None = None,
        base_env: Mapping[str, str] | None = None,
        worker_ports: int = DEFAULT_WORKER_PORTS,
        auth_token: str | None = None,
        tls_ca: CertPair | None = None,
    ) -> None:
        self.name = name
        self.auth_token = auth_token
        self.tls_ca = tls_ca
        self.uid = uid or uuid.uuid4().hex
        self.head_template = head
        self.port_allocator = ports or PortAllocator()
        self.log_dir = log_dir or self.port_allocator.state_dir / "logs" / self.uid
        self.temp_root = temp_root
        self.ray_executable = ray_executable
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.worker_ports = worker_ports
        self.nodes: dict[str, RayNode] = {}
        # a process beside the head that is not a Ray node (Ray's autoscaler: see autoscaler.py)
        self.sidecar: ProcessHandle | None = None
        self._next_index: dict[str, int] = {}
        self._abort = threading.Event()

    # -- state and endpoints ----------------------------------------------------------------

    @property
    def head(self) -> RayNode | None:
        return self.nodes.get(HEAD_NODE)

    @property
    def endpoints(self) -> ClusterEndpoints:
        head = self._require_head()
        assert head.ports.gcs and head.ports.dashboard and head.ports.client_server
        return ClusterEndpoints(head.ports.gcs, head.ports.dashboard, head.ports.client_server)

    @property
    def dashboard_url(self) -> str:
        """The head URL users and the Jobs API talk to."""
        return self.endpoints.dashboard_url

    @property
    def http_headers(self) -> dict[str, str]:
        """What every request to the dashboard carries (the token, when the cluster has one)."""
        return bearer_headers(self.auth_token)

    def workers(self, group: str | None = None) -> list[RayNode]:
        return [n for n in self.nodes.values() if n.role == "worker" and group in (None, n.group)]

    def to_state(self) -> dict[str, Any]:
        """Everything needed to re-adopt this cluster after an agent restart (JSON-able)."""
        return {
            "name": self.name,
            "uid": self.uid,
            "temp_root": self.temp_root,
            "log_dir": str(self.log_dir),
            "next_index": dict(self._next_index),
            "nodes": [n.to_dict() for n in self.nodes.values()],
            **({"sidecar": self.sidecar.to_dict()} if self.sidecar is not None else {}),
        }

    @classmethod
    def adopt(
        cls,
        state: Mapping[str, Any],
        head: NodeTemplate,
        *,
        ports: PortAllocator | None = None,
        ray_executable: str | None = None,
        base_env: Mapping[str, str] | None = None,
        auth_token: str | None = None,
        tls_ca: CertPair | None = None,
    ) -> LocalRayCluster:
        """Rebuild a cluster from :meth:`to_state`; nodes whose process is gone (or whose pid now
        belongs to another process) are dropped, their ports released and leftovers stopped."""
        cluster = cls(
            str(state["name"]),
            head,
            uid=str(state["uid"]),
            log_dir=Path(state["log_dir"]),
            ports=ports,
            temp_root=str(state["temp_root"]),
            ray_executable=ray_executable,
            base_env=base_env,
            auth_token=auth_token,
            tls_ca=tls_ca,
        )
        cluster._next_index = {str(k): int(v) for k, v in dict(state.get("next_index", {})).items()}
        for data in state.get("nodes", []):
            node = RayNode.from_dict(data)
            if processes.is_alive(node.handle):
                cluster.nodes[node.name] = node
                logger.info(
                    "cluster %s: re-adopted node %s (pid %d)", cluster.name, node.name, node.handle.pid
                )
            else:
                logger.warning(
                    "cluster %s: node %s (pid %d) is gone; cleaning up",
                    cluster.name,
                    node.name,
                    node.handle.pid,
                )
                cluster._forget(node, grace=0.0)
        if state.get("sidecar"):
            sidecar = ProcessHandle.from_dict(state["sidecar"])
            if processes.is_alive(sidecar):
                cluster.sidecar = sidecar
        return cluster

    # -- lifecycle ----------------------------------------------------------------------------

    def start_head(self, timeout: float = 90.0) -> RayNode:
        """Start the head and wait until GCS, dashboard, Jobs API and the head raylet answer."""
        if self.head is not None:
            return self.head
        node = self._start_node(HEAD_NODE, "head", "headgroup", self.head_template)
        try:
            self.wait_head_ready(timeout)
        except BaseException:
            self._forget(node, grace=1.0)
            raise
        return node

    def abort_start(self) -> None:
        """Make a :meth:`start_head` or wait in progress (in another thread) give up at its next
        look, raising :class:`StartAborted`: the cluster is to stop, not to wait for."""
        self._abort.set()

    def _raise_if_aborted(self) -> None:
        if self._abort.is_set():
            raise StartAborted(f"cluster {self.name}: start given up (the cluster is stopping)")

    def wait_head_ready(self, timeout: float) -> None:
        head = self._require_head()
        endpoints = self.endpoints
        deadline = time.monotonic() + timeout
        missing = "GCS port"
        headers = self.http_headers
        while time.monotonic() < deadline:
            self._raise_if_aborted()
            self._raise_if_dead(head)
            if not _tcp_open(LOOPBACK, endpoints.gcs_server):
                missing = f"GCS port {endpoints.gcs_server}"
            elif _http_get(f"{endpoints.dashboard_url}/api/version", headers) is None:
                missing = f"dashboard {endpoints.dashboard_url}/api/version"
            elif _http_get(f"{endpoints.dashboard_url}/api/jobs/", headers) is None:
                missing = "Jobs API /api/jobs/"
            elif head.ports.node_manager not in self.alive_node_ports():
                missing = "head raylet in /nodes?view=summary"
            else:
                logger.info("cluster %s: head ready at %s", self.name, endpoints.dashboard_url)
                return
            time.sleep(_POLL_INTERVAL_S)
        raise ClusterNotReadyError(
            f"cluster {self.name}: head not ready after {timeout:.0f}s; waiting for {missing}"
        )

    def next_names(self, group: str, count: int) -> list[str]:
        """The names the next ``count`` workers of ``group`` will get (nothing is started)."""
        first = self._next_index.get(group, 0)
        return [f"{group}-{index}" for index in range(first, first + count)]

    def add_worker(self, group: str, template: NodeTemplate) -> RayNode:
        """Start one worker of ``group`` (returns at once; see :meth:`wait_workers_ready`)."""
        self._require_head()
        index = self._next_index.get(group, 0)
        self._next_index[group] = index + 1
        return self._start_node(f"{group}-{index}", "worker", group, template)

    def scale_group(
        self, group: str, replicas: int, template: NodeTemplate, workers_to_delete: list[str] | None = None
    ) -> list[RayNode]:
        """Start or stop workers so ``group`` has ``replicas``: the named ones (KubeRay's
        ``workersToDelete``) go whatever the count, as KubeRay deletes exactly those; then the
        newest go, or new ones start. Returns the workers started."""
        if replicas < 0:
            raise ValueError(f"replicas {replicas}: must not be negative")
        named = set(workers_to_delete or [])
        for node in [n for n in self.workers(group) if n.name in named]:
            self.remove_worker(node.name)
        current = self.workers(group)
        excess = len(current) - replicas
        if excess > 0:
            newest = sorted(current, key=lambda n: n.handle.start_order, reverse=True)
            for node in newest[:excess]:
                self.remove_worker(node.name)
            return []
        return [self.add_worker(group, template) for _ in range(-excess)]

    def remove_worker(self, name: str, grace: float = 5.0) -> None:
        node = self.nodes.get(name)
        if node is None or node.role != "worker":
            raise KeyError(f"cluster {self.name} has no worker {name!r}")
        self._forget(node, grace)

    def wait_workers_ready(self, timeout: float = 90.0) -> None:
        """Wait until every worker's raylet is ALIVE in the head's node table."""
        deadline = time.monotonic() + timeout
        waiting: list[str] = []
        while time.monotonic() < deadline:
            self._raise_if_aborted()
            for node in self.workers():
                self._raise_if_dead(node)
            alive = self.alive_node_ports()
            waiting = [n.name for n in self.workers() if n.ports.node_manager not in alive]
            if not waiting:
                return
            time.sleep(_POLL_INTERVAL_S)
        raise ClusterNotReadyError(f"cluster {self.name}: workers {waiting} not alive after {timeout:.0f}s")

    def ready_nodes(self) -> list[str]:
        """Names of our nodes whose raylet the head reports ALIVE."""
        alive = self.alive_node_ports()
        return [
            n.name
            for n in self.nodes.values()
            if n.ports.node_manager in alive and processes.is_alive(n.handle)
        ]

    def alive_node_ports(self) -> set[int]:
        """Node-manager ports of the raylets the head's dashboard lists as ALIVE (empty if it
        does not answer). The port identifies our node, since every node has its own."""
        if self.head is None:
            return set()
        ports = alive_raylet_ports(self.endpoints.dashboard_url, self.http_headers)
        if ports is None:
            logger.warning("cluster %s: unexpected /nodes?view=summary answer", self.name)
        return ports or set()

    def dead_nodes(self) -> list[NodeExit]:
        """Nodes whose ``ray start`` process is gone, with exit codes where known."""
        return [
            NodeExit(n.name, processes.exit_code(n.handle))
            for n in self.nodes.values()
            if not processes.is_alive(n.handle)
        ]

    def forget_dead(self) -> list[NodeExit]:
        """Clean up after dead nodes (stragglers, ports, temp dirs) and drop them; returns them."""
        gone = self.dead_nodes()
        for exit_info in gone:
            self._forget(self.nodes[exit_info.node], grace=0.0)
        return gone

    def stop(self, grace: float = 5.0) -> list[str]:
        """Stop every node, all at once (one grace period for the cluster, not one per node),
        release ports and remove the temp dirs.

        Returns the nodes some of whose processes survived (the kernel refused to signal them):
        those stay in :meth:`to_state`, so whoever records it can report and retry them."""
        from concurrent.futures import ThreadPoolExecutor

        # the autoscaler first: it would ask for workers again while the nodes go
        sidecar_left = ["autoscaler"] if self.stop_sidecar(grace) is not None else []
        nodes = list(self.nodes.values())
        with ThreadPoolExecutor(max_workers=max(1, len(nodes)), thread_name_prefix="ray-stop") as pool:
            stopped = list(pool.map(lambda node: self._forget(node, grace, keep_survivors=True), nodes))
        left = sidecar_left + [node.name for node, ok in zip(nodes, stopped, strict=True) if not ok]
        if left:
            logger.error("cluster %s: processes of nodes %s survived stopping", self.name, left)
            return left
        shutil.rmtree(cluster_temp_root(self.uid, self.temp_root), ignore_errors=True)
        logger.info("cluster %s: stopped", self.name)
        return []

    def stop_sidecar(self, grace: float = 5.0) -> ProcessHandle | None:
        """Stop the sidecar process, if any; returns it when some of its processes survived."""
        sidecar, self.sidecar = self.sidecar, None
        if sidecar is not None and processes.stop(sidecar, grace).survivors:
            self.sidecar = sidecar
        return self.sidecar

    def client_tls(self, name: str) -> NodeTLS | None:
        """TLS files for a client of this cluster that is not a node (its autoscaler), when the
        cluster uses mTLS: a certificate of the cluster CA in a temp dir of its own."""
        return self._node_tls(name, node_temp_dir(self.uid, name, self.temp_root))

    # -- internals ----------------------------------------------------------------------------

    def _start_node(self, name: str, role: Role, group: str, template: NodeTemplate) -> RayNode:
        owner = f"{self.uid}/{name}"
        ports = self.port_allocator.reserve_node_ports(
            owner, head=role == "head", worker_ports=self.worker_ports
        )
        temp_dir = node_temp_dir(self.uid, name, self.temp_root)
        try:
            spec = RayNodeSpec(
                cluster=self.name,
                role=role,
                group=group,
                num_cpus=template.num_cpus,
                temp_dir=temp_dir,
                ports=ports,
                num_gpus=template.num_gpus,
                memory_bytes=template.memory_bytes,
                object_store_memory_bytes=template.object_store_memory_bytes,
                resources=template.resources,
                ray_start_params=template.ray_start_params,
                head_address=None if role == "head" else self.endpoints.gcs_address,
                gpu_ids=template.gpu_ids,
                env={**template.env, **_instance_env(self.name, name, group)},
                auth_token=self.auth_token,
                tls=self._node_tls(name, temp_dir),
            )
            command = build_ray_start(spec, self.base_env, self.ray_executable)
            handle = processes.start_process(
                command.argv,
                command.env,
                self.log_dir / f"{name}.log",
                temp_dir=temp_dir,
                extra={"cluster": self.name, "node": name},
            )
        except BaseException:
            self.port_allocator.release(owner)
            raise
        node = RayNode(name=name, role=role, group=group, ports=ports, handle=handle)
        self.nodes[name] = node
        logger.info("cluster %s: started %s node %s (pid %d)", self.name, role, name, handle.pid)
        return node

    def _node_tls(self, name: str, temp_dir: str) -> NodeTLS | None:
        """Create the node's temp dir, and in it, with a cluster CA, the node's certificate."""
        Path(temp_dir).mkdir(parents=True, exist_ok=True)
        if self.tls_ca is None:
            return None
        from codeflare.k8s.certs import issue
        from codeflare.k8s.files import write_private, write_public

        leaf = issue(self.tls_ca, f"ray-{self.name}-{name}", [LOOPBACK, "localhost"], peer=True, days=365)
        where = f"{temp_dir}/tls"
        tls = NodeTLS(cert=f"{where}/tls.crt", key=f"{where}/tls.key", ca=f"{where}/ca.crt")
        write_public(tls.ca, self.tls_ca.cert_pem)
        write_public(tls.cert, leaf.cert_pem)
        write_private(tls.key, leaf.key_pem)
        return tls

    def _forget(self, node: RayNode, grace: float, *, keep_survivors: bool = False) -> bool:
        """Stop the node's processes and drop it; False (and, with ``keep_survivors``, the node
        kept) when some of them survived."""
        result = processes.stop(node.handle, grace)
        if result.survivors and keep_survivors:
            return False
        self.port_allocator.release(f"{self.uid}/{node.name}")
        if node.handle.temp_dir:
            shutil.rmtree(node.handle.temp_dir, ignore_errors=True)
        self.nodes.pop(node.name, None)
        return not result.survivors

    def _require_head(self) -> RayNode:
        if self.head is None:
            raise RuntimeError(f"cluster {self.name}: the head is not started")
        return self.head

    def _raise_if_dead(self, node: RayNode) -> None:
        if processes.is_alive(node.handle):
            return
        raise RayNodeFailedError(
            self.name, node.name, processes.exit_code(node.handle), _tail(Path(node.handle.log_path))
        )


def _instance_env(cluster: str, node: str, group: str) -> dict[str, str]:
    """What KubeRay gives every Ray container so Ray's autoscaler (v2) knows which pod a node is:
    the pod's name as the cloud instance id, and its group as the node type."""
    from codeflare.local.agent.shapes import pod_name

    return {"RAY_CLOUD_INSTANCE_ID": pod_name(cluster, node), "RAY_NODE_TYPE_NAME": group}


def alive_raylet_ports(dashboard_url: str, headers: Mapping[str, str] | None = None) -> set[int] | None:
    """The node-manager ports of the ALIVE raylets in a dashboard's node table (empty when it
    does not answer, None when its answer is not the expected shape)."""
    # the dashboard caches /nodes answers for 2 s: without nocache a node that has just
    # registered stays invisible that long to a poller that asked a moment before
    body = _http_get(f"{dashboard_url}/nodes?view=summary&nocache=1", headers)
    if body is None:
        return set()
    try:
        summary = json.loads(body)["data"]["summary"]
        return {
            int(entry["raylet"]["nodeManagerPort"])
            for entry in summary
            if entry.get("raylet", {}).get("state") == "ALIVE"
        }
    except (ValueError, KeyError, TypeError):
        return None


def _tcp_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=_HTTP_TIMEOUT_S):
            return True
    except OSError:
        return False


def _http_get(url: str, headers: Mapping[str, str] | None = None) -> str | None:
    """The body of a 200 answer, or None for anything else (refused, timeout, error status)."""
    try:
        request = urllib.request.Request(url, headers=dict(headers or {}))
        with _HTTP.open(request, timeout=_HTTP_TIMEOUT_S) as response:
            body: bytes = response.read()
            return body.decode() if response.status == 200 else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
