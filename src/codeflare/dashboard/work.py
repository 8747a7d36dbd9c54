"""The "My work" view: one row per RayCluster, RayJob and AppWrapper the user can read.

Each row says what kubectl and the Ray dashboard would: namespace, name, age, a state word, why
it waits (its Workload's reason) and where it stands in its ClusterQueue, workers ready/desired,
the Ray dashboard's URL and the actions that apply to its kind. A RayCluster owned by a RayJob or
wrapped by an AppWrapper is shown once, under its owner. The estimated start is the operator's, read
from its Workload's annotations (:mod:`.estimates`). Pure functions of a Snapshot.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from codeflare.dashboard.estimates import StartEstimate, start_estimate
from codeflare.dashboard.queues import PendingWorkload, PositionSource, pending_by_queue, pending_reason
from codeflare.dashboard.snapshot import Snapshot, meta, spec, status
from codeflare.k8s.constants import (
    APPWRAPPER_LABEL,
    DASHBOARD_URL_ANNOTATION,
    JOB_UID_LABEL,
    QUEUE_NAME_LABEL,
)
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind

#: The actions each kind offers: action -> what it does, for the confirmation prompt.
ACTIONS: Mapping[str, Mapping[str, str]] = {
    "RayCluster": {"down": "delete the RayCluster and stop its Ray processes"},
    "RayJob": {"stop": "suspend the RayJob (its own cluster is released)", "delete": "delete the RayJob"},
    "AppWrapper": {"delete": "delete the AppWrapper and everything it wraps"},
}
#: The API verb each action needs (what a SelfSubjectAccessReview asks before the button is drawn).
VERBS: Mapping[str, str] = {"down": "delete", "stop": "patch", "delete": "delete"}
KINDS: Mapping[str, Kind] = {
    "RayCluster": kinds.RAYCLUSTER,
    "RayJob": kinds.RAYJOB,
    "AppWrapper": kinds.APPWRAPPER,
}


@dataclass(frozen=True)
class WorkRow:
    kind: str
    namespace: str
    name: str
    state: str
    created: str = ""  # RFC 3339, as the API wrote it
    queue: str = ""
    reason: str = ""
    message: str = ""
    position: int | None = None
    cluster_queue: str = ""
    estimate: StartEstimate = field(default_factory=StartEstimate)  # of its pending Workload
    workers_ready: int | None = None
    workers_desired: int | None = None
    dashboard: str = ""
    job_id: str = ""
    cluster: str = ""  # a RayJob's RayCluster (its logs come from there)

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def actions(self) -> Mapping[str, str]:
        return ACTIONS.get(self.kind, {})

    def age(self, now: float) -> str:
        """kubectl's AGE column (the API server's own formatting of it)."""
        if not self.created:
            return "-"
        from codeflare.apiserver.endpoints.tables import human_age

        return human_age(self.created, datetime.datetime.fromtimestamp(now, datetime.UTC))


def desired_workers(cluster_spec: Mapping[str, object]) -> int:
    """Worker pods a RayCluster spec asks for: replicas x numOfHosts over its groups."""
    total = 0
    for group in cluster_spec.get("workerGroupSpecs") or []:  # type: ignore[attr-defined]
        total += int(group.get("replicas") or 0) * int(group.get("numOfHosts") or 1)
    return total


def dashboard_url(rc: Obj) -> str:
    """The Ray dashboard: local mode's recorded URL, else the head service's address."""
    annotation = (meta(rc).get("annotations") or {}).get(DASHBOARD_URL_ANNOTATION)
    if annotation:
        return str(annotation)
    port = (status(rc).get("endpoints") or {}).get("dashboard")
    ip = (status(rc).get("head") or {}).get("serviceIP") or (status(rc).get("head") or {}).get("podIP")
    return f"http://{ip}:{port}" if port and ip else ""


def _workloads_by_owner(snapshot: Snapshot) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    for wl in snapshot.of(kinds.WORKLOAD):
        uid = (meta(wl).get("labels") or {}).get(JOB_UID_LABEL)
        for ref in meta(wl).get("ownerReferences") or []:
            out[str(ref.get("uid"))] = wl
        if uid:
            out[str(uid)] = wl
    return out


def _positions(waiting: Mapping[str, Sequence[PendingWorkload]]) -> dict[tuple[str, str], PendingWorkload]:
    return {(p.namespace, p.name): p for queue in waiting.values() for p in queue}


def _cluster_state(rc: Obj) -> str:
    if spec(rc).get("suspend"):
        return "Queued" if QUEUE_NAME_LABEL in (meta(rc).get("labels") or {}) else "Suspended"
    return str(status(rc).get("state") or "Starting").capitalize()


def _job_state(job: Obj) -> str:
    st = status(job)
    if spec(job).get("suspend") and not st.get("jobStatus"):
        return "Queued" if QUEUE_NAME_LABEL in (meta(job).get("labels") or {}) else "Suspended"
    return str(st.get("jobStatus") or st.get("jobDeploymentStatus") or "Initializing").capitalize()


def _wrapper_state(aw: Obj) -> str:
    phase = str(status(aw).get("phase") or "")
    if spec(aw).get("suspend") and phase in ("", "Suspended"):
        return "Queued"
    return phase or "Pending"


def _hidden_cluster(rc: Obj) -> bool:
    """A RayCluster owned by a RayJob or wrapped by an AppWrapper (shown under its owner)."""
    if APPWRAPPER_LABEL in (meta(rc).get("labels") or {}):
        return True
    return any(ref.get("kind") == "RayJob" for ref in meta(rc).get("ownerReferences") or [])


def work_rows(snapshot: Snapshot, positions: PositionSource = pending_by_queue) -> list[WorkRow]:
    """Every RayCluster (not owned by another row), RayJob and AppWrapper, by namespace and name."""
    by_owner = _workloads_by_owner(snapshot)
    waiting = _positions(positions(snapshot))
    clusters = {(meta(rc).get("namespace"), meta(rc).get("name")): rc for rc in snapshot.of(kinds.RAYCLUSTER)}
    rows = []
    for kind_name, kind in KINDS.items():
        for obj in snapshot.of(kind):
            if kind_name == "RayCluster" and _hidden_cluster(obj):
                continue
            ns = str(meta(obj).get("namespace") or "")
            rc: Obj | None = obj
            state = _cluster_state(obj)
            if kind_name == "RayJob":
                rc = clusters.get((ns, status(obj).get("rayClusterName")))
                state = _job_state(obj)
            elif kind_name == "AppWrapper":
                rc = _wrapped_cluster(obj, clusters)
                state = _wrapper_state(obj)
            rows.append(_row(kind_name, obj, rc, state, by_owner, waiting, snapshot.now))
    rows.sort(key=lambda r: (r.namespace, r.name, r.kind))
    return rows


def _wrapped_cluster(aw: Obj, clusters: Mapping[tuple[object, object], Obj]) -> Obj | None:
    ns = meta(aw).get("namespace")
    for component in spec(aw).get("components") or []:
        template = component.get("template") or {}
        if template.get("kind") == "RayCluster":
            return clusters.get((ns, (template.get("metadata") or {}).get("name")))
    return None


def _row(
    kind: str,
    obj: Obj,
    rc: Obj | None,
    state: str,
    by_owner: Mapping[str, Obj],
    waiting: Mapping[tuple[str, str], PendingWorkload],
    now: float,
) -> WorkRow:
    m = meta(obj)
    wl = by_owner.get(str(m.get("uid")))
    reason = message = cq = ""
    position = None
    estimate = StartEstimate()
    if wl is not None:
        pending = waiting.get((str(meta(wl).get("namespace")), str(meta(wl).get("name"))))
        if pending is not None:
            position, cq = pending.position, pending.cluster_queue
            reason, message, estimate = pending.reason, pending.message, pending.estimate
        elif state == "Queued":
            reason, message = pending_reason(wl)
            estimate = start_estimate(wl, now)
    elif state == "Queued":
        reason, message = "NoWorkload", "no Workload yet: the queueing controller has not seen it"
    ready = desired = None
    if rc is not None:
        ready = int(status(rc).get("readyWorkerReplicas") or 0)
        desired = desired_workers(spec(rc))
    elif kind == "RayJob":
        desired = desired_workers(spec(obj).get("rayClusterSpec") or {})
    return WorkRow(
        kind=kind,
        namespace=str(m.get("namespace") or ""),
        name=str(m.get("name") or ""),
        state=state,
        created=str(m.get("creationTimestamp") or ""),
        queue=str((m.get("labels") or {}).get(QUEUE_NAME_LABEL) or ""),
        reason=reason,
        message=message,
        position=position,
        cluster_queue=cq,
        estimate=estimate,
        workers_ready=ready,
        workers_desired=desired,
        dashboard=dashboard_url(rc) if rc is not None else str(status(obj).get("dashboardURL") or ""),
        job_id=str(status(obj).get("jobId") or "") if kind == "RayJob" else "",
        cluster=str(meta(rc).get("name") or "") if rc is not None else "",
    )


def find_row(rows: Sequence[WorkRow], kind: str, namespace: str, name: str) -> WorkRow | None:
    return next((r for r in rows if (r.kind, r.namespace, r.name) == (kind, namespace, name)), None)
