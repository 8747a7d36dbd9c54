"""One job-integration adapter per queued kind, shaped like Kueue's GenericJob.

Kueue's jobframework (pkg/controller/jobframework/interface.go) asks every integration the same
questions: its pod sets, whether it is suspended, how to suspend it, how to run it with the
admission's pod-set infos (flavor nodeSelectors and tolerations) and how to undo them on
eviction, whether it finished (message, success, done) and whether its pods are ready.
:class:`JobAdapter` is that interface; RayCluster, RayJob and AppWrapper implement it from
KubeRay's and the AppWrapper's status fields (never from message text), and :data:`ADAPTERS`
is the registry the queueing controller looks kinds up in, so it never branches on a kind.
Pure functions over manifests (inputs are copied, never modified); the writes are
:mod:`jobsync`'s.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codeflare.api import podsets
from codeflare.api.podsets import PodSet
from codeflare.k8s.conditions import conditions_of, is_condition_true
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind


@dataclass(frozen=True)
class PodSetInfo:
    """What admission puts into one pod set (Kueue's podset.PodSetInfo, the parts we inject)."""

    name: str
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Obj, ...] = ()


@dataclass(frozen=True)
class Finished:
    """Whether a job ended (its quota can be released), and whether it succeeded, as Kueue asks."""

    message: str = ""
    success: bool = False
    done: bool = False


NOT_FINISHED = Finished()


class JobAdapter(abc.ABC):
    """The questions the queueing controller asks of one kind of queued job."""

    kind: Kind

    @abc.abstractmethod
    def pod_sets(self, job: Obj) -> list[PodSet]:
        """The pod sets the job needs admitted together (gang)."""

    def is_suspended(self, job: Obj) -> bool:
        return bool((job.get("spec") or {}).get("suspend"))

    def suspend(self, job: Obj) -> Obj:
        """A copy of ``job`` with ``spec.suspend: true``."""
        out = copy.deepcopy(job)
        out.setdefault("spec", {})["suspend"] = True
        return out

    @abc.abstractmethod
    def run_with_pod_set_infos(self, job: Obj, infos: Sequence[PodSetInfo]) -> Obj:
        """A copy of ``job`` unsuspended with each pod set's admission infos injected."""

    @abc.abstractmethod
    def restore_pod_set_infos(self, job: Obj, originals: Sequence[PodSetInfo]) -> Obj:
        """A copy of ``job`` with what admission injected undone (``originals``: as queued)."""

    @abc.abstractmethod
    def finished(self, job: Obj) -> Finished:
        """Whether the job ended, from its status fields."""

    @abc.abstractmethod
    def pods_ready(self, job: Obj) -> bool:
        """Whether an admitted job's pods are all up (what waitForPodsReady waits for)."""

    def write_patch(self, new: Obj) -> Obj | None:
        """The merge patch that writes ``new``'s suspension and infos; None: replace the object."""
        return None

    def configured_default_queue(self, appwrapper_default: str) -> str | None:
        """The queue the operator configuration gives unlabelled jobs of this kind, if any."""
        return None


class _PodTemplateJob(JobAdapter):
    """A job whose pod templates are edited in place on admission (the Ray kinds, as in Kueue)."""

    def run_with_pod_set_infos(self, job: Obj, infos: Sequence[PodSetInfo]) -> Obj:
        out = copy.deepcopy(job)
        out.setdefault("spec", {})["suspend"] = False
        by_name = {info.name: info for info in infos}
        for ps in self.pod_sets(out):
            info = by_name.get(ps.name)
            template = podsets.lookup(out, ps.path)
            if info is None or not isinstance(template, dict):
                continue  # e.g. a RayJob without submitterPodTemplate: KubeRay's default is used
            pod_spec = template.setdefault("spec", {})
            if info.node_selector:
                pod_spec["nodeSelector"] = {**(pod_spec.get("nodeSelector") or {}), **info.node_selector}
            if info.tolerations:
                existing = list(pod_spec.get("tolerations") or [])
                pod_spec["tolerations"] = existing + [dict(t) for t in info.tolerations if t not in existing]
        return out

    def restore_pod_set_infos(self, job: Obj, originals: Sequence[PodSetInfo]) -> Obj:
        out = copy.deepcopy(job)
        by_name = {info.name: info for info in originals}
        for ps in self.pod_sets(out):
            info = by_name.get(ps.name)
            template = podsets.lookup(out, ps.path)
            if info is None or not isinstance(template, dict):
                continue
            pod_spec = template.setdefault("spec", {})
            for key, value in (
                ("nodeSelector", dict(info.node_selector)),
                ("tolerations", [dict(t) for t in info.tolerations]),
            ):
                if value:
                    pod_spec[key] = value
                else:
                    pod_spec.pop(key, None)
        return out


class RayClusterAdapter(_PodTemplateJob):
    """kueue pkg/controller/jobs/raycluster: never finished; pods ready when the state is ready."""

    kind = kinds.RAYCLUSTER

    def pod_sets(self, job: Obj) -> list[PodSet]:
        return podsets.raycluster_pod_sets(job)

    def finished(self, job: Obj) -> Finished:
        return NOT_FINISHED  # a RayCluster runs until it is deleted

    def pods_ready(self, job: Obj) -> bool:
        return (job.get("status") or {}).get("state") == "ready"


class RayJobAdapter(_PodTemplateJob):
    """kueue pkg/controller/jobs/rayjob: done on jobDeploymentStatus Complete or Failed, success
    on jobStatus SUCCEEDED, the message KubeRay's ``status.message``."""

    kind = kinds.RAYJOB

    def pod_sets(self, job: Obj) -> list[PodSet]:
        return podsets.rayjob_pod_sets(job)

    def finished(self, job: Obj) -> Finished:
        status = job.get("status") or {}
        if status.get("jobDeploymentStatus") not in ("Complete", "Failed"):
            return NOT_FINISHED
        return Finished(str(status.get("message") or ""), status.get("jobStatus") == "SUCCEEDED", True)

    def pods_ready(self, job: Obj) -> bool:
        status = job.get("status") or {}
        cluster_ready = (status.get("rayClusterStatus") or {}).get("state") == "ready"
        return cluster_ready or status.get("jobDeploymentStatus") in ("Running", "Complete")


class AppWrapperAdapter(JobAdapter):
    """The AppWrapper's own Kueue integration: infos go to ``spec.components[i].podSetInfos`` (its
    controller applies them) and are cleared on eviction; finished on phase Succeeded, or Failed
    once its resources are deleted."""

    kind = kinds.APPWRAPPER

    def pod_sets(self, job: Obj) -> list[PodSet]:
        return podsets.appwrapper_pod_sets(job)

    def run_with_pod_set_infos(self, job: Obj, infos: Sequence[PodSetInfo]) -> Obj:
        out = copy.deepcopy(job)
        spec = out.setdefault("spec", {})
        spec["suspend"] = False
        by_name = {info.name: info for info in infos}
        for ci, component in enumerate(spec.get("components") or []):
            own = [ps for ps in self.pod_sets(out) if ps.path[:3] == ("spec", "components", ci)]
            component["podSetInfos"] = [_pod_set_info(by_name.get(ps.name)) for ps in own]
        return out

    def restore_pod_set_infos(self, job: Obj, originals: Sequence[PodSetInfo]) -> Obj:
        out = copy.deepcopy(job)
        for component in (out.get("spec") or {}).get("components") or []:
            component.pop("podSetInfos", None)
        return out

    def finished(self, job: Obj) -> Finished:
        status = job.get("status") or {}
        phase = status.get("phase")
        if phase == "Succeeded":
            return Finished("AppWrapper finished successfully", True, True)
        if phase == "Failed" and not is_condition_true(conditions_of(job), "ResourcesDeployed"):
            return Finished("AppWrapper failed", False, True)
        return NOT_FINISHED

    def pods_ready(self, job: Obj) -> bool:
        status = job.get("status") or {}
        return is_condition_true(conditions_of(job), "PodsReady") or status.get("phase") == "Succeeded"

    def write_patch(self, new: Obj) -> Obj | None:
        """``spec.suspend`` with the components (which carry the podSetInfos), against the
        resourceVersion read; templates are immutable, so nothing else can be lost."""
        spec = new.get("spec") or {}
        return {
            "metadata": {"resourceVersion": (new.get("metadata") or {}).get("resourceVersion")},
            "spec": {"suspend": spec.get("suspend"), "components": spec.get("components", [])},
        }

    def configured_default_queue(self, appwrapper_default: str) -> str | None:
        return appwrapper_default or None


def _pod_set_info(info: PodSetInfo | None) -> Obj:
    out: Obj = {}
    if info is not None and info.node_selector:
        out["nodeSelector"] = dict(info.node_selector)
    if info is not None and info.tolerations:
        out["tolerations"] = [dict(t) for t in info.tolerations]
    return out


ADAPTERS: dict[Kind, JobAdapter] = {
    adapter.kind: adapter for adapter in (RayClusterAdapter(), RayJobAdapter(), AppWrapperAdapter())
}
QUEUED_KINDS: tuple[Kind, ...] = tuple(ADAPTERS)


def adapter_for(kind: Kind) -> JobAdapter:
    return ADAPTERS[kind]


def original_infos(workload: Obj) -> list[PodSetInfo]:
    """Each pod set's nodeSelector and tolerations as the job had them when it was queued (the
    Workload's pod set templates keep them, as Kueue's do), for :meth:`restore_pod_set_infos`."""
    out = []
    for ps in (workload.get("spec") or {}).get("podSets") or []:
        spec = (ps.get("template") or {}).get("spec") or {}
        out.append(
            PodSetInfo(
                str(ps.get("name", "")),
                dict(spec.get("nodeSelector") or {}),
                tuple(spec.get("tolerations") or ()),
            )
        )
    return out


def infos_for(assignments: Mapping[str, Mapping[str, Any]]) -> list[PodSetInfo]:
    """PodSetInfos from ``{pod set: {"nodeSelector": ..., "tolerations": [...]}}``."""
    return [
        PodSetInfo(name, dict(a.get("nodeSelector") or {}), tuple(a.get("tolerations") or ()))
        for name, a in assignments.items()
    ]
