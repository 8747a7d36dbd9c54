"""Elastic RayClusters as Kueue (0.13+, ElasticJobsViaWorkloadSlices) queues them: workload slices.

A queued RayCluster annotated ``kueue.x-k8s.io/elastic-job: "true"`` (the SDK writes it for
``enable_autoscaling`` with a ``local_queue``) changes size while it runs, as Ray's autoscaler
asks, without being suspended and requeued:

- scale-down: the new counts are written into the admitted Workload itself (its pod sets and its
  admission's counts and usage), so the quota is released at once;
- scale-up: a new Workload *slice* with the new counts is created, annotated
  ``kueue.x-k8s.io/workload-slice-replacement-for: <ns>/<old slice>``. The engine sees it asking
  only for what it adds (:func:`engine_view`: counts minus the old slice's admitted counts, as
  Kueue's scheduler computes a replacement's demand), so it is admitted only when the growth
  fits, and until then it is pending with the engine's reason like any Workload. Once admitted,
  its admission is completed to the full counts and usage (old + growth) and the old slice is
  finished (reason ``WorkloadSliceReplaced``). The quota charged never drops below what runs:
  between the two writes the old slice and the whole new one are both charged, briefly.

The agent starts only the workers the admitted slices count (see
``codeflare.local.agent.elastic``); the others wait as scheduling-gated Pods. :func:`decide` is
pure; :class:`ElasticSlices` carries its decision out. Deliberate differences: no feature gate
(the annotation alone turns it on), and a grown pod set keeps the flavor it had (Kueue requires
the same flavor; an admission that picked another for the growth is completed with the old one's).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from codeflare.api.raycluster import (
    ELASTIC_JOB_ANNOTATION,
    WORKLOAD_SLICE_REPLACEMENT_FOR,
    admitted_pod_set_counts,
    is_elastic_job,
)
from codeflare.k8s.conditions import conditions_of, is_condition_true, set_condition
from codeflare.k8s.constants import JOB_UID_LABEL
from codeflare.k8s.quantity import format_milli, milli_value
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind
from codeflare.scheduling import Workload, workload_key

log = logging.getLogger(__name__)

#: The Finished reason of a slice another one replaced (Kueue's WorkloadSliceReplaced).
SLICE_REPLACED = "WorkloadSliceReplaced"
#: Ours: the Finished reason of a pending slice whose growth the job no longer asks for.
SLICE_DROPPED = "WorkloadSliceDropped"
_SLICE_SUFFIX = re.compile(r"-s[0-9a-f]{5}$")  # what slice_manifest appends to the first slice's name


def is_elastic(kind: Kind, job: Obj | None) -> bool:
    return kind == kinds.RAYCLUSTER and job is not None and is_elastic_job(job)


def _finished(workload: Obj) -> bool:
    return is_condition_true(conditions_of(workload), "Finished")


def _admitted(workload: Obj) -> bool:
    return bool((workload.get("status") or {}).get("admission"))


def replaced_key(workload: Obj) -> str | None:
    annotations = (workload.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(WORKLOAD_SLICE_REPLACEMENT_FOR)
    return str(value) if value else None


admitted_counts = admitted_pod_set_counts


def spec_counts(pod_sets: Iterable[Obj]) -> dict[str, int]:
    return {str(ps.get("name")): int(ps.get("count") or 0) for ps in pod_sets}


@dataclasses.dataclass(frozen=True)
class Slices:
    """The unfinished Workloads of one elastic job: the admitted slice (the one that counts), an
    admitted replacement whose swap is not done, and a pending replacement."""

    admitted: Obj | None = None
    replacing: Obj | None = None
    pending: Obj | None = None


def slices_of(job_uid: str, workloads: Iterable[Obj]) -> Slices:
    mine = [
        w for w in workloads
        if ((w.get("metadata") or {}).get("labels") or {}).get(JOB_UID_LABEL) == job_uid and not _finished(w)
    ]
    admitted = [w for w in mine if _admitted(w)]
    keys = {workload_key(w["metadata"].get("namespace", ""), w["metadata"]["name"]): w for w in admitted}
    replacing = next((w for w in admitted if replaced_key(w) in keys), None)
    base = keys.get(replaced_key(replacing) or "") if replacing is not None else None
    if base is None:
        base = admitted[0] if len(admitted) == 1 else next((w for w in admitted if not replaced_key(w)), None)
    pending = next((w for w in mine if not _admitted(w) and replaced_key(w)), None)
    return Slices(admitted=base, replacing=replacing, pending=pending)


class Step(enum.Enum):
    NOTHING = "nothing to do"
    SWAP = "complete the admitted replacement and finish the slice it replaces"
    SCALE_DOWN = "write the smaller counts into the admitted slice"
    SCALE_UP = "create a slice with the new counts"
    RESIZE_SLICE = "follow the new counts in the pending slice"
    DROP_SLICE = "finish the pending slice: no growth is wanted any more"


@dataclasses.dataclass(frozen=True)
class Decision:
    step: Step
    pod_sets: tuple[Obj, ...] = ()


def decide(wanted: list[Obj], slices: Slices) -> Decision | None:
    """What to do for an elastic job wanting ``wanted`` (its Workload pod sets); None: no slice is
    admitted, so it queues as any job does."""
    if slices.admitted is None:
        return None
    if slices.replacing is not None:
        return Decision(Step.SWAP)
    have = admitted_counts(slices.admitted)
    want = spec_counts(wanted)
    if set(want) != set(have):
        return None  # other pod sets: not a resize the slices can follow (requeued as any job)
    grows = any(want[name] > have[name] for name in want)
    if not grows:
        if slices.pending is not None:
            return Decision(Step.DROP_SLICE)
        return Decision(Step.SCALE_DOWN, tuple(wanted)) if want != have else Decision(Step.NOTHING)
    if slices.pending is None:
        return Decision(Step.SCALE_UP, tuple(wanted))
    if spec_counts((slices.pending.get("spec") or {}).get("podSets") or []) != want:
        return Decision(Step.RESIZE_SLICE, tuple(wanted))
    return Decision(Step.NOTHING)


# -- quantities of an admission ---------------------------------------------------------------------
def _scaled(usage: Mapping[str, Any], old: int, new: int) -> dict[str, str]:
    """A pod set's resourceUsage for ``new`` pods, from its usage for ``old`` (same pods)."""
    return {res: format_milli(milli_value(v) * new // old) if old else "0" for res, v in usage.items()}


def _summed(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, str]:
    return {res: format_milli(milli_value(a.get(res, 0)) + milli_value(b.get(res, 0))) for res in {*a, *b}}


def scaled_down_admission(admission: Obj, counts: Mapping[str, int]) -> Obj:
    """The admission with each pod set's count and usage lowered to ``counts``."""
    out = dict(admission)
    psas = []
    for psa in admission.get("podSetAssignments") or []:
        old, new = int(psa.get("count") or 0), counts.get(str(psa.get("name")), int(psa.get("count") or 0))
        psas.append({**psa, "count": new, "resourceUsage": _scaled(psa.get("resourceUsage") or {}, old, new)})
    out["podSetAssignments"] = psas
    return out


def completed_admission(old: Obj, growth: Obj) -> Obj:
    """A replacement's admission (the growth only) completed with the replaced slice's: counts
    and usage added, each pod set keeping the replaced slice's flavors."""
    before = {str(p.get("name")): p for p in old.get("podSetAssignments") or []}
    psas = []
    for psa in growth.get("podSetAssignments") or []:
        prev = before.get(str(psa.get("name"))) or {}
        psas.append({
            **psa,
            "flavors": dict(prev.get("flavors") or psa.get("flavors") or {}),
            "count": int(prev.get("count") or 0) + int(psa.get("count") or 0),
            "resourceUsage": _summed(prev.get("resourceUsage") or {}, psa.get("resourceUsage") or {}),
        })
    return {**growth, "podSetAssignments": psas}


def engine_view(obj: Obj, workload: Workload, lookup: Callable[[str], Obj | None]) -> Workload:
    """What the engine must see of a Workload: a pending replacement slice asks only for what it
    adds to the admitted slice it replaces (whose pods keep running); any other as it is."""
    target = replaced_key(obj)
    if target is None or workload.admission is not None:
        return workload
    old = lookup(target)
    if old is None or _finished(old) or not _admitted(old):
        return workload
    have = admitted_counts(old)
    pod_sets = tuple(
        dataclasses.replace(ps, count=max(0, ps.count - have.get(ps.name, 0))) for ps in workload.pod_sets
    )
    return dataclasses.replace(workload, pod_sets=pod_sets)


def slice_manifest(base: Obj, pod_sets: Iterable[Obj]) -> Obj:
    """A new slice replacing ``base``: its labels, owner, queue and priority, the new pod sets."""
    meta = base["metadata"]
    pod_sets = list(pod_sets)
    counts = ",".join(f"{k}={v}" for k, v in sorted(spec_counts(pod_sets).items()))
    suffix = hashlib.sha256(f"{meta.get('uid')}/{counts}".encode()).hexdigest()[:5]
    root = _SLICE_SUFFIX.sub("", str(meta["name"]))
    spec = {k: v for k, v in (base.get("spec") or {}).items() if k != "podSets"}
    return {
        "apiVersion": kinds.WORKLOAD.api_version,
        "kind": kinds.WORKLOAD.kind,
        "metadata": {
            "name": f"{root[:240]}-s{suffix}",
            "namespace": meta.get("namespace", ""),
            "labels": dict(meta.get("labels") or {}),
            "annotations": {
                ELASTIC_JOB_ANNOTATION: "true",
                WORKLOAD_SLICE_REPLACEMENT_FOR: workload_key(meta.get("namespace", ""), meta["name"]),
            },
            "ownerReferences": list(meta.get("ownerReferences") or []),
        },
        "spec": {**spec, "podSets": pod_sets},
    }


class ElasticSlices:
    """Carries out :func:`decide` for one elastic job, through the API and the status writer."""

    def __init__(self, kube: Any, write_status: Callable[[str, Callable[[Obj], Obj | None]], Any],
                 clock: Callable[[], float]) -> None:
        self.kube = kube
        self.write_status = write_status
        self.clock = clock

    async def sync(self, job: Obj, wanted: list[Obj], workloads: Iterable[Obj]) -> bool:
        """Follow a running job's size with its slices; False when it is not in slice mode (not
        running, or no slice admitted): then it is queued, admitted or requeued as any job."""
        slices = slices_of(str(job["metadata"].get("uid", "")), workloads)
        suspended = bool((job.get("spec") or {}).get("suspend"))
        decision = None if suspended else decide(wanted, slices)
        if decision is None:
            if slices.admitted is None and slices.pending is not None:
                await self._drop(slices.pending)  # evicted meanwhile: it requeues whole, as any job
            return False
        name = f"{job['metadata'].get('namespace')}/{job['metadata']['name']}"
        if decision.step is Step.NOTHING:
            return True
        log.info("elastic RayCluster %s: %s", name, decision.step.value)
        if decision.step is Step.SWAP and slices.replacing is not None and slices.admitted is not None:
            await self._swap(slices.admitted, slices.replacing)
        elif decision.step is Step.SCALE_DOWN and slices.admitted is not None:
            await self._scale_down(slices.admitted, list(decision.pod_sets))
        elif decision.step is Step.SCALE_UP and slices.admitted is not None:
            with contextlib.suppress(errors.AlreadyExists):
                await self.kube.create(kinds.WORKLOAD, slice_manifest(slices.admitted, decision.pod_sets))
        elif decision.step is Step.RESIZE_SLICE and slices.pending is not None:
            meta = slices.pending["metadata"]
            body = {"spec": {"podSets": list(decision.pod_sets)}}
            await self.kube.patch(kinds.WORKLOAD, meta["name"], body, meta.get("namespace"))
        elif decision.step is Step.DROP_SLICE and slices.pending is not None:
            await self._drop(slices.pending)
        return True

    async def _drop(self, pending: Obj) -> None:
        """Finish a pending slice no longer wanted (the operator may not delete Workloads; a
        finished one holds no quota and its job's owner reference collects it with the job)."""
        meta = pending["metadata"]
        await self._finish(pending, SLICE_DROPPED, "the job no longer asks for this growth")
        log.info("Workload slice %s/%s dropped", meta.get("namespace"), meta["name"])

    async def _finish(self, workload: Obj, reason: str, message: str) -> None:
        meta = workload["metadata"]
        now = format_rfc3339(self.clock())

        def finished(cur: Obj) -> Obj | None:
            if _finished(cur):
                return None
            status = dict(cur.get("status") or {})
            conds = conditions_of(cur)
            set_condition(conds, "Finished", "True", reason, message, now)
            status["conditions"] = conds
            return status

        await self.write_status(workload_key(meta.get("namespace", ""), meta["name"]), finished)

    async def _scale_down(self, admitted: Obj, pod_sets: list[Obj]) -> None:
        meta = admitted["metadata"]
        key = workload_key(meta.get("namespace", ""), meta["name"])
        counts = spec_counts(pod_sets)
        if not is_elastic_job(admitted):  # the first slice (created as any job's): mark it resizable
            body = {"metadata": {"annotations": {ELASTIC_JOB_ANNOTATION: "true"}}}
            await self.kube.patch(kinds.WORKLOAD, meta["name"], body, meta.get("namespace"))

        def lowered(cur: Obj) -> Obj | None:
            status = dict(cur.get("status") or {})
            if not status.get("admission"):
                return None
            status["admission"] = scaled_down_admission(status["admission"], counts)
            return status

        # usage first (the quota is released), then the pod sets (what the slice asks for)
        await self.write_status(key, lowered)
        resized: Obj = {"spec": {"podSets": pod_sets}}
        await self.kube.patch(kinds.WORKLOAD, meta["name"], resized, meta.get("namespace"))

    async def _swap(self, old: Obj, new: Obj) -> None:
        new_meta = new["metadata"]
        old_admission = (old.get("status") or {}).get("admission") or {}
        wanted = spec_counts((new.get("spec") or {}).get("podSets") or [])
        if admitted_counts(new) != wanted:

            def completed(cur: Obj) -> Obj | None:
                status = dict(cur.get("status") or {})
                admission = status.get("admission")
                if not admission or admitted_counts(cur) == wanted:
                    return None
                status["admission"] = completed_admission(old_admission, admission)
                return status

            await self.write_status(workload_key(new_meta.get("namespace", ""), new_meta["name"]), completed)
        await self._finish(old, SLICE_REPLACED, f"replaced by Workload slice {new_meta['name']}")
