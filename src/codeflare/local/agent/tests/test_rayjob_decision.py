"""The RayJob decision as data: (job, cluster, Ray job state, now) -> the actions, in order.

Each row is one situation KubeRay's RayJob controller handles: a new job creating its own
cluster or waiting for the selected one, submission once the cluster is ready (never to a cluster
being deleted), following the Ray job, activeDeadlineSeconds, backoffLimit retries, suspend and
resume, shutdownAfterJobFinishes with ttlSecondsAfterFinished, and a Jobs API that does not
answer. No Ray and no API server: the decision is a pure function.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import pytest

from codeflare.k8s.constants import DASHBOARD_URL_ANNOTATION
from codeflare.local.agent import rayjob_decision as rd

NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)
NOW_TEXT = "2026-03-01T12:00:00Z"
URL = "http://127.0.0.1:8265"
NEW_ID = "job-new"


def ago(seconds: int) -> str:
    return (NOW - datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def job(status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "job", "namespace": "default", "uid": "uid-1"},
        "spec": {"entrypoint": "python run.py", **spec},
        "status": dict(status or {}),
    }


OWN = rd.cluster_name_for(job())
SELECTOR = {"clusterSelector": {"ray.io/cluster": "shared"}}


def cluster(name: str = OWN, *, ready: bool = True, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "annotations": {DASHBOARD_URL_ANNOTATION: URL},
    }
    if deleting:
        meta["deletionTimestamp"] = ago(1)
    return {"metadata": meta, "status": {"state": "ready"} if ready else {}}


RUNNING = {"jobDeploymentStatus": "Running", "jobId": "job-1", "jobStatus": "RUNNING", "startTime": ago(30)}
RECORDED_ID = "job-recorded"
INITIALIZING = {
    "jobDeploymentStatus": "Initializing",
    "rayClusterName": OWN,
    "startTime": ago(5),
    "jobId": RECORDED_ID,
}
SUBMITTED = [
    rd.Submit(URL, RECORDED_ID),
    rd.WriteStatus(
        {
            "jobStatus": "PENDING",
            "jobDeploymentStatus": "Running",
            "dashboardURL": URL,
            "message": "job submitted",
        }
    ),
]
SUSPENDED = rd.WriteStatus(
    {
        "jobDeploymentStatus": "Suspended",
        "jobStatus": None,
        "jobId": None,
        "startTime": None,
        "rayClusterName": None,
    }
)
INIT_WRITE = rd.WriteStatus(
    {"jobDeploymentStatus": "Initializing", "rayClusterName": OWN, "startTime": NOW_TEXT, "jobId": NEW_ID},
    recording=True,
)
RECORD_NEW_ID = rd.WriteStatus({"jobId": NEW_ID, "jobStatus": None}, recording=True)


def ended(deployment: str, job_status: str, reason: str | None, message: str, **extra: Any) -> rd.WriteStatus:
    """The status write that ends a job now (``_finish``'s)."""
    return rd.WriteStatus(
        {
            "jobDeploymentStatus": deployment,
            "jobStatus": job_status,
            "endTime": NOW_TEXT,
            "reason": reason,
            "message": message,
            **extra,
        }
    )


def finished(deployment: str = "Complete", ended: int = 10, **extra: Any) -> dict[str, Any]:
    return {"jobDeploymentStatus": deployment, "jobId": "job-1", "endTime": ago(ended), **extra}


@dataclass
class Case:
    id: str
    job: dict[str, Any]
    cluster: dict[str, Any] | None
    expected: list[rd.Action]
    ray: rd.RayJobState | None = None
    extra: dict[str, Any] = field(default_factory=dict)


CASES = [
    # -- start ------------------------------------------------------------------------------
    Case("new job creates its own cluster", job(), None, [INIT_WRITE, rd.CreateCluster(OWN)]),
    Case(
        "new job waits for the selected cluster",
        job(**SELECTOR),
        None,
        [
            rd.WriteStatus(
                {
                    "jobDeploymentStatus": "Initializing",
                    "rayClusterName": "shared",
                    "startTime": NOW_TEXT,
                    "jobId": NEW_ID,
                },
                recording=True,
            ),
            rd.WriteStatus({"message": "waiting for RayCluster shared"}),
        ],
    ),
    Case("waits while its cluster is not ready", job(INITIALIZING), cluster(ready=False), []),
    Case(
        "never submits to a cluster being deleted",
        job(INITIALIZING),
        cluster(deleting=True),
        [rd.WriteStatus({"message": f"waiting for RayCluster {OWN} to finish deleting"})],
    ),
    Case(
        "submits once the cluster is ready",
        job(INITIALIZING),
        cluster(),
        SUBMITTED,
    ),
    Case(
        # Stale-copy safety (KubeRay records the id first): an id is recorded, then submitted.
        "a job with a ready cluster but no recorded id records one and submits nothing yet",
        job({**INITIALIZING, "jobId": None}),
        cluster(),
        [RECORD_NEW_ID],
    ),
    Case(
        "a new job whose selected cluster is ready records its id and submits on the next pass",
        job(**SELECTOR),
        cluster("shared"),
        [
            rd.WriteStatus(
                {
                    "jobDeploymentStatus": "Initializing",
                    "rayClusterName": "shared",
                    "startTime": NOW_TEXT,
                    "jobId": NEW_ID,
                },
                recording=True,
            ),
        ],
    ),
    Case(
        "a selector job submits to the selected cluster",
        job({**INITIALIZING, "rayClusterName": "shared"}, **SELECTOR),
        cluster("shared"),
        SUBMITTED,
    ),
    # -- following the Ray job --------------------------------------------------------------
    Case(
        "mirrors a running Ray job",
        job(RUNNING),
        cluster(),
        [rd.WriteStatus({"jobStatus": "RUNNING", "jobDeploymentStatus": "Running"})],
        ray=rd.RayJobState("RUNNING"),
    ),
    Case(
        "success completes the job and keeps its logs",
        job(RUNNING),
        cluster(),
        [
            rd.SaveLogs(URL, "job-1"),
            ended("Complete", "SUCCEEDED", None, "done"),
        ],
        ray=rd.RayJobState("SUCCEEDED", "done"),
    ),
    Case(
        "an unanswered Jobs API decides nothing",
        job(RUNNING),
        cluster(),
        [],
        ray=rd.RayJobState(error="ConnectionError: refused"),
    ),
    # -- backoffLimit -----------------------------------------------------------------------
    Case(
        "a failed attempt within backoffLimit is retried",
        job(RUNNING, backoffLimit=2),
        cluster(),
        [
            rd.SaveLogs(URL, "job-1"),
            rd.WriteStatus(
                {
                    "jobStatus": "FAILED",
                    "jobDeploymentStatus": "Retrying",
                    "failed": 1,
                    "message": "attempt 1 failed: exit code 3; retrying",
                }
            ),
        ],
        ray=rd.RayJobState("FAILED", "exit code 3"),
    ),
    Case(
        "a retrying job records a new id for its next attempt",
        job({**RUNNING, "jobDeploymentStatus": "Retrying", "jobStatus": "FAILED", "failed": 1},
            backoffLimit=2),
        cluster(),
        [RECORD_NEW_ID],
    ),
    Case(
        "a retrying job with its new id recorded submits it",
        job(
            {**RUNNING, "jobDeploymentStatus": "Retrying", "jobId": RECORDED_ID, "jobStatus": None,
             "failed": 1},
            backoffLimit=2,
        ),
        cluster(),
        SUBMITTED,
    ),
    Case(
        "the attempt past backoffLimit fails the job",
        job({**RUNNING, "failed": 2}, backoffLimit=2),
        cluster(),
        [
            rd.SaveLogs(URL, "job-1"),
            ended("Failed", "FAILED", "AppFailed", "exit code 3", failed=3),
        ],
        ray=rd.RayJobState("FAILED", "exit code 3"),
    ),
    Case(
        "without backoffLimit the first failure is final",
        job(RUNNING),
        cluster(),
        [
            rd.SaveLogs(URL, "job-1"),
            ended("Failed", "FAILED", "AppFailed", "boom", failed=1),
        ],
        ray=rd.RayJobState("FAILED", "boom"),
    ),
    # -- activeDeadlineSeconds --------------------------------------------------------------
    Case(
        "past activeDeadlineSeconds the Ray job is stopped and the job fails",
        job(RUNNING, activeDeadlineSeconds=10),
        cluster(),
        [
            rd.StopRayJob(URL, "job-1"),
            rd.SaveLogs(URL, "job-1"),
            ended("Failed", "RUNNING", "DeadlineExceeded", "RayJob exceeded activeDeadlineSeconds (10s)"),
        ],
        ray=rd.RayJobState("RUNNING"),
    ),
    Case(
        "within activeDeadlineSeconds the job runs on",
        job(RUNNING, activeDeadlineSeconds=60),
        cluster(),
        [rd.WriteStatus({"jobStatus": "RUNNING", "jobDeploymentStatus": "Running"})],
        ray=rd.RayJobState("RUNNING"),
    ),
    Case(
        "the deadline also ends a job whose cluster never became ready",
        job(INITIALIZING | {"startTime": ago(100)}, activeDeadlineSeconds=10),
        cluster(ready=False),
        [ended("Failed", "FAILED", "DeadlineExceeded", "RayJob exceeded activeDeadlineSeconds (10s)")],
    ),
    # -- suspend and resume -----------------------------------------------------------------
    Case(
        "suspend stops the Ray job and deletes the own cluster",
        job(RUNNING, suspend=True),
        cluster(),
        [
            rd.StopRayJob(URL, "job-1"),
            rd.DeleteCluster(OWN),
            SUSPENDED,
        ],
    ),
    Case(
        "suspend leaves a selected cluster alone",
        job({**RUNNING, "rayClusterName": "shared"}, suspend=True, **SELECTOR),
        cluster("shared"),
        [
            rd.StopRayJob(URL, "job-1"),
            SUSPENDED,
        ],
    ),
    Case(
        "a suspended job stays suspended", job({"jobDeploymentStatus": "Suspended"}, suspend=True), None, []
    ),
    Case("suspending a finished job changes nothing", job(finished(), suspend=True), cluster(), []),
    Case(
        "resume starts over with a fresh start time and a new cluster",
        job({"jobDeploymentStatus": "Suspended"}),
        None,
        [INIT_WRITE, rd.CreateCluster(OWN)],
    ),
    # -- shutdownAfterJobFinishes + ttlSecondsAfterFinished ---------------------------------
    Case(
        "a finished job keeps its cluster until the ttl has passed",
        job(finished(ended=10), shutdownAfterJobFinishes=True, ttlSecondsAfterFinished=30),
        cluster(),
        [],
    ),
    Case(
        "after the ttl the own cluster is deleted",
        job(finished(ended=31), shutdownAfterJobFinishes=True, ttlSecondsAfterFinished=30),
        cluster(),
        [rd.DeleteCluster(OWN)],
    ),
    Case(
        "without a ttl the own cluster goes at once",
        job(finished("Failed", ended=0), shutdownAfterJobFinishes=True),
        cluster(),
        [rd.DeleteCluster(OWN)],
    ),
    Case(
        "a cluster already being deleted is not deleted again",
        job(finished(ended=60), shutdownAfterJobFinishes=True),
        cluster(deleting=True),
        [],
    ),
    Case(
        "without shutdownAfterJobFinishes the cluster stays",
        job(finished(ended=3600)),
        cluster(),
        [],
    ),
    Case(
        "a selected cluster is never shut down",
        job(finished(ended=3600, rayClusterName="shared"), shutdownAfterJobFinishes=True, **SELECTOR),
        cluster("shared"),
        [],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_decide(case: Case) -> None:
    decision = rd.decide(rd.Observation(case.job, case.cluster, case.ray, NOW, NEW_ID))
    assert decision.actions == case.expected


def test_an_unanswered_jobs_api_is_reported_as_a_problem() -> None:
    state = rd.RayJobState(error="ConnectionError: refused")
    decision = rd.decide(rd.Observation(job(RUNNING), cluster(), state, NOW, NEW_ID))
    assert decision.actions == [] and "ConnectionError" in decision.problem


@pytest.mark.parametrize(
    ("status", "spec", "ready", "expected"),
    [
        (RUNNING, {}, True, True),
        (RUNNING, {}, False, False),  # no Jobs API to ask
        (RUNNING, {"suspend": True}, True, False),
        ({**RUNNING, "jobDeploymentStatus": "Retrying"}, {}, True, False),  # resubmitted, not asked
        (finished(), {}, True, False),
        (INITIALIZING, {}, True, False),  # an id recorded, nothing submitted yet
    ],
)
def test_the_ray_job_is_asked_about_only_when_the_decision_reads_it(
    status: dict[str, Any], spec: dict[str, Any], ready: bool, expected: bool
) -> None:
    assert rd.needs_ray_state(job(status, **spec), cluster(ready=ready)) is expected


def test_cluster_names() -> None:
    assert rd.cluster_name_of(job(**SELECTOR)) == "shared"
    assert rd.cluster_name_of(job({"rayClusterName": "earlier"})) == "earlier"
    assert rd.cluster_name_of(job()) == OWN == rd.cluster_name_for(job())
    assert OWN.startswith("job-raycluster-") and len(OWN) == len("job-raycluster-") + 5
