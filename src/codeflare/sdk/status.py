"""Cluster and job states as the SDK reports them, derived from one object read.

``CodeFlareClusterStatus`` and ``RayClusterStatus`` keep codeflare-sdk's names; ``status_of``
maps a RayCluster (or the AppWrapper wrapping it) to them without further API calls, and
``pending_reason`` reads why a queued job's Workload waits. No I/O in those.

:class:`QueuePositions` is the one reader of Kueue's visibility API here: the position of a
pending Workload in its ClusterQueue and LocalQueue (one ``pendingworkloads`` call per
LocalQueue, v1beta2 then v1beta1), or why it is unknown (the API is not served, not allowed, ...).
:func:`explain_pending` puts reason code, message and position into one :class:`PendingReason`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from codeflare.k8s.conditions import find_condition, is_condition_true
from codeflare.k8s.constants import QUEUE_NAME_LABEL

if TYPE_CHECKING:
    from codeflare.kube.client import Kube

#: What a Workload not admitted yet says before the scheduler wrote a reason on it.
AWAITING_DECISION = "waiting for the admission decision"


class RayClusterStatus(Enum):
    """The RayCluster's own state (KubeRay's ``status.state``)."""

    READY = "ready"
    UNHEALTHY = "unhealthy"
    FAILED = "failed"
    UNKNOWN = "unknown"
    SUSPENDED = "suspended"


class CodeFlareClusterStatus(Enum):
    """What a user wants to know: is it queued, starting, ready, failed?"""

    READY = 1
    STARTING = 2
    QUEUED = 3
    QUEUEING = 4
    FAILED = 5
    UNKNOWN = 6
    SUSPENDED = 7


@dataclass
class RayClusterInfo:
    """A summary of one cluster, as ``details()`` and ``list_all_clusters`` return it."""

    name: str
    namespace: str
    status: RayClusterStatus
    head_cpus: str = ""
    head_memory: str = ""
    workers: int = 0
    worker_cpus: str = ""
    worker_memory: str = ""
    worker_gpus: str = "0"
    dashboard: str = ""
    local_queue: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


def pending_reason(workload: dict[str, Any]) -> str | None:
    """Why a Workload waits: its QuotaReserved=False message verbatim (None once admitted or finished)."""
    status = workload.get("status") or {}
    conditions = status.get("conditions")
    if status.get("admission") or is_condition_true(conditions, "Finished"):
        return None
    reserved = find_condition(conditions, "QuotaReserved")
    if reserved is not None and reserved.get("status") == "False":
        return str(reserved.get("message") or reserved.get("reason") or AWAITING_DECISION)
    return AWAITING_DECISION


VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSIONS = ("v1beta2", "v1beta1")


@dataclass(frozen=True)
class QueuePosition:
    """Where a pending Workload stands (0: the next one tried), as the visibility API says."""

    cluster_queue: int
    local_queue: int


class PendingReason(str):
    """Why a Workload waits, as text (``"<code>: <message> (position ...)"``) and as fields:
    ``reason`` (Kueue's QuotaReserved code, "" before any), ``message`` (the scheduler's words),
    ``position`` (None when unknown) and ``position_note`` (why it is unknown)."""

    reason: str
    message: str
    position: QueuePosition | None
    position_note: str

    def __new__(
        cls, reason: str, message: str, position: QueuePosition | None = None, position_note: str = "",
        cluster_queue: str = "", local_queue: str = "",
    ) -> PendingReason:  # fmt: skip
        text = f"{reason}: {message}" if reason and reason != message else message
        if position is not None:
            text += (f" (position {position.cluster_queue + 1} in ClusterQueue {cluster_queue}, "
                     f"{position.local_queue + 1} in LocalQueue {local_queue})")  # fmt: skip
        elif position_note:
            text += f" (position unknown: {position_note})"
        self = super().__new__(cls, text)
        self.reason, self.message = reason, message
        self.position, self.position_note = position, position_note
        return self


def pending_condition(workload: dict[str, Any]) -> tuple[str, str] | None:
    """(reason code, message) of a waiting Workload's QuotaReserved=False ("" code before the
    scheduler wrote one); None once admitted or finished."""
    message = pending_reason(workload)
    if message is None:
        return None
    reserved = find_condition((workload.get("status") or {}).get("conditions"), "QuotaReserved")
    return str((reserved or {}).get("reason") or ""), message


class QueuePositions:
    """Positions of pending Workloads from the visibility API, one call per LocalQueue (cached)."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self._answers: dict[tuple[str, str], tuple[dict[str, QueuePosition], str, str]] = {}

    def of(self, workload: dict[str, Any]) -> tuple[QueuePosition | None, str, str]:
        """(position, why it is unknown, the LocalQueue's ClusterQueue) of a pending Workload."""
        meta = workload.get("metadata") or {}
        ref = (str(meta.get("namespace", "")), str((workload.get("spec") or {}).get("queueName", "")))
        if ref not in self._answers:
            self._answers[ref] = self._ask(*ref)
        positions, note, cluster_queue = self._answers[ref]
        found = positions.get(str(meta.get("name", "")))
        if found is None and not note:
            note = "not in its ClusterQueue's queue (yet)"
        return found, note, cluster_queue

    def _ask(self, namespace: str, local_queue: str) -> tuple[dict[str, QueuePosition], str, str]:
        from codeflare.kube import errors

        note = ""
        for version in VISIBILITY_VERSIONS:
            path = (f"/apis/{VISIBILITY_GROUP}/{version}/namespaces/{namespace}/localqueues/"
                    f"{local_queue}/pendingworkloads")  # fmt: skip
            try:
                answer = self.kube.get_raw(path)
            except errors.NotFound:
                note = f"{VISIBILITY_GROUP} is not served here, or does not know LocalQueue {local_queue}"
                continue
            except errors.Forbidden:
                return {}, f"not allowed to read LocalQueue {local_queue}'s pending workloads", ""
            except errors.KubeError as exc:
                return {}, f"the visibility API did not answer ({exc})", ""
            positions = {
                str((item.get("metadata") or {}).get("name", "")): QueuePosition(
                    int(item.get("positionInClusterQueue", 0)), int(item.get("positionInLocalQueue", 0))
                )
                for item in answer.get("items") or []
            }
            return positions, "", self._cluster_queue(namespace, local_queue)
        return {}, note, ""

    def _cluster_queue(self, namespace: str, local_queue: str) -> str:
        """The LocalQueue's ClusterQueue ("" when it cannot be read), at either Kueue version."""
        from codeflare.kube import errors, kinds

        for version in ("v1beta2", "v1beta1"):
            try:
                found = self.kube.find(kinds.LOCAL_QUEUE.at_version(version), local_queue, namespace)
            except errors.KubeError:
                continue
            if found is not None:
                return str((found.get("spec") or {}).get("clusterQueue", ""))
        return ""


def explain_pending(
    workload: dict[str, Any], positions: QueuePositions | None = None
) -> PendingReason | None:
    """Why ``workload`` waits, with its position when ``positions`` can tell (None once admitted)."""
    found = pending_condition(workload)
    if found is None:
        return None
    reason, message = found
    from codeflare.sdk.estimate import estimate_words  # the operator's forecast, when published

    message += estimate_words(workload)
    if positions is None:
        return PendingReason(reason, message)
    position, note, cluster_queue = positions.of(workload)
    local_queue = str((workload.get("spec") or {}).get("queueName", ""))
    return PendingReason(reason, message, position, note, cluster_queue, local_queue)


def ray_status(obj: dict[str, Any]) -> RayClusterStatus:
    state = str((obj.get("status") or {}).get("state") or "").lower()
    if (obj.get("spec") or {}).get("suspend"):
        return RayClusterStatus.SUSPENDED
    try:
        return RayClusterStatus(state)
    except ValueError:
        return RayClusterStatus.UNKNOWN


def status_of(obj: dict[str, Any]) -> CodeFlareClusterStatus:
    """Map a RayCluster or an AppWrapper to the status users see."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    suspended = bool((obj.get("spec") or {}).get("suspend"))
    if obj.get("kind") == "AppWrapper":
        phase = (obj.get("status") or {}).get("phase") or ""
        if phase == "Running":
            return CodeFlareClusterStatus.STARTING
        if phase in ("Failed",):
            return CodeFlareClusterStatus.FAILED
        if suspended or phase in ("", "Suspended"):
            return _queued_or_suspended(labels)
        return CodeFlareClusterStatus.STARTING
    state = ray_status(obj)
    if state == RayClusterStatus.SUSPENDED:
        return _queued_or_suspended(labels)
    if state == RayClusterStatus.READY:
        return CodeFlareClusterStatus.READY
    if state in (RayClusterStatus.FAILED, RayClusterStatus.UNHEALTHY):
        return CodeFlareClusterStatus.FAILED
    return CodeFlareClusterStatus.STARTING


def _queued_or_suspended(labels: dict[str, Any]) -> CodeFlareClusterStatus:
    return CodeFlareClusterStatus.QUEUED if QUEUE_NAME_LABEL in labels else CodeFlareClusterStatus.SUSPENDED


def _first_container(template: dict[str, Any]) -> dict[str, Any]:
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return containers[0] if isinstance(containers[0], dict) else {}


def info_of(obj: dict[str, Any], dashboard: str = "") -> RayClusterInfo:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    head = _first_container((spec.get("headGroupSpec") or {}).get("template") or {}).get("resources") or {}
    groups = spec.get("workerGroupSpecs") or []
    worker = _first_container((groups[0] if groups else {}).get("template") or {}).get("resources") or {}
    limits = worker.get("limits") or {}
    return RayClusterInfo(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        status=ray_status(obj),
        head_cpus=str((head.get("limits") or {}).get("cpu", "")),
        head_memory=str((head.get("limits") or {}).get("memory", "")),
        workers=sum(int(g.get("replicas") or 0) * int(g.get("numOfHosts") or 1) for g in groups),
        worker_cpus=str(limits.get("cpu", "")),
        worker_memory=str(limits.get("memory", "")),
        worker_gpus=str(limits.get("nvidia.com/gpu", "0")),
        dashboard=dashboard,
        local_queue=((meta.get("labels") or {}).get(QUEUE_NAME_LABEL)),
        labels=dict(meta.get("labels") or {}),
    )
