"""Golden manifests: representative configurations must build exactly the committed YAML.

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest src/codeflare/sdk/tests/test_golden.py``
and review the diff of ``golden/*.yaml`` like code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from codeflare.api.builders import (
    FlavorQuota,
    build_cluster_manifest,
    build_cluster_queue,
    build_local_queue,
    build_raycluster,
    build_rayjob,
    build_resource_flavor,
    build_workload_priority_class,
)
from codeflare.sdk.config import ClusterConfiguration, WorkerGroup

GOLDEN = Path(__file__).parent / "golden"


class _GoldenDumper(yaml.SafeDumper):
    """Writes multi-line strings (runtimeEnvYAML) as literal blocks so golden diffs stay readable."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_GoldenDumper.add_representer(str, _str)


def _cpu_only() -> dict[str, Any]:
    return build_raycluster(ClusterConfiguration("cpu-only"), "team-a")


def _gpus() -> dict[str, Any]:
    config = ClusterConfiguration(
        "gpus", num_workers=2, head_cpu_requests="500m", head_cpu_limits=1, head_memory_requests=4,
        head_memory_limits=4, worker_cpu_requests=4, worker_cpu_limits=8, worker_memory_requests="16Gi",
        worker_memory_limits="32Gi", worker_extended_resource_requests={"nvidia.com/gpu": 2},
        envs={"NCCL_DEBUG": "INFO"}, tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists",
                                                 "effect": "NoSchedule"}],
    )
    return build_raycluster(config, "team-a")


def _worker_groups() -> dict[str, Any]:
    config = ClusterConfiguration(
        "mixed", num_workers=1,
        additional_worker_groups=[
            WorkerGroup("big-memory", replicas=2, cpu_requests=2, cpu_limits=2, memory_requests=32,
                        memory_limits=64),
            WorkerGroup("tpu", replicas=1, extended_resource_requests={"google.com/tpu": 4,
                                                                       "example.com/fpga": 1}),
        ],
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}],
        volume_mounts=[{"name": "data", "mountPath": "/data", "readOnly": True}],
        image_pull_secrets=["registry-creds"],
    )
    return build_raycluster(config, "team-a")


def _autoscaling() -> dict[str, Any]:
    config = ClusterConfiguration(
        "elastic", num_workers=2, enable_autoscaling=True, min_workers=1, max_workers=5,
        additional_worker_groups=[WorkerGroup("spot", replicas=0, min_replicas=0, max_replicas=10)],
    )
    return build_raycluster(config, "team-a")


def _queued() -> dict[str, Any]:
    config = ClusterConfiguration(
        "queued", local_queue="team-a-queue", priority="high", labels={"app": "train"},
        annotations={"example.com/owner": "alice"},
    )
    return build_raycluster(config, "team-a")


def _appwrapper() -> dict[str, Any]:
    config = ClusterConfiguration(
        "wrapped", num_workers=3, local_queue="team-a-queue", appwrapper=True,
        additional_worker_groups=[WorkerGroup("extra", replicas=2)],
    )
    return build_cluster_manifest(config, "team-a")


def _rayjob_own_cluster() -> dict[str, Any]:
    config = ClusterConfiguration("ignored-name", num_workers=2, local_queue="team-a-queue")
    return build_rayjob(
        "train", "python train.py --epochs 3", "team-a", cluster_config=config,
        runtime_env={"pip": ["torch"], "working_dir": "."}, entrypoint_num_cpus=1,
        active_deadline_seconds=3600, backoff_limit=1, ttl_seconds_after_finished=60,
        metadata={"owner": "alice"},
    )


def _rayjob_selector() -> dict[str, Any]:
    return build_rayjob("quick", "python -c 'print(1)'", "team-a", cluster_name="cpu-only",
                        entrypoint_resources={"custom": 1})


def _cluster_queue() -> dict[str, Any]:
    return build_cluster_queue(
        "team-a-cq", cohort="research", queueing_strategy="StrictFIFO",
        flavors=[
            FlavorQuota("a100", {"cpu": 64, "memory": "512Gi", "nvidia.com/gpu": 8},
                        borrowing_limit={"nvidia.com/gpu": 4}, lending_limit={"nvidia.com/gpu": 2}),
            FlavorQuota("default-flavor", {"cpu": "32", "memory": "128Gi"}, borrowing_limit={"cpu": "16"}),
        ],
        preemption={"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
    )


def _local_queue_default() -> dict[str, Any]:
    return build_local_queue("team-a-queue", "team-a", "team-a-cq", default=True)


def _resource_flavor() -> dict[str, Any]:
    return build_resource_flavor(
        "a100", node_labels={"nvidia.com/gpu.product": "A100"},
        taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    )


def _priority_class() -> dict[str, Any]:
    return build_workload_priority_class("high", 1000, "Production training")


CASES: dict[str, Callable[[], dict[str, Any]]] = {
    "raycluster-cpu-only": _cpu_only,
    "raycluster-gpus": _gpus,
    "raycluster-worker-groups": _worker_groups,
    "raycluster-autoscaling": _autoscaling,
    "raycluster-queued": _queued,
    "appwrapper-raycluster": _appwrapper,
    "rayjob-own-cluster": _rayjob_own_cluster,
    "rayjob-cluster-selector": _rayjob_selector,
    "clusterqueue-cohort-borrowing": _cluster_queue,
    "localqueue-default": _local_queue_default,
    "resourceflavor": _resource_flavor,
    "workloadpriorityclass": _priority_class,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_manifest_matches_golden(case: str) -> None:
    built = CASES[case]()
    path = GOLDEN / f"{case}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(yaml.dump(built, Dumper=_GoldenDumper, sort_keys=False), encoding="utf-8")
    assert path.exists(), f"missing {path}; run with UPDATE_GOLDEN=1 to create it"
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == built


def test_every_golden_file_has_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.yaml")) == sorted(CASES)
