"""What goes into an AppWrapper's components when they are created.

:func:`build_component` turns a component into the object to create: namespaced, labelled,
owned by the AppWrapper, with the AppWrapper label and the admission's ``podSetInfos`` merged
into every pod template. Where the pod templates are (declared or inferred pod sets, paths such
as ``template.spec.workerGroupSpecs[0].template``) is :mod:`codeflare.api.podsets`, the one
inference shared with the queueing controller and the webhooks; its names are re-exported here
for this package's callers. No I/O; inputs are never modified.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from codeflare.api.podsets import PodSetError, expected_pods, infer_pod_sets, parse_path, resolve
from codeflare.api.podsets import component_pod_sets as pod_sets
from codeflare.k8s.constants import APPWRAPPER_LABEL
from codeflare.k8s.ownerrefs import owner_reference
from codeflare.k8s.types import Obj

__all__ = [
    "PodSetError",
    "build_component",
    "expected_pods",
    "infer_pod_sets",
    "parse_path",
    "pod_sets",
    "resolve",
]
_API_VERSION = "workload.codeflare.dev/v1beta2"  # when the AppWrapper read lacks apiVersion


def _merge_pod_template(pod_template: Obj, name: str, info: Mapping[str, Any],
                        annotations: Mapping[str, str]) -> None:
    meta = pod_template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **(info.get("labels") or {}), APPWRAPPER_LABEL: name}
    merged = {**(meta.get("annotations") or {}), **annotations, **(info.get("annotations") or {})}
    if merged:
        meta["annotations"] = merged
    spec = pod_template.setdefault("spec", {})
    if info.get("nodeSelector"):
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **info["nodeSelector"]}
    tolerations = list(spec.get("tolerations") or [])
    for toleration in info.get("tolerations") or []:
        if toleration not in tolerations:
            tolerations.append(dict(toleration))
    if tolerations:
        spec["tolerations"] = tolerations


def build_component(appwrapper: Mapping[str, Any], index: int) -> Obj:
    """The object to create for ``spec.components[index]`` of ``appwrapper``."""
    meta = appwrapper.get("metadata") or {}
    name, namespace = str(meta.get("name", "")), str(meta.get("namespace", ""))
    component = copy.deepcopy((appwrapper.get("spec") or {}).get("components", [])[index])
    template = component.get("template")
    if not isinstance(template, dict) or not (template.get("metadata") or {}).get("name"):
        raise PodSetError(f"component {index}: template must be an object with metadata.name")
    infos = component.get("podSetInfos") or []
    for position, pod_set in enumerate(pod_sets(component)):
        info = infos[position] if position < len(infos) else {}
        _merge_pod_template(resolve(component, pod_set["path"]), name, info, pod_set.get("annotations") or {})
    obj_meta = template.setdefault("metadata", {})
    obj_meta["namespace"] = namespace
    obj_meta["labels"] = {**(obj_meta.get("labels") or {}), APPWRAPPER_LABEL: name}
    api_version = str(appwrapper.get("apiVersion") or _API_VERSION)
    obj_meta["ownerReferences"] = [owner_reference(appwrapper, api_version=api_version, kind="AppWrapper")]
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"):
        obj_meta.pop(key, None)
    template.pop("status", None)
    return template
