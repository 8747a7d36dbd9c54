"""Preemption: which admitted workloads to evict so that a pending one can be admitted.

Candidates come from the preemptor's ClusterQueue (``withinClusterQueue``) and from cohort
members that borrow (``reclaimWithinCohort``, or ``borrowWithinCohort`` when the preemptor must
borrow itself). They are ordered as Kueue orders them (other queues first, then lower priority,
then most recently admitted), removed one by one in a what-if until the preemptor fits, and
the set is then pruned to the smallest sufficient one. Nothing is chosen when even evicting
every candidate would not make the preemptor fit. State is restored before returning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from codeflare.scheduling.assignment import Assignment, AssignmentContext
from codeflare.scheduling.quota import CompiledQueue, FlavorResource
from codeflare.scheduling.results import PreemptionReason


@dataclass
class AdmittedWorkload:
    """What preemption needs to know about an admitted (charged) workload."""

    key: str
    priority: int
    creation_time: float
    admitted_at: float
    cluster_queue: str
    usage: dict[FlavorResource, int]
    evicting: str | None = None


@dataclass
class PreemptionPlan:
    """Victims with reasons; ``waiting`` counts evictions already under way that suffice."""

    victims: list[tuple[AdmittedWorkload, PreemptionReason]] = field(default_factory=list)
    waiting: int = 0

    @property
    def possible(self) -> bool:
        return bool(self.victims) or self.waiting > 0


def _protected_in_queue(policy: str, victim: AdmittedWorkload, priority: int, created: float) -> bool:
    if policy == "LowerPriority":
        return not victim.priority < priority
    if policy == "LowerOrNewerEqualPriority":
        newer_equal = victim.priority == priority and victim.creation_time > created
        return not (victim.priority < priority or newer_equal)
    return True


class _WhatIf:
    """Removes workloads from the quota book temporarily and checks whether the preemptor fits."""

    def __init__(self, ctx: AssignmentContext, compiled: CompiledQueue, assignment: Assignment) -> None:
        self.ctx, self.compiled, self.assignment = ctx, compiled, assignment
        self.removed: list[AdmittedWorkload] = []

    def remove(self, workload: AdmittedWorkload) -> None:
        self.ctx.book.charge(workload.cluster_queue, workload.usage, -1, record=False)
        self.removed.append(workload)

    def restore(self, workload: AdmittedWorkload) -> None:
        self.ctx.book.charge(workload.cluster_queue, workload.usage, 1, record=False)
        self.removed.remove(workload)

    def restore_all(self) -> None:
        for workload in list(self.removed):
            self.restore(workload)

    def fits(self, allow_borrowing: bool) -> bool:
        book, name = self.ctx.book, self.compiled.spec.name
        own = book.usage.get(name, {})
        for fr, value in self.assignment.usage.items():
            if value > book.available(name, fr):
                return False
            if not allow_borrowing and own.get(fr, 0) + value > self.compiled.nominal[fr]:
                return False
            if self.ctx.capacity_shortfall(name, fr[0], fr[1], value, self.assignment.workload) is not None:
                return False
        return True


def _minimal(
    what_if: _WhatIf, candidates: list[AdmittedWorkload], needed: set[FlavorResource], allow_borrowing: bool
) -> list[AdmittedWorkload]:
    book, own_queue = what_if.ctx.book, what_if.compiled.spec.name
    taken: list[AdmittedWorkload] = []
    found = False
    for candidate in candidates:
        if candidate.cluster_queue != own_queue and not any(
            book.borrowing(candidate.cluster_queue, fr) for fr in needed if fr in candidate.usage
        ):
            continue
        what_if.remove(candidate)
        taken.append(candidate)
        if what_if.fits(allow_borrowing):
            found = True
            break
    if not found:
        for candidate in taken:
            what_if.restore(candidate)
        return []
    keep = [True] * len(taken)
    for index in range(len(taken) - 2, -1, -1):
        what_if.restore(taken[index])
        if what_if.fits(allow_borrowing):
            keep[index] = False
        else:
            what_if.remove(taken[index])
    chosen = [c for c, kept in zip(taken, keep, strict=True) if kept]
    for candidate in chosen:
        what_if.restore(candidate)
    return chosen


def plan_preemption(
    ctx: AssignmentContext,
    compiled: CompiledQueue,
    assignment: Assignment,
    priority: int,
    creation_time: float,
    admitted: Iterable[AdmittedWorkload],
) -> PreemptionPlan:
    """Choose victims among ``admitted`` (workloads of the preemptor's queue and cohort)."""
    spec, book = compiled.spec, ctx.book
    name = spec.name
    needed = {fr for fr, value in assignment.usage.items() if value > book.available(name, fr)}
    what_if = _WhatIf(ctx, compiled, assignment)
    evicting, own, others = [], [], []
    reasons: dict[str, PreemptionReason] = {}
    policy = spec.preemption
    for workload in admitted:
        if not any(fr in workload.usage for fr in needed):
            continue
        if workload.evicting is not None:
            evicting.append(workload)
        elif workload.cluster_queue == name:
            if not _protected_in_queue(policy.within_cluster_queue, workload, priority, creation_time):
                own.append(workload)
                reasons[workload.key] = "InClusterQueue"
        elif assignment.borrows:
            bwc = policy.borrow_within_cohort
            threshold = bwc.max_priority_threshold
            if (
                bwc.policy == "LowerPriority"
                and workload.priority < priority
                and (threshold is None or workload.priority <= threshold)
            ):
                others.append(workload)
                reasons[workload.key] = "InCohortReclaimWhileBorrowing"
        elif policy.reclaim_within_cohort == "Any" or (
            policy.reclaim_within_cohort == "LowerPriority" and workload.priority < priority
        ):
            others.append(workload)
            reasons[workload.key] = "InCohortReclamation"
    for workload in evicting:
        what_if.remove(workload)
    try:
        if evicting and what_if.fits(allow_borrowing=True):
            return PreemptionPlan(waiting=len(evicting))

        def order(w: AdmittedWorkload) -> tuple[int, int, float, str]:
            return (0 if w.cluster_queue != name else 1, w.priority, -w.admitted_at, w.key)

        own.sort(key=order)
        chosen: list[AdmittedWorkload] = []
        if others and not assignment.borrows:
            chosen = _minimal(what_if, sorted(others + own, key=order), needed, allow_borrowing=False)
            if not chosen:
                chosen = _minimal(what_if, own, needed, allow_borrowing=True)
        else:
            chosen = _minimal(what_if, sorted(others + own, key=order), needed, allow_borrowing=True)
        return PreemptionPlan([(w, reasons[w.key]) for w in chosen], waiting=len(evicting) if chosen else 0)
    finally:
        what_if.restore_all()
