"""Build ray.io/v1 RayCluster manifests from a typed cluster description.

The SDK's ``ClusterConfiguration`` is the usual input; this module only relies on the attributes
listed in :class:`ClusterSettings`, so ``codeflare.api`` does not import the SDK. Decisions made
here: one head container ``ray-head`` and one ``ray-worker`` container per group; ``num-cpus`` is
always set explicitly (:func:`~codeflare.api.amounts.ray_num_cpus`); GPU-like extended resources
become ``num-gpus``, others Ray custom resources; queued clusters carry Kueue's labels and start
suspended. The output is checked against our CRD before it is returned. No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from codeflare.api.amounts import cpu_amount, memory_amount, ray_num_cpus, whole_count
from codeflare.api.validation import validate_against_crd
from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from codeflare.k8s.quantity import QuantityInput

__all__ = [
    "DEFAULT_RESOURCE_MAPPING",
    "DEFAULT_WORKER_GROUP",
    "ELASTIC_JOB_ANNOTATION",
    "ELASTIC_JOB_SCHEDULING_GATE",
    "RAY_IMAGE",
    "RAY_VERSION",
    "WORKLOAD_SLICE_REPLACEMENT_FOR",
    "ClusterSettings",
    "WorkerGroupSettings",
    "admitted_pod_set_counts",
    "build_raycluster",
    "dashboard_name",
    "is_elastic_job",
    "raycluster_spec",
]

RAY_VERSION = "2.60.0"
RAY_IMAGE = f"rayproject/ray:{RAY_VERSION}"
DEFAULT_WORKER_GROUP = "default-worker"
#: Extended resource -> Ray resource; "GPU" becomes ``num-gpus``, anything else ``resources``.
DEFAULT_RESOURCE_MAPPING: Mapping[str, str] = {
    "nvidia.com/gpu": "GPU",
    "amd.com/gpu": "GPU",
    "intel.com/gpu": "GPU",
    "google.com/tpu": "TPU",
}
HEAD_PORTS = (("gcs", 6379), ("dashboard", 8265), ("client", 10001), ("metrics", 8080))
AUTOSCALER_OPTIONS = {"upscalingMode": "Default", "idleTimeoutSeconds": 60}
#: Kueue's elastic jobs (ElasticJobsViaWorkloadSlices): the job annotation that turns them on, the
#: annotation of a Workload slice naming the slice it replaces (``<namespace>/<name>``), and the
#: scheduling gate of pods waiting for their slice (kueue apis/kueue/v1beta2 constants,
#: pkg/workloadslicing).
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
WORKLOAD_SLICE_REPLACEMENT_FOR = "kueue.x-k8s.io/workload-slice-replacement-for"
ELASTIC_JOB_SCHEDULING_GATE = "kueue.x-k8s.io/elastic-job"


def is_elastic_job(obj: Mapping[str, Any]) -> bool:
    """Whether a job asks to be queued as an elastic job (the annotation, ``"true"``)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(ELASTIC_JOB_ANNOTATION, "")).lower() == "true"


def admitted_pod_set_counts(workload: Mapping[str, Any]) -> dict[str, int]:
    """Pod set -> count of a Workload's admission (empty when it has none): what a slice admits."""
    admission = (workload.get("status") or {}).get("admission") or {}
    return {str(a.get("name")): int(a.get("count") or 0) for a in admission.get("podSetAssignments") or []}


def dashboard_name(cluster: str) -> str:
    """The Ingress or Route exposing a cluster's dashboard: the operator creates it, the SDK reads it."""
    return f"ray-dashboard-{cluster}"


class WorkerGroupSettings(Protocol):
    """An additional worker group, as ``codeflare.sdk.config.WorkerGroup`` describes it."""

    @property
    def name(self) -> str: ...
    @property
    def replicas(self) -> int: ...
    @property
    def cpu_requests(self) -> QuantityInput: ...
    @property
    def cpu_limits(self) -> QuantityInput: ...
    @property
    def memory_requests(self) -> QuantityInput: ...
    @property
    def memory_limits(self) -> QuantityInput: ...
    @property
    def extended_resource_requests(self) -> dict[str, QuantityInput]: ...
    @property
    def min_replicas(self) -> int | None: ...
    @property
    def max_replicas(self) -> int | None: ...


class ClusterSettings(Protocol):
    """What the builders read from a cluster description (``codeflare.sdk.ClusterConfiguration``).

    Memory given as a number means GiB; ``validate()`` is called first so a description changed
    after construction is checked again.
    """

    @property
    def name(self) -> str: ...
    @property
    def num_workers(self) -> int: ...
    @property
    def max_execution_seconds(self) -> int | None: ...
    @property
    def head_cpu_requests(self) -> QuantityInput: ...
    @property
    def head_cpu_limits(self) -> QuantityInput: ...
    @property
    def head_memory_requests(self) -> QuantityInput: ...
    @property
    def head_memory_limits(self) -> QuantityInput: ...
    @property
    def head_extended_resource_requests(self) -> dict[str, QuantityInput]: ...
    @property
    def worker_cpu_requests(self) -> QuantityInput: ...
    @property
    def worker_cpu_limits(self) -> QuantityInput: ...
    @property
    def worker_memory_requests(self) -> QuantityInput: ...
    @property
    def worker_memory_limits(self) -> QuantityInput: ...
    @property
    def worker_extended_resource_requests(self) -> dict[str, QuantityInput]: ...
    @property
    def resource_mapping(self) -> dict[str, str]: ...
    @property
    def image(self) -> str: ...
    @property
    def ray_version(self) -> str: ...
    @property
    def image_pull_secrets(self) -> list[str]: ...
    @property
    def envs(self) -> dict[str, str]: ...
    @property
    def labels(self) -> dict[str, str]: ...
    @property
    def annotations(self) -> dict[str, str]: ...
    @property
    def local_queue(self) -> str | None: ...
    @property
    def priority(self) -> str | None: ...
    @property
    def suspend_when_queued(self) -> bool: ...
    @property
    def tolerations(self) -> list[dict[str, Any]]: ...
    @property
    def volumes(self) -> list[dict[str, Any]]: ...
    @property
    def volume_mounts(self) -> list[dict[str, Any]]: ...
    @property
    def enable_autoscaling(self) -> bool: ...
    @property
    def idle_timeout_seconds(self) -> int: ...
    @property
    def min_workers(self) -> int | None: ...
    @property
    def max_workers(self) -> int | None: ...
    @property
    def additional_worker_groups(self) -> Sequence[WorkerGroupSettings]: ...
    @property
    def appwrapper(self) -> bool: ...

    def validate(self) -> None: ...


def build_raycluster(config: ClusterSettings, namespace: str) -> dict[str, Any]:
    """The RayCluster ``config`` describes, in ``namespace``; ManifestError if our CRD would refuse it.

    Labels: the user's, plus ``kueue.x-k8s.io/queue-name`` when ``local_queue`` is set and
    ``kueue.x-k8s.io/priority-class`` when ``priority`` is (``kueue.x-k8s.io/max-exec-time-seconds``
    when ``max_execution_seconds`` is). ``spec.suspend`` is true when queued
    (and ``suspend_when_queued``). To wrap the cluster in an AppWrapper, pass the result to
    :func:`codeflare.api.appwrapper.build_appwrapper`, which moves queueing to the wrapper.
    """
    config.validate()
    labels = dict(config.labels)
    if config.local_queue is not None:
        labels[QUEUE_NAME_LABEL] = config.local_queue
    if config.priority is not None:
        labels[PRIORITY_CLASS_LABEL] = config.priority
    if config.max_execution_seconds is not None:  # the Workload's maximumExecutionTimeSeconds
        labels[MAX_EXEC_TIME_LABEL] = str(config.max_execution_seconds)
    metadata: dict[str, Any] = {"name": config.name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    annotations = dict(config.annotations)
    if config.local_queue is not None and config.enable_autoscaling:
        # queued and autoscaled: an elastic job, whose scale-ups are admitted as workload slices
        annotations[ELASTIC_JOB_ANNOTATION] = "true"
    if annotations:
        metadata["annotations"] = annotations
    spec = raycluster_spec(config, suspend=config.local_queue is not None and config.suspend_when_queued)
    obj = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": metadata, "spec": spec}
    validate_against_crd(obj)
    return obj


def raycluster_spec(config: ClusterSettings, *, suspend: bool = False) -> dict[str, Any]:
    """The RayCluster ``spec`` for ``config`` (also a RayJob's rayClusterSpec); ``suspend: true`` if asked."""
    spec: dict[str, Any] = {
        "rayVersion": config.ray_version,
        "enableInTreeAutoscaling": bool(config.enable_autoscaling),
    }
    if config.enable_autoscaling:
        spec["autoscalerOptions"] = {**AUTOSCALER_OPTIONS, "idleTimeoutSeconds": config.idle_timeout_seconds}
    if suspend:
        spec["suspend"] = True
    spec["headGroupSpec"] = _head_group(config)
    default_group = _worker_group(
        config, DEFAULT_WORKER_GROUP, config.num_workers,
        (config.min_workers, config.max_workers),
        (config.worker_cpu_requests, config.worker_cpu_limits),
        (config.worker_memory_requests, config.worker_memory_limits),
        config.worker_extended_resource_requests,
    )
    groups = [default_group]
    for group in config.additional_worker_groups:
        groups.append(_worker_group(
            config, group.name, group.replicas, (group.min_replicas, group.max_replicas),
            (group.cpu_requests, group.cpu_limits), (group.memory_requests, group.memory_limits),
            group.extended_resource_requests,
        ))
    spec["workerGroupSpecs"] = groups
    return spec


def _head_group(config: ClusterSettings) -> dict[str, Any]:
    params = {"dashboard-host": "0.0.0.0", "block": "true"}
    params.update(_ray_resource_params(
        config.head_cpu_limits, config.head_extended_resource_requests, config.resource_mapping
    ))
    container = _container(
        config, "ray-head", (config.head_cpu_requests, config.head_cpu_limits),
        (config.head_memory_requests, config.head_memory_limits), config.head_extended_resource_requests,
    )
    container["ports"] = [{"name": name, "containerPort": port} for name, port in HEAD_PORTS]
    return {
        "serviceType": "ClusterIP",
        "rayStartParams": dict(sorted(params.items())),
        "template": {"spec": _pod_spec(config, container)},
    }


def _worker_group(
    config: ClusterSettings,
    name: str,
    replicas: int,
    bounds: tuple[int | None, int | None],
    cpu: tuple[QuantityInput, QuantityInput],
    memory: tuple[QuantityInput, QuantityInput],
    extended: dict[str, QuantityInput],
) -> dict[str, Any]:
    low, high = bounds if config.enable_autoscaling else (None, None)
    params = {"block": "true"}
    params.update(_ray_resource_params(cpu[1], extended, config.resource_mapping))
    container = _container(config, "ray-worker", cpu, memory, extended)
    return {
        "groupName": name,
        "replicas": replicas,
        "minReplicas": replicas if low is None else low,
        "maxReplicas": replicas if high is None else high,
        "numOfHosts": 1,
        "rayStartParams": dict(sorted(params.items())),
        "template": {"spec": _pod_spec(config, container)},
    }


def _ray_resource_params(
    cpu_limit: QuantityInput, extended: dict[str, QuantityInput], mapping: Mapping[str, str]
) -> dict[str, str]:
    params = {"num-cpus": str(ray_num_cpus(cpu_amount(cpu_limit)))}
    gpus = 0
    custom: dict[str, int] = {}
    for resource, amount in sorted(extended.items()):
        count = whole_count(amount)
        ray_name = mapping.get(resource, resource)
        if ray_name == "GPU":
            gpus += count
        elif count:
            custom[ray_name] = custom.get(ray_name, 0) + count
    if gpus:
        params["num-gpus"] = str(gpus)
    if custom:
        # KubeRay's format, a JSON object in an extra pair of quotes: the one Ray's autoscaler
        # parses (ray/autoscaler/_private/kuberay/autoscaling_config.py, _get_custom_resources)
        text = json.dumps(custom, sort_keys=True)
        params["resources"] = '"' + text.replace('"', '\\"') + '"'
    return params


def _container(
    config: ClusterSettings,
    name: str,
    cpu: tuple[QuantityInput, QuantityInput],
    memory: tuple[QuantityInput, QuantityInput],
    extended: dict[str, QuantityInput],
) -> dict[str, Any]:
    requests = {"cpu": cpu_amount(cpu[0]), "memory": memory_amount(memory[0])}
    limits = {"cpu": cpu_amount(cpu[1]), "memory": memory_amount(memory[1])}
    for resource, amount in sorted(extended.items()):
        requests[resource] = limits[resource] = str(whole_count(amount))
    container: dict[str, Any] = {"name": name, "image": config.image}
    if config.envs:
        container["env"] = [{"name": key, "value": value} for key, value in config.envs.items()]
    container["resources"] = {"requests": requests, "limits": limits}
    if config.volume_mounts:
        container["volumeMounts"] = [dict(mount) for mount in config.volume_mounts]
    return container


def _pod_spec(config: ClusterSettings, container: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container]}
    if config.volumes:
        spec["volumes"] = [dict(volume) for volume in config.volumes]
    if config.tolerations:
        spec["tolerations"] = [dict(toleration) for toleration in config.tolerations]
    if config.image_pull_secrets:
        spec["imagePullSecrets"] = [{"name": secret} for secret in config.image_pull_secrets]
    return spec
