"""One scheduling cycle over the engine's state, Kueue-style, repeated until nothing moves.

Each round takes one candidate per woken ClusterQueue (its best eligible shape class head, a
preemptor waiting for its victims before all others as Kueue's sticky head; under StrictFIFO
only the queue head), sorts candidates (no borrowing first, then priority, then age;
with fair sharing on, by the cohort tournament of :mod:`fairsharing` instead),
and admits, preempts or parks each against the quota as it stands after the earlier ones.
Rounds repeat while queues admit, so everything that fits is admitted in the same call. Parked
classes wait for their scope to free quota or for their backoff to end. It reads and charges the
state only through the public methods of the scheduling cache and the queue manager (and the
cache's quota book); no input bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from codeflare.scheduling.afs import UsageLedger
from codeflare.scheduling.assignment import (
    FIT,
    NO_CANDIDATES,
    NO_FIT,
    PREEMPT,
    RECLAIM,
    Assignment,
    PreemptionOracle,
    assign_flavors,
    refit,
    regrade_of,
    regraded,
)
from codeflare.scheduling.fairsharing import Contender, fair_preemption, fair_winner
from codeflare.scheduling.model import Admission
from codeflare.scheduling.preemption import PreemptionPlan, Preemptor, finds_no_candidates, plan_preemption
from codeflare.scheduling.queues import OrderKey, ShapeClass
from codeflare.scheduling.quota import CompiledQueue, FlavorResource, Usage
from codeflare.scheduling.records import evolved
from codeflare.scheduling.results import PendingInfo, Preempted, SchedulingResult, quota_reason
from codeflare.scheduling.state import EngineState

RecordAdmission = Callable[[str, Admission, Usage], None]
"""Charges an admission (and its usage per flavor-resource, only read) to the engine's books at
once (the cycle goes on against the new usage)."""


@dataclass
class _Entry:
    cluster_queue: str
    cls: ShapeClass
    order: OrderKey
    assignment: Assignment
    version: int  # the scope's change generation when the assignment was made
    freed: int  # ... and its freed generation (unchanged: only admissions since, see refit)
    strict: bool


def _plan(state: EngineState, preemptor: Preemptor, exclude: Collection[str]) -> PreemptionPlan:
    """Victims by Kueue's fair-sharing preemption when fair sharing is on, else classical, among
    the admitted workloads of the preemptor's scope but those in ``exclude`` (admitted this cycle)."""
    fair, cache = state.fair_sharing, state.cache
    if fair.enable:
        admitted = cache.scope_admitted(preemptor.compiled.spec.name, exclude)
        return fair_preemption(cache.ctx, preemptor, admitted, fair.preemption_strategies)
    return plan_preemption(cache.ctx, preemptor, cache.admitted_by_cq, exclude)


def _assignment_reason(state: EngineState, assignment: Assignment) -> PendingInfo:
    if assignment.not_covered is not None:
        return PendingInfo("NotCovered", assignment.not_covered, assignment.cluster_queue)
    return quota_reason(assignment.shortfalls, assignment.cluster_queue, assignment.mismatches, state.explain)


def _assign(
    state: EngineState, name: str, shape_key: str, cls: ShapeClass, result: SchedulingResult
) -> Assignment:
    """Flavor assignment of ``shape_key``'s class in queue ``name``, asking preemption as oracle."""
    cache = state.cache
    compiled = cache.compiled(name)
    workload = cache.workloads[shape_key]

    def oracle(fr: FlavorResource, quantity: int) -> tuple[int, bool]:
        own = cache.book.usage.get(name, {}).get(fr, 0)
        if len(compiled.groups[compiled.group_of[fr[1]]][1]) == 1:
            # one flavor: nothing to choose between, so the preemption step alone says whether
            # there are candidates (this saves a what-if per evaluation of a full queue's head)
            return PREEMPT, own + quantity > compiled.nominal.get(fr, 0)
        preemptor = Preemptor(
            compiled, workload.priority, workload.creation_time, {fr: quantity}, frozenset((fr,)), shape_key
        )
        plan = _plan(state, preemptor, result.admissions)
        if not plan.possible:
            return NO_CANDIDATES, own + quantity > compiled.nominal.get(fr, 0)
        freed = sum(v.usage.get(fr, 0) for v, _ in plan.victims if v.cluster_queue == name)
        borrows = own - freed + quantity > compiled.nominal.get(fr, 0)
        return (RECLAIM if plan.only_other_queues else PREEMPT), borrows

    check: PreemptionOracle = oracle
    return assign_flavors(cache.ctx, compiled, cls.shape, shape_key, check)


def _park(
    state: EngineState, entry_cq: str, cls: ShapeClass, order: OrderKey, info: PendingInfo,
    now: float, result: SchedulingResult, strict: bool,
) -> None:  # fmt: skip
    book = state.cache.book
    retry_at = now + state.backoff_time
    info = evolved(info, requeue_at=retry_at)
    state.manager.park(entry_cq, cls, book.freed_generation(book.scope(entry_cq)), retry_at, info)
    result.pending[order[2]] = info
    queue = state.manager.queue(entry_cq) if strict else None
    if queue is not None:
        queue.hold(order[2], now)


def _candidate(
    state: EngineState, name: str, now: float, result: SchedulingResult, spent: list[str]
) -> _Entry | None:
    """The queue's candidate of this round: its best head that may be admitted or preempt for.
    Heads that cannot fit are parked on the way. A head that could fit only by preempting where
    no plan can find candidates is parked here as well, and its queue's turn in this round is
    spent (appended to ``spent`` unless StrictFIFO, as :func:`_process` would have it go on):
    the same outcome as processing it, without building its entry and plan, and while its
    resources fit or not as they did, without assigning it again (:class:`Regrade`)."""
    queue = state.manager.queue(name)
    if queue is None or not queue.shape_of:  # empty
        return None
    blocked = state.cache.inactive_reason(name)
    if blocked is not None:
        for order, _ in queue.heads():
            result.pending[order[2]] = blocked
        return None
    cache = state.cache
    book = cache.book
    compiled = cache.compiled(name)
    scope = book.scope(name)
    generation = book.freed_generation(scope)
    strict = compiled.spec.queueing_strategy == "StrictFIFO"
    if strict:
        head = queue.strict_head(now, state.head_of_line_holding_time)
        heads = [head] if head is not None else []
    else:
        heads = queue.heads()
        sticky = state.manager.preemptor_head(name)
        if sticky is not None:
            heads = _with_sticky(queue.ranking, heads, sticky)
    for order, cls in heads:
        parked = cls.parked_generation  # parked, not woken since and backing off: skipped
        if parked is not None and parked == generation and now < cls.retry_at:
            continue
        if cls.regrade is not None:
            shortfalls = regraded(cache.ctx, compiled, cls.regrade, cache.config_generation)
            if shortfalls is not None and _unplannable(state, compiled, cls.regrade.usage):
                base = quota_reason(shortfalls, name, (), state.explain)
                _spend(state, name, cls, order, base, now, result, strict, spent)
                return None
        assignment = _reassign(state, compiled, order[2], cls, result)
        if assignment.mode == NO_FIT:
            _park(state, name, cls, order, _assignment_reason(state, assignment), now, result, strict)
            continue
        if assignment.mode != FIT and _unplannable(state, compiled, assignment.usage):
            cls.regrade = regrade_of(cache.ctx, compiled, cls.shape, assignment, cache.config_generation)
            _spend(state, name, cls, order, _assignment_reason(state, assignment), now, result, strict, spent)
            return None
        return _Entry(name, cls, order, assignment, book.change_generation(scope), generation, strict)
    return None


def _spend(
    state: EngineState, name: str, cls: ShapeClass, order: OrderKey, base: PendingInfo, now: float,
    result: SchedulingResult, strict: bool, spent: list[str],
) -> None:  # fmt: skip
    """Park a head no plan can help and spend its queue's turn in this round (see _candidate)."""
    _park(state, name, cls, order, _no_plan_reason(state, base), now, result, strict)
    if not strict:
        spent.append(name)


def _reassign(
    state: EngineState, compiled: CompiledQueue, key: str, cls: ShapeClass, result: SchedulingResult
) -> Assignment:
    """The assignment of head ``key`` of ``cls``: the class's last fitting one re-checked
    (:func:`refit`) while it still fits under the same configuration, else a new one; kept on
    the class when it fits."""
    cache = state.cache
    generation = cache.config_generation
    fitted = cls.fitted
    cls.fitted = cls.regrade = None
    assignment = None
    if fitted is not None and fitted[0] == generation:
        assignment = refit(cache.ctx, compiled, fitted[1])
    if assignment is None:
        assignment = _assign(state, compiled.spec.name, key, cls, result)
    else:
        assignment.workload = key
    if assignment.mode == FIT:
        cls.fitted = (generation, assignment)
    return assignment


def _unplannable(state: EngineState, compiled: CompiledQueue, usage: dict[FlavorResource, int]) -> bool:
    """Whether every preemption plan for ``usage`` in the queue is empty whatever is admitted."""
    return not state.fair_sharing.enable and finds_no_candidates(state.cache.book, compiled, usage)


def _no_plan_reason(state: EngineState, base: PendingInfo) -> PendingInfo:
    """The reason of a head that needs preemption when no plan finds anything to preempt."""
    if not state.explain:
        return base
    return evolved(base, message=f"{base.message}; preemption cannot free enough quota")


def _with_sticky(
    ranking: UsageLedger | None, heads: list[tuple[OrderKey, ShapeClass]], sticky: tuple[OrderKey, ShapeClass]
) -> list[tuple[OrderKey, ShapeClass]]:
    """The heads with the waiting preemptor first (Kueue's sticky head); in a queue ranked by
    admission fair sharing first among its LocalQueue's usage rank (Kueue compares usage before it)."""
    others = [h for h in heads if h[1] is not sticky[1]]
    if ranking is None:
        return [sticky, *others]
    mine = ranking.score(sticky[1].local_queue)
    place = next((i for i, h in enumerate(others) if ranking.score(h[1].local_queue) >= mine), len(others))
    return [*others[:place], sticky, *others[place:]]


def _preempt(state: EngineState, entry: _Entry, now: float, result: SchedulingResult) -> None:
    cache, manager = state.cache, state.manager
    key, name = entry.order[2], entry.cluster_queue
    workload = cache.workloads[key]
    usage = entry.assignment.usage
    compiled = cache.compiled(name)
    needed = frozenset(fr for fr, v in usage.items() if v > cache.book.available(name, fr))
    preemptor = Preemptor(compiled, workload.priority, workload.creation_time, dict(usage), needed, key)
    plan = _plan(state, preemptor, result.admissions)
    base = _assignment_reason(state, entry.assignment)
    explain = state.explain
    if plan.possible:
        manager.nominate(key, cache.scope(name), entry.order, set(usage))
    if plan.victims:
        for victim, reason in plan.victims:
            victim.evicting = reason
            message = f"preempted to admit {key} in ClusterQueue {name} ({reason})" if explain else ""
            result.preemptions.append(Preempted(victim.key, key, reason, victim.cluster_queue, message))
        names = ", ".join(v.key for v, _ in plan.victims) if explain else ""
        message = (
            f"waiting for {len(plan.victims)} preempted workloads to be evicted ({names}); {base.message}"
            if explain
            else ""
        )
        info = PendingInfo("WaitingForPreemption", message, name, base.shortfalls)
    elif plan.waiting:
        message = (
            f"waiting for {plan.waiting} workloads being evicted to release quota; {base.message}"
            if explain
            else ""
        )
        info = PendingInfo("WaitingForPreemption", message, name, base.shortfalls)
    else:
        info = _no_plan_reason(state, base)
    _park(state, name, entry.cls, entry.order, info, now, result, entry.strict)


def _process(
    state: EngineState,
    entry: _Entry,
    now: float,
    result: SchedulingResult,
    held: list[tuple[str, str]],
    record: RecordAdmission,
    ranked: bool = False,
) -> bool:
    """Admit, preempt for or park one candidate; True when its queue may go on this cycle.

    ``ranked``: the candidate was ordered among the waiting preemptors already (fair sharing's
    tournament), so quota held for another of them does not hold it back."""
    book = state.cache.book
    name = entry.cluster_queue
    scope = book.scope(name)
    if state.capacity_check or book.change_generation(scope) != entry.version:
        again = None
        if book.freed_generation(scope) == entry.freed:  # only admissions since: often the same
            again = refit(state.cache.ctx, state.cache.compiled(name), entry.assignment)
        if again is None:
            again = _assign(state, name, entry.order[2], entry.cls, result)
        entry.assignment = again
    key = entry.order[2]
    if entry.assignment.mode == FIT:
        needs = entry.assignment.usage.keys()
        holder = None if ranked else state.manager.holder(key, scope, entry.order, needs)
        if holder is not None:
            message = (
                f"quota is held for {holder}, which is waiting for its preemption victims to be evicted"
                if state.explain
                else ""
            )
            result.pending[key] = PendingInfo("WaitingForPreemption", message, name)
            held.append((name, holder))
            return False
        state.manager.unnominate(key)
        admission = entry.assignment.admission(now)
        record(key, admission, entry.assignment.usage)
        result.admissions[key] = admission
        result.pending.pop(key, None)
        return True
    if entry.assignment.mode == NO_FIT:
        reason = _assignment_reason(state, entry.assignment)
        _park(state, name, entry.cls, entry.order, reason, now, result, entry.strict)
    else:
        _preempt(state, entry, now, result)
    return not entry.strict


def run_cycle(
    state: EngineState,
    now: float,
    result: SchedulingResult,
    record: RecordAdmission,
    budget: int | None = None,
) -> None:
    """Run rounds over the woken queues until no queue admits anything more, or until ``budget``
    admissions are made (a round is never cut: it may end past the budget), leaving the queues
    that would go on woken for the next call; ``record`` charges each admission to the engine's
    books as it is made."""
    manager = state.manager
    names = manager.take_woken(now)
    held, manager.held_over = manager.held_over, []
    while names:
        if budget is not None and len(result.admissions) >= budget:
            manager.wake(names)  # the next call's rounds go on from here, as Kueue's next cycle
            manager.held_over = held
            result.unfinished = True
            return
        spent: list[str] = []
        entries = [e for e in (_candidate(state, n, now, result, spent) for n in names) if e is not None]
        # preemptors whose victims are gone go first, so that others do not take the freed quota
        entries.sort(key=lambda e: (not manager.is_nominated(e.order[2]), e.assignment.level, e.order))
        if state.fair_sharing.enable:
            going_on = _fair_round(state, entries, now, result, held, record)
        else:
            going_on = {e.cluster_queue for e in entries if _process(state, e, now, result, held, record)}
        going_on.update(spent)
        # a queue held back for a preemptor that has been admitted since may go on
        going_on.update(name for name, holder in held if not manager.is_nominated(holder))
        held = [(name, holder) for name, holder in held if manager.is_nominated(holder)]
        names = sorted(going_on)


def _fair_round(
    state: EngineState, entries: list[_Entry], now: float, result: SchedulingResult,
    held: list[tuple[str, str]], record: RecordAdmission,
) -> set[str]:  # fmt: skip
    """One round in fair-sharing order: each next candidate wins its cohort tree's tournament
    against the quota as the earlier ones left it (Kueue's fairSharingIterator)."""
    going_on: set[str] = set()
    nominated = [e for e in entries if state.manager.is_nominated(e.order[2])]
    # preemptors whose victims are gone first, as in the classical order (the quota they freed is
    # theirs), then the others; each group in tournament order
    for ranked, group in (
        (True, nominated),
        (False, [e for e in entries if not state.manager.is_nominated(e.order[2])]),
    ):
        left = {e.cluster_queue: e for e in group}
        while left:
            contenders = {name: Contender(name, e.assignment.usage, e.order) for name, e in left.items()}
            entry = left.pop(fair_winner(state.cache.book, contenders))
            if _process(state, entry, now, result, held, record, ranked):
                going_on.add(entry.cluster_queue)
    return going_on


def pending_reason(state: EngineState, key: str) -> PendingInfo | None:
    """The current reason for one pending workload, without evaluating anything."""
    cache, manager = state.cache, state.manager
    if key not in cache.workloads or key in cache.admitted:
        return None
    blocked = manager.blocked_reason(key)
    if blocked is not None:
        return blocked
    name = manager.cluster_queue_of(key)
    queue = manager.queue(name) if name is not None else None
    if name is None or queue is None:
        return None
    inactive = cache.inactive_reason(name)
    if inactive is not None:
        return inactive
    if cache.compiled(name).spec.queueing_strategy == "StrictFIFO":
        head = queue.strict_head(state.now, state.head_of_line_holding_time)
        if head is not None and head[0][2] != key:
            message = f"waiting behind {head[0][2]} at the head of StrictFIFO ClusterQueue {name}"
            return PendingInfo("BlockedByHead", message, name)
    cls = queue.classes[queue.shape_of[key]]
    other = manager.holder(key, cache.scope(name), cls.members[key], None)
    if other is not None:
        message = f"quota is held for {other}, which is waiting for its preemption victims to be evicted"
        return PendingInfo("WaitingForPreemption", message, name)
    if cls.parked_generation is not None and cls.info is not None:
        return cls.info
    return PendingInfo("Queued", f"queued in ClusterQueue {name}, not evaluated yet", name)
