"""RayJob runner of the local agent: cluster, submission through Ray's Jobs API, status mirror.

For each RayJob it creates its own RayCluster from ``rayClusterSpec`` (owned by the RayJob) or
uses the one ``clusterSelector`` names, submits the entrypoint with Ray's ``JobSubmissionClient``
once the cluster is ready, and mirrors jobId, jobStatus, jobDeploymentStatus, times, dashboard
URL, reason and message. It honours suspend/resume, activeDeadlineSeconds, backoffLimit,
shutdownAfterJobFinishes and ttlSecondsAfterFinished. The job's logs are kept in a ConfigMap
owned by the RayJob (``<name>-logs``), so they stay readable after the cluster is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import logging
import secrets
from typing import TYPE_CHECKING, Any

import yaml

from codeflare.kube import errors, kinds
from codeflare.kube.informer import Informer

if TYPE_CHECKING:
    from codeflare.local.agent import NodeAgent

log = logging.getLogger(__name__)

Obj = dict[str, Any]
TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
LOGS_KEY = "logs"
MAX_LOG_BYTES = 900_000


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _fmt(ts: datetime.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(ts: str | None) -> datetime.datetime | None:
    if not ts:
        return None
    with contextlib.suppress(ValueError):
        return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    return None


def cluster_name_for(job: Obj) -> str:
    meta = job["metadata"]
    digest = hashlib.sha256(str(meta.get("uid", "")).encode()).hexdigest()[:5]
    return f"{meta['name'][:40]}-raycluster-{digest}"


class RayJobRunner:
    """Drives every RayJob; owned by the :class:`NodeAgent`."""

    def __init__(self, agent: NodeAgent) -> None:
        self.agent = agent
        self.kube = agent.kube
        self.informer = Informer(agent.kube, kinds.RAYJOB, self._on_job)
        self._dirty: set[tuple[str, str]] = set()
        self._wake = asyncio.Event()
        self._clients: dict[str, Any] = {}

    def tasks(self) -> list[asyncio.Task[Any]]:
        return [asyncio.create_task(self.informer.run()), asyncio.create_task(self._loop())]

    def _on_job(self, event: str, obj: Obj, old: Obj | None) -> None:
        self._dirty.add((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
        self._wake.set()

    async def _loop(self) -> None:
        await self.informer.synced.wait()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.agent.resync)
            self._wake.clear()
            refs = sorted(self._dirty) or sorted(self.informer.cache)
            self._dirty.clear()
            await asyncio.gather(*(self._safely(*ref) for ref in refs))

    async def _safely(self, namespace: str, name: str) -> None:
        try:
            await self.reconcile(namespace, name)
        except errors.KubeError as exc:
            log.warning("RayJob %s/%s: %s; will retry", namespace, name, exc)
        except Exception:
            log.exception("RayJob %s/%s: reconcile failed", namespace, name)

    # -- Ray Jobs API (blocking; run in threads) -------------------------------------------------
    def _client(self, url: str) -> Any:
        client = self._clients.get(url)
        if client is None:
            from ray.job_submission import JobSubmissionClient

            client = JobSubmissionClient(url)
            self._clients[url] = client
        return client

    def _submit(self, url: str, job: Obj, submission_id: str) -> None:
        spec = job.get("spec") or {}
        runtime_env = yaml.safe_load(spec["runtimeEnvYAML"]) if spec.get("runtimeEnvYAML") else None
        kwargs: dict[str, Any] = {}
        if spec.get("entrypointNumCpus") is not None:
            kwargs["entrypoint_num_cpus"] = float(spec["entrypointNumCpus"])
        if spec.get("entrypointNumGpus") is not None:
            kwargs["entrypoint_num_gpus"] = float(spec["entrypointNumGpus"])
        if spec.get("entrypointResources"):
            kwargs["entrypoint_resources"] = {
                k: float(v) for k, v in yaml.safe_load(spec["entrypointResources"]).items()
            }
        self._client(url).submit_job(
            entrypoint=spec["entrypoint"],
            submission_id=submission_id,
            runtime_env=runtime_env,
            metadata=dict(spec.get("metadata") or {}),
            **kwargs,
        )

    def _info(self, url: str, job_id: str) -> tuple[str, str]:
        info = self._client(url).get_job_info(job_id)
        return str(info.status.value if hasattr(info.status, "value") else info.status), str(
            info.message or ""
        )

    def _logs(self, url: str, job_id: str) -> str:
        text: str = self._client(url).get_job_logs(job_id)
        return text

    def _stop(self, url: str, job_id: str) -> None:
        with contextlib.suppress(Exception):
            self._client(url).stop_job(job_id)

    # -- reconcile -------------------------------------------------------------------------------
    async def _set_status(self, job: Obj, **changes: Any) -> None:
        status = dict(job.get("status") or {})
        new = {**status, **changes}
        if new == status:
            return
        meta = job["metadata"]
        await self.kube.patch(
            kinds.RAYJOB, meta["name"], {"status": changes}, meta.get("namespace"), status=True
        )

    def _dashboard(self, cluster: Obj | None) -> str | None:
        if cluster is None or (cluster.get("status") or {}).get("state") != "ready":
            return None
        from codeflare.local.agent import DASHBOARD_ANNOTATION

        url = (cluster["metadata"].get("annotations") or {}).get(DASHBOARD_ANNOTATION)
        return str(url) if url else None

    async def reconcile(self, namespace: str, name: str) -> None:
        job = self.informer.cache.get((namespace, name))
        if job is None or job["metadata"].get("deletionTimestamp"):
            return
        spec = job.get("spec") or {}
        status = job.get("status") or {}
        deployment = status.get("jobDeploymentStatus", "")
        own = not spec.get("clusterSelector")
        cluster_name = (
            (spec.get("clusterSelector") or {}).get("ray.io/cluster")
            or status.get("rayClusterName")
            or cluster_name_for(job)
        )
        cluster = self.agent.rayclusters.cache.get((namespace, cluster_name))
        url = self._dashboard(cluster)
        if spec.get("suspend"):
            if deployment not in ("Suspended", "Complete", "Failed"):
                if url and status.get("jobId"):
                    await asyncio.to_thread(self._stop, url, status["jobId"])
                if own and cluster is not None:
                    await self.kube.delete(kinds.RAYCLUSTER, cluster_name, namespace)
                await self._set_status(
                    job,
                    jobDeploymentStatus="Suspended",
                    jobStatus=None,
                    jobId=None,
                    startTime=None,
                    rayClusterName=None,
                )
            return
        if deployment in ("Complete", "Failed"):
            await self._after_finish(job, own, cluster_name, cluster)
            return
        now = _now()
        if deployment in ("", "Suspended", "New"):
            await self._set_status(
                job, jobDeploymentStatus="Initializing", rayClusterName=cluster_name, startTime=_fmt(now)
            )
            deployment = "Initializing"
        if cluster is not None and cluster["metadata"].get("deletionTimestamp"):
            # Still going away (the job was suspended, or a previous run finished): never submit
            # to a dying cluster; once it is gone, an own cluster is created afresh.
            await self._set_status(job, message=f"waiting for RayCluster {cluster_name} to finish deleting")
            return
        if own and cluster is None:
            await self._create_cluster(job, cluster_name)
            return
        if cluster is None:
            await self._set_status(job, message=f"waiting for RayCluster {cluster_name}")
            return
        started = _parse(status.get("startTime")) or now
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None and (now - started).total_seconds() > float(deadline):
            if url and status.get("jobId"):
                await asyncio.to_thread(self._stop, url, status["jobId"])
            await self._finish(
                job,
                url,
                "Failed",
                status.get("jobStatus") or "FAILED",
                "DeadlineExceeded",
                f"RayJob exceeded activeDeadlineSeconds ({deadline}s)",
            )
            return
        if url is None:
            return
        job_id = status.get("jobId")
        if not job_id or deployment == "Retrying":
            job_id = f"{name[:40]}-{secrets.token_hex(4)}"
            await asyncio.to_thread(self._submit, url, job, job_id)
            log.info("RayJob %s/%s submitted as %s", namespace, name, job_id)
            await self._set_status(
                job,
                jobId=job_id,
                jobStatus="PENDING",
                jobDeploymentStatus="Running",
                dashboardURL=url,
                message="job submitted",
            )
            return
        job_status, message = await asyncio.to_thread(self._info, url, job_id)
        if job_status not in TERMINAL:
            await self._set_status(job, jobStatus=job_status, jobDeploymentStatus="Running")
            return
        if job_status == "SUCCEEDED":
            await self._finish(job, url, "Complete", job_status, "", message)
            return
        failures = int(status.get("failed") or 0) + 1
        if failures <= int(spec.get("backoffLimit") or 0):
            await self._save_logs(job, url, job_id)
            await self._set_status(
                job,
                jobStatus=job_status,
                jobDeploymentStatus="Retrying",
                failed=failures,
                message=f"attempt {failures} failed: {message}; retrying",
            )
            return
        await self._finish(job, url, "Failed", job_status, "AppFailed", message, failed=failures)

    async def _create_cluster(self, job: Obj, cluster_name: str) -> None:
        meta = job["metadata"]
        spec = dict((job.get("spec") or {}).get("rayClusterSpec") or {})
        spec["suspend"] = False
        body = {
            "metadata": {
                "name": cluster_name,
                "namespace": meta.get("namespace"),
                "labels": {
                    "ray.io/originated-from-crd": "RayJob",
                    "ray.io/originated-from-cr-name": meta["name"],
                },
                "ownerReferences": [
                    {
                        "apiVersion": "ray.io/v1",
                        "kind": "RayJob",
                        "name": meta["name"],
                        "uid": meta.get("uid", ""),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": spec,
        }
        with contextlib.suppress(errors.AlreadyExists):
            await self.kube.create(kinds.RAYCLUSTER, body)
            log.info("RayJob %s/%s: created RayCluster %s", meta.get("namespace"), meta["name"], cluster_name)

    async def _save_logs(self, job: Obj, url: str | None, job_id: str | None) -> None:
        if not url or not job_id:
            return
        try:
            text = await asyncio.to_thread(self._logs, url, job_id)
        except Exception as exc:  # the cluster may already be gone; keep what we have
            log.warning("could not fetch logs of %s: %s", job_id, exc)
            return
        meta = job["metadata"]
        encoded = text.encode()[-MAX_LOG_BYTES:].decode(errors="ignore")
        body = {
            "metadata": {
                "name": f"{meta['name']}-logs",
                "namespace": meta.get("namespace"),
                "labels": {"ray.io/originated-from-cr-name": meta["name"]},
                "ownerReferences": [
                    {
                        "apiVersion": "ray.io/v1",
                        "kind": "RayJob",
                        "name": meta["name"],
                        "uid": meta.get("uid", ""),
                    }
                ],
            },
            "data": {LOGS_KEY: encoded, "jobId": job_id},
        }
        await self.kube.apply(kinds.CONFIGMAP, body)

    async def _finish(
        self,
        job: Obj,
        url: str | None,
        deployment: str,
        job_status: str,
        reason: str,
        message: str,
        **extra: Any,
    ) -> None:
        status = job.get("status") or {}
        await self._save_logs(job, url, status.get("jobId"))
        await self._set_status(
            job,
            jobDeploymentStatus=deployment,
            jobStatus=job_status,
            endTime=_fmt(_now()),
            reason=reason or None,
            message=message,
            **extra,
        )
        log.info(
            "RayJob %s/%s finished: %s %s",
            job["metadata"].get("namespace"),
            job["metadata"]["name"],
            deployment,
            message,
        )

    async def _after_finish(self, job: Obj, own: bool, cluster_name: str, cluster: Obj | None) -> None:
        spec = job.get("spec") or {}
        if not own or cluster is None or not spec.get("shutdownAfterJobFinishes"):
            return
        if cluster["metadata"].get("deletionTimestamp"):
            return  # already being deleted
        ended = _parse((job.get("status") or {}).get("endTime")) or _now()
        ttl = float(spec.get("ttlSecondsAfterFinished") or 0)
        if (_now() - ended).total_seconds() >= ttl:
            await self.kube.delete(kinds.RAYCLUSTER, cluster_name, job["metadata"].get("namespace"))
            log.info("RayJob %s: deleted its RayCluster %s", job["metadata"]["name"], cluster_name)
