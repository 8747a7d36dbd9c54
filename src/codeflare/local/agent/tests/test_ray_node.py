"""The ray start command: isolation flags always present, rayStartParams mapped like KubeRay."""

from __future__ import annotations

import json

import pytest

from codeflare.local.agent.ports import RayNodePorts
from codeflare.local.agent.ray_node import (
    NodeTLS,
    RayNodeSpec,
    RayStartParamError,
    build_ray_start,
    node_temp_dir,
)


def _ports(first: int, workers: int, **head_only: int) -> RayNodePorts:
    """The six ports every node binds numbered from ``first`` on, 64 worker ports from ``workers``."""
    return RayNodePorts(*range(first, first + 6), min_worker=workers, max_worker=workers + 63, **head_only)


HEAD_PORTS = _ports(20001, 20100, gcs=20007, dashboard=20008, client_server=20009)
WORKER_PORTS = _ports(20011, 20200)


def _head(**overrides: object) -> RayNodeSpec:
    fields: dict[str, object] = {
        "cluster": "ns/demo",
        "role": "head",
        "group": "headgroup",
        "num_cpus": 1,
        "temp_dir": node_temp_dir("uid-1", "head"),
        "ports": HEAD_PORTS,
    }
    fields.update(overrides)
    return RayNodeSpec(**fields)  # type: ignore[arg-type]


def _flags(argv: list[str]) -> dict[str, str]:
    return dict(a[2:].split("=", 1) if "=" in a else (a[2:], "") for a in argv if a.startswith("--"))


def test_head_command_sets_every_isolation_flag() -> None:
    base_env = {"PATH": "/bin", "RAY_ADDRESS": "elsewhere:1"}
    command = build_ray_start(_head(memory_bytes=2 << 30), base_env, "ray")
    flags = _flags(command.argv)

    assert command.argv[:2] == ["ray", "start"]
    for flag in ("block", "disable-usage-stats", "head"):
        assert flag in flags
    assert flags["num-cpus"] == "1" and flags["num-gpus"] == "0"
    assert flags["port"] == "20007" and flags["dashboard-port"] == "20008"
    assert flags["ray-client-server-port"] == "20009" and flags["dashboard-host"] == "127.0.0.1"
    assert flags["node-ip-address"] == "127.0.0.1"
    assert flags["min-worker-port"] == "20100" and flags["max-worker-port"] == "20163"
    assert flags["temp-dir"].startswith("/tmp/cf-") and len(flags["temp-dir"]) <= 40
    assert flags["memory"] == str(2 << 30)
    assert int(flags["object-store-memory"]) == int((2 << 30) * 0.3)
    assert command.env["RAY_USAGE_STATS_ENABLED"] == "0" and "RAY_ADDRESS" not in command.env


def test_kuberay_style_params_are_mapped_and_isolation_keys_overridden() -> None:
    params = {
        "dashboard-host": "0.0.0.0",
        "block": "true",
        "num-gpus": "2",
        "resources": '"{\\"TPU\\": 4}"',
        "include-dashboard": "true",
        "port": "6379",
    }
    command = build_ray_start(_head(ray_start_params=params, resources={"h": 1}, gpu_ids=(0, 1)), {}, "ray")
    flags = _flags(command.argv)

    assert flags["dashboard-host"] == "127.0.0.1" and flags["port"] == "20007"
    assert flags["num-gpus"] == "2"
    assert json.loads(flags["resources"]) == {"TPU": 4.0, "h": 1.0}
    assert flags["include-dashboard"] == "true"
    assert command.env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert command.argv.count("--block") == 1


def test_worker_points_at_head_gcs_and_has_no_head_ports() -> None:
    spec = _head(
        role="worker",
        group="small",
        ports=WORKER_PORTS,
        head_address="127.0.0.1:20007",
        temp_dir=node_temp_dir("uid-1", "small-0"),
    )
    flags = _flags(build_ray_start(spec, {}, "ray").argv)

    assert flags["address"] == "127.0.0.1:20007"
    assert "head" not in flags and "port" not in flags and "dashboard-port" not in flags


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"plasma-directory": "/dev/shm"}, "not allowed"),
        ({"made-up-option": "1"}, "unknown"),
        ({"num-cpus": "1.5"}, "whole number"),
        ({"resources": "not json"}, "JSON object"),
        ({"include-dashboard": "yes"}, "'true' or 'false'"),
        ({"include-dashboard": "false"}, "needs the head's dashboard"),
    ],
)
def test_bad_params_are_refused_naming_the_key(params: dict[str, str], message: str) -> None:
    with pytest.raises(RayStartParamError, match=message) as info:
        build_ray_start(_head(ray_start_params=params), {}, "ray")
    assert next(iter(params)) in str(info.value)


def test_spec_errors() -> None:
    with pytest.raises(ValueError, match="head_address"):
        build_ray_start(_head(role="worker", ports=WORKER_PORTS), {}, "ray")
    with pytest.raises(ValueError, match="107 bytes"):
        build_ray_start(_head(temp_dir="/tmp/" + "x" * 60), {}, "ray")


def test_the_default_command_runs_ray_through_the_loopback_launcher() -> None:
    command = build_ray_start(_head(), {})
    assert command.argv[1:4] == ["-m", "codeflare.local.agent.ray_launch", "start"]


def test_env_keeps_loopback_pins_metrics_ports_and_carries_token_and_tls_over_the_template() -> None:
    ports = _ports(20001, 20100, gcs=20007, dashboard=20008, client_server=20009,
                   dashboard_metrics=20010, autoscaler_metrics=20011)
    template_env = {  # what the mTLS webhook writes into a pod template, and a stray token
        "RAY_USE_TLS": "1",
        "RAY_TLS_SERVER_CERT": "/home/ray/workspace/tls/tls.crt",
        "RAY_AUTH_TOKEN": "from-the-template",
        "MY_SETTING": "kept",
    }
    tls = NodeTLS(cert="/tmp/n/tls.crt", key="/tmp/n/tls.key", ca="/tmp/n/ca.crt")
    spec = _head(ports=ports, env=template_env, auth_token="t0k3n", tls=tls)
    env = build_ray_start(spec, {"RAY_AUTH_MODE": "disabled", "PATH": "/bin"}, "ray").env

    assert env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    assert env["DASHBOARD_METRIC_PORT"] == "20010" and env["AUTOSCALER_METRIC_PORT"] == "20011"
    assert env["RAY_AUTH_MODE"] == "token" and env["RAY_AUTH_TOKEN"] == "t0k3n"
    assert env["RAY_TLS_SERVER_CERT"] == "/tmp/n/tls.crt" and env["RAY_TLS_CA_CERT"] == "/tmp/n/ca.crt"
    assert env["MY_SETTING"] == "kept" and env["PATH"] == "/bin"

    plain = build_ray_start(_head(env=template_env), {"RAY_AUTH_MODE": "token"}, "ray").env
    assert not {"RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_USE_TLS", "RAY_TLS_SERVER_CERT"} & set(plain)
