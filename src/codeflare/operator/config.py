"""The operator's one configuration document: typed model, defaults, validation, ConfigMap.

The operator reads ``config.yaml`` from the ConfigMap ``codeflare-operator-config`` (creating it
from ``OperatorConfig.default()`` when absent) and refuses to start on a bad document. Keys are
camelCase in YAML and snake_case in Python; durations are Go-style strings ("90s", "5m").
Validation collects every problem into one ``ConfigError``, one ``path: rule`` line per field.
This module does not read the cluster, detect node providers (``instascale.enabled: null``
means "decide at startup") or act on any setting; it only describes and checks them.
"""

from __future__ import annotations

import difflib
import ipaddress
import logging
import re
import typing
from collections.abc import Mapping
from datetime import timedelta
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from codeflare.k8s.constants import OPERATOR_NAME
from codeflare.k8s.names import is_dns1123_label, is_dns1123_subdomain
from codeflare.operator.durations import DurationError, format_duration, parse_duration

__all__ = [
    "CONFIGMAP_NAME",
    "CONFIG_KEY",
    "GRACE_PERIOD_MAXIMUM",
    "SUCCESS_TTL_MAXIMUM",
    "AdmissionFairSharingConfig",
    "AppWrapperConfig",
    "ClientConnectionConfig",
    "ConfigError",
    "FairSharingConfig",
    "FaultToleranceConfig",
    "HealthConfig",
    "InstaScaleConfig",
    "KubeRayConfig",
    "LeaderElectionConfig",
    "MetricsConfig",
    "OperatorConfig",
    "QueueingConfig",
    "RequeuingStrategyConfig",
    "WaitForPodsReadyConfig",
    "WebhookConfig",
    "WebhookService",
    "config_map",
]

logger = logging.getLogger(__name__)

CONFIGMAP_NAME = "codeflare-operator-config"
CONFIG_KEY = "config.yaml"
# AppWrapper grace periods above this are clamped to it (as the AppWrapper project does).
GRACE_PERIOD_MAXIMUM = timedelta(hours=24)
# successTTL has its own ceiling: its default, seven days.
SUCCESS_TTL_MAXIMUM = timedelta(hours=168)

_DURATION_HINT = '(expected e.g. "90s", "5m")'


class ConfigError(ValueError):
    """The configuration document is invalid; ``problems`` holds one "path: rule" per field."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


# ---------------------------------------------------------------------------------------------
# Field types


def _to_duration(value: Any) -> timedelta:
    if isinstance(value, timedelta):
        duration = value
    elif isinstance(value, int) and not isinstance(value, bool) and value == 0:
        duration = timedelta(0)  # YAML `0` is an integer; Go accepts "0" as a duration
    elif isinstance(value, str):
        try:
            duration = parse_duration(value)
        except DurationError:
            raise PydanticCustomError(
                "duration", 'invalid duration "{text}" ' + _DURATION_HINT, {"text": value}
            ) from None
    else:
        raise PydanticCustomError(
            "duration",
            'expected a duration string such as "90s" or "5m", got {kind}',
            {"kind": type(value).__name__},
        )
    if duration < timedelta(0):
        raise PydanticCustomError(
            "duration_negative", 'must not be negative, got "{text}"', {"text": format_duration(duration)}
        )
    return duration


def _positive(value: timedelta) -> timedelta:
    if value <= timedelta(0):
        raise PydanticCustomError("duration_zero", "must be greater than 0s")
    return value


def _clamp_to(ceiling: timedelta) -> AfterValidator:
    def clamp(value: timedelta) -> timedelta:
        if value > ceiling:
            logger.warning(
                "configured duration %s exceeds the maximum %s; using %s",
                format_duration(value),
                format_duration(ceiling),
                format_duration(ceiling),
            )
            return ceiling
        return value

    return AfterValidator(clamp)


Duration = Annotated[
    timedelta, BeforeValidator(_to_duration), PlainSerializer(format_duration, return_type=str)
]
PositiveDuration = Annotated[Duration, AfterValidator(_positive)]


def _object_name(value: str) -> str:
    problems = is_dns1123_subdomain(value)
    if problems:
        detail = {"text": value, "problems": "; ".join(problems)}
        raise PydanticCustomError("object_name", 'invalid value "{text}": {problems}', detail)
    return value


ObjectName = Annotated[str, AfterValidator(_object_name)]
"""The name of a Kubernetes object (a DNS-1123 subdomain, as the API server requires)."""
GracePeriod = Annotated[Duration, _clamp_to(GRACE_PERIOD_MAXIMUM)]

_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")


def _check_bind_address(value: str) -> str:
    """Accept "0" (disabled), ":8080", "127.0.0.1:8080", "[::1]:8080", "localhost:8080"."""
    if value == "0":
        return value
    host, sep, port = value.rpartition(":")
    valid_port = sep == ":" and port.isdigit() and 0 <= int(port) <= 65535
    if host.startswith("[") and host.endswith("]"):
        valid_host = _is_ip(host[1:-1], version=6)
    else:
        valid_host = host == "" or _is_ip(host, version=4) or bool(_HOSTNAME.match(host))
    if not (valid_port and valid_host):
        raise PydanticCustomError(
            "bind_address",
            'invalid bind address "{text}" (expected "[host]:port" such as ":8080" or '
            '"127.0.0.1:8080", or "0" to disable)',
            {"text": value},
        )
    return value


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


BindAddress = Annotated[str, AfterValidator(_check_bind_address)]
_PATH_SEGMENT = r"^[A-Za-z0-9._~-]+$"


class _Section(BaseModel):
    """Common settings: camelCase aliases, unknown keys rejected, no silent type coercion."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        frozen=True,
        validate_default=True,
    )


def _shorter_than(value: timedelta, info: ValidationInfo, other: str, other_key: str) -> timedelta:
    """Reject ``value`` unless it is shorter than the already-validated field ``other``."""
    limit = info.data.get(other)
    if limit is not None and value >= limit:
        raise PydanticCustomError(
            "duration_order",
            "must be shorter than {other} ({limit}), got {value}",
            {"other": other_key, "limit": format_duration(limit), "value": format_duration(value)},
        )
    return value


def _bind_port(address: str) -> tuple[str, int] | None:
    if address == "0":
        return None
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


# ---------------------------------------------------------------------------------------------
# Sections


class ClientConnectionConfig(_Section):
    """Rate limits of the operator's own API client: one token bucket for all its requests but
    Events (admissions and evictions first, status reports last); the scheduling loop decides no
    further ahead of its admission writes than ``qps`` lets it write in a quarter of a second."""

    qps: float = Field(default=50.0, gt=0)
    burst: int = Field(default=100, ge=1)


class LeaderElectionConfig(_Section):
    """Leader election over a coordination.k8s.io/v1 Lease named ``resource_name``."""

    leader_elect: bool = False
    resource_name: ObjectName = OPERATOR_NAME
    lease_duration: PositiveDuration = timedelta(seconds=15)
    renew_deadline: PositiveDuration = timedelta(seconds=10)
    retry_period: PositiveDuration = timedelta(seconds=2)

    @field_validator("renew_deadline")
    @classmethod
    def _renew_within_lease(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        return _shorter_than(value, info, "lease_duration", "leaseDuration")

    @field_validator("retry_period")
    @classmethod
    def _retry_within_renew(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        return _shorter_than(value, info, "renew_deadline", "renewDeadline")


class MetricsConfig(_Section):
    """Prometheus endpoint; ``bind_address`` "0" disables it."""

    bind_address: BindAddress = ":8080"

    @property
    def listen(self) -> tuple[str, int] | None:
        """(host, port) to listen on ("" host = all interfaces), or None when disabled."""
        return _bind_port(self.bind_address)


class HealthConfig(_Section):
    """Liveness and readiness probe endpoint."""

    bind_address: BindAddress = ":8081"
    liveness_endpoint_name: str = Field(default="healthz", pattern=_PATH_SEGMENT)
    readiness_endpoint_name: str = Field(default="readyz", pattern=_PATH_SEGMENT)

    @property
    def listen(self) -> tuple[str, int] | None:
        """(host, port) to listen on ("" host = all interfaces), or None when disabled."""
        return _bind_port(self.bind_address)


class RequeuingStrategyConfig(_Section):
    """Kueue's ``waitForPodsReady.requeuingStrategy``: ``timestamp`` orders a workload evicted for
    its pods' readiness by its eviction (back of the queue, Kueue's default) or by its creation."""

    timestamp: Literal["Eviction", "Creation"] = "Eviction"


class WaitForPodsReadyConfig(_Section):
    """Evict an admitted workload whose pods are not all ready within ``timeout``."""

    enabled: bool = False
    timeout: PositiveDuration = timedelta(minutes=5)
    requeuing_strategy: RequeuingStrategyConfig = RequeuingStrategyConfig()


FairSharingStrategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
# Kueue's pkg/config/validation.go: the strategy lists it accepts
_STRATEGY_LISTS: tuple[tuple[FairSharingStrategy, ...], ...] = (
    ("LessThanOrEqualToFinalShare",),
    ("LessThanInitialShare",),
    ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
)


def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _kueue_combination(value: tuple[str, ...]) -> tuple[str, ...]:
    if value not in _STRATEGY_LISTS:
        allowed = "; ".join(", ".join(s) for s in _STRATEGY_LISTS)
        raise PydanticCustomError("strategies", "must be one of the lists [{allowed}]", {"allowed": allowed})
    return value


class FairSharingConfig(_Section):
    """Kueue Configuration's ``fairSharing``: admission ordered by dominant resource share within
    cohort trees, and preemption by share (off by default, as in Kueue)."""

    enable: bool = False
    preemption_strategies: Annotated[
        tuple[FairSharingStrategy, ...], BeforeValidator(_as_tuple), AfterValidator(_kueue_combination)
    ] = _STRATEGY_LISTS[2]


class AdmissionFairSharingConfig(_Section):
    """Kueue Configuration's ``admissionFairSharing`` (apis/config/v1beta1/configuration_types.go):
    the LocalQueues of a ClusterQueue with ``admissionScope.admissionMode:
    UsageBasedAdmissionFairSharing`` take turns by their decayed recent usage. Present means on
    (Kueue 0.15+, whose feature gate is on by default); rules as pkg/config/validation.go."""

    # 0s: usage is forgotten at every sample (Kueue: "reset to 0 immediately")
    usage_half_life_time: Duration = timedelta(0)
    # Kueue's defaults.go turns 0 into 5m; here 0 is refused, as any non-positive value
    usage_sampling_interval: PositiveDuration = timedelta(minutes=5)
    # usage of a resource counts times its weight; a resource not listed weighs 1
    resource_weights: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        default_factory=dict
    )


class QueueingConfig(_Section):
    """Built-in queueing and quota admission (switch off when a real Kueue runs)."""

    enabled: bool = True
    backoff_time: Duration = timedelta(seconds=20)
    head_of_line_holding_time: Duration = timedelta(0)
    capacity_check: bool = True
    wait_for_pods_ready: WaitForPodsReadyConfig = WaitForPodsReadyConfig()
    fair_sharing: FairSharingConfig = FairSharingConfig()
    # None (the default): admission fair sharing off
    admission_fair_sharing: AdmissionFairSharingConfig | None = None
    # estimated starts refreshed at most this often; 0s: off
    forecast_interval: Duration = timedelta(seconds=5)


class InstaScaleConfig(_Section):
    """Node scale-out; ``enabled`` None means "on only where a supported provider is found"."""

    enabled: bool | None = None
    max_scaleout_allowed: int = Field(default=3, ge=0)
    provider: Literal["auto", "machineset", "machinedeployment"] = "auto"
    scale_in_delay: Duration = timedelta(minutes=5)


class FaultToleranceConfig(_Section):
    """AppWrapper fault-tolerance defaults; grace periods are clamped to 24h, successTTL to 168h."""

    admission_grace_period: GracePeriod = timedelta(minutes=1)
    warmup_grace_period: GracePeriod = timedelta(minutes=5)
    failure_grace_period: GracePeriod = timedelta(minutes=1)
    retry_pause_period: GracePeriod = timedelta(seconds=90)
    retry_limit: int = Field(default=3, ge=0)
    forceful_deletion_grace_period: Annotated[PositiveDuration, _clamp_to(GRACE_PERIOD_MAXIMUM)] = timedelta(
        minutes=10
    )
    success_ttl: Annotated[PositiveDuration, _clamp_to(SUCCESS_TTL_MAXIMUM)] = Field(
        default=timedelta(hours=168), alias="successTTL"
    )

    @field_validator("warmup_grace_period")
    @classmethod
    def _warmup_covers_admission(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        admission = info.data.get("admission_grace_period")
        if admission is not None and value < admission:
            raise PydanticCustomError(
                "grace_order",
                "must not be shorter than admissionGracePeriod ({admission}), got {value}",
                {"admission": format_duration(admission), "value": format_duration(value)},
            )
        return value


class AppWrapperConfig(_Section):
    """AppWrapper controller and webhook."""

    enabled: bool = True
    default_queue_name: str = ""
    user_rbac_admission_check: bool = Field(default=True, alias="userRBACAdmissionCheck")
    fault_tolerance: FaultToleranceConfig = FaultToleranceConfig()


class KubeRayConfig(_Section):
    """RayCluster exposure and security added by the operator."""

    ray_dashboard_oauth_enabled: bool = Field(default=True, alias="rayDashboardOAuthEnabled")
    ingress_domain: str = ""
    mtls_enabled: bool = Field(default=True, alias="mTLSEnabled")


def _service_name(value: str) -> str:
    problems = is_dns1123_label(value)
    if problems:
        detail = {"text": value, "problems": "; ".join(problems)}
        raise PydanticCustomError("service_name", 'invalid value "{text}": {problems}', detail)
    return value


def _namespace_or_empty(value: str) -> str:
    return value if value == "" else _service_name(value)


_Port = Annotated[int, Field(ge=1, le=65535)]


class WebhookService(_Section):
    """The Service in front of the operator's pod, through which a real cluster's API server calls
    the webhooks, the CRD conversion and the aggregated APIs (they would otherwise be named by the
    operator's own URL, which only an API server on the same host can reach).

    ``namespace`` "" means the operator's namespace. ``port`` is the webhooks' (and conversion's)
    Service port; ``visibility_port`` and ``forecast_port`` are both the Service ports and the
    in-pod ports the aggregated APIs listen on (a Service cannot target a port picked at random).
    """

    name: Annotated[str, AfterValidator(_service_name)]
    namespace: Annotated[str, AfterValidator(_namespace_or_empty)] = ""
    port: _Port = 443
    visibility_port: _Port = 8443
    forecast_port: _Port = 8444

    @model_validator(mode="after")
    def _distinct_ports(self) -> WebhookService:
        if len({self.port, self.visibility_port, self.forecast_port}) < 3:
            raise PydanticCustomError("service_ports", "port, visibilityPort and forecastPort must differ")
        return self


IN_CLUSTER_WEBHOOK_SERVICE = "codeflare-operator-webhook"  # deploy/operator/webhook_service.yaml


class WebhookConfig(_Section):
    """The operator's admission webhooks: HTTPS listener and its self-generated certificates.

    ``bind_address`` port 0 picks a free port (the one chosen is what the webhook configurations
    name); ``cert_dir`` "" keeps the certificates in a private temporary directory; the serving
    certificate is valid for ``cert_validity`` and replaced when two thirds of it have passed.
    ``failure_policy`` is what the API server does while the operator cannot be reached:
    "Ignore" (default: a stopped operator does not block the API) or "Fail" (nothing is admitted
    unchecked, as on a production cluster).
    """

    enabled: bool = True
    bind_address: BindAddress = "127.0.0.1:0"
    failure_policy: Literal["Ignore", "Fail"] = "Ignore"
    cert_dir: str = ""
    cert_validity: PositiveDuration = timedelta(hours=24)
    service: WebhookService | None = None

    @field_validator("bind_address")
    @classmethod
    def _not_disabled(cls, value: str) -> str:
        if value == "0":
            raise PydanticCustomError("bind_address", 'use "enabled: false" to switch the webhooks off')
        return value

    @field_validator("service")
    @classmethod
    def _fixed_ports(cls, value: WebhookService | None, info: ValidationInfo) -> WebhookService | None:
        address = info.data.get("bind_address")
        if value is None or address is None:
            return value
        bound = _bind_port(address)
        port = bound[1] if bound else 0
        if port == 0:
            raise PydanticCustomError(
                "service_port", "needs a fixed port in bindAddress (a Service cannot target port 0)"
            )
        if port in (value.visibility_port, value.forecast_port):
            raise PydanticCustomError(
                "service_port",
                "bindAddress port {port} is also visibilityPort or forecastPort",
                {"port": port},
            )
        return value

    @classmethod
    def in_cluster(cls, namespace: str) -> WebhookConfig:
        """The settings deploy/ ships: listen on the pod's interfaces (port 9443), reached through
        the Service ``codeflare-operator-webhook`` in ``namespace``."""
        return cls(
            bind_address="0.0.0.0:9443",
            service=WebhookService(name=IN_CLUSTER_WEBHOOK_SERVICE, namespace=namespace),
        )

    @property
    def listen(self) -> tuple[str, int]:
        """(host, port) to listen on; port 0 means any free port."""
        bound = _bind_port(self.bind_address)
        assert bound is not None
        host, port = bound
        return host or "127.0.0.1", port


class OperatorConfig(_Section):
    """The whole configuration document (ConfigMap ``codeflare-operator-config``, ``config.yaml``)."""

    client_connection: ClientConnectionConfig = ClientConnectionConfig()
    leader_election: LeaderElectionConfig = LeaderElectionConfig()
    metrics: MetricsConfig = MetricsConfig()
    health: HealthConfig = HealthConfig()
    queueing: QueueingConfig = QueueingConfig()
    instascale: InstaScaleConfig = InstaScaleConfig()
    appwrapper: AppWrapperConfig = AppWrapperConfig()
    kuberay: KubeRayConfig = KubeRayConfig()
    webhook: WebhookConfig = WebhookConfig()

    @classmethod
    def default(cls) -> OperatorConfig:
        """Every setting at its documented default."""
        return cls()

    @classmethod
    def from_yaml(cls, text: str) -> OperatorConfig:
        """Parse and validate a ``config.yaml`` document; omitted keys take their defaults.

        Raises ConfigError listing every invalid field as "path: rule", one per line.
        """
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ConfigError([f"{CONFIG_KEY}: not valid YAML: {error}"]) from None
        if document is None:
            document = {}
        if not isinstance(document, dict):
            kind = type(document).__name__
            raise ConfigError([f"{CONFIG_KEY}: expected a mapping of sections, got {kind}"])
        return cls.from_dict(document)

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> OperatorConfig:
        """Validate an already-parsed document (camelCase keys); raises ConfigError."""
        try:
            return cls.model_validate(dict(document))
        except ValidationError as error:
            raise ConfigError([_describe(problem) for problem in error.errors()]) from None

    @classmethod
    def from_config_map(cls, config_map: Mapping[str, Any]) -> OperatorConfig:
        """Read the configuration out of a ConfigMap manifest; raises ConfigError."""
        data = config_map.get("data") or {}
        if CONFIG_KEY not in data:
            name = (config_map.get("metadata") or {}).get("name", CONFIGMAP_NAME)
            raise ConfigError([f"ConfigMap {name}: missing key {CONFIG_KEY!r}"])
        return cls.from_yaml(data[CONFIG_KEY])

    def to_dict(self) -> dict[str, Any]:
        """The document as plain YAML-ready data: camelCase keys, durations as strings."""
        return self.model_dump(by_alias=True, mode="json")

    def to_yaml(self) -> str:
        """The document as YAML; ``from_yaml(to_yaml())`` gives back an equal config."""
        header = (
            "# CodeFlare operator configuration. Durations are Go-style (90s, 5m, 168h).\n"
            "# instascale.enabled: null means: enable only where a supported node provider is found.\n"
        )
        return header + yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False)


def config_map(namespace: str, config: OperatorConfig) -> dict[str, Any]:
    """The ConfigMap manifest holding ``config`` (what the operator creates when none exists)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CONFIGMAP_NAME,
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": "codeflare-operator",
                "app.kubernetes.io/component": "config",
                "app.kubernetes.io/part-of": "codeflare",
            },
        },
        "data": {CONFIG_KEY: config.to_yaml()},
    }


# ---------------------------------------------------------------------------------------------
# Error messages


def _describe(problem: Mapping[str, Any]) -> str:
    """One "path: rule" line for a pydantic error entry."""
    location = tuple(problem["loc"])
    path = _format_path(location) or CONFIG_KEY
    kind, value = problem["type"], problem.get("input")
    if kind == "extra_forbidden":
        return f"{path}: unknown field{_suggestion(location)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{path}: expected a mapping, got {_show(value)}"
    if kind == "bool_type":
        return f"{path}: expected true or false, got {_show(value)}"
    if kind == "int_type":
        return f"{path}: expected an integer, got {_show(value)}"
    if kind == "float_type":
        return f"{path}: expected a number, got {_show(value)}"
    if kind == "string_type":
        return f"{path}: expected a string, got {_show(value)}"
    if kind == "literal_error":
        allowed = problem.get("ctx", {}).get("expected", "")
        return f"{path}: must be one of {allowed}, got {_show(value)}"
    if kind == "string_pattern_mismatch":
        return f"{path}: invalid value {_show(value)} (must match {problem['ctx']['pattern']})"
    message = str(problem["msg"])
    message = message.removeprefix("Value error, ").removeprefix("Input should be ")
    if problem["msg"].startswith("Input should be "):
        message = f"must be {message}, got {_show(value)}"
    return f"{path}: {message}"


def _format_path(location: tuple[Any, ...]) -> str:
    """ "a.b[0].c" with every key spelled as in YAML (pydantic reports defaults by Python name)."""
    path, section, in_map = "", _section_at(()), False
    for index, part in enumerate(location):
        if isinstance(part, int) or in_map:
            path += f"[{part}]"  # a list index, or a key of a map such as resourceWeights[cpu]
            in_map = False
            continue
        if not isinstance(part, str) or not part or part.startswith("function-"):
            continue
        field = _field_by_key(section, part) if section else None
        key = (field.alias or part) if field else part
        path += f".{key}" if path else key
        in_map = field is not None and typing.get_origin(field.annotation) is dict
        section = _section_at(location[: index + 1])
    return path


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict | list):
        return type(value).__name__
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else repr(value)


def _suggestion(location: tuple[Any, ...]) -> str:
    """'; did you mean "x"?' for a misspelt key, found among the enclosing section's keys."""
    section = _section_at(location[:-1])
    if section is None:
        return ""
    keys = [field.alias or name for name, field in section.model_fields.items()]
    close = difflib.get_close_matches(str(location[-1]), keys, n=1)
    return f'; did you mean "{close[0]}"?' if close else f" (known: {', '.join(keys)})"


def _section_at(location: tuple[Any, ...]) -> type[BaseModel] | None:
    """The section model found at ``location`` (a path of keys) from the document root."""
    section: type[BaseModel] | None = OperatorConfig
    for part in location:
        field = _field_by_key(section, part) if section else None
        section = _model_in(field.annotation) if field else None
    return section


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The section model an annotation names, also when optional (``Section | None``)."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _field_by_key(section: type[BaseModel], key: Any) -> Any:
    for name, field in section.model_fields.items():
        if key in (name, field.alias):
            return field
    return None
