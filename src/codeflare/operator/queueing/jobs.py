"""The jobs that queue through Workloads (RayCluster, RayJob, AppWrapper), seen as one shape.

Pure functions over manifests: which queue a job asks for, its pod sets (head + worker groups
x replicas x numOfHosts, plus a RayJob's submitter in K8sJobMode as Kueue counts it; AppWrapper
components by declared or inferred pod sets), its per-pod requests, whether it is suspended or
finished, and how an admission is injected into it (flavor nodeSelectors and tolerations in its
pod templates, then ``spec.suspend: false``) and written. No I/O; :mod:`jobsync` does the
reading and writing.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from codeflare.k8s.constants import (
    JOB_UID_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    WORKLOAD_PRIORITY_CLASS_SOURCE,
)
from codeflare.k8s.ownerrefs import owner_reference
from codeflare.k8s.quantity import format_milli, milli_value
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind

QUEUED_KINDS: tuple[Kind, ...] = (kinds.RAYCLUSTER, kinds.RAYJOB, kinds.APPWRAPPER)
# A RayJob in K8sJobMode (KubeRay's default) runs ``ray job submit`` in a Job of its own, which
# Kueue admits as one more pod set of the RayJob's Workload (kueue pkg/controller/jobs/rayjob:
# podset "submitter", count 1, template spec.submitterPodTemplate or KubeRay's default).
K8S_JOB_MODE = "K8sJobMode"
SUBMITTER_POD_SET = "submitter"
SUBMITTER_CONTAINER = "ray-job-submitter"
# KubeRay's default submitter container resources (ray-operator/controllers/ray/common/job.go,
# GetDefaultSubmitterContainer).
SUBMITTER_REQUESTS = {"cpu": "500m", "memory": "200Mi"}
SUBMITTER_LIMITS = {"cpu": "1", "memory": "1Gi"}


@dataclass(frozen=True)
class PodSetInfo:
    """One pod set of a job: a name, a count and where its pod template lives in the job."""

    name: str
    count: int
    template: Obj
    path: tuple[str | int, ...]


def queue_name(job: Obj) -> str | None:
    labels = (job.get("metadata") or {}).get("labels") or {}
    value = labels.get(QUEUE_NAME_LABEL)
    return str(value) if value else None


def owned_by_queued_job(job: Obj) -> bool:
    """Whether a RayJob or AppWrapper controls ``job`` (its parent is the one that queues)."""
    for ref in (job.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and (ref.get("apiVersion"), ref.get("kind")) in (
            (kinds.RAYJOB.api_version, kinds.RAYJOB.kind),
            (kinds.APPWRAPPER.api_version, kinds.APPWRAPPER.kind),
        ):
            return True
    return False


def pod_priority_class(kind: Kind, job: Obj) -> str | None:
    """The scheduling.k8s.io PriorityClass named by the job's pod templates (the first one set)."""
    for ps in pod_sets(kind, job):
        name = (ps.template.get("spec") or {}).get("priorityClassName")
        if name:
            return str(name)
    return None


def priority_class(job: Obj) -> str | None:
    labels = (job.get("metadata") or {}).get("labels") or {}
    value = labels.get(PRIORITY_CLASS_LABEL)
    return str(value) if value else None


def _dns_name(text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9-]", "-", text.lower()).strip("-")
    return cleaned[:63] or "main"


def workload_name(kind: Kind, job: Obj) -> str:
    """``<kind>-<name>-<hash>``, stable for a job and at most 253 characters."""
    meta = job.get("metadata") or {}
    digest = hashlib.sha256(f"{kind.kind}/{meta.get('name')}/{meta.get('uid', '')}".encode()).hexdigest()[:5]
    prefix = f"{kind.kind.lower()}-{meta.get('name', '')}"[:240]
    return f"{prefix}-{digest}"


def _at(obj: Any, path: tuple[str | int, ...]) -> Any:
    cur = obj
    for part in path:
        if isinstance(part, int):
            if not isinstance(cur, list) or part >= len(cur):
                return None
        elif not isinstance(cur, dict):
            return None
        cur = cur[part] if isinstance(part, int) else cur.get(part)
    return cur


def parse_path(path: str) -> tuple[str | int, ...]:
    """``template.spec.groups[0].template`` -> ("template", "spec", "groups", 0, "template")."""
    parts: list[str | int] = []
    for piece in path.strip(".").split("."):
        match = re.fullmatch(r"([^\[\]]*)((?:\[\d+\])*)", piece)
        if match is None:
            raise ValueError(f"invalid pod set path {path!r}")
        if match.group(1):
            parts.append(match.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))
    return tuple(parts)


def _ray_pod_sets(spec: Obj, base: tuple[str | int, ...]) -> list[PodSetInfo]:
    head = spec.get("headGroupSpec") or {}
    out = [PodSetInfo("head", 1, head.get("template") or {}, (*base, "headGroupSpec", "template"))]
    for i, group in enumerate(spec.get("workerGroupSpecs") or []):
        replicas = int(
            group.get("replicas") if group.get("replicas") is not None else group.get("minReplicas") or 0
        )
        hosts = int(group.get("numOfHosts") or 1)
        out.append(
            PodSetInfo(
                _dns_name(str(group.get("groupName") or f"group-{i}")),
                replicas * hosts,
                group.get("template") or {},
                (*base, "workerGroupSpecs", i, "template"),
            )
        )
    return out


def _inferred_component_pod_sets(template: Obj) -> list[tuple[tuple[str | int, ...], int]]:
    """Pod set paths and counts of a wrapped object whose kind we know."""
    kind = template.get("kind")
    spec = template.get("spec") or {}
    if kind == "Pod":
        return [(("spec",), 1)]
    if kind in ("Deployment", "StatefulSet"):
        return [(("spec", "template"), int(spec.get("replicas", 1) or 0))]
    if kind == "Job":
        return [(("spec", "template"), int(spec.get("parallelism", 1) or 0))]
    if kind in ("RayCluster", "RayJob"):
        ray_spec = spec if kind == "RayCluster" else spec.get("rayClusterSpec") or {}
        base: tuple[str | int, ...] = ("spec",) if kind == "RayCluster" else ("spec", "rayClusterSpec")
        return [(ps.path, ps.count) for ps in _ray_pod_sets(ray_spec, base)]
    if kind in ("PyTorchJob",):
        out: list[tuple[tuple[str | int, ...], int]] = []
        for role, replica_spec in sorted((spec.get("pytorchReplicaSpecs") or {}).items()):
            out.append(
                (("spec", "pytorchReplicaSpecs", role, "template"), int(replica_spec.get("replicas", 1) or 0))
            )
        return out
    return []


def _component_path(path: str) -> tuple[str | int, ...]:
    """A declared pod set path, relative to the component's template (paths start at ``template``)."""
    parts = parse_path(path)
    return parts[1:] if parts[:1] == ("template",) else parts


def _appwrapper_pod_sets(job: Obj) -> list[PodSetInfo]:
    out: list[PodSetInfo] = []
    for ci, component in enumerate((job.get("spec") or {}).get("components") or []):
        template = component.get("template") or {}
        declared = component.get("podSets") or []
        if declared:
            entries = [
                (_component_path(str(ps.get("path") or "template")), int(ps.get("replicas", 1) or 0))
                for ps in declared
            ]
        else:
            entries = _inferred_component_pod_sets(template)
        for pi, (path, count) in enumerate(entries):
            pod_template = _at(template, path)
            if path == ("spec",) and template.get("kind") == "Pod":
                pod_template = {
                    "metadata": template.get("metadata") or {},
                    "spec": template.get("spec") or {},
                }
            out.append(
                PodSetInfo(
                    f"c{ci}-p{pi}",
                    count,
                    pod_template if isinstance(pod_template, dict) else {},
                    ("spec", "components", ci, "template", *path),
                )
            )
    return out


def submitter_template(job: Obj) -> Obj:
    """The pod template of a RayJob's submitter Job: the user's, else KubeRay's default one."""
    spec = job.get("spec") or {}
    if spec.get("submitterPodTemplate"):
        return dict(spec["submitterPodTemplate"])
    head = ((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get("template") or {}
    head_containers = (head.get("spec") or {}).get("containers") or [{}]
    container: Obj = {
        "name": SUBMITTER_CONTAINER,
        "resources": {"limits": dict(SUBMITTER_LIMITS), "requests": dict(SUBMITTER_REQUESTS)},
    }
    if head_containers[0].get("image"):
        container["image"] = head_containers[0]["image"]  # KubeRay: the head's image, against skew
    return {"spec": {"containers": [container], "restartPolicy": "Never"}}


def _rayjob_pod_sets(job: Obj) -> list[PodSetInfo]:
    spec = job.get("spec") or {}
    out = _ray_pod_sets(spec.get("rayClusterSpec") or {}, ("spec", "rayClusterSpec"))
    if (spec.get("submissionMode") or K8S_JOB_MODE) == K8S_JOB_MODE:
        out.append(
            PodSetInfo(SUBMITTER_POD_SET, 1, submitter_template(job), ("spec", "submitterPodTemplate"))
        )
    return out


def pod_sets(kind: Kind, job: Obj) -> list[PodSetInfo]:
    """The pod sets a job needs admitted together (gang)."""
    spec = job.get("spec") or {}
    if kind == kinds.RAYCLUSTER:
        return _ray_pod_sets(spec, ("spec",))
    if kind == kinds.RAYJOB:
        return _rayjob_pod_sets(job)
    if kind == kinds.APPWRAPPER:
        return _appwrapper_pod_sets(job)
    return []


def pod_requests(template: Obj) -> dict[str, str]:
    """Per-pod requests of a pod template: containers summed (limits stand in for missing requests)."""
    spec = template.get("spec") or {}
    totals: dict[str, list[str]] = {}
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        requests = dict(resources.get("limits") or {})
        requests.update(resources.get("requests") or {})
        for name, value in requests.items():
            totals.setdefault(name, []).append(str(value))
    return {
        name: format_milli(sum(milli_value(v) for v in values)) for name, values in sorted(totals.items())
    }


def workload_pod_sets(kind: Kind, job: Obj) -> list[Obj]:
    """Workload ``spec.podSets`` for a job: name, count and a template carrying the requests."""
    out = []
    for ps in pod_sets(kind, job):
        requests = pod_requests(ps.template)
        out.append(
            {
                "name": ps.name,
                "count": ps.count,
                "template": {"spec": {"containers": [{"name": "main", "resources": {"requests": requests}}]}},
            }
        )
    return out


def workload_for(
    kind: Kind,
    job: Obj,
    priority: int,
    priority_class_name: str | None,
    priority_source: str = WORKLOAD_PRIORITY_CLASS_SOURCE,
) -> Obj:
    """The Workload manifest that queues ``job`` (owner reference to the job)."""
    meta = job.get("metadata") or {}
    labels = {JOB_UID_LABEL: str(meta.get("uid", ""))}
    spec: Obj = {
        "queueName": queue_name(job) or "",
        "podSets": workload_pod_sets(kind, job),
        "priority": priority,
        "active": True,
    }
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
        spec["priorityClassSource"] = priority_source
    return {
        "apiVersion": kinds.WORKLOAD.api_version,
        "kind": kinds.WORKLOAD.kind,
        "metadata": {
            "name": workload_name(kind, job),
            "namespace": meta.get("namespace", ""),
            "labels": labels,
            "ownerReferences": [owner_reference(job, api_version=kind.api_version, kind=kind.kind)],
        },
        "spec": spec,
    }


def is_suspended(job: Obj) -> bool:
    return bool((job.get("spec") or {}).get("suspend"))


def finished(kind: Kind, job: Obj) -> tuple[bool, bool, str]:
    """(ended, succeeded, how): whether the job ended (its quota can be released), as Kueue asks."""
    status = job.get("status") or {}
    if kind == kinds.RAYJOB:
        deployment = status.get("jobDeploymentStatus")
        if deployment in ("Complete", "Failed"):
            detail = f"{status.get('jobStatus', '')} {status.get('message', '')}".strip()
            return True, status.get("jobStatus") == "SUCCEEDED", f"RayJob {deployment.lower()}: {detail}"
    if kind == kinds.APPWRAPPER:
        phase = status.get("phase")
        if phase in ("Succeeded", "Failed"):
            return True, phase == "Succeeded", f"AppWrapper {phase.lower()}"
    return False, False, ""


def configured_default_queue(kind: Kind, appwrapper_default: str) -> str | None:
    """The default queue the configuration names for ``kind`` (``appwrapper.defaultQueueName``)."""
    if kind == kinds.APPWRAPPER and appwrapper_default:
        return appwrapper_default
    return None


def suspend_patch(kind: Kind, new: Obj) -> Obj | None:
    """The merge patch writing ``new``'s suspension, or None where the whole object is replaced.

    An AppWrapper is patched (``spec.suspend`` with its components, which carry the
    podSetInfos, against the resourceVersion read); Ray kinds are replaced, their pod templates
    carrying the injected node selectors and tolerations.
    """
    if kind != kinds.APPWRAPPER:
        return None
    spec = new.get("spec") or {}
    return {
        "metadata": {"resourceVersion": (new.get("metadata") or {}).get("resourceVersion")},
        "spec": {"suspend": spec.get("suspend"), "components": spec.get("components", [])},
    }


def pods_ready(kind: Kind, job: Obj) -> bool:
    """Whether an admitted job's pods are all up (what waitForPodsReady waits for)."""
    status = job.get("status") or {}
    if kind == kinds.RAYCLUSTER:
        return status.get("state") == "ready"
    if kind == kinds.RAYJOB:
        return status.get("jobDeploymentStatus") in ("Running", "Complete")
    if kind == kinds.APPWRAPPER:
        ready = any(
            c.get("type") == "PodsReady" and c.get("status") == "True" for c in status.get("conditions") or []
        )
        return ready or status.get("phase") == "Succeeded"
    return False


def admitted_job(kind: Kind, job: Obj, assignments: dict[str, dict[str, Any]]) -> Obj:
    """A copy of ``job`` unsuspended, with each pod set's flavor nodeSelector/tolerations injected.

    ``assignments`` maps pod set name -> {"nodeSelector": {...}, "tolerations": [...]}. For an
    AppWrapper they go to ``spec.components[i].podSetInfos`` (its controller applies them); for
    Ray kinds they are merged into the pod templates directly.
    """
    out = copy.deepcopy(job)
    spec = out.setdefault("spec", {})
    spec["suspend"] = False
    infos = {ps.name: ps for ps in pod_sets(kind, out)}
    if kind == kinds.APPWRAPPER:
        for ci, component in enumerate(spec.get("components") or []):
            entries = [ps for ps in infos.values() if ps.path[:3] == ("spec", "components", ci)]
            component["podSetInfos"] = [_pod_set_info(assignments.get(ps.name, {})) for ps in entries]
        return out
    for name, ps in infos.items():
        assignment = assignments.get(name) or {}
        template = _at(out, ps.path)
        if not isinstance(template, dict):
            continue
        pod_spec = template.setdefault("spec", {})
        if assignment.get("nodeSelector"):
            pod_spec["nodeSelector"] = {**(pod_spec.get("nodeSelector") or {}), **assignment["nodeSelector"]}
        if assignment.get("tolerations"):
            existing = list(pod_spec.get("tolerations") or [])
            pod_spec["tolerations"] = existing + [t for t in assignment["tolerations"] if t not in existing]
    return out


def _pod_set_info(assignment: dict[str, Any]) -> Obj:
    info: Obj = {}
    if assignment.get("nodeSelector"):
        info["nodeSelector"] = assignment["nodeSelector"]
    if assignment.get("tolerations"):
        info["tolerations"] = assignment["tolerations"]
    return info


def suspended_job(kind: Kind, job: Obj) -> Obj:
    """A copy of ``job`` suspended again (eviction); AppWrapper podSetInfos are cleared."""
    out = copy.deepcopy(job)
    spec = out.setdefault("spec", {})
    spec["suspend"] = True
    if kind == kinds.APPWRAPPER:
        for component in spec.get("components") or []:
            component.pop("podSetInfos", None)
    return out
