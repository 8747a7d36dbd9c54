"""ClusterConfiguration: defaults, normalisation, and one clear line per bad field before any API call."""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.sdk.config import ClusterConfiguration, ConfigurationError, WorkerGroup


def _problems(**kwargs: Any) -> dict[str, str]:
    kwargs.setdefault("name", "demo")
    with pytest.raises(ConfigurationError) as caught:
        ClusterConfiguration(**kwargs)
    problems = dict(caught.value.problems)
    for field, message in caught.value.problems:
        assert f"{field}: {message}" in str(caught.value)
    return problems


def test_defaults_follow_codeflare_sdk() -> None:
    config = ClusterConfiguration("demo")
    assert config.namespace is None and config.num_workers == 1
    assert (config.head_cpu_requests, config.head_memory_limits) == ("2", "8Gi")
    assert (config.worker_cpu_limits, config.worker_memory_requests) == ("1", "2Gi")
    assert config.image == "rayproject/ray:2.60.0" and config.ray_version == "2.60.0"
    assert not config.queued and not config.appwrapper and config.suspend_when_queued
    assert config.resource_mapping["nvidia.com/gpu"] == "GPU"


def test_quantities_are_normalised_memory_numbers_meaning_gib() -> None:
    config = ClusterConfiguration(
        "demo",
        head_memory_requests=4,
        head_memory_limits=4.5,
        worker_cpu_requests=0.5,
        worker_cpu_limits="1000m",
        additional_worker_groups=[WorkerGroup("g", memory_requests=1, memory_limits="2Gi")],
    )
    assert (config.head_memory_requests, config.head_memory_limits) == ("4Gi", "4608Mi")
    assert (config.worker_cpu_requests, config.worker_cpu_limits) == ("500m", "1")
    assert config.additional_worker_groups[0].memory_requests == "1Gi"
    assert ClusterConfiguration("demo", local_queue="lq").queued


def test_every_problem_is_reported_at_once() -> None:
    problems = _problems(name="Bad_Name", num_workers=-1, worker_memory_limits="1Gi", local_queue="")
    assert set(problems) == {"name", "num_workers", "worker_memory_limits", "local_queue"}


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"name": "My_Cluster"}, "name", "RFC 1123 label"),
        ({"name": "a" * 64}, "name", "no more than 63 characters"),
        ({"namespace": "Team A"}, "namespace", "RFC 1123 label"),
        ({"num_workers": -1}, "num_workers", "must not be negative"),
        ({"num_workers": 1.5}, "num_workers", "whole number"),
        ({"head_cpu_requests": "-1", "head_cpu_limits": "-1"}, "head_cpu_requests", "must not be negative"),
        ({"worker_cpu_limits": "two"}, "worker_cpu_limits", "not a quantity"),
        ({"head_memory_requests": "8GB"}, "head_memory_requests", "not a quantity"),
        ({"head_cpu_limits": 1}, "head_cpu_limits", 'is below head_cpu_requests "2"'),
        (
            {"worker_memory_limits": "1Gi"},
            "worker_memory_limits",
            '"1Gi" is below worker_memory_requests "2Gi"',
        ),
        ({"head_memory_limits": 4}, "head_memory_limits", '"4Gi" is below head_memory_requests "8Gi"'),
        (
            {"worker_extended_resource_requests": {"gpu": 1}},
            "worker_extended_resource_requests['gpu']",
            "domain-prefixed",
        ),
        (
            {"worker_extended_resource_requests": {"cpu": 1}},
            "worker_extended_resource_requests['cpu']",
            "standard resource",
        ),
        (
            {"head_extended_resource_requests": {"nvidia.com/gpu": "500m"}},
            "head_extended_resource_requests['nvidia.com/gpu']",
            "whole number",
        ),
        (
            {"head_extended_resource_requests": {"nvidia.com/gpu": -1}},
            "head_extended_resource_requests['nvidia.com/gpu']",
            "must not be negative",
        ),
        (
            {"extended_resource_mapping": {"example.com/x": ""}},
            "extended_resource_mapping['example.com/x']",
            "non-empty Ray resource",
        ),
        (
            {"enable_autoscaling": True, "min_workers": 3, "max_workers": 2},
            "min_workers",
            "is above max_workers 2",
        ),
        (
            {"enable_autoscaling": True, "num_workers": 5, "max_workers": 3},
            "num_workers",
            "outside [min_workers",
        ),
        (
            {"enable_autoscaling": True, "num_workers": 1, "min_workers": 2},
            "num_workers",
            "outside [min_workers",
        ),
        ({"min_workers": 1}, "min_workers", "only applies with enable_autoscaling"),
        ({"local_queue": ""}, "local_queue", "must not be empty"),
        ({"local_queue": "Team Queue"}, "local_queue", "RFC 1123 subdomain"),
        ({"priority": ""}, "priority", "must not be empty"),
        ({"labels": {"bad key!": "v"}}, "labels['bad key!']", "name part"),
        ({"labels": {"app": "has space"}}, "labels['app']", "a valid label must be an empty string"),
        ({"labels": {"Bad.Prefix/app": "v"}}, "labels['Bad.Prefix/app']", "prefix part"),
        (
            {"labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "labels['kueue.x-k8s.io/queue-name']",
            "use local_queue instead",
        ),
        ({"annotations": {"note": 3}}, "annotations['note']", "must be a string"),
        ({"envs": {"1BAD": "x"}}, "envs['1BAD']", "environment variable name"),
        ({"ray_version": "latest"}, "ray_version", "must look like"),
        ({"image": " "}, "image", "non-empty image"),
        ({"image_pull_secrets": ["Creds!"]}, "image_pull_secrets[0]", "RFC 1123 subdomain"),
        ({"tolerations": [{"key": "k", "operator": "Is"}]}, "tolerations[0].operator", "Equal or Exists"),
        ({"tolerations": [{"key": "k", "effect": "Never"}]}, "tolerations[0].effect", "must be one of"),
        ({"tolerations": [{"key": "k", "colour": "blue"}]}, "tolerations[0]", "unknown keys"),
        (
            {"volume_mounts": [{"name": "missing", "mountPath": "/d"}]},
            "volume_mounts[0].name",
            "not one of volumes",
        ),
        ({"volumes": [{"name": "v"}, {"name": "v"}]}, "volumes[1].name", "duplicate volume name"),
    ],
)
def test_bad_input_names_field_and_rule(kwargs: dict[str, Any], field: str, rule: str) -> None:
    problems = _problems(**kwargs)
    assert field in problems, problems
    assert rule in problems[field]


@pytest.mark.parametrize(
    ("group", "autoscaling", "field", "rule"),
    [
        (WorkerGroup("default-worker"), False, "additional_worker_groups[0].name", "duplicate worker group"),
        (WorkerGroup("Big"), False, "additional_worker_groups[0].name", "RFC 1123 label"),
        (
            WorkerGroup("g", replicas=-2),
            False,
            "additional_worker_groups[0].replicas",
            "must not be negative",
        ),
        (
            WorkerGroup("g", cpu_requests=4, cpu_limits=2),
            False,
            "additional_worker_groups[0].cpu_limits",
            'is below additional_worker_groups[0].cpu_requests "4"',
        ),
        (
            WorkerGroup("g", memory_limits="1Gi"),
            False,
            "additional_worker_groups[0].memory_limits",
            "is below",
        ),
        (
            WorkerGroup("g", extended_resource_requests={"tpu": 1}),
            False,
            "additional_worker_groups[0].extended_resource_requests['tpu']",
            "domain-prefixed",
        ),
        (
            WorkerGroup("g", replicas=5, max_replicas=2),
            True,
            "additional_worker_groups[0].replicas",
            "outside",
        ),
        (
            WorkerGroup("g", min_replicas=3, max_replicas=2),
            True,
            "additional_worker_groups[0].min_replicas",
            "is above",
        ),
        (WorkerGroup("g", max_replicas=2), False, "additional_worker_groups[0].max_replicas", "only applies"),
    ],
)
def test_worker_group_problems(group: WorkerGroup, autoscaling: bool, field: str, rule: str) -> None:
    problems = _problems(additional_worker_groups=[group], enable_autoscaling=autoscaling)
    assert field in problems, problems
    assert rule in problems[field]


def test_duplicate_additional_group_names() -> None:
    problems = _problems(additional_worker_groups=[WorkerGroup("g"), WorkerGroup("g")])
    assert problems == {"additional_worker_groups[1].name": "duplicate worker group name 'g'"}


def test_message_is_one_line_per_problem() -> None:
    with pytest.raises(ConfigurationError) as caught:
        ClusterConfiguration("demo", worker_memory_limits="1Gi", num_workers=-1)
    assert str(caught.value).splitlines() == [
        "invalid ClusterConfiguration 'demo':",
        "num_workers: -1 must not be negative",
        'worker_memory_limits: "1Gi" is below worker_memory_requests "2Gi"',
    ]
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"labels": ["a"]},
        {"tolerations": {"key": "k"}},
        {"envs": None},
        {"additional_worker_groups": [WorkerGroup("g", replicas="2")]},
        {"additional_worker_groups": ["g"]},
        {"num_workers": None},
    ],
)
def test_wrong_types_are_reported_not_crashed_on(kwargs: dict[str, Any]) -> None:
    problems = _problems(**kwargs)
    assert problems
