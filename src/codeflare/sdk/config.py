"""The typed description of a Ray cluster a user asks for: ``ClusterConfiguration`` and ``WorkerGroup``.

Field names follow codeflare-sdk so its users feel at home. Every rule the SDK can check without
a server is checked when the object is made (and again by the builders): RFC 1123 names, quantity
syntax and signs, limits against requests, autoscaling bounds, label syntax, duplicate groups.
All problems are reported together in one :class:`ConfigurationError`, one line per field.
Quantities are normalised in place to manifest strings (memory given as a number means GiB, as in
codeflare-sdk: ``8`` -> ``"8Gi"``). This module builds no manifests and talks to no server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from codeflare.api.amounts import cpu_amount, memory_amount, whole_count
from codeflare.api.raycluster import DEFAULT_RESOURCE_MAPPING, DEFAULT_WORKER_GROUP, RAY_IMAGE, RAY_VERSION
from codeflare.api.validation import Problems, extended_resource_problems, label_problems
from codeflare.errors import CodeFlareError
from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from codeflare.k8s.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from codeflare.k8s.quantity import QuantityError, QuantityInput, parse_quantity

__all__ = ["ClusterConfiguration", "ConfigurationError", "WorkerGroup"]

_RAY_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")
_ENV_NAME_RE = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_RESERVED_LABELS = {
    QUEUE_NAME_LABEL: "local_queue",
    PRIORITY_CLASS_LABEL: "priority",
    MAX_EXEC_TIME_LABEL: "max_execution_seconds",
}
_TOLERATION_KEYS = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})
_TOLERATION_OPERATORS = frozenset({"Equal", "Exists"})
_TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})


class ConfigurationError(CodeFlareError, ValueError):
    """A configuration the SDK refuses before any API call; one message line per problem.

    ``problems`` holds ``(field, message)`` pairs, e.g.
    ``("worker_memory_limits", '"1Gi" is below worker_memory_requests "2Gi"')``.
    """

    def __init__(self, what: str, problems: Problems) -> None:
        self.problems = problems
        lines = "\n".join(f"{name}: {message}" for name, message in problems)
        super().__init__(f"invalid {what}:\n{lines}")


@dataclass
class WorkerGroup:
    """An additional group of identical Ray workers (the default group is set on the configuration).

    ``min_replicas``/``max_replicas`` bound the autoscaler and default to ``replicas``.
    Extended resources (``{"nvidia.com/gpu": 1}``) are requested and limited alike.
    """

    name: str
    _: KW_ONLY
    replicas: int = 1
    cpu_requests: QuantityInput = 1
    cpu_limits: QuantityInput = 1
    memory_requests: QuantityInput = "2Gi"
    memory_limits: QuantityInput = "2Gi"
    extended_resource_requests: dict[str, QuantityInput] = field(default_factory=dict)
    min_replicas: int | None = None
    max_replicas: int | None = None


@dataclass
class ClusterConfiguration:
    """What a user asks for: one head, a default worker group, and optional additional groups.

    ``namespace=None`` means the client's namespace. The cluster is queued when ``local_queue``
    is set (the client layer fills it in when the namespace has a default LocalQueue); a queued
    cluster is created suspended unless ``suspend_when_queued`` is False. With ``appwrapper`` the
    RayCluster is wrapped in an AppWrapper, which then carries the queue and is the one suspended.
    ``min_workers``/``max_workers`` apply only with ``enable_autoscaling`` and default to
    ``num_workers``; Ray's autoscaler removes a worker idle for ``idle_timeout_seconds``. With
    ``local_queue`` too, the cluster is an elastic job (Kueue's workload slices): each scale-up
    is admitted within the queue's quota, a scale-down releases quota.
    Raises :class:`ConfigurationError` listing every problem.
    """

    name: str
    _: KW_ONLY
    namespace: str | None = None
    num_workers: int = 1
    head_cpu_requests: QuantityInput = 2
    head_cpu_limits: QuantityInput = 2
    head_memory_requests: QuantityInput = "8Gi"
    head_memory_limits: QuantityInput = "8Gi"
    head_extended_resource_requests: dict[str, QuantityInput] = field(default_factory=dict)
    worker_cpu_requests: QuantityInput = 1
    worker_cpu_limits: QuantityInput = 1
    worker_memory_requests: QuantityInput = "2Gi"
    worker_memory_limits: QuantityInput = "2Gi"
    worker_extended_resource_requests: dict[str, QuantityInput] = field(default_factory=dict)
    extended_resource_mapping: dict[str, str] = field(default_factory=dict)
    image: str = RAY_IMAGE
    ray_version: str = RAY_VERSION
    image_pull_secrets: list[str] = field(default_factory=list)
    envs: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    local_queue: str | None = None
    priority: str | None = None
    max_execution_seconds: int | None = None  # queued: deactivated (stopped) after this long admitted
    suspend_when_queued: bool = True
    tolerations: list[dict[str, Any]] = field(default_factory=list)
    volumes: list[dict[str, Any]] = field(default_factory=list)
    volume_mounts: list[dict[str, Any]] = field(default_factory=list)
    enable_autoscaling: bool = False
    min_workers: int | None = None
    max_workers: int | None = None
    idle_timeout_seconds: int = 60
    additional_worker_groups: list[WorkerGroup] = field(default_factory=list)
    appwrapper: bool = False

    def __post_init__(self) -> None:
        self.validate()

    @property
    def queued(self) -> bool:
        """Whether the cluster goes through a queue (``local_queue`` is set)."""
        return self.local_queue is not None

    @property
    def resource_mapping(self) -> dict[str, str]:
        """Extended resource -> Ray resource: the defaults overlaid with ``extended_resource_mapping``."""
        return {**DEFAULT_RESOURCE_MAPPING, **self.extended_resource_mapping}

    def check(self, client: Any = None, duration: float | None = None) -> Any:
        """Would this cluster be admitted now, later or never (``Cluster(self, client).check()``)?"""
        from codeflare.sdk.cluster import Cluster

        return Cluster(self, client).check(duration)

    def validate(self) -> None:
        """Check every field, normalise quantities in place, raise ConfigurationError on any problem."""
        problems = _container_problems(self)
        if problems:  # the checks below iterate these; stop before they trip over a wrong type
            raise ConfigurationError(f"ClusterConfiguration {self.name!r}", problems)
        problems += _name_problems("name", self.name, 63)
        if self.namespace is not None:
            problems += _name_problems("namespace", self.namespace, 63)
        problems += _count_problems("num_workers", self.num_workers)
        problems += self._resource_problems()
        problems += self._scaling_problems()
        problems += self._group_problems()
        problems += self._queue_problems()
        problems += self._metadata_problems()
        problems += self._pod_problems()
        if problems:
            raise ConfigurationError(f"ClusterConfiguration {self.name!r}", problems)

    # --- resources --------------------------------------------------------------------------

    def _resource_problems(self) -> Problems:
        problems: Problems = []
        for role in ("head", "worker"):
            problems += self._normalise_pair(f"{role}_cpu", cpu_amount)
            problems += self._normalise_pair(f"{role}_memory", memory_amount)
            attr = f"{role}_extended_resource_requests"
            problems += _extended_problems(attr, getattr(self, attr))
        for key, value in self.extended_resource_mapping.items():
            where = f"extended_resource_mapping[{key!r}]"
            problems += [(where, p) for p in extended_resource_problems(key)]
            if not isinstance(value, str) or not value:
                problems.append((where, "must map to a non-empty Ray resource name"))
        return problems

    def _normalise_pair(self, prefix: str, convert: Callable[[QuantityInput], str]) -> Problems:
        problems, values = _normalise_pair(self, prefix, prefix, convert)
        for suffix, value in values.items():
            setattr(self, f"{prefix}_{suffix}", value)
        return problems

    # --- scaling and groups -----------------------------------------------------------------

    def _scaling_problems(self) -> Problems:
        problems: Problems = []
        for attr in ("min_workers", "max_workers"):
            value = getattr(self, attr)
            if value is None:
                continue
            problems += _count_problems(attr, value)
            if not self.enable_autoscaling:
                problems.append((attr, "only applies with enable_autoscaling=True (use num_workers)"))
        idle = self.idle_timeout_seconds
        if isinstance(idle, bool) or not isinstance(idle, int) or idle < 1:
            problems.append(("idle_timeout_seconds", "must be a whole number of seconds >= 1"))
        if problems or not self.enable_autoscaling or not isinstance(self.num_workers, int):
            return problems
        return _bounds_problems(
            ("min_workers", self.min_workers),
            ("max_workers", self.max_workers),
            ("num_workers", self.num_workers),
        )

    def _group_problems(self) -> Problems:
        problems: Problems = []
        seen = {DEFAULT_WORKER_GROUP}
        for index, group in enumerate(self.additional_worker_groups):
            where = f"additional_worker_groups[{index}]"
            if not isinstance(group, WorkerGroup):
                problems.append((where, f"must be a WorkerGroup (is {type(group).__name__})"))
                continue
            problems += _name_problems(f"{where}.name", group.name, 63)
            if group.name in seen:
                problems.append((f"{where}.name", f"duplicate worker group name {group.name!r}"))
            seen.add(group.name)
            problems += _worker_group_problems(where, group, self.enable_autoscaling)
        return problems

    # --- queueing and metadata --------------------------------------------------------------

    def _queue_problems(self) -> Problems:
        problems: Problems = []
        if self.local_queue is not None:
            if self.local_queue == "":
                problems.append(("local_queue", "must not be empty; use None for the namespace's default"))
            else:
                problems += _subdomain("local_queue", self.local_queue)
        if self.priority is not None:
            problems += (
                _subdomain("priority", self.priority)
                if self.priority
                else [("priority", "must not be empty; use None for the default priority")]
            )
        seconds = self.max_execution_seconds
        if seconds is not None and (type(seconds) is not int or seconds <= 0):
            problems.append(("max_execution_seconds", f"{seconds!r} must be a whole number > 0"))
        return problems

    def _metadata_problems(self) -> Problems:
        problems: Problems = []
        for key, value in self.labels.items():
            where = f"labels[{key!r}]"
            problems += [(where, p) for p in label_problems(key, value)]
            if key in _RESERVED_LABELS:
                problems.append((where, f"is set by the SDK; use {_RESERVED_LABELS[key]} instead"))
        for key, value in self.annotations.items():
            where = f"annotations[{key!r}]"
            problems += [(where, p) for p in is_qualified_name(key)]
            if not isinstance(value, str):
                problems.append((where, f"must be a string (is {type(value).__name__})"))
        for key, value in self.envs.items():
            if not isinstance(key, str) or not _ENV_NAME_RE.match(key):
                problems.append((f"envs[{key!r}]", "must be a valid environment variable name"))
            if not isinstance(value, str):
                problems.append((f"envs[{key!r}]", f"value must be a string (is {type(value).__name__})"))
        return problems

    def _pod_problems(self) -> Problems:
        problems: Problems = []
        if not isinstance(self.image, str) or not self.image.strip():
            problems.append(("image", "must be a non-empty image reference"))
        if not isinstance(self.ray_version, str) or not _RAY_VERSION_RE.match(self.ray_version):
            problems.append(("ray_version", f"{self.ray_version!r} must look like 2.60.0"))
        for index, secret in enumerate(self.image_pull_secrets):
            problems += _subdomain(f"image_pull_secrets[{index}]", secret)
        for index, toleration in enumerate(self.tolerations):
            problems += _toleration_problems(f"tolerations[{index}]", toleration)
        problems += _volume_problems(self.volumes, self.volume_mounts)
        return problems


# --- shared checks -------------------------------------------------------------------------------


_DICT_FIELDS = (
    "head_extended_resource_requests",
    "worker_extended_resource_requests",
    "extended_resource_mapping",
    "envs",
    "labels",
    "annotations",
)
_LIST_FIELDS = ("image_pull_secrets", "tolerations", "volumes", "volume_mounts", "additional_worker_groups")


def _container_problems(config: ClusterConfiguration) -> Problems:
    problems: Problems = []
    for attr in _DICT_FIELDS:
        if not isinstance(getattr(config, attr), dict):
            problems.append((attr, f"must be a dict (is {type(getattr(config, attr)).__name__})"))
    for attr in _LIST_FIELDS:
        if not isinstance(getattr(config, attr), list):
            problems.append((attr, f"must be a list (is {type(getattr(config, attr)).__name__})"))
    return problems


def _quote(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _name_problems(where: str, value: object, max_length: int) -> Problems:
    if not isinstance(value, str):
        return [(where, f"must be a string (is {type(value).__name__})")]
    return [(where, f"{_quote(value)} {p}") for p in is_dns1123_label(value, max_length)]


def _subdomain(where: str, value: object) -> Problems:
    if not isinstance(value, str):
        return [(where, f"must be a string (is {type(value).__name__})")]
    return [(where, f"{_quote(value)} {p}") for p in is_dns1123_subdomain(value)]


def _count_problems(where: str, value: object) -> Problems:
    if isinstance(value, bool) or not isinstance(value, int):
        return [(where, f"{value!r} must be a whole number")]
    if value < 0:
        return [(where, f"{value} must not be negative")]
    return []


def _normalise_pair(
    owner: object, prefix: str, label: str, convert: Callable[[QuantityInput], str]
) -> tuple[Problems, dict[str, str]]:
    """Convert ``<prefix>_requests``/``_limits`` of ``owner``; problems name ``<label>_...`` fields."""
    problems: Problems = []
    values: dict[str, str] = {}
    for suffix in ("requests", "limits"):
        raw = getattr(owner, f"{prefix}_{suffix}")
        where = f"{label}_{suffix}"
        try:
            values[suffix] = convert(raw)
        except QuantityError as error:
            problems.append((where, str(error)))
            continue
        if parse_quantity(values[suffix]) < 0:
            problems.append((where, f"{_quote(raw)} must not be negative"))
    if not problems and parse_quantity(values["limits"]) < parse_quantity(values["requests"]):
        problems.append(
            (
                f"{label}_limits",
                f"{_quote(values['limits'])} is below {label}_requests {_quote(values['requests'])}",
            )
        )
    return problems, values


def _extended_problems(where: str, resources: object) -> Problems:
    if not isinstance(resources, dict):
        return [(where, f"must be a dict of resource name to amount (is {type(resources).__name__})")]
    problems: Problems = []
    for name, amount in resources.items():
        item = f"{where}[{name!r}]"
        if not isinstance(name, str):
            problems.append((item, "resource name must be a string"))
            continue
        problems += [(item, p) for p in extended_resource_problems(name)]
        try:
            count = whole_count(amount)
        except QuantityError as error:
            problems.append((item, str(error)))
            continue
        if count < 0:
            problems.append((item, f"{_quote(amount)} must not be negative"))
    return problems


def _bounds_problems(
    low: tuple[str, int | None], high: tuple[str, int | None], target: tuple[str, int]
) -> Problems:
    """Inverted bounds, or ``target`` outside them; an unset bound defaults to the target itself."""
    (low_name, low_value), (high_name, high_value), (name, value) = low, high, target
    if low_value is not None and high_value is not None and low_value > high_value:
        return [(low_name, f"{low_value} is above {high_name} {high_value}")]
    if (low_value is not None and value < low_value) or (high_value is not None and value > high_value):
        shown = (value if low_value is None else low_value, value if high_value is None else high_value)
        return [(name, f"{value} is outside [{low_name}, {high_name}] = [{shown[0]}, {shown[1]}]")]
    return []


def _worker_group_problems(where: str, group: WorkerGroup, autoscaling: bool) -> Problems:
    problems = _count_problems(f"{where}.replicas", group.replicas)
    for prefix, convert in (("cpu", cpu_amount), ("memory", memory_amount)):
        found, values = _normalise_pair(group, prefix, f"{where}.{prefix}", convert)
        problems += found
        for suffix, value in values.items():
            setattr(group, f"{prefix}_{suffix}", value)
    problems += _extended_problems(f"{where}.extended_resource_requests", group.extended_resource_requests)
    bounds: Problems = []
    for attr in ("min_replicas", "max_replicas"):
        value = getattr(group, attr)
        if value is not None:
            bounds += _count_problems(f"{where}.{attr}", value)
            if not autoscaling:
                bounds.append((f"{where}.{attr}", "only applies with enable_autoscaling=True"))
    if not bounds and autoscaling and isinstance(group.replicas, int):
        bounds = _bounds_problems(
            (f"{where}.min_replicas", group.min_replicas),
            (f"{where}.max_replicas", group.max_replicas),
            (f"{where}.replicas", group.replicas),
        )
    return problems + bounds


def _toleration_problems(where: str, toleration: object) -> Problems:
    if not isinstance(toleration, dict):
        return [(where, "must be a dict like {'key': ..., 'operator': 'Exists', 'effect': 'NoSchedule'}")]
    problems: Problems = []
    unknown = sorted(set(toleration) - _TOLERATION_KEYS)
    if unknown:
        problems.append((where, f"unknown keys {unknown}; allowed: {sorted(_TOLERATION_KEYS)}"))
    if toleration.get("operator", "Equal") not in _TOLERATION_OPERATORS:
        problems.append((f"{where}.operator", f"{toleration['operator']!r} must be Equal or Exists"))
    if "effect" in toleration and toleration["effect"] not in _TAINT_EFFECTS:
        effects = sorted(_TAINT_EFFECTS)
        problems.append((f"{where}.effect", f"{toleration['effect']!r} must be one of {effects}"))
    return problems


def _volume_problems(volumes: list[dict[str, Any]], mounts: list[dict[str, Any]]) -> Problems:
    problems: Problems = []
    names: set[str] = set()
    for index, volume in enumerate(volumes):
        name = volume.get("name") if isinstance(volume, dict) else None
        if not isinstance(name, str):
            problems.append((f"volumes[{index}]", "must be a dict with a 'name' (a Kubernetes Volume)"))
            continue
        problems += _name_problems(f"volumes[{index}].name", name, 63)
        if name in names:
            problems.append((f"volumes[{index}].name", f"duplicate volume name {name!r}"))
        names.add(name)
    for index, mount in enumerate(mounts):
        where = f"volume_mounts[{index}]"
        if not isinstance(mount, dict) or not isinstance(mount.get("mountPath"), str):
            problems.append((where, "must be a dict with 'name' and 'mountPath' (a Kubernetes VolumeMount)"))
        elif mount.get("name") not in names:
            problems.append((f"{where}.name", f"{mount.get('name')!r} is not one of volumes {sorted(names)}"))
    return problems
