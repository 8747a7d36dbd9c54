"""``RayJob``: run an entrypoint on its own (queued) Ray cluster or on an existing one.

Built by :func:`codeflare.api.builders.build_rayjob` (validated before any call) and created with
server-side apply. ``status()`` is one GET; ``logs()`` reads the logs kept in the RayJob's
``<name>-logs`` ConfigMap once the job ended (so they outlive the cluster), or asks the running
cluster's Jobs API while it runs; ``logs(follow=True)`` streams them (:mod:`codeflare.sdk.logstream`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, overload

from codeflare.errors import WaitTimeout
from codeflare.kube import errors, kinds
from codeflare.sdk.applying import apply_keeping_admission
from codeflare.sdk.client import Client
from codeflare.sdk.cluster import dashboard_uri, job_client_for, workloads_of
from codeflare.sdk.config import ClusterConfiguration
from codeflare.sdk.status import QueuePositions, explain_pending

log = logging.getLogger(__name__)

TERMINAL_DEPLOYMENT = ("Complete", "Failed")


@dataclass(frozen=True)
class RayJobStatus:
    """Where a RayJob stands: KubeRay's two status fields plus what explains them."""

    deployment: str
    job: str
    message: str = ""
    job_id: str = ""
    cluster: str = ""

    @property
    def finished(self) -> bool:
        return self.deployment in TERMINAL_DEPLOYMENT

    @property
    def succeeded(self) -> bool:
        return self.deployment == "Complete" and self.job == "SUCCEEDED"


class RayJob:
    """One RayJob; give ``cluster_name`` (an existing cluster) or ``cluster_config`` (its own)."""

    def __init__(
        self,
        job_name: str,
        entrypoint: str,
        *,
        cluster_name: str | None = None,
        cluster_config: ClusterConfiguration | None = None,
        namespace: str | None = None,
        runtime_env: dict[str, Any] | None = None,
        local_queue: str | None = None,
        priority: str | None = None,
        max_execution_seconds: int | None = None,
        shutdown_after_job_finishes: bool | None = None,
        ttl_seconds_after_finished: int = 0,
        active_deadline_seconds: int | None = None,
        backoff_limit: int = 0,
        entrypoint_num_cpus: float | None = None,
        entrypoint_num_gpus: float | None = None,
        client: Client | None = None,
    ) -> None:
        from codeflare.api.builders import build_rayjob

        self.name = job_name
        self.client = client or Client.default()
        self.namespace = (
            namespace or (cluster_config.namespace if cluster_config else None) or self.client.namespace
        )
        build = functools.partial(
            build_rayjob,
            job_name,
            entrypoint,
            self.namespace,
            cluster_name=cluster_name,
            cluster_config=cluster_config,
            runtime_env=runtime_env,
            priority=priority,
            max_execution_seconds=max_execution_seconds,
            shutdown_after_job_finishes=shutdown_after_job_finishes,
            ttl_seconds_after_finished=ttl_seconds_after_finished,
            active_deadline_seconds=active_deadline_seconds,
            backoff_limit=backoff_limit,
            entrypoint_num_cpus=entrypoint_num_cpus,
            entrypoint_num_gpus=entrypoint_num_gpus,
        )
        self._manifest = build(local_queue=local_queue)  # a mistake is reported before any call
        if cluster_config is not None and cluster_config.local_queue is None and local_queue is None:
            default = self.client.default_local_queue(self.namespace)
            if default is not None:
                self._manifest = build(local_queue=default)

    def manifest(self) -> dict[str, Any]:
        return self._manifest

    def submit(self) -> RayJob:
        """Create the RayJob (idempotent)."""
        apply_keeping_admission(self.client.kube, kinds.RAYJOB, self._manifest)
        log.info("submitted RayJob %s/%s", self.namespace, self.name)
        return self

    def _object(self) -> dict[str, Any]:
        obj: dict[str, Any] = self.client.kube.get(kinds.RAYJOB, self.name, self.namespace)
        return obj

    def status(self) -> RayJobStatus:
        status = self._object().get("status") or {}
        return RayJobStatus(
            deployment=str(status.get("jobDeploymentStatus") or ""),
            job=str(status.get("jobStatus") or ""),
            message=str(status.get("message") or ""),
            job_id=str(status.get("jobId") or ""),
            cluster=str(status.get("rayClusterName") or ""),
        )

    def check(self, duration: float | None = None) -> Any:
        """Would this job be admitted now, later or never? Asks the operator; creates nothing
        (a :class:`~codeflare.sdk.check.CheckResult`)."""
        from codeflare.sdk.check import check_manifest

        return check_manifest(self.client, kinds.RAYJOB, self._manifest, duration)

    def why_pending(self) -> str | None:
        """The Workload's reason code, message and queue position while the job waits (None once
        admitted)."""
        workloads = workloads_of(self.client, self._object())
        return explain_pending(workloads[0], QueuePositions(self.client.kube)) if workloads else None

    def wait(self, timeout: float | None = 900, poll: float = 1.0, progress: bool = True) -> RayJobStatus:
        """Wait until the job finished (Complete or Failed) and return its final status."""
        from codeflare.sdk.widgets import status_display  # a live widget in notebooks

        deadline = None if timeout is None else time.monotonic() + timeout
        with status_display(f"job {self.namespace}/{self.name}", enabled=progress) as display:
            while True:
                current = self.status()
                detail = current.message
                if not current.deployment or current.deployment == "Suspended":
                    detail = self.why_pending() or detail
                display.update((current.deployment or "Queued").lower(), detail)
                if current.finished:
                    return current
                if deadline is not None and time.monotonic() > deadline:
                    raise WaitTimeout(
                        f"RayJob {self.namespace}/{self.name} not finished after {timeout}s "
                        f"({current.deployment or 'queued'})"
                    )
                time.sleep(poll)

    @overload
    def logs(self, follow: Literal[False] = False, timeout: float | None = None) -> str: ...

    @overload
    def logs(self, follow: Literal[True], timeout: float | None = None) -> Iterator[str]: ...

    def logs(self, follow: bool = False, timeout: float | None = None) -> str | Iterator[str]:
        """The job's output: kept logs after it ended, live logs while it runs.

        ``follow=True``: an iterator of output chunks as the job produces them, ending when the
        job ends (a job that already ended gives its kept logs); ``timeout`` bounds the wait for
        a queued or starting job to run (``WaitTimeout`` after it).
        """
        if follow:
            from codeflare.sdk.logstream import follow as following

            return following(self, timeout=timeout)
        kept = self.client.kube.find(kinds.CONFIGMAP, f"{self.name}-logs", self.namespace)
        if kept is not None:
            return str((kept.get("data") or {}).get("logs", ""))
        status = self.status()
        if not (status.job_id and status.job):  # an id is recorded before it is submitted
            return ""
        rc = (
            self.client.kube.find(kinds.RAYCLUSTER, status.cluster, self.namespace)
            if status.cluster
            else None
        )
        url = dashboard_uri(self.client, rc) if rc else None
        if url is None:
            raise errors.NotFound(
                f"no logs kept and no running cluster for RayJob {self.name}",
                kind="RayJob",
                name=self.name,
                namespace=self.namespace,
            )
        text: str = job_client_for(self.client, url, rc).get_job_logs(status.job_id)
        return text

    def stop(self) -> None:
        """Stop the job by suspending it (its own cluster is released).

        A queued job is also deactivated in its queue (Workload ``spec.active: false``, as with
        Kueue): otherwise the queueing controller would unsuspend the still-admitted job.
        """
        for workload in workloads_of(self.client, self._object()):
            self.client.kube.patch(
                self.client.kueue_kind(kinds.WORKLOAD),
                workload["metadata"]["name"],
                {"spec": {"active": False}},
                self.namespace,
            )
        self.client.kube.patch(kinds.RAYJOB, self.name, {"spec": {"suspend": True}}, self.namespace)

    def delete(self) -> None:
        self.client.kube.delete(kinds.RAYJOB, self.name, self.namespace)

    def __repr__(self) -> str:
        return f"RayJob({self.namespace}/{self.name})"
