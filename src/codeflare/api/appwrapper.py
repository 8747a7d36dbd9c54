"""Wrap a RayCluster manifest in a workload.codeflare.dev/v1beta2 AppWrapper.

An AppWrapper makes the cluster one gang-admitted, fault-tolerant workload: the wrapper carries
the Kueue queue and priority labels and is created suspended; the wrapped RayCluster carries
neither and is never suspended itself (the AppWrapper controller creates it only once admitted).
Pod sets are declared explicitly (head, then each worker group with replicas x numOfHosts) so
quota accounting does not depend on inference. Only RayClusters are wrapped here. No I/O.
"""

from __future__ import annotations

import copy
from typing import Any

from codeflare.api.validation import ManifestError, validate_against_crd
from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL

__all__ = ["APPWRAPPER_API_VERSION", "build_appwrapper"]

APPWRAPPER_API_VERSION = "workload.codeflare.dev/v1beta2"
_SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                  "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences")


def build_appwrapper(
    obj: dict[str, Any], *, local_queue: str | None = None, priority: str | None = None
) -> dict[str, Any]:
    """An AppWrapper named and namespaced like the RayCluster ``obj``, which it wraps.

    ``local_queue``/``priority`` default to the RayCluster's Kueue labels, which move to the
    AppWrapper. The wrapped copy loses its status, server-set metadata, namespace (it must live in
    the AppWrapper's), queue labels and ``spec.suspend``. ``obj`` is not modified.
    """
    if obj.get("apiVersion") != "ray.io/v1" or obj.get("kind") != "RayCluster":
        raise ManifestError("AppWrapper", str(obj.get("metadata", {}).get("name", "")), [
            ("obj", f"only ray.io/v1 RayCluster can be wrapped here (got {obj.get('kind')!r})")])
    template = copy.deepcopy(obj)
    template.pop("status", None)
    meta = template.setdefault("metadata", {})
    name, namespace = meta.get("name", ""), meta.pop("namespace", None)
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    labels = meta.get("labels") or {}
    local_queue = labels.pop(QUEUE_NAME_LABEL, None) if local_queue is None else local_queue
    priority = labels.pop(PRIORITY_CLASS_LABEL, None) if priority is None else priority
    labels.pop(QUEUE_NAME_LABEL, None)
    labels.pop(PRIORITY_CLASS_LABEL, None)
    max_exec = labels.pop(MAX_EXEC_TIME_LABEL, None)  # the wrapper's Workload carries the maximum
    if not labels:
        meta.pop("labels", None)
    template.get("spec", {}).pop("suspend", None)

    wrapper_meta: dict[str, Any] = {"name": name, "namespace": namespace}
    wrapper_labels = {}
    if local_queue is not None:
        wrapper_labels[QUEUE_NAME_LABEL] = local_queue
    if priority is not None:
        wrapper_labels[PRIORITY_CLASS_LABEL] = priority
    if max_exec is not None:
        wrapper_labels[MAX_EXEC_TIME_LABEL] = max_exec
    if wrapper_labels:
        wrapper_meta["labels"] = wrapper_labels
    wrapper = {
        "apiVersion": APPWRAPPER_API_VERSION,
        "kind": "AppWrapper",
        "metadata": wrapper_meta,
        "spec": {"suspend": True, "components": [{"podSets": _pod_sets(template), "template": template}]},
    }
    validate_against_crd(wrapper)
    return wrapper


def _pod_sets(raycluster: dict[str, Any]) -> list[dict[str, Any]]:
    pod_sets: list[dict[str, Any]] = [{"path": "template.spec.headGroupSpec.template", "replicas": 1}]
    for index, group in enumerate(raycluster.get("spec", {}).get("workerGroupSpecs") or []):
        replicas = int(group.get("replicas", 0)) * int(group.get("numOfHosts", 1))
        pod_sets.append({"path": f"template.spec.workerGroupSpecs[{index}].template", "replicas": replicas})
    return pod_sets
