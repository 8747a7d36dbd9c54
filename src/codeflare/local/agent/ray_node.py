"""Turn one Ray node's description into the ``ray start ... --block`` command that runs it.

A pure function of its inputs (no I/O, no environment reads): the agent describes a node the way a
KubeRay pod would have it (resources from the pod template, the group's ``rayStartParams``), and
gets back the argv and environment for the process layer. Local isolation is enforced here: every
port comes from :mod:`codeflare.local.agent.ports` (Ray's fixed Prometheus ports of the dashboard
and autoscaler too, through their environment variables), the temp dir is per node and short,
every server binds loopback only (the node runs through :mod:`ray_launch`, which keeps
``127.0.0.1`` as the node's address, and its children get ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``,
which keeps it in theirs), usage stats are off. With a token the node requires it on every call
(``RAY_AUTH_MODE=token``); with TLS files every gRPC connection is mutual TLS (Ray's ``RAY_USE_TLS``
variables, replacing whatever the pod template said). ``rayStartParams`` keys are mapped as KubeRay does
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
class NodeTLS:
    """Where a node's TLS files are: its certificate and key (signed by the cluster CA) and the CA."""

    cert: str
    key: str
    ca: str

    def env(self) -> dict[str, str]:
        return {
            "RAY_USE_TLS": "1",
            "RAY_TLS_SERVER_CERT": self.cert,
            "RAY_TLS_SERVER_KEY": self.key,
            "RAY_TLS_CA_CERT": self.ca,
        }


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
    auth_token: str | None = None
    tls: NodeTLS | None = None


@dataclass(frozen=True)
class RayStartCommand:
    """The argv and full environment to start a node with."""

    argv: list[str]
    env: dict[str, str]


def ray_command(ray_executable: str | None = None) -> list[str]:
    """How a node's ``ray`` is run: Ray's own command through :mod:`ray_launch` (loopback kept),
    unless another executable is named."""
    if ray_executable is not None:
        return [ray_executable]
    return [sys.executable, "-m", "codeflare.local.agent.ray_launch"]


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
    argv = [*ray_command(ray_executable), "start", "--block", "--disable-usage-stats"]
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
        # exactly 127.0.0.1: Ray's servers bind loopback only for that address (ray_launch keeps it)
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


# Set by the agent alone: a template's or the host's value would break isolation or the node's
# credentials (the pod template of a cluster with mTLS names files inside a container).
_OWNED_ENV = frozenset(
    {
        "RAY_ADDRESS",
        "RAY_AUTH_MODE",
        "RAY_AUTH_TOKEN",
        "RAY_AUTH_TOKEN_PATH",
        "RAY_USE_TLS",
        "RAY_TLS_SERVER_CERT",
        "RAY_TLS_SERVER_KEY",
        "RAY_TLS_CA_CERT",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER",
        "DASHBOARD_METRIC_PORT",
        "AUTOSCALER_METRIC_PORT",
    }
)


def _node_env(spec: RayNodeSpec, base_env: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in {**base_env, **spec.env}.items() if k not in _OWNED_ENV}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray's processes keep a loopback address as theirs only when they think multi-node clusters
    # are off (ray_launch lets the node itself join its cluster all the same)
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    if spec.ports.dashboard_metrics is not None:
        env["DASHBOARD_METRIC_PORT"] = str(spec.ports.dashboard_metrics)
    if spec.ports.autoscaler_metrics is not None:
        env["AUTOSCALER_METRIC_PORT"] = str(spec.ports.autoscaler_metrics)
    if spec.auth_token:
        env["RAY_AUTH_MODE"] = "token"
        env["RAY_AUTH_TOKEN"] = spec.auth_token
    if spec.tls is not None:
        env.update(spec.tls.env())
    if spec.gpu_ids is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in spec.gpu_ids)
    return env


def _short_hash(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]
