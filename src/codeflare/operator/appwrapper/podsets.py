"""Pod sets of AppWrapper components: where their pod templates are, and what goes into them.

A pod set names a PodTemplateSpec inside a component by a path such as
``template.spec.workerGroupSpecs[0].template`` (relative to the component, so it starts with
``template``) and how many pods come from it. Declared pod sets win; otherwise they are
inferred for Pod, Deployment, StatefulSet, batch Job, JobSet, PyTorchJob, RayCluster and RayJob.
:func:`build_component` turns a component into the object to create: namespaced, labelled,
owned by the AppWrapper, with the AppWrapper label and the admission's ``podSetInfos`` merged
into every pod template. No I/O; inputs are never modified.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

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
_SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)((?:\[\d+\])*)$")


class PodSetError(ValueError):
    """A pod set path does not lead to an object, or a component cannot be built."""


def parse_path(path: str) -> list[str | int]:
    """``a.b[2].c`` -> ``["a", "b", 2, "c"]``; raises PodSetError on bad syntax."""
    steps: list[str | int] = []
    for segment in path.split("."):
        match = _SEGMENT.match(segment)
        if match is None:
            raise PodSetError(f"invalid pod set path {path!r} (segment {segment!r})")
        steps.append(match.group(1))
        steps.extend(int(index) for index in re.findall(r"\[(\d+)\]", match.group(2)))
    return steps


def resolve(component: Mapping[str, Any], path: str) -> Obj:
    """The object at ``path`` inside ``component`` (the same object, not a copy)."""
    node: Any = component
    for step in parse_path(path):
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise PodSetError(f"pod set path {path!r}: no element [{step}]")
        elif not isinstance(node, dict) or step not in node:
            raise PodSetError(f"pod set path {path!r}: no field {step!r}")
        node = node[step]
    if not isinstance(node, dict):
        raise PodSetError(f"pod set path {path!r} does not lead to an object")
    return node


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _ray_pod_sets(spec: Mapping[str, Any], prefix: str) -> list[Obj]:
    sets: list[Obj] = [{"path": f"{prefix}.headGroupSpec.template", "replicas": 1}]
    for index, group in enumerate(spec.get("workerGroupSpecs") or []):
        replicas = _int(group.get("replicas"), 1) * _int(group.get("numOfHosts"), 1)
        sets.append({"path": f"{prefix}.workerGroupSpecs[{index}].template", "replicas": replicas})
    return sets


def infer_pod_sets(template: Mapping[str, Any]) -> list[Obj]:
    """Pod sets of a known kind (empty for kinds we cannot infer)."""
    api_version, kind = str(template.get("apiVersion", "")), str(template.get("kind", ""))
    group = api_version.split("/")[0] if "/" in api_version else ""
    spec = template.get("spec") or {}
    if group == "" and kind == "Pod":
        return [{"path": "template", "replicas": 1}]
    if group == "apps" and kind in ("Deployment", "StatefulSet"):
        return [{"path": "template.spec.template", "replicas": _int(spec.get("replicas"), 1)}]
    if group == "batch" and kind == "Job":
        return [{"path": "template.spec.template", "replicas": _int(spec.get("parallelism"), 1)}]
    if group == "jobset.x-k8s.io" and kind == "JobSet":
        sets = []
        for index, job in enumerate(spec.get("replicatedJobs") or []):
            job_spec = (job.get("template") or {}).get("spec") or {}
            replicas = _int(job.get("replicas"), 1) * _int(job_spec.get("parallelism"), 1)
            sets.append({"path": f"template.spec.replicatedJobs[{index}].template.spec.template",
                         "replicas": replicas})
        return sets
    if group == "kubeflow.org" and kind == "PyTorchJob":
        replica_specs = spec.get("pytorchReplicaSpecs") or {}
        return [{"path": f"template.spec.pytorchReplicaSpecs.{role}.template",
                 "replicas": _int((replica_specs[role] or {}).get("replicas"), 1)}
                for role in ("Master", "Worker") if role in replica_specs]
    if group == "ray.io" and kind == "RayCluster":
        return _ray_pod_sets(spec, "template.spec")
    if group == "ray.io" and kind == "RayJob":
        cluster = spec.get("rayClusterSpec")
        return _ray_pod_sets(cluster, "template.spec.rayClusterSpec") if isinstance(cluster, dict) else []
    return []


def pod_sets(component: Mapping[str, Any]) -> list[Obj]:
    """The declared pod sets of a component, or the inferred ones when none are declared."""
    declared = component.get("podSets")
    if declared:
        return [dict(ps, replicas=_int(ps.get("replicas"), 1)) for ps in declared]
    return infer_pod_sets(component.get("template") or {})


def expected_pods(components: list[Mapping[str, Any]]) -> int:
    """How many pods the AppWrapper's components should run."""
    return sum(int(ps["replicas"]) for component in components for ps in pod_sets(component))


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
