"""One scheduling cycle of ``AdmissionEngine``, Kueue-style, repeated until nothing moves.

Each round takes one candidate per woken ClusterQueue (its best eligible shape class head; under
StrictFIFO only the queue head), sorts candidates (no borrowing first, then priority, then age),
and admits, preempts or parks each against the quota as it stands after the earlier ones.
Rounds repeat while queues admit, so everything that fits is admitted in the same call. Parked
classes wait for their scope to free quota or for their backoff to end. No input bookkeeping.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from codeflare.scheduling.assignment import FIT, NO_FIT, Assignment, assign_flavors
from codeflare.scheduling.preemption import AdmittedWorkload, plan_preemption
from codeflare.scheduling.queues import OrderKey, PendingQueue, ShapeClass
from codeflare.scheduling.results import PendingInfo, Preempted, SchedulingResult, quota_reason

if TYPE_CHECKING:
    from codeflare.scheduling.engine import AdmissionEngine


@dataclass
class _Entry:
    cluster_queue: str
    cls: ShapeClass
    order: OrderKey
    assignment: Assignment
    version: int
    strict: bool


def _blocked_queue(engine: AdmissionEngine, name: str) -> PendingInfo | None:
    spec = engine._cqs[name]
    if spec.stop_policy != "None":
        return PendingInfo(
            "ClusterQueueStopped", f"ClusterQueue {name} is stopped ({spec.stop_policy})", name
        )
    for flavor in engine._book.queues[name].flavors:
        if flavor not in engine._flavors:
            message = f"ClusterQueue {name} is inactive: ResourceFlavor {flavor} does not exist"
            return PendingInfo("ClusterQueueInactive", message, name)
    return None


def _assignment_reason(assignment: Assignment) -> PendingInfo:
    if assignment.not_covered is not None:
        return PendingInfo("NotCovered", assignment.not_covered, assignment.cluster_queue)
    return quota_reason(assignment.shortfalls, assignment.cluster_queue)


def _park(
    engine: AdmissionEngine, entry_cq: str, cls: ShapeClass, order: OrderKey, info: PendingInfo,
    now: float, result: SchedulingResult, strict: bool,
) -> None:  # fmt: skip
    scope = engine._book.scope(entry_cq)
    retry_at = now + engine.backoff_time
    info = replace(info, requeue_at=retry_at)
    cls.park(engine._book.freed_generation(scope), retry_at, info)
    heapq.heappush(engine._timers, (retry_at, entry_cq))
    result.pending[order[2]] = info
    if strict:
        engine._queues[entry_cq].hold(order[2], now)


def _candidate(engine: AdmissionEngine, name: str, now: float, result: SchedulingResult) -> _Entry | None:
    queue = engine._queues.get(name)
    if queue is None or not len(queue):
        return None
    blocked = _blocked_queue(engine, name)
    if blocked is not None:
        for order, _ in queue.heads():
            result.pending[order[2]] = blocked
        return None
    book = engine._book
    compiled = book.queues[name]
    scope = book.scope(name)
    generation = book.freed_generation(scope)
    strict = compiled.spec.queueing_strategy == "StrictFIFO"
    if strict:
        head = queue.strict_head(now, engine.head_of_line_holding_time)
        heads = [head] if head is not None else []
    else:
        heads = queue.heads()
    for order, cls in heads:
        if not cls.eligible(generation, now):
            continue
        assignment = assign_flavors(engine._ctx, compiled, cls.shape, order[2])
        if assignment.mode != NO_FIT:
            return _Entry(name, cls, order, assignment, book.change_generation(scope), strict)
        _park(engine, name, cls, order, _assignment_reason(assignment), now, result, strict)
    return None


def _scope_admitted(engine: AdmissionEngine, name: str, result: SchedulingResult) -> list[AdmittedWorkload]:
    """Admitted workloads of the queue's scope, except those admitted in this very cycle."""
    out: list[AdmittedWorkload] = []
    for member in engine._book.members(engine._book.scope(name)):
        out.extend(
            w for w in engine._admitted_by_cq.get(member, {}).values() if w.key not in result.admissions
        )
    out.sort(key=lambda w: w.key)
    return out


def _preempt(engine: AdmissionEngine, entry: _Entry, now: float, result: SchedulingResult) -> None:
    key = entry.order[2]
    workload = engine._workloads[key]
    compiled = engine._book.queues[entry.cluster_queue]
    plan = plan_preemption(
        engine._ctx, compiled, entry.assignment, workload.priority, workload.creation_time,
        _scope_admitted(engine, entry.cluster_queue, result),
    )  # fmt: skip
    base = _assignment_reason(entry.assignment)
    if plan.possible:
        scope = engine._book.scope(entry.cluster_queue)
        engine._nominated[key] = (scope, entry.order, set(entry.assignment.usage))
    if plan.victims:
        for victim, reason in plan.victims:
            victim.evicting = reason
            message = f"preempted to admit {key} in ClusterQueue {entry.cluster_queue} ({reason})"
            result.preemptions.append(Preempted(victim.key, key, reason, victim.cluster_queue, message))
        names = ", ".join(v.key for v, _ in plan.victims)
        message = (
            f"waiting for {len(plan.victims)} preempted workloads to be evicted ({names}); {base.message}"
        )
        info = PendingInfo("WaitingForPreemption", message, entry.cluster_queue, base.shortfalls)
    elif plan.waiting:
        message = f"waiting for {plan.waiting} workloads being evicted to release quota; {base.message}"
        info = PendingInfo("WaitingForPreemption", message, entry.cluster_queue, base.shortfalls)
    else:
        info = replace(base, message=f"{base.message}; preemption cannot free enough quota")
    _park(engine, entry.cluster_queue, entry.cls, entry.order, info, now, result, entry.strict)


def _held_for(engine: AdmissionEngine, entry: _Entry, scope: str) -> str | None:
    """A higher-ranked preemptor of the same scope that needs some of the same quota, if any."""
    key = entry.order[2]
    for other, (other_scope, order, needs) in sorted(engine._nominated.items()):
        if (
            other != key
            and other_scope == scope
            and order < entry.order
            and needs & entry.assignment.usage.keys()
        ):
            return other
    return None


def _process(
    engine: AdmissionEngine, entry: _Entry, now: float, result: SchedulingResult, held: list[tuple[str, str]]
) -> bool:
    """Admit, preempt for or park one candidate; True when its queue may go on this cycle."""
    book = engine._book
    name = entry.cluster_queue
    scope = book.scope(name)
    if engine.capacity_check or book.change_generation(scope) != entry.version:
        entry.assignment = assign_flavors(engine._ctx, book.queues[name], entry.cls.shape, entry.order[2])
    key = entry.order[2]
    if entry.assignment.mode == FIT:
        holder = _held_for(engine, entry, scope)
        if holder is not None:
            message = f"quota is held for {holder}, which is waiting for its preemption victims to be evicted"
            result.pending[key] = PendingInfo("WaitingForPreemption", message, name)
            held.append((name, holder))
            return False
        engine._nominated.pop(key, None)
        admission = entry.assignment.admission(now)
        engine._record_admission(key, admission)
        result.admissions[key] = admission
        result.pending.pop(key, None)
        return True
    if entry.assignment.mode == NO_FIT:
        _park(
            engine,
            name,
            entry.cls,
            entry.order,
            _assignment_reason(entry.assignment),
            now,
            result,
            entry.strict,
        )
    else:
        _preempt(engine, entry, now, result)
    return not entry.strict


def run_cycle(engine: AdmissionEngine, now: float, result: SchedulingResult) -> None:
    """Run rounds over the woken queues until no queue admits anything more."""
    names = sorted(engine._dirty)
    engine._dirty.clear()
    held: list[tuple[str, str]] = []
    while names:
        entries = [e for e in (_candidate(engine, n, now, result) for n in names) if e is not None]
        # preemptors whose victims are gone go first, so that others do not take the freed quota
        entries.sort(key=lambda e: (e.order[2] not in engine._nominated, e.assignment.borrows, e.order))
        going_on = {e.cluster_queue for e in entries if _process(engine, e, now, result, held)}
        # a queue held back for a preemptor that has been admitted since may go on
        going_on.update(name for name, holder in held if holder not in engine._nominated)
        held = [(name, holder) for name, holder in held if holder in engine._nominated]
        names = sorted(going_on)


def pending_reason(engine: AdmissionEngine, key: str) -> PendingInfo | None:
    """The current reason for one pending workload, without evaluating anything."""
    if key not in engine._workloads or key in engine._admitted:
        return None
    if key in engine._blocked:
        return engine._blocked[key]
    name = engine._queued_in.get(key)
    if name is None:
        return None
    blocked = _blocked_queue(engine, name)
    if blocked is not None:
        return blocked
    queue: PendingQueue = engine._queues[name]
    if engine._cqs[name].queueing_strategy == "StrictFIFO":
        head = queue.strict_head(engine._now, engine.head_of_line_holding_time)
        if head is not None and head[0][2] != key:
            message = f"waiting behind {head[0][2]} at the head of StrictFIFO ClusterQueue {name}"
            return PendingInfo("BlockedByHead", message, name)
    order = queue.classes[queue.shape_of[key]].members[key]
    scope = engine._book.scope(name)
    for other, (other_scope, other_order, _) in sorted(engine._nominated.items()):
        if other != key and other_scope == scope and other_order < order:
            message = f"quota is held for {other}, which is waiting for its preemption victims to be evicted"
            return PendingInfo("WaitingForPreemption", message, name)
    cls = queue.classes[queue.shape_of[key]]
    if cls.parked_generation is not None and cls.info is not None:
        return cls.info
    return PendingInfo("Queued", f"queued in ClusterQueue {name}, not evaluated yet", name)
