"""A test-only stand-in for kubelet and the workload controllers, driven through the API.

:class:`KubeletSim` plays, in one namespace: the Job controller (creates pods up to
``parallelism``, counts succeeded/failed pods into ``status``, sets Complete/Failed once
``completions`` succeeded or more than ``backoffLimit`` failed), the Deployment/StatefulSet
controllers (keep ``replicas`` live pods) and kubelet (a Pending pod becomes Running and Ready; a
Running pod finishes with the exit code that :meth:`finish` or the ``policy`` gives it). Pods are
owned by their controller object, so the API server's garbage collector removes them with it.
It is deterministic: pod names count up per owner, and nothing happens on its own but what the
policy or the test asks. Run :meth:`step` by hand, or :meth:`run` as an asyncio task.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Callable
from typing import Any

from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.kinds import Kind

log = logging.getLogger(__name__)

Obj = dict[str, Any]
# A pod's outcome once Running: an exit code to finish with, or None to keep it running.
Policy = Callable[[Obj], int | None]


def keep_running(_: Obj) -> int | None:
    return None


def succeed(_: Obj) -> int | None:
    return 0


class KubeletSim:
    """Plays kubelet, the Job controller and the Deployment/StatefulSet controllers in a namespace."""

    def __init__(self, kube: AsyncKube, namespace: str, policy: Policy = keep_running,
                 interval: float = 0.05) -> None:
        self.kube = kube
        self.namespace = namespace
        self.policy = policy
        self.interval = interval
        self.outcomes: dict[str, int] = {}
        self.created: list[str] = []  # pod names, in creation order
        self._counters: dict[str, int] = {}

    def finish(self, pod_name: str, exit_code: int = 0) -> None:
        """Make the pod terminate (Succeeded for 0, Failed otherwise) at the next step."""
        self.outcomes[pod_name] = exit_code

    async def run(self) -> None:
        while True:
            try:
                await self.step()
            except errors.KubeError as exc:
                log.debug("simulator step failed: %s", exc)
            await asyncio.sleep(self.interval)

    async def step(self) -> None:
        pods = await self.kube.list(kinds.POD, self.namespace)
        by_owner: dict[str, list[Obj]] = {}
        for pod in pods:
            for ref in pod["metadata"].get("ownerReferences") or []:
                by_owner.setdefault(ref.get("uid", ""), []).append(pod)
        for job in await self.kube.list(kinds.JOB, self.namespace):
            await self._job(job, by_owner.get(job["metadata"]["uid"], []))
        for kind in (kinds.DEPLOYMENT, kinds.STATEFULSET):
            for obj in await self.kube.list(kind, self.namespace):
                await self._replicas(kind, obj, by_owner.get(obj["metadata"]["uid"], []))
        for pod in pods:
            await self._kubelet(pod)

    # -- controllers --------------------------------------------------------------------------
    async def _job(self, job: Obj, pods: list[Obj]) -> None:
        spec, status = job.get("spec") or {}, job.get("status") or {}
        if job["metadata"].get("deletionTimestamp") or spec.get("suspend"):
            return
        if any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in status.get("conditions") or []):
            return
        parallelism = int(spec.get("parallelism", 1))
        completions = int(spec.get("completions", parallelism))
        backoff_limit = int(spec.get("backoffLimit", 6))
        phases = [(p.get("status") or {}).get("phase") or "Pending" for p in pods]
        succeeded, failed = phases.count("Succeeded"), phases.count("Failed")
        active = len(phases) - succeeded - failed
        new_status: Obj = {"active": active, "succeeded": succeeded, "failed": failed}
        if succeeded >= completions:
            new_status.update(active=0, conditions=[_condition("Complete", "Completed", "job completed")])
        elif failed > backoff_limit:
            for pod in pods:
                if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    await self.kube.delete(kinds.POD, pod["metadata"]["name"], self.namespace)
            new_status.update(active=0, conditions=[
                _condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")])
        else:
            for _ in range(min(parallelism, completions - succeeded) - active):
                await self._create_pod(kinds.JOB, job)
        if any(status.get(k) != v for k, v in new_status.items()):
            with contextlib.suppress(errors.NotFound):
                await self.kube.patch(kinds.JOB, job["metadata"]["name"], {"status": new_status},
                                      self.namespace, status=True)

    async def _replicas(self, kind: Kind, obj: Obj, pods: list[Obj]) -> None:
        if obj["metadata"].get("deletionTimestamp"):
            return
        live = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        for _ in range(int((obj.get("spec") or {}).get("replicas", 1)) - len(live)):
            await self._create_pod(kind, obj)

    async def _create_pod(self, kind: Kind, owner: Obj) -> None:
        meta = owner["metadata"]
        template = copy.deepcopy(((owner.get("spec") or {}).get("template")) or {})
        number = self._counters[meta["name"]] = self._counters.get(meta["name"], 0) + 1
        name = f"{meta['name']}-{number}"
        pod_meta = template.get("metadata") or {}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": pod_meta.get("labels") or {},
                "annotations": pod_meta.get("annotations") or {},
                "ownerReferences": [{"apiVersion": kind.api_version, "kind": kind.kind, "name": meta["name"],
                                     "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}],
            },
            "spec": template.get("spec") or {},
        }
        await self.kube.create(kinds.POD, pod, self.namespace)
        self.created.append(name)

    # -- kubelet ------------------------------------------------------------------------------
    async def _kubelet(self, pod: Obj) -> None:
        meta, status = pod["metadata"], pod.get("status") or {}
        if meta.get("deletionTimestamp"):
            return
        phase = status.get("phase") or "Pending"
        specs = (pod.get("spec") or {}).get("containers") or []
        containers = [c.get("name", "main") for c in specs] or ["main"]
        if phase == "Pending":
            await self._set_status(meta["name"], {
                "phase": "Running",
                "conditions": [_condition("Ready", "PodReady", "")],
                "containerStatuses": [{"name": c, "ready": True, "restartCount": 0,
                                       "state": {"running": {"startedAt": _now()}}} for c in containers],
            })
        elif phase == "Running":
            code = self.outcomes.pop(meta["name"], None)
            if code is None:
                code = self.policy(pod)
            if code is None:
                return
            reason = "Completed" if code == 0 else "Error"
            await self._set_status(meta["name"], {
                "phase": "Succeeded" if code == 0 else "Failed",
                "conditions": [_condition("Ready", "PodCompleted", "", status="False")],
                "containerStatuses": [{"name": c, "ready": False, "restartCount": 0,
                                       "state": {"terminated": {"exitCode": code, "reason": reason}}}
                                      for c in containers],
            })

    async def _set_status(self, name: str, status: Obj) -> None:
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(kinds.POD, name, {"status": status}, self.namespace, status=True)


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(type_: str, reason: str, message: str, status: str = "True") -> Obj:
    return {"type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": _now()}
