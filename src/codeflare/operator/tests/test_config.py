"""The operator configuration: documented defaults, YAML round trip, field-by-field errors."""

from __future__ import annotations

from datetime import timedelta

import pytest
import yaml

from codeflare.operator.config import (
    CONFIG_KEY,
    CONFIGMAP_NAME,
    ConfigError,
    OperatorConfig,
    config_map,
)
from codeflare.operator.durations import DurationError, format_duration, parse_duration

# The table of ARCHITECTURE.md section 4, as a user would write it.
DOCUMENTED_DEFAULTS = """
clientConnection: {qps: 50, burst: 100}
leaderElection:   {leaderElect: false, resourceName: codeflare-operator, leaseDuration: 15s,
                   renewDeadline: 10s, retryPeriod: 2s}
metrics:          {bindAddress: ":8080"}
health:           {bindAddress: ":8081", livenessEndpointName: healthz, readinessEndpointName: readyz}
queueing:         {enabled: true, backoffTime: 20s, headOfLineHoldingTime: 0s, capacityCheck: true,
                   waitForPodsReady: {enabled: false, timeout: 5m}}
instascale:       {enabled: null, maxScaleoutAllowed: 3, provider: auto, scaleInDelay: 5m}
appwrapper:       {enabled: true, defaultQueueName: "", userRBACAdmissionCheck: true,
                   faultTolerance: {admissionGracePeriod: 1m, warmupGracePeriod: 5m,
                   failureGracePeriod: 1m, retryPausePeriod: 90s, retryLimit: 3,
                   forcefulDeletionGracePeriod: 10m, successTTL: 168h}}
kuberay:          {rayDashboardOAuthEnabled: true, ingressDomain: "", mTLSEnabled: true}
webhook:          {enabled: true, bindAddress: "127.0.0.1:0", failurePolicy: Ignore, certDir: "",
                   certValidity: 24h}
"""


def problems_of(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        OperatorConfig.from_yaml(text)
    return str(caught.value)


# --- durations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("5m", timedelta(minutes=5)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("168h", timedelta(days=7)),
        ("0s", timedelta(0)),
        ("0", timedelta(0)),
        ("500ms", timedelta(milliseconds=500)),
        ("1.5h", timedelta(minutes=90)),
        ("2us", timedelta(microseconds=2)),
        ("-2m", timedelta(minutes=-2)),
    ],
)
def test_go_durations_parse(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "30", "5 m", " 5m", "5m ", "1d", "h", "5mm", "1h-5m", "+"])
def test_malformed_durations_are_rejected(text: str) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(seconds=90), "90s"),
        (timedelta(minutes=5), "5m"),
        (timedelta(days=7), "168h"),
        (timedelta(0), "0s"),
        (timedelta(milliseconds=500), "500ms"),
        (timedelta(hours=1, minutes=30), "90m"),
        (timedelta(seconds=-3), "-3s"),
    ],
)
def test_durations_render_in_their_largest_exact_unit(value: timedelta, text: str) -> None:
    assert format_duration(value) == text
    assert parse_duration(text) == value


# --- defaults and round trip ----------------------------------------------------------------


def test_defaults_match_the_architecture_table() -> None:
    assert OperatorConfig.default() == OperatorConfig.from_yaml(DOCUMENTED_DEFAULTS)


def test_default_values_in_python_terms() -> None:
    config = OperatorConfig.default()
    assert config.client_connection.qps == 50 and config.client_connection.burst == 100
    assert config.leader_election.lease_duration == timedelta(seconds=15)
    assert config.metrics.listen == ("", 8080)
    assert config.health.listen == ("", 8081)
    assert config.queueing.backoff_time == timedelta(seconds=20)
    assert config.queueing.head_of_line_holding_time == timedelta(0)
    assert config.queueing.wait_for_pods_ready.timeout == timedelta(minutes=5)
    assert config.instascale.enabled is None  # auto-detected at startup
    assert config.instascale.scale_in_delay == timedelta(minutes=5)
    assert config.appwrapper.fault_tolerance.retry_pause_period == timedelta(seconds=90)
    assert config.appwrapper.fault_tolerance.success_ttl == timedelta(days=7)
    assert config.kuberay.mtls_enabled and config.kuberay.ray_dashboard_oauth_enabled
    assert config.webhook.enabled and config.webhook.listen == ("127.0.0.1", 0)
    assert config.webhook.cert_validity == timedelta(hours=24)


def test_empty_document_means_all_defaults() -> None:
    assert OperatorConfig.from_yaml("") == OperatorConfig.default()
    assert OperatorConfig.from_yaml("queueing: {}") == OperatorConfig.default()


def test_round_trip_keeps_every_value() -> None:
    custom = OperatorConfig.from_yaml(
        """
        queueing: {enabled: false, backoffTime: 1h30m, headOfLineHoldingTime: 500ms}
        instascale: {enabled: true, maxScaleoutAllowed: 0, provider: machineset}
        metrics: {bindAddress: "0"}
        health: {bindAddress: "[::1]:9000"}
        """
    )
    assert OperatorConfig.from_yaml(custom.to_yaml()) == custom
    assert OperatorConfig.from_yaml(OperatorConfig.default().to_yaml()) == OperatorConfig.default()
    assert custom.metrics.listen is None
    assert custom.health.listen == ("::1", 9000)


def test_default_yaml_writes_durations_as_documented() -> None:
    document = yaml.safe_load(OperatorConfig.default().to_yaml())
    assert document["queueing"]["backoffTime"] == "20s"
    assert document["queueing"]["headOfLineHoldingTime"] == "0s"
    assert document["appwrapper"]["faultTolerance"]["retryPausePeriod"] == "90s"
    assert document["appwrapper"]["faultTolerance"]["successTTL"] == "168h"
    assert document["kuberay"]["mTLSEnabled"] is True
    assert document["appwrapper"]["userRBACAdmissionCheck"] is True


def test_python_names_are_accepted_too() -> None:
    config = OperatorConfig.from_dict({"queueing": {"backoff_time": "1m"}})
    assert config.queueing.backoff_time == timedelta(minutes=1)


def test_config_map_carries_the_document() -> None:
    config = OperatorConfig.from_yaml("queueing: {backoffTime: 45s}")
    manifest = config_map("codeflare-system", config)
    assert manifest["kind"] == "ConfigMap" and manifest["apiVersion"] == "v1"
    assert manifest["metadata"]["name"] == CONFIGMAP_NAME == "codeflare-operator-config"
    assert manifest["metadata"]["namespace"] == "codeflare-system"
    assert list(manifest["data"]) == [CONFIG_KEY] == ["config.yaml"]
    assert OperatorConfig.from_config_map(manifest) == config


def test_config_map_without_the_key_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"missing key 'config\.yaml'"):
        OperatorConfig.from_config_map({"metadata": {"name": CONFIGMAP_NAME}, "data": {}})


# --- clamping -------------------------------------------------------------------------------


def test_grace_periods_are_clamped_to_24h() -> None:
    config = OperatorConfig.from_yaml(
        "appwrapper: {faultTolerance: {admissionGracePeriod: 30h, warmupGracePeriod: 48h,"
        " failureGracePeriod: 100h, retryPausePeriod: 25h, forcefulDeletionGracePeriod: 72h}}"
    )
    fault_tolerance = config.appwrapper.fault_tolerance
    for value in (
        fault_tolerance.admission_grace_period,
        fault_tolerance.warmup_grace_period,
        fault_tolerance.failure_grace_period,
        fault_tolerance.retry_pause_period,
        fault_tolerance.forceful_deletion_grace_period,
    ):
        assert value == timedelta(hours=24)


def test_success_ttl_may_reach_its_default_but_not_beyond() -> None:
    assert OperatorConfig.from_yaml(
        "appwrapper: {faultTolerance: {successTTL: 100h}}"
    ).appwrapper.fault_tolerance.success_ttl == timedelta(hours=100)
    assert OperatorConfig.from_yaml(
        "appwrapper: {faultTolerance: {successTTL: 1000h}}"
    ).appwrapper.fault_tolerance.success_ttl == timedelta(hours=168)


# --- invalid documents ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "queueing: {backoffTime: abc}",
            'queueing.backoffTime: invalid duration "abc" (expected e.g. "90s", "5m")',
        ),
        ("queueing: {backoffTime: 30}", "queueing.backoffTime: expected a duration string"),
        (
            "queueing: {headOfLineHoldingTime: -5s}",
            'queueing.headOfLineHoldingTime: must not be negative, got "-5s"',
        ),
        (
            "queueing: {waitForPodsReady: {timeout: 0s}}",
            "queueing.waitForPodsReady.timeout: must be greater than 0s",
        ),
        (
            "queueing: {waitForPodsReady: {requeuingStrategy: {timestamp: Admission}}}",
            "queueing.waitForPodsReady.requeuingStrategy.timestamp: must be one of 'Eviction' or 'Creation'",
        ),
        ("queueing: {backofTime: 5s}", 'queueing.backofTime: unknown field; did you mean "backoffTime"?'),
        ("colour: blue", "colour: unknown field (known: clientConnection,"),
        ("queueing: {enabled: maybe}", 'queueing.enabled: expected true or false, got "maybe"'),
        ("queueing: {enabled: 'true'}", 'queueing.enabled: expected true or false, got "true"'),
        ("queueing: 3", "queueing: expected a mapping, got 3"),
        ("instascale: {provider: gce}", "instascale.provider: must be one of 'auto', 'machineset' or"),
        (
            "instascale: {maxScaleoutAllowed: -1}",
            "instascale.maxScaleoutAllowed: must be greater than or equal to 0",
        ),
        (
            "instascale: {maxScaleoutAllowed: '3'}",
            'instascale.maxScaleoutAllowed: expected an integer, got "3"',
        ),
        ("metrics: {bindAddress: '8080'}", 'metrics.bindAddress: invalid bind address "8080"'),
        ("metrics: {bindAddress: ':99999'}", 'metrics.bindAddress: invalid bind address ":99999"'),
        ("health: {bindAddress: 'bad host:80'}", 'health.bindAddress: invalid bind address "bad host:80"'),
        ("health: {livenessEndpointName: 'a/b'}", "health.livenessEndpointName: invalid value"),
        ("clientConnection: {qps: 0}", "clientConnection.qps: must be greater than 0"),
        ("clientConnection: {qps: -1.5}", "clientConnection.qps: must be greater than 0"),
        ("clientConnection: {burst: 0}", "clientConnection.burst: must be greater than or equal to 1"),
        (
            "leaderElection: {leaseDuration: 10s}",
            "leaderElection.renewDeadline: must be shorter than leaseDuration",
        ),
        (
            "leaderElection: {retryPeriod: 10s}",
            "leaderElection.retryPeriod: must be shorter than renewDeadline",
        ),
        ("leaderElection: {resourceName: Not_A_Name}", "leaderElection.resourceName: invalid value"),
        (
            "appwrapper: {faultTolerance: {retryLimit: -1}}",
            "appwrapper.faultTolerance.retryLimit: must be greater",
        ),
        (
            "appwrapper: {faultTolerance: {successTTL: 0s}}",
            "appwrapper.faultTolerance.successTTL: must be greater",
        ),
        (
            "appwrapper: {faultTolerance: {admissionGracePeriod: 10m, warmupGracePeriod: 2m}}",
            "appwrapper.faultTolerance.warmupGracePeriod: must not be shorter than admissionGracePeriod",
        ),
        (
            'webhook: {bindAddress: "0"}',
            'webhook.bindAddress: use "enabled: false" to switch the webhooks off',
        ),
        ("webhook: {certValidity: 0s}", "webhook.certValidity: must be greater than 0s"),
        ("kuberay: {mtlsEnabled: false}", 'kuberay.mtlsEnabled: unknown field; did you mean "mTLSEnabled"?'),
        ("[1, 2]", "config.yaml: expected a mapping of sections, got list"),
        ("queueing: {enabled: [", "config.yaml: not valid YAML"),
    ],
)
def test_each_invalid_field_is_named_with_its_rule(text: str, expected: str) -> None:
    assert expected in problems_of(text)


def test_every_problem_is_reported_one_per_line() -> None:
    message = problems_of(
        """
        queueing: {backoffTime: abc, enabled: 1}
        instascale: {provider: gce, maxScaleoutAllowed: -2}
        metrics: {bindAddress: nowhere}
        """
    )
    lines = message.splitlines()
    assert len(lines) == 5
    assert [line.split(":")[0] for line in lines] == [
        "metrics.bindAddress",
        "queueing.enabled",
        "queueing.backoffTime",
        "instascale.maxScaleoutAllowed",
        "instascale.provider",
    ]


def test_config_error_keeps_the_problem_list() -> None:
    with pytest.raises(ConfigError) as caught:
        OperatorConfig.from_yaml("queueing: {backoffTime: x}\nhealth: {bindAddress: y}")
    assert len(caught.value.problems) == 2


def test_sections_are_immutable() -> None:
    config = OperatorConfig.default()
    with pytest.raises(ValueError):
        config.queueing.enabled = False  # type: ignore[misc]


# --- admission fair sharing -----------------------------------------------------------------

# Kueue pkg/config/validation_test.go (TestValidate), the admissionFairSharing cases: the block,
# and the path of the one problem expected (None: valid). Kueue's paths start at
# admissionFairSharing; ours at queueing.admissionFairSharing.
KUEUE_AFS_CASES: list[tuple[str, str, str | None]] = [
    (
        "valid admissionFairSharing configuration",
        "{usageHalfLifeTime: 1s, usageSamplingInterval: 1s, resourceWeights: {cpu: 0.5, memory: 0.5}}",
        None,
    ),
    (
        "invalid admissionFairSharing.usageHalfLifeTime configuration",
        "{usageHalfLifeTime: -1s, usageSamplingInterval: 1s}",
        "queueing.admissionFairSharing.usageHalfLifeTime",
    ),
    (
        "invalid admissionFairSharing.usageSamplingInterval configuration",
        "{usageSamplingInterval: -1s}",
        "queueing.admissionFairSharing.usageSamplingInterval",
    ),
    (
        "invalid admissionFairSharing.resourceWeights configuration",
        "{usageSamplingInterval: 1s, resourceWeights: {cpu: -0.5}}",
        "queueing.admissionFairSharing.resourceWeights[cpu]",
    ),
]


@pytest.mark.parametrize(("name", "block", "path"), KUEUE_AFS_CASES, ids=[c[0] for c in KUEUE_AFS_CASES])
def test_kueue_admission_fair_sharing_validation(name: str, block: str, path: str | None) -> None:
    text = f"queueing: {{admissionFairSharing: {block}}}"
    if path is None:
        OperatorConfig.from_yaml(text)
    else:
        assert [problem.split(": ")[0] for problem in problems_of(text).splitlines()] == [path]


def test_admission_fair_sharing_is_off_unless_its_block_is_present() -> None:
    assert OperatorConfig.default().queueing.admission_fair_sharing is None
    assert (
        OperatorConfig.from_yaml("queueing: {admissionFairSharing: null}").queueing.admission_fair_sharing
        is None
    )
    afs = OperatorConfig.from_yaml("queueing: {admissionFairSharing: {}}").queueing.admission_fair_sharing
    assert afs is not None  # Kueue's defaults.go: only the sampling interval has a default
    assert (afs.usage_half_life_time, afs.usage_sampling_interval) == (timedelta(0), timedelta(minutes=5))
    assert afs.resource_weights == {}


def test_admission_fair_sharing_round_trips_with_its_weights() -> None:
    config = OperatorConfig.from_yaml(
        "queueing: {admissionFairSharing: {usageHalfLifeTime: 168h, resourceWeights: {nvidia.com/gpu: 2}}}"
    )
    assert OperatorConfig.from_yaml(config.to_yaml()) == config
    document = yaml.safe_load(config.to_yaml())["queueing"]["admissionFairSharing"]
    assert document == {
        "usageHalfLifeTime": "168h",
        "usageSamplingInterval": "5m",
        "resourceWeights": {"nvidia.com/gpu": 2.0},
    }


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (
            "{usageSamplingInterval: 0s}",
            "queueing.admissionFairSharing.usageSamplingInterval: must be greater than 0s",
        ),
        (
            "{usageHalfLifeTime: -1s}",
            'queueing.admissionFairSharing.usageHalfLifeTime: must not be negative, got "-1s"',
        ),
        (
            "{resourceWeights: {cpu: -0.5}}",
            "queueing.admissionFairSharing.resourceWeights[cpu]: must be greater than or equal to 0",
        ),
        (
            "{resourceWeights: {cpu: .nan}}",
            "queueing.admissionFairSharing.resourceWeights[cpu]: must be a finite",
        ),
        (
            "{resourceWeights: {cpu: '1'}}",
            "queueing.admissionFairSharing.resourceWeights[cpu]: expected a number",
        ),
        (
            "{usageHalfLifeTme: 1s}",
            'admissionFairSharing.usageHalfLifeTme: unknown field; did you mean "usageHalfLifeTime"?',
        ),
        ("3", "queueing.admissionFairSharing: expected a mapping, got 3"),
    ],
)
def test_admission_fair_sharing_problems_name_the_field_and_rule(block: str, expected: str) -> None:
    assert expected in problems_of(f"queueing: {{admissionFairSharing: {block}}}")
