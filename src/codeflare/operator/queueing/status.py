"""What the queueing controller writes: Workload status changes and queue status, as pure functions.

Each ``*_status`` function takes the current object and returns its new ``status`` (or None when
nothing would change), so writes are skipped when they would be no-ops and every change is
computed from a fresh read when a write must be retried after a conflict. The new status is a
shallow copy: nested values it does not change are shared with ``obj``, and none is modified.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true, set_condition
from codeflare.k8s.quantity import Quantity
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.k8s.types import Obj
from codeflare.operator.queueing import maxexec
from codeflare.operator.queueing.convert import admission_status
from codeflare.scheduling import Admission, PendingInfo

PENDING = "Pending"  # QuotaReserved=False: the scheduler looked and it does not fit (yet)
INADMISSIBLE = "Inadmissible"  # QuotaReserved=False: no queue can take it as things are
PREEMPTED = "Preempted"
# The engine's eviction reasons -> Kueue's Evicted reason and message (pkg/workload, and
# pkg/controller/core/workload_controller.go for the stopped queues).
KUEUE_EVICTIONS = {
    "InactiveWorkload": ("Deactivated", "The workload is deactivated"),
    "ClusterQueueStopped": ("ClusterQueueStopped", "The ClusterQueue is stopped"),
    "LocalQueueStopped": ("LocalQueueStopped", "The LocalQueue is stopped"),
}


def admitted_status(obj: Obj, admission: Admission, now: str) -> Obj | None:
    """Quota reserved and admitted in ``admission.cluster_queue``."""
    status = dict(obj.get("status") or {})
    new_adm = admission_status(admission)
    if status.get("admission") == new_adm and is_condition_true(conditions_of(obj), "Admitted"):
        return None
    msg = f"Quota reserved in ClusterQueue {admission.cluster_queue}"
    conds = conditions_of(obj)
    set_condition(conds, "QuotaReserved", "True", "QuotaReserved", msg, now)
    set_condition(conds, "Admitted", "True", "Admitted", "The workload is admitted", now)
    if find_condition(conditions_of(obj), "Evicted"):
        set_condition(conds, "Evicted", "False", "Admitted", "", now)
    status["admission"] = new_adm
    status["conditions"] = conds
    return status


def pending_status(obj: Obj, message: str, now: str, reason: str = PENDING) -> Obj | None:
    """QuotaReserved=False with ``reason`` (Kueue's "Pending" or "Inadmissible") and ``message``."""
    current = find_condition(conditions_of(obj), "QuotaReserved")
    if (
        current is not None
        and current.get("status") == "False"
        and current.get("message") == message
        and current.get("reason") == reason
    ):
        return None
    status = dict(obj.get("status") or {})
    conds = conditions_of(obj)
    set_condition(conds, "QuotaReserved", "False", reason, message, now)
    status["conditions"] = conds
    return status


def pending_condition(info: PendingInfo, workload: Obj, stopped_local_queue: bool) -> tuple[str, str]:
    """(reason, message) of QuotaReserved=False for a pending workload, as Kueue v0.14 words them.

    Missing or stopped queues are Kueue's workload controller's "Inadmissible" (with its fixed
    messages, pkg/controller/core/workload_controller.go); whatever the scheduler examined is
    "Pending" with the engine's reason (pkg/scheduler/scheduler.go), the namespace selector's
    included, whose message is Kueue's too.
    """
    queue = str((workload.get("spec") or {}).get("queueName", ""))
    cluster_queue = info.cluster_queue or ""
    if info.kind == "NoLocalQueue":
        if stopped_local_queue:
            return INADMISSIBLE, f"LocalQueue {queue} is inactive"
        return INADMISSIBLE, f"LocalQueue {queue} doesn't exist"
    if info.kind == "NoClusterQueue":
        return INADMISSIBLE, f"ClusterQueue {cluster_queue} doesn't exist"
    if info.kind in ("ClusterQueueStopped", "ClusterQueueInactive"):
        return INADMISSIBLE, f"ClusterQueue {cluster_queue} is inactive"
    if info.kind == "NamespaceNotSelected":
        return PENDING, "Workload namespace doesn't match ClusterQueue selector"
    return PENDING, info.message


def eviction_condition(reason: str, message: str) -> tuple[str, str]:
    """Kueue's Evicted reason and fixed message for the engine's eviction reasons."""
    return KUEUE_EVICTIONS.get(reason, (reason, message))


def evicted_status(
    obj: Obj,
    reason: str,
    message: str,
    now: str,
    requeue_at: str | None = None,
    preemption_reason: str | None = None,
) -> Obj | None:
    """Admission withdrawn (preempted, queue stopped, deactivated, resized): the job will be suspended.

    As Kueue's jobframework leaves it once the job is stopped: Evicted=True with ``reason``,
    QuotaReserved=False "Pending" with the same message, Requeued True only after a preemption
    (kueue pkg/controller/jobframework/reconciler.go, "handle eviction"), Preempted=True with the
    preemption's own reason (InClusterQueue, InCohortReclamation, ...).
    """
    if not (obj.get("status") or {}).get("admission"):
        return None
    status = dict(obj.get("status") or {})
    status.pop("admission", None)
    status["conditions"] = conditions_of(obj)
    reason, message = maxexec.on_admission_end(obj, status, reason, message, now)  # hook
    conds = status["conditions"]
    set_condition(conds, "Evicted", "True", reason, message, now)
    set_condition(conds, "QuotaReserved", "False", PENDING, message, now)
    set_condition(conds, "Admitted", "False", "NoReservation", "The workload has no reservation", now)
    if reason == PREEMPTED:
        set_condition(conds, "Preempted", "True", preemption_reason or PREEMPTED, message, now)
    set_condition(conds, "Requeued", reason == PREEMPTED, reason, message, now)
    status["conditions"] = conds
    requeue = dict(status.get("requeueState") or {})
    requeue["count"] = int(requeue.get("count") or 0) + 1
    if requeue_at:
        requeue["requeueAt"] = requeue_at
    status["requeueState"] = requeue
    return status


def finished_status(obj: Obj, message: str, now: str, succeeded: bool = True) -> Obj | None:
    if is_condition_true(conditions_of(obj), "Finished"):
        return None
    status = dict(obj.get("status") or {})
    conds = conditions_of(obj)
    set_condition(conds, "Finished", "True", "Succeeded" if succeeded else "Failed", message, now)
    status["conditions"] = conds
    return status


class PodsReadyStep(enum.Enum):
    """What waitForPodsReady does about one admitted workload."""

    READY = "PodsReady=True"
    WAITING = "PodsReady=False, still within the timeout"
    TIMED_OUT = "evict and requeue"


def pods_ready_step(obj: Obj, pods_ready: bool, now: float, timeout: float) -> PodsReadyStep | None:
    """The waitForPodsReady step for a Workload whose job's pods are (not) all ready at ``now``.

    None for workloads it does not concern: not admitted, finished, or ready once already (a job
    that recovers from a lost pod is the job's business, not an admission timeout). The timeout
    counts from the admission (QuotaReserved's lastTransitionTime).
    """
    if not (obj.get("status") or {}).get("admission"):
        return None
    conds = conditions_of(obj)
    if is_condition_true(conds, "Finished"):
        return None
    if pods_ready:
        return PodsReadyStep.READY
    if is_condition_true(conds, "PodsReady"):
        return None
    admitted_at = epoch_seconds((find_condition(conds, "QuotaReserved") or {}).get("lastTransitionTime"))
    if admitted_at and now - admitted_at > timeout:
        return PodsReadyStep.TIMED_OUT
    return PodsReadyStep.WAITING


def pods_ready_status(obj: Obj, ready: bool, reason: str, message: str, now: str) -> Obj | None:
    """PodsReady set to ``ready`` with ``reason`` (None when it already says so)."""
    cond = find_condition(conditions_of(obj), "PodsReady")
    if (
        cond is not None
        and cond.get("status") == ("True" if ready else "False")
        and cond.get("reason") == reason
    ):
        return None
    new = dict(obj.get("status") or {})
    conds = conditions_of(obj)
    set_condition(conds, "PodsReady", ready, reason, message, now)
    new["conditions"] = conds
    return new


def _flavor_usage(usage: dict[tuple[str, str], Quantity]) -> list[Obj]:
    by_flavor: dict[str, list[Obj]] = {}
    for (flavor, resource), amount in sorted(usage.items()):
        by_flavor.setdefault(flavor, []).append({"name": resource, "total": str(amount)})
    return [{"name": flavor, "resources": resources} for flavor, resources in sorted(by_flavor.items())]


def cluster_queue_active(obj: Obj, flavors_known: Iterable[str]) -> tuple[str, str, str]:
    """The ClusterQueue's Active condition (status, reason, message) as Kueue's cache words it
    (pkg/cache/scheduler/clusterqueue.go, inactiveReason)."""
    spec = obj.get("spec") or {}
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "False", "Terminating", "Can't admit new workloads; clusterQueue is terminating"
    needed = {f.get("name") for g in spec.get("resourceGroups") or [] for f in g.get("flavors") or []}
    missing = sorted(str(n) for n in needed - set(flavors_known))
    reasons, messages = [], []
    if (spec.get("stopPolicy") or "None") != "None":
        reasons.append("Stopped")
        messages.append("is stopped")
    if missing:
        reasons.append("FlavorNotFound")
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
    if reasons:
        return "False", reasons[0], f"Can't admit new workloads: {', '.join(messages)}."
    return "True", "Ready", "Can admit new workloads"


def cluster_queue_status(
    obj: Obj,
    *,
    pending: int,
    admitted: int,
    usage: dict[tuple[str, str], Quantity],
    flavors_known: Iterable[str],
    now: str,
) -> Obj | None:
    active = cluster_queue_active(obj, flavors_known)
    return _queue_status(obj, pending, admitted, usage, active, now)


def _queue_status(
    obj: Obj,
    pending: int,
    admitted: int,
    usage: dict[tuple[str, str], Quantity],
    active: tuple[str, str, str],
    now: str,
    extra: Obj | None = None,
) -> Obj | None:
    """Counters, usage (``flavorsUsage`` on both kinds in v1beta2; v1beta1 LocalQueues say
    ``flavorUsage``, which conversion gives them), Active, and the ``extra`` fields given."""
    current = obj.get("status") or {}
    flavors = _flavor_usage(usage)
    new = dict(current)
    new.update(
        {
            "pendingWorkloads": pending,
            "admittedWorkloads": admitted,
            "reservingWorkloads": admitted,
            "flavorsReservation": flavors,
            "flavorsUsage": flavors,
            **(extra or {}),
        }
    )
    conds = conditions_of(obj)
    set_condition(conds, "Active", *active, now)
    new["conditions"] = conds
    return None if _same(current, new) else new


def local_queue_status(
    obj: Obj,
    *,
    pending: int,
    admitted: int,
    usage: dict[tuple[str, str], Quantity],
    cluster_queue_active: bool | None,
    now: str,
    fair_sharing: Obj | None = None,
) -> Obj | None:
    """LocalQueue status; ``cluster_queue_active`` None when its ClusterQueue does not exist
    (Active as pkg/controller/core/localqueue_controller.go words it); ``fair_sharing``, when
    given, the new ``status.fairSharing`` (admission fair sharing's sampled usage), else it stays."""
    inactive = "Can't submit new workloads to clusterQueue"
    if ((obj.get("spec") or {}).get("stopPolicy") or "None") != "None":
        active = ("False", "Stopped", "LocalQueue is stopped")
    elif cluster_queue_active is None:
        active = ("False", "ClusterQueueDoesNotExist", inactive)
    elif not cluster_queue_active:
        active = ("False", "ClusterQueueIsInactive", inactive)
    else:
        active = ("True", "Ready", "Can submit new workloads to localQueue")
    current = (obj.get("status") or {}).get("fairSharing")
    extra = {} if fair_sharing is None else {"fairSharing": replacing(current, fair_sharing)}
    return _queue_status(obj, pending, admitted, usage, active, now, extra)


def replacing(old: object, new: Obj) -> Obj:
    """``new`` as a merge patch over ``old`` that leaves nothing of ``old`` behind: every key of
    ``old`` that ``new`` lacks is null, at every depth (e.g. a resource no longer consumed)."""
    if not isinstance(old, dict):
        return new
    out: Obj = {key: None for key in old if key not in new}
    for key, value in new.items():
        out[key] = replacing(old.get(key), value) if isinstance(value, dict) else value
    return out


def _same(a: Obj, b: Obj) -> bool:
    def strip(status: Obj) -> Obj:
        out = dict(status)
        out["conditions"] = [
            {k: v for k, v in c.items() if k != "lastTransitionTime"} for c in status.get("conditions") or []
        ]
        return out

    return strip(a) == strip(b)
