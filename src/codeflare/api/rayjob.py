"""Build ray.io/v1 RayJob manifests: an entrypoint on its own cluster or on an existing one.

A job either brings its cluster (``rayClusterSpec`` from the same builder as RayCluster, so both
look alike) or selects an existing one by name (``clusterSelector {"ray.io/cluster": name}``).
Only a job that brings its cluster can be queued: Kueue admits the job together with its pods,
and a job on an existing cluster has none of its own. Argument problems and CRD violations raise
:class:`~codeflare.api.validation.ManifestError` naming the argument. No I/O, no submission.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from codeflare.api.raycluster import ClusterSettings, raycluster_spec
from codeflare.api.validation import ManifestError, Problems, label_problems, validate_against_crd
from codeflare.k8s.constants import (
    MAX_EXEC_TIME_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    RAY_CLUSTER_LABEL,
)
from codeflare.k8s.names import is_dns1123_label, is_dns1123_subdomain

__all__ = ["MAX_RAYJOB_NAME_LENGTH", "SUBMISSION_MODES", "build_rayjob"]

#: KubeRay derives the cluster and submitter Job names from the RayJob's by appending a suffix.
MAX_RAYJOB_NAME_LENGTH = 47
SUBMISSION_MODES = ("K8sJobMode", "HTTPMode", "InteractiveMode")


def build_rayjob(
    job_name: str,
    entrypoint: str,
    namespace: str,
    *,
    cluster_name: str | None = None,
    cluster_config: ClusterSettings | None = None,
    runtime_env: dict[str, Any] | None = None,
    local_queue: str | None = None,
    priority: str | None = None,
    max_execution_seconds: int | None = None,
    shutdown_after_job_finishes: bool | None = None,
    ttl_seconds_after_finished: int = 0,
    active_deadline_seconds: int | None = None,
    backoff_limit: int = 0,
    entrypoint_num_cpus: float | None = None,
    entrypoint_num_gpus: float | None = None,
    entrypoint_resources: dict[str, float] | None = None,
    metadata: dict[str, str] | None = None,
    submission_mode: str = "K8sJobMode",
    suspend: bool | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The RayJob running ``entrypoint`` in ``namespace``; give exactly one of the two cluster arguments.

    With ``cluster_config`` the job owns its cluster: ``local_queue``/``priority`` default to the
    configuration's, ``shutdown_after_job_finishes`` defaults to True, and the job is created
    suspended when queued (``suspend`` overrides). With ``cluster_name`` the job runs on that
    cluster: it cannot be queued and must not shut the cluster down.
    """
    problems = _argument_problems(job_name, entrypoint, cluster_name, cluster_config, metadata, labels)
    owns_cluster = cluster_config is not None
    if cluster_config is not None:
        cluster_config.validate()
        local_queue = cluster_config.local_queue if local_queue is None else local_queue
        priority = cluster_config.priority if priority is None else priority
        if max_execution_seconds is None:
            max_execution_seconds = cluster_config.max_execution_seconds
    if max_execution_seconds is not None and (
        isinstance(max_execution_seconds, bool)
        or not isinstance(max_execution_seconds, int)
        or max_execution_seconds <= 0
    ):
        problems.append(("max_execution_seconds", f"{max_execution_seconds!r} must be a whole number > 0"))
    problems += _queue_problems(local_queue, priority, owns_cluster)
    if shutdown_after_job_finishes is None:
        shutdown_after_job_finishes = owns_cluster
    elif shutdown_after_job_finishes and not owns_cluster:
        problems.append(("shutdown_after_job_finishes", "must be False for a job on an existing cluster"))
    for name, value in (("ttl_seconds_after_finished", ttl_seconds_after_finished),
                        ("active_deadline_seconds", active_deadline_seconds),
                        ("backoff_limit", backoff_limit)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            problems.append((name, f"{value!r} must be a whole number >= 0"))
    problems += _entrypoint_resource_problems(entrypoint_num_cpus, entrypoint_num_gpus, entrypoint_resources)
    if submission_mode not in SUBMISSION_MODES:
        modes = ", ".join(SUBMISSION_MODES)
        problems.append(("submission_mode", f"{submission_mode!r} must be one of {modes}"))
    if problems:
        raise ManifestError("RayJob", job_name, problems)

    all_labels = dict(labels or {})
    if local_queue is not None:
        all_labels[QUEUE_NAME_LABEL] = local_queue
    if priority is not None:
        all_labels[PRIORITY_CLASS_LABEL] = priority
    if max_execution_seconds is not None:  # the Workload's maximumExecutionTimeSeconds
        all_labels[MAX_EXEC_TIME_LABEL] = str(max_execution_seconds)
    meta: dict[str, Any] = {"name": job_name, "namespace": namespace}
    if all_labels:
        meta["labels"] = all_labels
    spec: dict[str, Any] = {"entrypoint": entrypoint, "submissionMode": submission_mode}
    if runtime_env:
        spec["runtimeEnvYAML"] = yaml.safe_dump(runtime_env, sort_keys=True)
    if metadata:
        spec["metadata"] = dict(metadata)
    if entrypoint_num_cpus is not None:
        spec["entrypointNumCpus"] = entrypoint_num_cpus
    if entrypoint_num_gpus is not None:
        spec["entrypointNumGpus"] = entrypoint_num_gpus
    if entrypoint_resources:
        spec["entrypointResources"] = json.dumps(entrypoint_resources, sort_keys=True)
    if cluster_config is not None:
        spec["rayClusterSpec"] = raycluster_spec(cluster_config)
    else:
        spec["clusterSelector"] = {RAY_CLUSTER_LABEL: cluster_name}
    spec["shutdownAfterJobFinishes"] = shutdown_after_job_finishes
    spec["ttlSecondsAfterFinished"] = ttl_seconds_after_finished
    if active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = active_deadline_seconds
    spec["backoffLimit"] = backoff_limit
    if suspend is None:
        queued = cluster_config is not None and local_queue is not None
        suspend = queued and cluster_config is not None and cluster_config.suspend_when_queued
    if suspend:
        spec["suspend"] = True
    obj = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta, "spec": spec}
    validate_against_crd(obj)
    return obj


def _argument_problems(
    job_name: str,
    entrypoint: str,
    cluster_name: str | None,
    cluster_config: ClusterSettings | None,
    metadata: dict[str, str] | None,
    labels: dict[str, str] | None,
) -> Problems:
    problems: Problems = [("job_name", p) for p in is_dns1123_label(job_name, MAX_RAYJOB_NAME_LENGTH)]
    if not isinstance(entrypoint, str) or not entrypoint.strip():
        problems.append(("entrypoint", "must be a non-empty command"))
    if (cluster_name is None) == (cluster_config is None):
        problems.append(("cluster_name", "give exactly one of cluster_name (existing cluster) or "
                                         "cluster_config (a cluster the job brings)"))
    if cluster_name is not None:
        problems += [("cluster_name", p) for p in is_dns1123_label(cluster_name)]
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append((f"metadata[{key!r}]", "keys and values must be strings"))
    for key, value in (labels or {}).items():
        where = f"labels[{key!r}]"
        problems += [(where, p) for p in label_problems(key, value)]
        if key in (QUEUE_NAME_LABEL, PRIORITY_CLASS_LABEL, MAX_EXEC_TIME_LABEL):
            problems.append((where, "is set by the SDK; use local_queue, priority or max_execution_seconds"))
    return problems


def _queue_problems(local_queue: str | None, priority: str | None, owns_cluster: bool) -> Problems:
    problems: Problems = []
    if local_queue is not None:
        if not owns_cluster:
            problems.append(("local_queue", "only a job that brings its cluster (cluster_config) can be "
                                            "queued; queue the existing cluster instead"))
        problems += [("local_queue", p) for p in is_dns1123_subdomain(local_queue)]
    if priority is not None:
        problems += [("priority", p) for p in is_dns1123_subdomain(priority)]
    return problems


def _entrypoint_resource_problems(
    cpus: float | None, gpus: float | None, resources: dict[str, float] | None
) -> Problems:
    problems: Problems = []
    for name, value in (("entrypoint_num_cpus", cpus), ("entrypoint_num_gpus", gpus)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
            problems.append((name, f"{value!r} must be a number >= 0"))
    for key, value in (resources or {}).items():
        if not isinstance(key, str) or not key:
            problems.append(("entrypoint_resources", f"{key!r} must be a non-empty resource name"))
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            problems.append((f"entrypoint_resources[{key!r}]", f"{value!r} must be a number >= 0"))
    return problems
