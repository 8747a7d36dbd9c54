"""Turn one Ray node's description into the ``ray start ... --block`` command that runs it.

A pure function of its inputs (no I/O, no environment reads): the agent describes a node the way a
KubeRay pod would have it (resources from the pod template, the group's ``rayStartParams``), and
gets back the argv and environment for the process layer. Local isolation is enforced here: every
port comes from :mod:`codeflare.local.agent.ports`, the temp dir is per node and short, the dashboard
binds loopback only, usage stats are off. ``rayStartParams`` keys are mapped as KubeRay does
(``--key=value``; ``"true"`` turns a flag on); keys that would break isolation are overridden by
ours (with a warning) or refused (see ``_OWNED_KEYS`` and ``_REFUSED_KEYS``). It starts nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from codeflare.local.agent.ports import RayNodePorts

logger = logging.getLogger(__name__)

#: Ray's minimum object store size (``ray_constants.OBJECT_STORE_MINIMUM_MEMORY_BYTES``).
OBJECT_STORE_MINIMUM_BYTES = 75 * 1024 * 1024
#: Unix socket paths are limited to 107 bytes; Ray appends about 65 to the temp dir
#: (``/session_<date>_<time>_<usec>_<pid>/sockets/plasma_store``).
MAX_TEMP_DIR_LENGTH = 40
LOOPBACK = "127.0.0.1"
# What ``ray start`` prints once the node's processes are up (the point where it would return
# without ``--block``).
RAY_STARTED = "Ray runtime started."

Role = Literal["head", "worker"]

# Keys the agent decides itself: a user value is ignored (logged), ours is used.
_OWNED_KEYS = frozenset(
    {
        "address",
        "port",
        "node-ip-address",
        "temp-dir",
        "head",
        "block",
        "disable-usage-stats",
        "dashboard-host",
        "dashboard-port",
        "ray-client-server-port",
        "node-manager-port",
        "object-manager-port",
        "metrics-export-port",
        "dashboard-agent-grpc-port",
        "dashboard-agent-listen-port",
        "runtime-env-agent-port",
        "min-worker-port",
        "max-worker-port",
        "worker-port-list",
        "redis-password",
        "redis-username",
        "node-name",
    }
)
# Keys that would reach outside this node's sandbox (host cgroups, shared paths, external
# exposure, arbitrary startup code): refused with a clear error.
_REFUSED_KEYS = frozenset(
    {
        "plasma-directory",
        "object-spilling-directory",
        "autoscaling-config",
        "redis-shard-ports",
        "ray-debugger-external",
        "enable-resource-isolation",
        "system-reserved-cpu",
        "system-reserved-memory",
        "cgroup-path",
        "proxy-server-url",
        "labels-file",
        "system-config",
        "tracing-startup-hook",
    }
)
_INT_KEYS = frozenset({"num-cpus", "num-gpus", "memory", "object-store-memory"})
_BOOL_VALUE_KEYS = frozenset({"include-dashboard", "include-log-monitor"})
_FLAG_KEYS = frozenset({"no-monitor", "enable-object-reconstruction", "no-redirect-output"})
_TEXT_KEYS = frozenset({"labels", "log-style", "log-color"})


class RayStartParamError(ValueError):
    """A ``rayStartParams`` entry that local mode cannot honour; the message names the key."""


@dataclass(frozen=True)
class RayNodeSpec:
    """What the agent knows about one Ray node (one KubeRay pod)."""

    cluster: str
    role: Role
    group: str
    num_cpus: int
    temp_dir: str
    ports: RayNodePorts
    num_gpus: int = 0
    memory_bytes: int | None = None
    object_store_memory_bytes: int | None = None
    resources: Mapping[str, float] = field(default_factory=dict)
    ray_start_params: Mapping[str, str] = field(default_factory=dict)
    head_address: str | None = None
    gpu_ids: tuple[int, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RayStartCommand:
    """The argv and full environment to start a node with."""

    argv: list[str]
    env: dict[str, str]


def default_ray_executable() -> str:
    """The ``ray`` script installed beside the running interpreter."""
    return str(Path(sys.executable).parent / "ray")


def node_temp_dir(cluster: str, node: str, root: str = "/tmp") -> str:
    """A short per-node temp dir under a per-cluster directory: ``/tmp/cf-<8 hex>/<6 hex>``."""
    return f"{cluster_temp_root(cluster, root)}/{_short_hash(cluster + '/' + node, 6)}"


def cluster_temp_root(cluster: str, root: str = "/tmp") -> str:
    """The per-cluster directory holding every node's temp dir."""
    return f"{root.rstrip('/')}/cf-{_short_hash(cluster, 8)}"


def build_ray_start(
    spec: RayNodeSpec,
    base_env: Mapping[str, str],
    ray_executable: str | None = None,
) -> RayStartCommand:
    """The ``ray start --block`` argv and env for ``spec``; raises :class:`RayStartParamError`."""
    _check_spec(spec)
    params = _user_params(spec)
    num_cpus = params.ints.get("num-cpus", spec.num_cpus)
    num_gpus = params.ints.get("num-gpus", spec.num_gpus)
    memory = params.ints.get("memory", spec.memory_bytes)
    object_store = params.ints.get("object-store-memory", spec.object_store_memory_bytes)
    if object_store is None and memory is not None:
        object_store = max(OBJECT_STORE_MINIMUM_BYTES, int(memory * 0.3))
    resources = {**spec.resources, **params.resources}

    ports = spec.ports
    argv = [ray_executable or default_ray_executable(), "start", "--block", "--disable-usage-stats"]
    if spec.role == "head":
        assert ports.gcs is not None and ports.dashboard is not None and ports.client_server is not None
        argv += [
            "--head",
            f"--port={ports.gcs}",
            f"--dashboard-host={LOOPBACK}",
            f"--dashboard-port={ports.dashboard}",
            f"--ray-client-server-port={ports.client_server}",
        ]
    else:
        argv.append(f"--address={spec.head_address}")
    argv += [
        # Ray rewrites a loopback node IP to the host's primary address (resolve_ip_for_localhost)
        # and its GCS and raylet listen on all interfaces; isolation between clusters is by port.
        f"--node-ip-address={LOOPBACK}",
        f"--temp-dir={spec.temp_dir}",
        f"--node-manager-port={ports.node_manager}",
        f"--object-manager-port={ports.object_manager}",
        f"--metrics-export-port={ports.metrics_export}",
        f"--dashboard-agent-grpc-port={ports.dashboard_agent_grpc}",
        f"--dashboard-agent-listen-port={ports.dashboard_agent_listen}",
        f"--runtime-env-agent-port={ports.runtime_env_agent}",
        f"--min-worker-port={ports.min_worker}",
        f"--max-worker-port={ports.max_worker}",
        f"--num-cpus={num_cpus}",
        f"--num-gpus={num_gpus}",
    ]
    if memory is not None:
        argv.append(f"--memory={memory}")
    if object_store is not None:
        argv.append(f"--object-store-memory={object_store}")
    if resources:
        argv.append(f"--resources={json.dumps(resources, sort_keys=True, separators=(',', ':'))}")
    argv += params.extra_args
    return RayStartCommand(argv=argv, env=_node_env(spec, base_env))


# -- internals ---------------------------------------------------------------------------------


@dataclass
class _UserParams:
    ints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, float] = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)


def _check_spec(spec: RayNodeSpec) -> None:
    where = f"{spec.cluster} {spec.role} node of group {spec.group!r}"
    if spec.role not in ("head", "worker"):
        raise ValueError(f"{where}: role {spec.role!r} must be 'head' or 'worker'")
    if spec.num_cpus < 0 or spec.num_gpus < 0:
        raise ValueError(f"{where}: num_cpus and num_gpus must not be negative")
    if spec.role == "head" and (
        spec.ports.gcs is None or spec.ports.dashboard is None or spec.ports.client_server is None
    ):
        raise ValueError(f"{where}: a head needs gcs, dashboard and client_server ports")
    if spec.role == "worker" and not spec.head_address:
        raise ValueError(f"{where}: a worker needs head_address (the head's GCS host:port)")
    if not spec.temp_dir.startswith("/") or len(spec.temp_dir) > MAX_TEMP_DIR_LENGTH:
        raise ValueError(
            f"{where}: temp_dir {spec.temp_dir!r} must be absolute and at most "
            f"{MAX_TEMP_DIR_LENGTH} characters (Ray's unix socket paths must stay under 107 bytes)"
        )


def _user_params(spec: RayNodeSpec) -> _UserParams:
    out = _UserParams()
    for raw_key, raw_value in sorted(spec.ray_start_params.items()):
        key = raw_key.strip().lstrip("-")
        value = str(raw_value).strip()
        where = f"rayStartParams[{raw_key!r}] of group {spec.group!r} in {spec.cluster}"
        if key in _OWNED_KEYS:
            if key not in ("block", "disable-usage-stats") or value.lower() != "true":
                logger.warning("%s=%r ignored: local mode sets it itself", where, value)
        elif key in _REFUSED_KEYS:
            raise RayStartParamError(f"{where}: not allowed in local mode (it reaches outside the node)")
        elif key in _INT_KEYS:
            out.ints[key] = _parse_int(value, where)
        elif key == "resources":
            out.resources = _parse_resources(value, where)
        elif key in _BOOL_VALUE_KEYS:
            flag = _parse_bool(value, where)
            if key == "include-dashboard" and spec.role == "head" and flag == "false":
                raise RayStartParamError(
                    f"{where}: local mode needs the head's dashboard "
                    "(readiness checks and the Jobs API go through it)"
                )
            out.extra_args.append(f"--{key}={flag}")
        elif key in _FLAG_KEYS:
            if _parse_bool(value, where) == "true":
                out.extra_args.append(f"--{key}")
        elif key in _TEXT_KEYS:
            out.extra_args.append(f"--{key}={value}")
        else:
            raise RayStartParamError(f"{where}: unknown or unsupported ray start option")
    return out


def _parse_int(value: str, where: str) -> int:
    try:
        number = int(value.strip('"'))
    except ValueError:
        raise RayStartParamError(f"{where}={value!r}: must be a whole number") from None
    if number < 0:
        raise RayStartParamError(f"{where}={value!r}: must not be negative")
    return number


def _parse_bool(value: str, where: str) -> str:
    lowered = value.strip('"').lower()
    if lowered not in ("true", "false"):
        raise RayStartParamError(f"{where}={value!r}: must be 'true' or 'false'")
    return lowered


def _parse_resources(value: str, where: str) -> dict[str, float]:
    text = value
    # KubeRay examples wrap the JSON in an extra pair of quotes: '"{\"TPU\": 4}"'.
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].replace('\\"', '"')
    try:
        parsed = json.loads(text) if text else {}
    except ValueError:
        raise RayStartParamError(f"{where}={value!r}: must be a JSON object of name to number") from None
    if not isinstance(parsed, dict) or not all(
        isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
        for k, v in parsed.items()
    ):
        raise RayStartParamError(f"{where}={value!r}: must be a JSON object of name to number >= 0")
    return {k: float(v) for k, v in parsed.items()}


def _node_env(spec: RayNodeSpec, base_env: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in base_env.items() if k != "RAY_ADDRESS"}
    env.update(spec.env)
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    if spec.gpu_ids is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in spec.gpu_ids)
    return env


def _short_hash(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]
