"""One scheduling cycle over the engine's state, Kueue-style, repeated until nothing moves.

Each round takes one candidate per woken ClusterQueue (its best eligible shape class head; under
StrictFIFO only the queue head), sorts candidates (no borrowing first, then priority, then age),
and admits, preempts or parks each against the quota as it stands after the earlier ones.
Rounds repeat while queues admit, so everything that fits is admitted in the same call. Parked
classes wait for their scope to free quota or for their backoff to end. No input bookkeeping.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, replace

from codeflare.scheduling.assignment import (
    FIT,
    NO_CANDIDATES,
    NO_FIT,
    PREEMPT,
    RECLAIM,
    Assignment,
    PreemptionOracle,
    assign_flavors,
)
from codeflare.scheduling.model import Admission
from codeflare.scheduling.preemption import AdmittedWorkload, Preemptor, plan_preemption
from codeflare.scheduling.queues import OrderKey, PendingQueue, ShapeClass
from codeflare.scheduling.quota import FlavorResource
from codeflare.scheduling.results import PendingInfo, Preempted, SchedulingResult, quota_reason
from codeflare.scheduling.state import EngineState

RecordAdmission = Callable[[str, Admission], None]
"""Charges an admission to the engine's books at once (the cycle goes on against the new usage)."""


@dataclass
class _Entry:
    cluster_queue: str
    cls: ShapeClass
    order: OrderKey
    assignment: Assignment
    version: int
    strict: bool


def _blocked_queue(state: EngineState, name: str) -> PendingInfo | None:
    spec = state.cqs[name]
    if spec.stop_policy != "None":
        return PendingInfo(
            "ClusterQueueStopped", f"ClusterQueue {name} is stopped ({spec.stop_policy})", name
        )
    for flavor in state.book.queues[name].flavors:
        if flavor not in state.flavors:
            message = f"ClusterQueue {name} is inactive: ResourceFlavor {flavor} does not exist"
            return PendingInfo("ClusterQueueInactive", message, name)
    return None


def _assignment_reason(assignment: Assignment) -> PendingInfo:
    if assignment.not_covered is not None:
        return PendingInfo("NotCovered", assignment.not_covered, assignment.cluster_queue)
    return quota_reason(assignment.shortfalls, assignment.cluster_queue, assignment.mismatches)


def _assign(
    state: EngineState, name: str, shape_key: str, cls: ShapeClass, result: SchedulingResult
) -> Assignment:
    """Flavor assignment of ``shape_key``'s class in queue ``name``, asking preemption as oracle."""
    compiled = state.book.queues[name]
    workload = state.workloads[shape_key]

    def oracle(fr: FlavorResource, quantity: int) -> tuple[int, bool]:
        if len(compiled.groups[compiled.group_of[fr[1]]][1]) == 1:
            # one flavor: nothing to choose between, so the preemption step alone says whether
            # there are candidates (this saves a what-if per evaluation of a full queue's head)
            own = state.book.usage.get(name, {}).get(fr, 0)
            return PREEMPT, own + quantity > compiled.nominal.get(fr, 0)
        preemptor = Preemptor(
            compiled, workload.priority, workload.creation_time, {fr: quantity}, frozenset((fr,)), shape_key
        )
        plan = plan_preemption(state.ctx, preemptor, _scope_admitted(state, name, result))
        own = state.book.usage.get(name, {}).get(fr, 0)
        if not plan.possible:
            return NO_CANDIDATES, own + quantity > compiled.nominal.get(fr, 0)
        freed = sum(v.usage.get(fr, 0) for v, _ in plan.victims if v.cluster_queue == name)
        borrows = own - freed + quantity > compiled.nominal.get(fr, 0)
        return (RECLAIM if plan.only_other_queues else PREEMPT), borrows

    check: PreemptionOracle = oracle
    return assign_flavors(state.ctx, compiled, cls.shape, shape_key, check)


def _park(
    state: EngineState, entry_cq: str, cls: ShapeClass, order: OrderKey, info: PendingInfo,
    now: float, result: SchedulingResult, strict: bool,
) -> None:  # fmt: skip
    scope = state.book.scope(entry_cq)
    retry_at = now + state.backoff_time
    info = replace(info, requeue_at=retry_at)
    cls.park(state.book.freed_generation(scope), retry_at, info)
    heapq.heappush(state.timers, (retry_at, entry_cq))
    result.pending[order[2]] = info
    if strict:
        state.queues[entry_cq].hold(order[2], now)


def _candidate(state: EngineState, name: str, now: float, result: SchedulingResult) -> _Entry | None:
    queue = state.queues.get(name)
    if queue is None or not len(queue):
        return None
    blocked = _blocked_queue(state, name)
    if blocked is not None:
        for order, _ in queue.heads():
            result.pending[order[2]] = blocked
        return None
    book = state.book
    compiled = book.queues[name]
    scope = book.scope(name)
    generation = book.freed_generation(scope)
    strict = compiled.spec.queueing_strategy == "StrictFIFO"
    if strict:
        head = queue.strict_head(now, state.head_of_line_holding_time)
        heads = [head] if head is not None else []
    else:
        heads = queue.heads()
    for order, cls in heads:
        if not cls.eligible(generation, now):
            continue
        assignment = _assign(state, name, order[2], cls, result)
        if assignment.mode != NO_FIT:
            return _Entry(name, cls, order, assignment, book.change_generation(scope), strict)
        _park(state, name, cls, order, _assignment_reason(assignment), now, result, strict)
    return None


def _scope_admitted(state: EngineState, name: str, result: SchedulingResult) -> list[AdmittedWorkload]:
    """Admitted workloads of the queue's scope, except those admitted in this very cycle."""
    out: list[AdmittedWorkload] = []
    for member in state.book.members(state.book.scope(name)):
        out.extend(w for w in state.admitted_by_cq.get(member, {}).values() if w.key not in result.admissions)
    out.sort(key=lambda w: w.key)
    return out


def _preempt(state: EngineState, entry: _Entry, now: float, result: SchedulingResult) -> None:
    key = entry.order[2]
    workload = state.workloads[key]
    compiled = state.book.queues[entry.cluster_queue]
    usage = entry.assignment.usage
    book = state.book
    needed = frozenset(fr for fr, v in usage.items() if v > book.available(entry.cluster_queue, fr))
    preemptor = Preemptor(compiled, workload.priority, workload.creation_time, dict(usage), needed, key)
    plan = plan_preemption(state.ctx, preemptor, _scope_admitted(state, entry.cluster_queue, result))
    base = _assignment_reason(entry.assignment)
    if plan.possible:
        scope = state.book.scope(entry.cluster_queue)
        state.nominated[key] = (scope, entry.order, set(entry.assignment.usage))
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
    _park(state, entry.cluster_queue, entry.cls, entry.order, info, now, result, entry.strict)


def _held_for(state: EngineState, entry: _Entry, scope: str) -> str | None:
    """A higher-ranked preemptor of the same scope that needs some of the same quota, if any."""
    key = entry.order[2]
    for other, (other_scope, order, needs) in sorted(state.nominated.items()):
        if (
            other != key
            and other_scope == scope
            and order < entry.order
            and needs & entry.assignment.usage.keys()
        ):
            return other
    return None


def _process(
    state: EngineState,
    entry: _Entry,
    now: float,
    result: SchedulingResult,
    held: list[tuple[str, str]],
    record: RecordAdmission,
) -> bool:
    """Admit, preempt for or park one candidate; True when its queue may go on this cycle."""
    book = state.book
    name = entry.cluster_queue
    scope = book.scope(name)
    if state.capacity_check or book.change_generation(scope) != entry.version:
        entry.assignment = _assign(state, name, entry.order[2], entry.cls, result)
    key = entry.order[2]
    if entry.assignment.mode == FIT:
        holder = _held_for(state, entry, scope)
        if holder is not None:
            message = f"quota is held for {holder}, which is waiting for its preemption victims to be evicted"
            result.pending[key] = PendingInfo("WaitingForPreemption", message, name)
            held.append((name, holder))
            return False
        state.nominated.pop(key, None)
        admission = entry.assignment.admission(now)
        record(key, admission)
        result.admissions[key] = admission
        result.pending.pop(key, None)
        return True
    if entry.assignment.mode == NO_FIT:
        _park(
            state,
            name,
            entry.cls,
            entry.order,
            _assignment_reason(entry.assignment),
            now,
            result,
            entry.strict,
        )
    else:
        _preempt(state, entry, now, result)
    return not entry.strict


def run_cycle(state: EngineState, now: float, result: SchedulingResult, record: RecordAdmission) -> None:
    """Run rounds over the woken queues until no queue admits anything more; ``record`` charges
    each admission to the engine's books as it is made."""
    names = sorted(state.dirty)
    state.dirty.clear()
    held: list[tuple[str, str]] = []
    while names:
        entries = [e for e in (_candidate(state, n, now, result) for n in names) if e is not None]
        # preemptors whose victims are gone go first, so that others do not take the freed quota
        entries.sort(key=lambda e: (e.order[2] not in state.nominated, e.assignment.borrows, e.order))
        going_on = {e.cluster_queue for e in entries if _process(state, e, now, result, held, record)}
        # a queue held back for a preemptor that has been admitted since may go on
        going_on.update(name for name, holder in held if holder not in state.nominated)
        held = [(name, holder) for name, holder in held if holder in state.nominated]
        names = sorted(going_on)


def pending_reason(state: EngineState, key: str) -> PendingInfo | None:
    """The current reason for one pending workload, without evaluating anything."""
    if key not in state.workloads or key in state.admitted:
        return None
    if key in state.blocked:
        return state.blocked[key]
    name = state.queued_in.get(key)
    if name is None:
        return None
    blocked = _blocked_queue(state, name)
    if blocked is not None:
        return blocked
    queue: PendingQueue = state.queues[name]
    if state.cqs[name].queueing_strategy == "StrictFIFO":
        head = queue.strict_head(state.now, state.head_of_line_holding_time)
        if head is not None and head[0][2] != key:
            message = f"waiting behind {head[0][2]} at the head of StrictFIFO ClusterQueue {name}"
            return PendingInfo("BlockedByHead", message, name)
    order = queue.classes[queue.shape_of[key]].members[key]
    scope = state.book.scope(name)
    for other, (other_scope, other_order, _) in sorted(state.nominated.items()):
        if other != key and other_scope == scope and other_order < order:
            message = f"quota is held for {other}, which is waiting for its preemption victims to be evicted"
            return PendingInfo("WaitingForPreemption", message, name)
    cls = queue.classes[queue.shape_of[key]]
    if cls.parked_generation is not None and cls.info is not None:
        return cls.info
    return PendingInfo("Queued", f"queued in ClusterQueue {name}, not evaluated yet", name)
