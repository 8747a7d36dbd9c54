"""The RayJob runner: observes each RayJob, lets :mod:`rayjob_decision` decide, carries it out.

For each RayJob it reads the job and its RayCluster from the informers' caches and, when the
decision needs it, the Ray job's state from the Jobs API (:mod:`ray_jobs`); then it performs the
decided actions in order: create the job's own RayCluster (owned by the RayJob), delete it, submit
or stop the Ray job, keep the job's logs in a ConfigMap owned by the RayJob (``<name>-logs``, so
they stay readable after the cluster is gone) and patch the job's status. No decision is taken
here; it does not touch processes (the RayCluster runner does).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable, Mapping

from codeflare.k8s.constants import RAY_ORIGINATED_FROM_CR_NAME_LABEL, RAY_ORIGINATED_FROM_CRD_LABEL
from codeflare.k8s.ownerrefs import owner_reference
from codeflare.k8s.timestamps import now
from codeflare.k8s.types import Obj
from codeflare.k8s.workqueue import ReconcileQueue
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.informer import Informer, Key, key_of
from codeflare.local.agent import rayjob_decision as rd
from codeflare.local.agent.ray_jobs import RayJobsAPI

log = logging.getLogger(__name__)

#: RayJobs reconciled side by side (each pass is a few API and Jobs API calls).
JOB_WORKERS = 8
LOGS_KEY = "logs"
MAX_LOG_BYTES = 900_000
ClusterCache = Mapping[tuple[str, str], Obj]


def _owned_by(job: Obj, *, controller: bool) -> Obj:
    return owner_reference(
        job, api_version="ray.io/v1", kind="RayJob", controller=controller, block_owner_deletion=controller
    )


class RayJobRunner:
    """Drives every RayJob; reads RayClusters from ``clusters`` (the RayCluster informer's cache)."""

    def __init__(
        self,
        kube: AsyncKube,
        clusters: ClusterCache,
        *,
        resync: float = 2.0,
        ray: RayJobsAPI | None = None,
        new_job_id: Callable[[str], str] | None = None,
    ) -> None:
        self.kube = kube
        self.clusters = clusters
        self.resync = resync
        self.ray = ray or RayJobsAPI()
        self.new_job_id = new_job_id or (lambda name: f"{name[:40]}-{secrets.token_hex(4)}")
        self.informer = Informer(kube, kinds.RAYJOB, self._on_job)
        self.queue: ReconcileQueue[Key] = ReconcileQueue(
            self._reconcile_key,
            workers=JOB_WORKERS,
            max_delay=resync,
            expected_errors=(errors.KubeError,),
            name="RayJob reconcile",
        )

    def tasks(self) -> list[asyncio.Task[None]]:
        return [asyncio.create_task(self.informer.run()), asyncio.create_task(self._run())]

    def _on_job(self, event: str, obj: Obj, old: Obj | None) -> None:
        self.queue.add(key_of(obj))

    async def _run(self) -> None:
        await self.informer.synced.wait()
        await self.queue.run()

    async def _reconcile_key(self, key: Key) -> float | None:
        """One pass over a RayJob, again after ``resync`` seconds while it exists (its cluster
        and its Ray job change without the RayJob changing)."""
        if key not in self.informer.cache:
            return None
        await self.reconcile(*key)
        return self.resync

    async def observe(self, job: Obj) -> rd.Observation:
        namespace = job["metadata"].get("namespace", "")
        cluster = self.clusters.get((namespace, rd.cluster_name_of(job)))
        ray = None
        if rd.needs_ray_state(job, cluster):
            url = rd.dashboard_url(cluster)
            assert url is not None
            ray = await asyncio.to_thread(self.ray.state, url, str(job["status"]["jobId"]))
        return rd.Observation(job, cluster, ray, now(), self.new_job_id(job["metadata"]["name"]))

    async def reconcile(self, namespace: str, name: str) -> None:
        job = self.informer.cache.get((namespace, name))
        if job is None or job["metadata"].get("deletionTimestamp"):
            return
        decision = rd.decide(await self.observe(job))
        for action in decision.actions:
            job = await self._act(job, action)
        if decision.note:
            log.info("RayJob %s/%s: %s", namespace, name, decision.note)
        if decision.problem:
            log.warning("RayJob %s/%s: %s; will retry", namespace, name, decision.problem)

    async def _act(self, job: Obj, action: rd.Action) -> Obj:
        """Carry out one action; the job as it is afterwards (a status write changes it)."""
        namespace = job["metadata"].get("namespace")
        if isinstance(action, rd.WriteStatus):
            return await self._write_status(job, dict(action.changes), action.recording)
        if isinstance(action, rd.StopRayJob):
            await asyncio.to_thread(self.ray.stop, action.url, action.job_id)
        elif isinstance(action, rd.Submit):
            await asyncio.to_thread(self.ray.submit, action.url, job, action.job_id)
        elif isinstance(action, rd.SaveLogs):
            await self._save_logs(job, action.url, action.job_id)
        elif isinstance(action, rd.CreateCluster):
            await self._create_cluster(job, action.name)
        elif isinstance(action, rd.DeleteCluster):
            await self.kube.delete(kinds.RAYCLUSTER, action.name, namespace)
        return job

    async def _write_status(self, job: Obj, changes: Obj, recording: bool = False) -> Obj:
        status = dict(job.get("status") or {})
        if {**status, **changes} == status:
            return job
        meta = job["metadata"]
        # Recording a submission id takes the observed resourceVersion as a precondition: a pass
        # that decided on a stale copy gets a Conflict (and is retried from a fresh one) instead of
        # recording a second id (see rayjob_decision). Other writes merge unconditionally.
        body: Obj = {"status": changes}
        if recording:
            body["metadata"] = {"resourceVersion": meta.get("resourceVersion")}
        return await self.kube.patch(kinds.RAYJOB, meta["name"], body, meta.get("namespace"), status=True)

    async def _create_cluster(self, job: Obj, cluster_name: str) -> None:
        meta = job["metadata"]
        spec = dict((job.get("spec") or {}).get("rayClusterSpec") or {})
        spec["suspend"] = False
        body = {
            "metadata": {
                "name": cluster_name,
                "namespace": meta.get("namespace"),
                "labels": {
                    RAY_ORIGINATED_FROM_CRD_LABEL: "RayJob",
                    RAY_ORIGINATED_FROM_CR_NAME_LABEL: meta["name"],
                },
                "ownerReferences": [_owned_by(job, controller=True)],
            },
            "spec": spec,
        }
        with contextlib.suppress(errors.AlreadyExists):
            await self.kube.create(kinds.RAYCLUSTER, body)
            log.info("RayJob %s/%s: created RayCluster %s", meta.get("namespace"), meta["name"], cluster_name)

    async def _save_logs(self, job: Obj, url: str, job_id: str) -> None:
        try:
            text = await asyncio.to_thread(self.ray.logs, url, job_id)
        except Exception as exc:  # the cluster may already be gone; keep what we have
            log.warning("could not fetch logs of %s: %s", job_id, exc)
            return
        meta = job["metadata"]
        encoded = text.encode()[-MAX_LOG_BYTES:].decode(errors="ignore")
        body = {
            "metadata": {
                "name": f"{meta['name']}-logs",
                "namespace": meta.get("namespace"),
                "labels": {RAY_ORIGINATED_FROM_CR_NAME_LABEL: meta["name"]},
                "ownerReferences": [_owned_by(job, controller=False)],
            },
            "data": {LOGS_KEY: encoded, "jobId": job_id},
        }
        await self.kube.apply(kinds.CONFIGMAP, body)
