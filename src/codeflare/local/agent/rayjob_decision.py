"""What a RayJob needs next, as a pure function of what was observed: (job, cluster, Ray job, now).

:func:`decide` returns the actions the runner carries out in order: stop the Ray job, create or
delete the job's own RayCluster, submit the entrypoint, save the logs, write status. It follows
KubeRay's RayJob semantics: ``suspend`` stops the Ray job and deletes an own cluster
(jobDeploymentStatus Suspended) and resuming starts over; a job waits for its cluster (its own,
created from ``rayClusterSpec``, or the one ``clusterSelector`` names) to be ready and never
submits to one being deleted; ``activeDeadlineSeconds`` counts from ``startTime`` and fails the
job with DeadlineExceeded; a failed attempt is retried (Retrying, a new submission) while
``status.failed`` stays within ``backoffLimit``; ``shutdownAfterJobFinishes`` deletes an own
cluster ``ttlSecondsAfterFinished`` after ``endTime``. As KubeRay does, a submission's id is
recorded in ``status.jobId`` before anything is submitted, and only a recorded id is submitted:
the runner records an id with the observed resourceVersion as a precondition, so a pass that acts
on a stale copy loses with a conflict instead of submitting the job a second time under another id,
and submitting a recorded id twice is refused by Ray. No I/O and no clock: ``now`` is given, and so
is the id a new submission would take, so every case is a table row in the tests.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codeflare.k8s.constants import DASHBOARD_URL_ANNOTATION, RAY_CLUSTER_LABEL
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.k8s.types import Obj

TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
FINISHED = ("Complete", "Failed")


@dataclass(frozen=True)
class RayJobState:
    """The Ray job as the Jobs API reports it (``error``: the API could not be asked)."""

    status: str = ""
    message: str = ""
    error: str = ""


@dataclass(frozen=True)
class Observation:
    """Everything :func:`decide` looks at."""

    job: Obj
    cluster: Obj | None  # the RayCluster the job runs on, as the informer has it
    ray: RayJobState | None  # None: not asked (see :func:`needs_ray_state`)
    now: datetime.datetime
    new_job_id: str  # the submission id a new submission takes


@dataclass(frozen=True)
class RayJobCall:
    """An action on one Ray job through the Jobs API at ``url`` (a subclass says which)."""

    url: str
    job_id: str


class StopRayJob(RayJobCall):
    """Stop the Ray job."""


class Submit(RayJobCall):
    """Submit the job's entrypoint as Ray job ``job_id``."""


class SaveLogs(RayJobCall):
    """Keep the tail of the Ray job's logs in a ConfigMap owned by the RayJob."""


@dataclass(frozen=True)
class ClusterChange:
    """An action on the RayCluster ``name`` in the job's namespace (a subclass says which)."""

    name: str


class CreateCluster(ClusterChange):
    """Create the job's own RayCluster from its ``rayClusterSpec``."""


class DeleteCluster(ClusterChange):
    """Delete the RayCluster."""


@dataclass(frozen=True)
class WriteStatus:
    """Status fields to merge into the job's status (None clears a field). ``recording``: the write
    records a submission id, so it must not land on a newer job than the one decided on (the
    runner sends the observed resourceVersion as a precondition); other writes merge as they are,
    since an action before them (stopping a Ray job, say) has already happened."""

    changes: Mapping[str, Any]
    recording: bool = False


Action = StopRayJob | CreateCluster | DeleteCluster | Submit | SaveLogs | WriteStatus


@dataclass
class Decision:
    actions: list[Action] = field(default_factory=list)
    note: str = ""  # what happened, for the log ("" when nothing worth saying)
    problem: str = ""  # why nothing could be decided this time (logged as a warning)

    def then(self, *actions: Action) -> Decision:
        self.actions.extend(actions)
        return self


def cluster_name_for(job: Obj) -> str:
    """The name of a job's own RayCluster (stable: derived from the job's uid)."""
    meta = job["metadata"]
    digest = hashlib.sha256(str(meta.get("uid", "")).encode()).hexdigest()[:5]
    return f"{meta['name'][:40]}-raycluster-{digest}"


def cluster_name_of(job: Obj) -> str:
    """The cluster a job uses: the selected one, the one it recorded, or its own."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    return str(
        (spec.get("clusterSelector") or {}).get(RAY_CLUSTER_LABEL)
        or status.get("rayClusterName")
        or cluster_name_for(job)
    )


def dashboard_url(cluster: Obj | None) -> str | None:
    """Where the Jobs API of a ready cluster answers (None while it is not ready)."""
    if cluster is None or (cluster.get("status") or {}).get("state") != "ready":
        return None
    url = (cluster["metadata"].get("annotations") or {}).get(DASHBOARD_URL_ANNOTATION)
    return str(url) if url else None


def needs_ray_state(job: Obj, cluster: Obj | None) -> bool:
    """Whether :func:`decide` will look at the Ray job's state (the runner asks Ray only then)."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    deployment = status.get("jobDeploymentStatus", "")
    return (
        not spec.get("suspend")
        and deployment not in (*FINISHED, "Retrying")
        and bool(status.get("jobId"))
        and bool(status.get("jobStatus"))  # submitted, not only recorded
        and dashboard_url(cluster) is not None
    )


def decide(obs: Observation) -> Decision:
    job, cluster = obs.job, obs.cluster
    spec, status = job.get("spec") or {}, job.get("status") or {}
    deployment = status.get("jobDeploymentStatus", "")
    if spec.get("suspend"):
        return _suspend(obs) if deployment not in ("Suspended", *FINISHED) else Decision()
    if deployment in FINISHED:
        return _after_finish(obs)
    decision = Decision()
    name = cluster_name_of(job)
    starting = deployment in ("", "Suspended", "New")
    if starting:
        decision.then(
            WriteStatus(
                {
                    "jobDeploymentStatus": "Initializing",
                    "rayClusterName": name,
                    "startTime": format_rfc3339(obs.now),
                    "jobId": status.get("jobId") or obs.new_job_id,
                },
                recording=not status.get("jobId"),
            )
        )
        deployment = "Initializing"
    if cluster is not None and cluster["metadata"].get("deletionTimestamp"):
        # Still going away (the job was suspended, or a previous run finished): never submit to a
        # dying cluster; once it is gone, an own cluster is created afresh.
        return decision.then(WriteStatus({"message": f"waiting for RayCluster {name} to finish deleting"}))
    if cluster is None:
        if not spec.get("clusterSelector"):
            return decision.then(CreateCluster(name))
        return decision.then(WriteStatus({"message": f"waiting for RayCluster {name}"}))
    url = dashboard_url(cluster)
    started = _time(status.get("startTime")) or obs.now
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (obs.now - started).total_seconds() > float(deadline):
        if url and status.get("jobId"):
            decision.then(StopRayJob(url, status["jobId"]))
        return _finish(
            decision,
            obs,
            url,
            "Failed",
            status.get("jobStatus") or "FAILED",
            "DeadlineExceeded",
            f"RayJob exceeded activeDeadlineSeconds ({deadline}s)",
        )
    if url is None:
        return decision
    job_id = status.get("jobId")
    if not job_id and starting:
        return decision  # the id was recorded by the Initializing write of this very pass
    if not job_id or (deployment == "Retrying" and status.get("jobStatus")):
        # Record the id of the next submission first; a later pass, seeing it, submits it.
        return decision.then(WriteStatus({"jobId": obs.new_job_id, "jobStatus": None}, recording=True))
    if not status.get("jobStatus"):
        decision.note = f"submitted as {job_id}"
        return decision.then(
            Submit(url, str(job_id)),
            WriteStatus(
                {
                    "jobStatus": "PENDING",
                    "jobDeploymentStatus": "Running",
                    "dashboardURL": url,
                    "message": "job submitted",
                }
            ),
        )
    return _follow(decision, obs, url, str(job_id))


def _follow(decision: Decision, obs: Observation, url: str, job_id: str) -> Decision:
    """A submitted job: mirror its state; finish, or retry within backoffLimit, once it ends."""
    ray = obs.ray
    if ray is None or ray.error:
        decision.problem = f"Ray job state unknown: {ray.error if ray else 'not observed'}"
        return decision
    if ray.status not in TERMINAL:
        return decision.then(WriteStatus({"jobStatus": ray.status, "jobDeploymentStatus": "Running"}))
    if ray.status == "SUCCEEDED":
        return _finish(decision, obs, url, "Complete", ray.status, "", ray.message)
    spec, status = obs.job.get("spec") or {}, obs.job.get("status") or {}
    failures = int(status.get("failed") or 0) + 1
    if failures <= int(spec.get("backoffLimit") or 0):
        decision.note = f"attempt {failures} failed; retrying"
        return decision.then(
            SaveLogs(url, job_id),
            WriteStatus(
                {
                    "jobStatus": ray.status,
                    "jobDeploymentStatus": "Retrying",
                    "failed": failures,
                    "message": f"attempt {failures} failed: {ray.message}; retrying",
                }
            ),
        )
    return _finish(decision, obs, url, "Failed", ray.status, "AppFailed", ray.message, failed=failures)


def _finish(
    decision: Decision,
    obs: Observation,
    url: str | None,
    deployment: str,
    job_status: str,
    reason: str,
    message: str,
    **extra: Any,
) -> Decision:
    job_id = (obs.job.get("status") or {}).get("jobId")
    if url and job_id:
        decision.then(SaveLogs(url, str(job_id)))
    decision.note = f"finished: {deployment} {message}"
    return decision.then(
        WriteStatus(
            {
                "jobDeploymentStatus": deployment,
                "jobStatus": job_status,
                "endTime": format_rfc3339(obs.now),
                "reason": reason or None,
                "message": message,
                **extra,
            }
        )
    )


def _suspend(obs: Observation) -> Decision:
    job, cluster = obs.job, obs.cluster
    spec, status = job.get("spec") or {}, job.get("status") or {}
    decision = Decision(note="suspended")
    url = dashboard_url(cluster)
    if url and status.get("jobId"):
        decision.then(StopRayJob(url, status["jobId"]))
    if not spec.get("clusterSelector") and cluster is not None:
        decision.then(DeleteCluster(cluster_name_of(job)))
    return decision.then(
        WriteStatus(
            {
                "jobDeploymentStatus": "Suspended",
                "jobStatus": None,
                "jobId": None,
                "startTime": None,
                "rayClusterName": None,
            }
        )
    )


def _after_finish(obs: Observation) -> Decision:
    """shutdownAfterJobFinishes: delete an own cluster once ttlSecondsAfterFinished has passed."""
    job, cluster = obs.job, obs.cluster
    spec = job.get("spec") or {}
    if spec.get("clusterSelector") or cluster is None or not spec.get("shutdownAfterJobFinishes"):
        return Decision()
    if cluster["metadata"].get("deletionTimestamp"):
        return Decision()  # already being deleted
    ended = _time((job.get("status") or {}).get("endTime")) or obs.now
    if (obs.now - ended).total_seconds() < float(spec.get("ttlSecondsAfterFinished") or 0):
        return Decision()
    name = cluster_name_of(job)
    return Decision(note=f"deleted its RayCluster {name}").then(DeleteCluster(name))


def _time(text: str | None) -> datetime.datetime | None:
    """A status timestamp as an aware datetime (None when missing or malformed)."""
    seconds = epoch_seconds(text)
    return None if seconds is None else datetime.datetime.fromtimestamp(seconds, datetime.UTC)
