"""What ``AdmissionEngine.schedule`` returns, and the pending reasons it gives.

Holds the result types (admissions, preemptions with their Kueue reason, evictions, pending
information with structured shortfalls and requeue times), the functions that word a reason,
and the machine-readable form of shortfalls (``record``, ``encode_shortfalls``) that consumers
such as scale-out read instead of parsing the words. It makes no decisions; the engine fills
these in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from codeflare.k8s.quantity import QuantityError, format_milli, milli_value
from codeflare.scheduling.model import Admission
from codeflare.scheduling.records import made

PreemptionReason = Literal[
    "InClusterQueue", "InCohortReclamation", "InCohortReclaimWhileBorrowing", "InCohortFairSharing"
]
PendingKind = Literal[
    "QuotaShortfall",
    "CapacityShortfall",
    "NotCovered",
    "NoMatchingFlavor",
    "WaitingForPreemption",
    "BlockedByHead",
    "NoLocalQueue",
    "NoClusterQueue",
    "NamespaceNotSelected",
    "ClusterQueueStopped",
    "ClusterQueueInactive",
    "Inactive",
    "Queued",
]


@dataclass(frozen=True)
class Shortfall:
    """Why one flavor could not take one resource: quota or node capacity (amounts in milli)."""

    kind: Literal["quota", "capacity"]
    cluster_queue: str
    flavor: str
    resource: str
    requested: int
    available: int
    nominal: int = 0
    borrowable: int = 0
    in_use: int = 0
    nodes: int = 0
    allocatable: int = 0
    unmanaged: int = 0
    maximum: int | None = None  # quota: the most the queue could ever hold (Kueue's PotentialAvailable)

    @property
    def missing(self) -> int:
        """How much more would be needed, in milli-units."""
        return max(0, self.requested - self.available)

    def record(self) -> dict[str, str]:
        """The machine-readable form: kind, clusterQueue, flavor, resource, and the amounts
        requested, available and needed as Kubernetes quantities (what scale-out reads)."""
        return {
            "kind": self.kind,
            "clusterQueue": self.cluster_queue,
            "flavor": self.flavor,
            "resource": self.resource,
            "requested": format_milli(self.requested),
            "available": format_milli(self.available),
            "needed": format_milli(self.missing),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Shortfall:
        """Read :meth:`record` back; a malformed record raises ``ValueError`` naming the field."""
        kind = record.get("kind")
        if kind not in ("quota", "capacity"):
            raise ValueError(f"shortfall kind: unsupported value {kind!r}")
        amounts: dict[str, int] = {}
        for name in ("requested", "available"):
            try:
                amounts[name] = milli_value(str(record.get(name)))
            except QuantityError as exc:
                raise ValueError(f"shortfall {name}: {exc}") from exc
        text = {k: str(record.get(k) or "") for k in ("clusterQueue", "flavor", "resource")}
        return cls(kind, text["clusterQueue"], text["flavor"], text["resource"], **amounts)

    @property
    def message(self) -> str:
        """The shortfall in words, e.g. ``insufficient quota for cpu in flavor f in ...``."""
        req, avail = format_milli(self.requested), format_milli(self.available)
        if self.kind == "capacity":
            return (
                f"insufficient node capacity for {self.resource} in flavor {self.flavor}: "
                f"requests {req}, available {avail} (allocatable {format_milli(self.allocatable)} "
                f"on {self.nodes} nodes, {format_milli(self.unmanaged)} used by other pods, "
                f"{format_milli(self.in_use)} used by admitted workloads)"
            )
        if self.borrowable >= 0:
            detail = f"nominal {format_milli(self.nominal)} + borrowable {format_milli(self.borrowable)}"
        else:
            detail = f"nominal {format_milli(self.nominal)} - lent {format_milli(-self.borrowable)}"
        return (
            f"insufficient quota for {self.resource} in flavor {self.flavor} in ClusterQueue "
            f"{self.cluster_queue}: requests {req}, available {avail} "
            f"({detail}, in use {format_milli(self.in_use)})"
        )


def encode_shortfalls(shortfalls: Iterable[Shortfall]) -> str:
    """Shortfalls as compact JSON (a list of :meth:`Shortfall.record`), e.g. for an annotation."""
    return json.dumps([s.record() for s in shortfalls], separators=(",", ":"), sort_keys=True)


def decode_shortfalls(text: str) -> tuple[Shortfall, ...]:
    """Read :func:`encode_shortfalls` back; anything malformed raises ``ValueError``."""
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"shortfalls: not JSON: {exc}") from exc
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError("shortfalls: must be a list of objects")
    return tuple(Shortfall.from_record(r) for r in records)


@dataclass(frozen=True)
class PendingInfo:
    """Why a workload is not admitted, and when it will be looked at again (None: on change)."""

    kind: PendingKind
    message: str
    cluster_queue: str | None = None
    shortfalls: tuple[Shortfall, ...] = ()
    requeue_at: float | None = None

    @property
    def capacity_only(self) -> bool:
        """True when only node capacity (not quota) is short: what an autoscaler acts on."""
        return self.kind == "CapacityShortfall"


@dataclass(frozen=True)
class Preempted:
    """A victim to evict so that ``preemptor`` can be admitted later."""

    victim: str
    preemptor: str
    reason: PreemptionReason
    cluster_queue: str
    message: str


@dataclass(frozen=True)
class Eviction:
    """An admitted workload to evict for a reason other than preemption."""

    workload: str
    reason: Literal["ClusterQueueStopped", "InactiveWorkload"]
    message: str


@dataclass
class SchedulingResult:
    """Decisions of one ``schedule(now)`` call.

    ``admissions``: workload key -> Admission, already charged in the engine.
    ``preemptions``/``evictions``: workloads the caller must evict; they stay charged until the
    caller reports them without admission (``update_workload``) or removes them.
    ``pending``: reasons for the workloads examined or newly blocked in this call (use
    ``AdmissionEngine.pending_reason`` for any other). ``next_wakeup``: earliest backoff expiry.
    ``unfinished``: the call stopped at its admission budget with rounds left; call again.
    """

    now: float
    admissions: dict[str, Admission] = field(default_factory=dict)
    preemptions: list[Preempted] = field(default_factory=list)
    evictions: list[Eviction] = field(default_factory=list)
    pending: dict[str, PendingInfo] = field(default_factory=dict)
    next_wakeup: float | None = None
    unfinished: bool = False

    @property
    def requeue_at(self) -> dict[str, float]:
        """Workload key -> time it will be re-evaluated if nothing changes before."""
        return {k: v.requeue_at for k, v in self.pending.items() if v.requeue_at is not None}


def quota_reason(
    shortfalls: tuple[Shortfall, ...],
    cluster_queue: str,
    mismatches: tuple[str, ...] = (),
    words: bool = True,
) -> PendingInfo:
    """A pending reason made of shortfalls (capacity-only when no quota is short) and of the
    flavors skipped for taints or node affinity; without ``words``, its message is empty (for
    an engine that does not explain, see ``AdmissionEngine.explain``)."""
    kind: PendingKind = (
        "CapacityShortfall"
        if shortfalls and all(s.kind == "capacity" for s in shortfalls)
        else "QuotaShortfall"
    )
    if not shortfalls and mismatches:
        kind = "NoMatchingFlavor"
    message = ""
    if words:
        parts = [*(s.message for s in shortfalls), *mismatches]
        message = "; ".join(parts) or f"does not fit in ClusterQueue {cluster_queue}"
    return made(
        PendingInfo, kind=kind, message=message, cluster_queue=cluster_queue, shortfalls=shortfalls,
        requeue_at=None,
    )  # fmt: skip
