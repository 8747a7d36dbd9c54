"""Host port reservations for Ray nodes, shared by every agent on this machine.

Several Ray clusters run side by side on one host, and each Ray node binds about ten fixed ports
plus a range for its workers. This module hands out those ports from a range kept *below* the
kernel's ephemeral range (so no outgoing connection or Ray's own random ports can take them),
checks each one is bindable right now, and records the reservation in a JSON file guarded by an
``fcntl`` lock in a shared directory, so two agents or two test processes never hand out the
same port. Reservations outlive the allocating process (a restarted agent re-adopts its nodes);
they end only through :meth:`PortAllocator.release`. It does not start or watch any process.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import socket
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

#: Default range: below Linux's default ephemeral range (32768-60999) and above common services.
DEFAULT_PORT_RANGE: tuple[int, int] = (20000, 32767)
#: Ports a Ray node's worker processes may bind (one per worker process, drivers included).
DEFAULT_WORKER_PORTS = 64

_REGISTRY_FILE = "ports.json"
_LOCK_FILE = "ports.lock"


class PortsExhaustedError(RuntimeError):
    """No free block of the requested size is left in the configured range."""


@dataclass(frozen=True)
class RayNodePorts:
    """Every port one Ray node binds; head-only ports are ``None`` on workers."""

    node_manager: int
    object_manager: int
    metrics_export: int
    dashboard_agent_grpc: int
    dashboard_agent_listen: int
    runtime_env_agent: int
    min_worker: int
    max_worker: int
    gcs: int | None = None
    dashboard: int | None = None
    client_server: int | None = None
    # Prometheus ports of the dashboard and of the autoscaler monitor (Ray's defaults, 44227 and
    # 44217, are fixed: two clusters would share them). None in records of earlier versions.
    dashboard_metrics: int | None = None
    autoscaler_metrics: int | None = None

    def all_ports(self) -> list[int]:
        """Every port this node owns, worker range expanded."""
        single = [
            self.node_manager,
            self.object_manager,
            self.metrics_export,
            self.dashboard_agent_grpc,
            self.dashboard_agent_listen,
            self.runtime_env_agent,
            self.gcs,
            self.dashboard,
            self.client_server,
            self.dashboard_metrics,
            self.autoscaler_metrics,
        ]
        return [p for p in single if p is not None] + list(range(self.min_worker, self.max_worker + 1))

    def to_dict(self) -> dict[str, int | None]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, int | None]) -> RayNodePorts:
        return cls(**data)  # type: ignore[arg-type]


def default_state_dir() -> Path:
    """The per-user directory all agents on this host share for reservations."""
    return Path(os.environ.get("CODEFLARE_LOCAL_STATE_DIR", f"/tmp/codeflare-{os.getuid()}"))


def ephemeral_port_range() -> tuple[int, int]:
    """The kernel's range for automatically assigned ports (Linux default if unreadable)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def port_is_bindable(port: int) -> bool:
    """True when nobody listens on ``port`` on any interface (Ray's GCS binds all of them)."""
    families: list[tuple[socket.AddressFamily, str]] = [(socket.AF_INET, "0.0.0.0")]
    if socket.has_ipv6:
        families.append((socket.AF_INET6, "::"))
    for family, host in families:
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # address family not available on this host
        with sock:
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind((host, port))
            except OSError as exc:
                if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    continue
                return False
    return True


class PortAllocator:
    """Reserves blocks of free ports for named owners (one owner = one Ray node).

    ``owner`` is any stable string the caller can find again after a restart, e.g.
    ``"<namespace>/<cluster>/<pod name>"``. Thread-safety comes from the file lock, which also
    serialises different processes.
    """

    def __init__(self, state_dir: Path | None = None, port_range: tuple[int, int] | None = None) -> None:
        self.state_dir = state_dir if state_dir is not None else default_state_dir()
        self.port_range = port_range if port_range is not None else DEFAULT_PORT_RANGE
        low, high = self.port_range
        if not 1024 <= low <= high <= 65535:
            raise ValueError(f"port_range {self.port_range}: must satisfy 1024 <= low <= high <= 65535")
        eph_low, eph_high = ephemeral_port_range()
        if low <= eph_high and eph_low <= high:
            logger.warning(
                "port range %s overlaps the kernel ephemeral range %s-%s; collisions become possible",
                self.port_range,
                eph_low,
                eph_high,
            )

    # -- public API -------------------------------------------------------------------------

    def reserve(self, owner: str, count: int, *, contiguous: bool = False) -> list[int]:
        """Reserve ``count`` free ports for ``owner`` (added to what it already holds)."""
        if count < 1:
            raise ValueError(f"count {count}: must be at least 1")
        with self._locked_registry() as registry:
            taken = {p for ports in registry.values() for p in ports}
            ports = self._find_free(taken, count, contiguous)
            registry.setdefault(owner, []).extend(ports)
        logger.debug("reserved ports %s for %s", ports, owner)
        return ports

    def reserve_node_ports(
        self, owner: str, *, head: bool, worker_ports: int = DEFAULT_WORKER_PORTS
    ) -> RayNodePorts:
        """Reserve every port a Ray node needs, in one locked step."""
        if worker_ports < 2:
            raise ValueError(f"worker_ports {worker_ports}: Ray needs at least 2 worker ports")
        singles_needed = 11 if head else 6
        with self._locked_registry() as registry:
            taken = {p for ports in registry.values() for p in ports}
            worker_range = self._find_free(taken, worker_ports, contiguous=True)
            singles = self._find_free(taken | set(worker_range), singles_needed, contiguous=False)
            registry.setdefault(owner, []).extend(singles + worker_range)
        it = iter(singles)
        ports = RayNodePorts(
            node_manager=next(it),
            object_manager=next(it),
            metrics_export=next(it),
            dashboard_agent_grpc=next(it),
            dashboard_agent_listen=next(it),
            runtime_env_agent=next(it),
            min_worker=worker_range[0],
            max_worker=worker_range[-1],
            gcs=next(it) if head else None,
            dashboard=next(it) if head else None,
            client_server=next(it) if head else None,
            dashboard_metrics=next(it) if head else None,
            autoscaler_metrics=next(it) if head else None,
        )
        logger.info("reserved node ports for %s: %s", owner, ports)
        return ports

    def release(self, owner: str) -> list[int]:
        """Give back everything ``owner`` holds; returns the released ports (empty if none)."""
        with self._locked_registry() as registry:
            released = registry.pop(owner, [])
        if released:
            logger.debug("released %d ports of %s", len(released), owner)
        return released

    def release_prefix(self, prefix: str) -> dict[str, list[int]]:
        """Give back every owner whose name starts with ``prefix`` (e.g. a deleted cluster's
        ``"<uid>/"`` found by a restarted agent); returns what was released."""
        with self._locked_registry() as registry:
            gone = {owner: registry.pop(owner) for owner in list(registry) if owner.startswith(prefix)}
        if gone:
            logger.info("released ports of %s", sorted(gone))
        return gone

    def reservations(self) -> dict[str, list[int]]:
        """A snapshot of every owner's ports (for an agent deciding what to clean up)."""
        with self._locked_registry() as registry:
            return {owner: list(ports) for owner, ports in registry.items()}

    # -- internals --------------------------------------------------------------------------

    def _find_free(self, taken: set[int], count: int, contiguous: bool) -> list[int]:
        low, high = self.port_range
        found: list[int] = []
        port = low
        while port <= high:
            if port in taken or not port_is_bindable(port):
                if contiguous:
                    found = []
                port += 1
                continue
            found.append(port)
            if len(found) == count:
                return found
            port += 1
        raise PortsExhaustedError(
            f"no {'contiguous block' if contiguous else 'set'} of {count} free ports left in "
            f"{low}-{high} ({len(taken)} reserved under {self.state_dir})"
        )

    @contextlib.contextmanager
    def _locked_registry(self) -> Iterator[dict[str, list[int]]]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        lock_path = self.state_dir / _LOCK_FILE
        registry_path = self.state_dir / _REGISTRY_FILE
        with open(lock_path, "a+") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                registry = _read_registry(registry_path)
                before = json.dumps(registry, sort_keys=True)
                yield registry
                if json.dumps(registry, sort_keys=True) != before:
                    tmp = registry_path.with_suffix(".tmp")
                    tmp.write_text(json.dumps(registry, sort_keys=True))
                    os.replace(tmp, registry_path)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _read_registry(path: Path) -> dict[str, list[int]]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        logger.warning("port registry %s unreadable; starting from an empty one", path)
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [int(p) for p in v] for k, v in data.items() if isinstance(v, list)}
