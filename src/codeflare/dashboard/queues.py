"""The Queues view: ClusterQueues with quota bars, LocalQueues, the cohort tree, pending order.

Quota bars are per flavor and resource: nominal quota and limits from the ClusterQueue's spec,
in use (``status.flavorsUsage``) and reserved (``status.flavorsReservation``) from its status.
Borrowed is what is in use above nominal; lent is derived for the cohort (what the other members
borrow, charged to the lenders' unused lendable quota in name order), an estimate from the same
numbers Kueue reports rather than the engine's own books. Pending workloads are ordered as the
engine orders them (:func:`codeflare.scheduling.queues.order_key`: priority, then creation time)
and numbered: that is the position shown until the visibility API (issue 13) serves the
engine's own; :class:`PositionSource` is the hook for it. Pure functions of a :class:`Snapshot`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Protocol

from codeflare.api.kueue import namespace_default_queue
from codeflare.dashboard.estimates import StartEstimate, start_estimate
from codeflare.dashboard.snapshot import Snapshot, meta, spec, status
from codeflare.k8s.conditions import find_condition, is_condition_true
from codeflare.k8s.quantity import Format, QuantityError, format_quantity, parse_quantity
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.scheduling.queues import order_key

ZERO = Decimal(0)
BINARY_RESOURCES = frozenset({"memory", "ephemeral-storage"})
#: What a Workload not decided yet says (the scheduler has not written a reason on it).
AWAITING_DECISION = "waiting for the admission decision"


def amount(value: Any) -> Decimal:
    """A quantity's value; an absent or unreadable one counts as zero (a view never fails on it)."""
    try:
        return parse_quantity(value) if value not in (None, "") else ZERO
    except (QuantityError, TypeError, ValueError):
        return ZERO


def shown(value: Decimal | None, resource: str = "") -> str:
    """A quantity as Kubernetes writes it (memory in binary units); ``-`` for no limit."""
    if value is None:
        return "-"
    return format_quantity(value, Format.BINARY_SI if resource in BINARY_RESOURCES else Format.DECIMAL_SI)


@dataclass(frozen=True)
class QuotaBar:
    """One flavor x resource of a ClusterQueue."""

    flavor: str
    resource: str
    nominal: Decimal
    in_use: Decimal = ZERO
    reserved: Decimal = ZERO
    borrowing_limit: Decimal | None = None
    lending_limit: Decimal | None = None
    lent: Decimal = ZERO

    @property
    def borrowed(self) -> Decimal:
        return max(ZERO, self.in_use - self.nominal)

    @property
    def lendable(self) -> Decimal:
        """What of the nominal quota the cohort may use while this queue does not."""
        limit = self.nominal if self.lending_limit is None else min(self.nominal, self.lending_limit)
        return max(ZERO, min(limit, self.nominal - self.in_use))

    def percent(self, value: Decimal) -> float:
        """``value`` as a share of the bar's scale (nominal plus borrowing room), 0..100."""
        scale = self.nominal + (self.borrowing_limit or ZERO)
        scale = max(scale, self.in_use, self.reserved)
        return 0.0 if scale <= ZERO else float(min(Decimal(100), value * 100 / scale))


@dataclass(frozen=True)
class PendingWorkload:
    namespace: str
    name: str
    local_queue: str
    cluster_queue: str
    priority: int
    position: int | None  # None: the user cannot see every Workload, so the order is not known
    reason: str
    message: str
    owner: str = ""  # "RayJob/train"
    estimate: StartEstimate = field(default_factory=StartEstimate)  # the operator's forecast


@dataclass(frozen=True)
class ClusterQueueView:
    name: str
    cohort: str
    strategy: str
    active: bool
    active_message: str
    pending: int
    admitted: int
    bars: tuple[QuotaBar, ...]
    waiting: tuple[PendingWorkload, ...] = ()


@dataclass(frozen=True)
class LocalQueueView:
    namespace: str
    name: str
    cluster_queue: str
    pending: int
    admitted: int
    default: bool = False


@dataclass(frozen=True)
class QueuesView:
    cluster_queues: tuple[ClusterQueueView, ...]
    local_queues: tuple[LocalQueueView, ...]
    cohorts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # cohort -> member CQs
    cluster_queues_refused: bool = False


class PositionSource(Protocol):
    """Where positions come from: :func:`pending_by_queue` orders the snapshot's Workloads; the
    visibility API (issue 13) will answer the engine's own order through the same shape."""

    def __call__(self, snapshot: Snapshot) -> Mapping[str, Sequence[PendingWorkload]]: ...


def _usage(entries: Any) -> dict[tuple[str, str], Decimal]:
    out: dict[tuple[str, str], Decimal] = {}
    for flavor in entries or []:
        for res in flavor.get("resources") or []:
            out[(str(flavor.get("name")), str(res.get("name")))] = amount(res.get("total"))
    return out


def _limit(value: Any) -> Decimal | None:
    return None if value in (None, "") else amount(value)


def quota_bars(cq: Obj) -> list[QuotaBar]:
    """Bars of one ClusterQueue, in spec order (lent is filled in by :func:`with_lent`)."""
    used = _usage(status(cq).get("flavorsUsage"))
    reserved = _usage(status(cq).get("flavorsReservation"))
    bars = []
    for group in spec(cq).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            fname = str(flavor.get("name"))
            for res in flavor.get("resources") or []:
                key = (fname, str(res.get("name")))
                bars.append(
                    QuotaBar(
                        flavor=fname,
                        resource=key[1],
                        nominal=amount(res.get("nominalQuota")),
                        in_use=used.get(key, ZERO),
                        reserved=reserved.get(key, used.get(key, ZERO)),
                        borrowing_limit=_limit(res.get("borrowingLimit")),
                        lending_limit=_limit(res.get("lendingLimit")),
                    )
                )
    return bars


def with_lent(members: Mapping[str, list[QuotaBar]]) -> dict[str, list[QuotaBar]]:
    """Charge what the cohort's members borrow, per flavor x resource, to the others' lendable quota
    (members in name order, each up to its lendable amount). Never more is lent than is borrowed,
    and no member lends more than it may."""
    owed: dict[tuple[str, str], Decimal] = {}  # borrowed by members, not charged to a lender yet
    for bars in members.values():
        for bar in bars:
            owed[(bar.flavor, bar.resource)] = owed.get((bar.flavor, bar.resource), ZERO) + bar.borrowed
    out: dict[str, list[QuotaBar]] = {}
    for name in sorted(members):
        row = []
        for bar in members[name]:
            key = (bar.flavor, bar.resource)
            others = max(ZERO, owed.get(key, ZERO) - bar.borrowed)
            lent = min(bar.lendable, others)
            owed[key] = owed.get(key, ZERO) - lent
            row.append(replace(bar, lent=lent))
        out[name] = row
    return out


def cohorts(cluster_queues: Sequence[Obj]) -> dict[str, tuple[str, ...]]:
    """Cohort name -> its member ClusterQueues (sorted); queues outside any cohort are left out."""
    tree: dict[str, list[str]] = {}
    for cq in cluster_queues:
        cohort = spec(cq).get("cohort") or spec(cq).get("cohortName")
        if cohort:
            tree.setdefault(str(cohort), []).append(str(meta(cq).get("name")))
    return {name: tuple(sorted(members)) for name, members in sorted(tree.items())}


def is_pending(workload: Obj) -> bool:
    conds = status(workload).get("conditions")
    return (
        not status(workload).get("admission")
        and not is_condition_true(conds, "Finished")
        and spec(workload).get("active", True) is not False
    )


def pending_reason(workload: Obj) -> tuple[str, str]:
    """(reason code, message) of a pending Workload, from its QuotaReserved=False condition."""
    cond = find_condition(status(workload).get("conditions"), "QuotaReserved")
    if cond is not None and cond.get("status") == "False":
        return str(cond.get("reason") or "Pending"), str(cond.get("message") or cond.get("reason") or "")
    return "Pending", AWAITING_DECISION


def _owner(workload: Obj) -> str:
    for ref in meta(workload).get("ownerReferences") or []:
        return f"{ref.get('kind')}/{ref.get('name')}"
    return ""


def pending_by_queue(snapshot: Snapshot) -> dict[str, list[PendingWorkload]]:
    """ClusterQueue -> its pending Workloads in the engine's order, numbered from 1. A Workload
    whose LocalQueue is unknown (not readable, or missing) is listed under ``""``. Computed once
    per snapshot (both views use it)."""
    return snapshot.memo("pending_by_queue", lambda: _pending_by_queue(snapshot))


def _pending_by_queue(snapshot: Snapshot) -> dict[str, list[PendingWorkload]]:
    routes = {
        (str(meta(lq).get("namespace")), str(meta(lq).get("name"))): str(spec(lq).get("clusterQueue") or "")
        for lq in snapshot.of(kinds.LOCAL_QUEUE)
    }
    # A user who may not read every namespace's Workloads sees only part of each queue: numbering
    # those would claim a place the user does not hold, so positions are left unknown.
    partial = bool(snapshot.forbidden.get(kinds.WORKLOAD.kind))
    ordered: dict[str, list[tuple[Any, Obj]]] = {}
    for wl in snapshot.of(kinds.WORKLOAD):
        if not is_pending(wl):
            continue
        ns, name = str(meta(wl).get("namespace")), str(meta(wl).get("name"))
        cq = routes.get((ns, str(spec(wl).get("queueName") or "")), "")
        created = epoch_seconds(meta(wl).get("creationTimestamp")) or 0.0
        key = order_key(int(spec(wl).get("priority") or 0), created, f"{ns}/{name}")
        ordered.setdefault(cq, []).append((key, wl))
    out: dict[str, list[PendingWorkload]] = {}
    for cq, items in ordered.items():
        items.sort(key=lambda item: item[0])
        out[cq] = []
        for position, (_, wl) in enumerate(items, start=1):
            reason, message = pending_reason(wl)
            out[cq].append(
                PendingWorkload(
                    namespace=str(meta(wl).get("namespace")),
                    name=str(meta(wl).get("name")),
                    local_queue=str(spec(wl).get("queueName") or ""),
                    cluster_queue=cq,
                    priority=int(spec(wl).get("priority") or 0),
                    position=None if partial else position,
                    reason=reason,
                    message=message,
                    owner=_owner(wl),
                    estimate=start_estimate(wl, snapshot.now),
                )
            )
    return out


def _active(cq: Obj) -> tuple[bool, str]:
    cond = find_condition(status(cq).get("conditions"), "Active")
    if cond is None:
        return False, "no status yet (is the operator running?)"
    return cond.get("status") == "True", str(cond.get("message") or cond.get("reason") or "")


def queues_view(snapshot: Snapshot, positions: PositionSource = pending_by_queue) -> QueuesView:
    cqs = sorted(snapshot.of(kinds.CLUSTER_QUEUE), key=lambda o: str(meta(o).get("name")))
    waiting = positions(snapshot)
    bars = {str(meta(cq).get("name")): quota_bars(cq) for cq in cqs}
    tree = cohorts(cqs)
    for members in tree.values():
        bars.update(with_lent({name: bars[name] for name in members}))
    views = []
    for cq in cqs:
        name = str(meta(cq).get("name"))
        active, message = _active(cq)
        views.append(
            ClusterQueueView(
                name=name,
                cohort=str(spec(cq).get("cohort") or spec(cq).get("cohortName") or ""),
                strategy=str(spec(cq).get("queueingStrategy") or "BestEffortFIFO"),
                active=active,
                active_message=message,
                pending=int(status(cq).get("pendingWorkloads") or 0),
                admitted=int(status(cq).get("admittedWorkloads") or 0),
                bars=tuple(bars[name]),
                waiting=tuple(waiting.get(name, ())),
            )
        )
    local_queues = snapshot.of(kinds.LOCAL_QUEUE)
    by_namespace: dict[str, list[Obj]] = {}
    for lq in local_queues:
        by_namespace.setdefault(str(meta(lq).get("namespace")), []).append(lq)
    defaults = {ns: namespace_default_queue(queues) for ns, queues in by_namespace.items()}
    lqs = [
        LocalQueueView(
            namespace=str(meta(lq).get("namespace")),
            name=str(meta(lq).get("name")),
            cluster_queue=str(spec(lq).get("clusterQueue") or ""),
            pending=int(status(lq).get("pendingWorkloads") or 0),
            admitted=int(status(lq).get("admittedWorkloads") or 0),
            default=defaults.get(str(meta(lq).get("namespace"))) == meta(lq).get("name"),
        )
        for lq in sorted(local_queues, key=lambda o: (meta(o).get("namespace"), meta(o).get("name")))
    ]
    return QueuesView(tuple(views), tuple(lqs), tree, snapshot.refused(kinds.CLUSTER_QUEUE))
