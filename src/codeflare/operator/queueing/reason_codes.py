"""Kueue 0.19's reason codes for a Workload without quota, from the engine's pending kinds.

Kueue 0.19 (KEP-10852, ``UnadmittedWorkloadsObservability`` on by default) replaced the generic
``Pending``/``Inadmissible`` reasons of ``QuotaReserved=False`` with codes that say which cause
holds a workload (``apis/kueue/v1beta2/workload_types.go``, WorkloadQuotaReservedReason*), and
sets ``Admitted=False`` with ``NoReservation`` beside it. :func:`quota_reserved_reason` maps the
engine's :class:`~codeflare.scheduling.PendingInfo` to that code; :func:`legacy_reason` gives the
reason Kueue writes with the gate off (what Kueue <= 0.18 and our ported v0.14 cases expect).
Pure: no I/O; the human message is the engine's and is not touched here.
"""

from __future__ import annotations

from collections.abc import Iterable

from codeflare.k8s.conditions import set_condition
from codeflare.k8s.types import Obj
from codeflare.operator.queueing import status
from codeflare.scheduling import PendingInfo, Shortfall

# Kueue's WorkloadQuotaReservedReason* constants (apis/kueue/v1beta2/workload_types.go) and the
# Deactivated reason it uses for spec.active=false (pkg/controller/core/workload_controller.go).
NO_MATCHING_FLAVOR = "NoMatchingFlavor"
WAITING_FOR_QUOTA = "WaitingForQuota"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
WAITING_FOR_PREEMPTED = "WaitingForPreemptedWorkloads"
MISCONFIGURED = "Misconfigured"
SUSPENDED = "Suspended"
PENDING_EVALUATION = "PendingEvaluation"
DEACTIVATED = "Deactivated"
# The Admitted=False reason of a workload without quota reservation, and its fixed message.
NO_RESERVATION, NO_RESERVATION_MESSAGE = "NoReservation", "The workload has no reservation"
# The legacy reasons (gate off): the workload controller's queue blockers, the scheduler's rest.
LEGACY_INADMISSIBLE, LEGACY_PENDING = "Inadmissible", "Pending"

# Every QuotaReserved=False reason this module writes, and the queue-level ones among them (a
# missing or stopped queue: rewritten once the queue comes back), legacy "Inadmissible" included.
QUOTA_RESERVED_REASONS = frozenset(
    {NO_MATCHING_FLAVOR, WAITING_FOR_QUOTA, EXCEEDS_MAX_QUOTA, WAITING_FOR_PREEMPTED, MISCONFIGURED,
     SUSPENDED, PENDING_EVALUATION, DEACTIVATED}
)  # fmt: skip
QUEUE_BLOCKER_REASONS = frozenset({LEGACY_INADMISSIBLE, MISCONFIGURED, SUSPENDED})

# Engine kind -> code where the kind alone decides (Kueue's getQueueBlocker and scheduler.nominate:
# a missing queue or an unselected namespace is Misconfigured, a stopped or inactive queue Suspended;
# a resource the ClusterQueue does not cover has no flavor attempt at all: NoMatchingFlavor).
_BY_KIND = {
    "NoClusterQueue": MISCONFIGURED,
    "NamespaceNotSelected": MISCONFIGURED,
    "ClusterQueueStopped": SUSPENDED,
    "ClusterQueueInactive": SUSPENDED,
    "Inactive": DEACTIVATED,
    "NotCovered": NO_MATCHING_FLAVOR,
    "NoMatchingFlavor": NO_MATCHING_FLAVOR,
    "WaitingForPreemption": WAITING_FOR_PREEMPTED,
    # StrictFIFO: a workload behind the head is never evaluated, as in Kueue's heap
    "BlockedByHead": PENDING_EVALUATION,
    "Queued": PENDING_EVALUATION,
    # node capacity is ours, not Kueue's (it has no such check): the nearest code is a quota wait
    "CapacityShortfall": WAITING_FOR_QUOTA,
}


def quota_reserved_reason(info: PendingInfo, stopped_local_queue: bool = False) -> str:
    """The Kueue 0.19 ``QuotaReserved=False`` reason for a pending workload's engine reason.

    A missing LocalQueue is Misconfigured, a stopped one Suspended. A quota shortfall is
    ExceedsMaxQuota when no flavor tried could ever hold the request (more than its maximum
    capacity, Kueue's PotentialAvailable), else WaitingForQuota (flavorassigner.fitsResourceQuota;
    alternatives take the least severe, co-requisites the most, as resolveNoFitReason does).
    """
    if info.kind == "NoLocalQueue":
        return SUSPENDED if stopped_local_queue else MISCONFIGURED
    if info.kind == "QuotaShortfall":
        return shortfall_reason(info.shortfalls)
    return _BY_KIND.get(info.kind, PENDING_EVALUATION)


def shortfall_reason(shortfalls: Iterable[Shortfall]) -> str:
    """ExceedsMaxQuota when every flavor tried has a resource beyond its maximum, else WaitingForQuota."""
    exceeded: dict[str, bool] = {}
    for s in shortfalls:
        beyond = s.kind == "quota" and s.maximum is not None and s.requested > s.maximum
        exceeded[s.flavor] = exceeded.get(s.flavor, False) or beyond
    return EXCEEDS_MAX_QUOTA if exceeded and all(exceeded.values()) else WAITING_FOR_QUOTA


def legacy_reason(reason: str) -> str:
    """What Kueue writes for ``reason`` with UnadmittedWorkloadsObservability off
    (pkg/workload.UnadmittedWorkloadReasonWithFallback): queue blockers "Inadmissible", the
    scheduler's codes "Pending"; anything else (Deactivated, legacy reasons) unchanged. Not exact
    for a namespace mismatch, Misconfigured from the scheduler, whose legacy reason is "Pending"."""
    if reason in (MISCONFIGURED, SUSPENDED):
        return LEGACY_INADMISSIBLE
    if reason in QUOTA_RESERVED_REASONS and reason != DEACTIVATED:
        return LEGACY_PENDING
    return reason


def unadmitted_status(obj: Obj, reason: str, message: str, now: str) -> Obj | None:
    """``QuotaReserved=False`` with ``reason``/``message`` (:func:`status.pending_status`) and
    ``Admitted=False`` NoReservation, as Kueue 0.19 leaves a workload without quota; None when both
    already say so."""
    new = status.pending_status(obj, message, now, reason)
    current = dict(new if new is not None else obj.get("status") or {})
    conds = list(current.get("conditions") or [])
    admitted = set_condition(conds, "Admitted", "False", NO_RESERVATION, NO_RESERVATION_MESSAGE, now)
    if not admitted and new is None:
        return None
    current["conditions"] = conds
    return current
