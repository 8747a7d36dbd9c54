"""Pod sets: which pod templates a queued job runs, how many pods each, and where they live.

The one inference of pod sets for every kind we queue or wrap, shared by the queueing
controller (Workload ``spec.podSets``), the AppWrapper controller (components and expected pods)
and the webhooks (declared paths must resolve). Counts follow Kueue's integrations: a Ray head
is 1, a worker group ``replicas`` (1 when unset) x ``numOfHosts``; a RayJob in K8sJobMode adds
its ``submitter`` pod set; AppWrapper components use their declared ``podSets`` or, for Pod,
Deployment, StatefulSet, batch Job, JobSet, PyTorchJob, RayCluster and RayJob, inferred ones.
Pure functions over manifests; it neither reads nor writes the API and injects nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codeflare.k8s.quantity import format_milli, milli_value
from codeflare.k8s.types import Obj

Path = tuple[str | int, ...]
_SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)((?:\[\d+\])*)$")
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


class PodSetError(ValueError):
    """A pod set path is malformed or does not lead to an object."""


@dataclass(frozen=True)
class PodSet:
    """One pod set of a job: its name, pod count, pod template and the template's path in the job.

    ``template`` is the object inside the job (not a copy) where there is one; a RayJob without
    ``spec.submitterPodTemplate`` gets KubeRay's default submitter template, which is not in it.
    """

    name: str
    count: int
    template: Obj
    path: Path
    annotations: Mapping[str, str] = field(default_factory=dict)


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


def lookup(obj: Any, path: Path) -> Any:
    """What is at ``path`` inside ``obj`` (the same object), or None where the path leads nowhere."""
    node = obj
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return None
            node = node[step]
        elif isinstance(node, dict):
            node = node.get(step)
        else:
            return None
    return node


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


def _dns_name(text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9-]", "-", text.lower()).strip("-")
    return cleaned[:63] or "main"


# -- Ray kinds ----------------------------------------------------------------------------------
def ray_cluster_spec_pod_sets(spec: Mapping[str, Any], base: Path) -> list[PodSet]:
    """Head (1) and worker groups (``replicas``, 1 when unset, x ``numOfHosts``) of a RayCluster spec."""
    head = spec.get("headGroupSpec") or {}
    out = [PodSet("head", 1, head.get("template") or {}, (*base, "headGroupSpec", "template"))]
    for index, group in enumerate(spec.get("workerGroupSpecs") or []):
        count = _int(group.get("replicas"), 1) * max(1, _int(group.get("numOfHosts"), 1))
        name = _dns_name(str(group.get("groupName") or f"group-{index}"))
        out.append(
            PodSet(name, count, group.get("template") or {}, (*base, "workerGroupSpecs", index, "template"))
        )
    return out


def raycluster_pod_sets(job: Mapping[str, Any]) -> list[PodSet]:
    return ray_cluster_spec_pod_sets(job.get("spec") or {}, ("spec",))


def submitter_template(job: Mapping[str, Any]) -> Obj:
    """The pod template of a RayJob's submitter Job: the user's, else KubeRay's default one."""
    spec = job.get("spec") or {}
    if isinstance(spec.get("submitterPodTemplate"), dict) and spec["submitterPodTemplate"]:
        template: Obj = spec["submitterPodTemplate"]
        return template
    head = ((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get("template") or {}
    head_containers = (head.get("spec") or {}).get("containers") or [{}]
    container: Obj = {
        "name": SUBMITTER_CONTAINER,
        "resources": {"limits": dict(SUBMITTER_LIMITS), "requests": dict(SUBMITTER_REQUESTS)},
    }
    if head_containers[0].get("image"):
        container["image"] = head_containers[0]["image"]  # KubeRay: the head's image, against skew
    return {"spec": {"containers": [container], "restartPolicy": "Never"}}


def rayjob_pod_sets(job: Mapping[str, Any]) -> list[PodSet]:
    """The RayJob's own cluster's pod sets, plus the submitter in K8sJobMode (as Kueue counts it)."""
    spec = job.get("spec") or {}
    out = ray_cluster_spec_pod_sets(spec.get("rayClusterSpec") or {}, ("spec", "rayClusterSpec"))
    if (spec.get("submissionMode") or K8S_JOB_MODE) == K8S_JOB_MODE:
        out.append(PodSet(SUBMITTER_POD_SET, 1, submitter_template(job), ("spec", "submitterPodTemplate")))
    return out


# -- AppWrapper components ----------------------------------------------------------------------
def _ray_component_sets(spec: Mapping[str, Any], prefix: str) -> list[Obj]:
    return [
        {"path": ".".join([prefix, *_dotted(ps.path)]), "replicas": ps.count}
        for ps in ray_cluster_spec_pod_sets(spec, ())
    ]


def _dotted(path: Path) -> list[str]:
    out: list[str] = []
    for step in path:
        if isinstance(step, int):
            out[-1] += f"[{step}]"
        else:
            out.append(step)
    return out


def infer_pod_sets(template: Mapping[str, Any]) -> list[Obj]:
    """Pod sets (``{"path", "replicas"}``, paths from the component) of a known kind; [] otherwise."""
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
            sets.append(
                {
                    "path": f"template.spec.replicatedJobs[{index}].template.spec.template",
                    "replicas": replicas,
                }
            )
        return sets
    if group == "kubeflow.org" and kind == "PyTorchJob":
        replica_specs = spec.get("pytorchReplicaSpecs") or {}
        return [
            {
                "path": f"template.spec.pytorchReplicaSpecs.{role}.template",
                "replicas": _int((replica_specs[role] or {}).get("replicas"), 1),
            }
            for role in ("Master", "Worker")
            if role in replica_specs
        ]
    if group == "ray.io" and kind == "RayCluster":
        return _ray_component_sets(spec, "template.spec")
    if group == "ray.io" and kind == "RayJob":
        cluster = spec.get("rayClusterSpec")
        return (
            _ray_component_sets(cluster, "template.spec.rayClusterSpec") if isinstance(cluster, dict) else []
        )
    return []


def component_pod_sets(component: Mapping[str, Any]) -> list[Obj]:
    """The declared pod sets of a component (``replicas`` 1 when unset), or the inferred ones."""
    declared = component.get("podSets")
    if declared:
        return [dict(ps, replicas=_int(ps.get("replicas"), 1)) for ps in declared]
    return infer_pod_sets(component.get("template") or {})


def appwrapper_pod_sets(job: Mapping[str, Any]) -> list[PodSet]:
    """Every component's pod sets, named ``c<component>-p<pod set>``; unresolvable paths are left out."""
    out: list[PodSet] = []
    for ci, component in enumerate((job.get("spec") or {}).get("components") or []):
        for pi, ps in enumerate(component_pod_sets(component)):
            try:
                steps = parse_path(str(ps.get("path") or "template"))
                template = resolve(component, str(ps.get("path") or "template"))
            except PodSetError:
                continue  # the webhook refuses such paths; a stored one queues nothing for it
            out.append(
                PodSet(
                    f"c{ci}-p{pi}",
                    int(ps["replicas"]),
                    template,
                    ("spec", "components", ci, *steps),
                    dict(ps.get("annotations") or {}),
                )
            )
    return out


def expected_pods(components: list[Mapping[str, Any]]) -> int:
    """How many pods an AppWrapper's components should run."""
    return sum(int(ps["replicas"]) for component in components for ps in component_pod_sets(component))


def pod_requests(template: Mapping[str, Any]) -> dict[str, str]:
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
