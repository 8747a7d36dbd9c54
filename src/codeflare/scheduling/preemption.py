"""Preemption: which admitted workloads to evict so that a pending one can be admitted.

Kueue's classical preemption (``pkg/scheduler/preemption``, v0.14), over a whole cohort tree as
over a flat cohort (fair-sharing preemption is :mod:`fairsharing`'s). Candidates
use a flavor-resource that needs preemption and pass the policy: ``withinClusterQueue`` for the
preemptor's own queue; ``reclaimWithinCohort`` for cohort members over their nominal quota in
those resources. A cohort candidate is *reclaimable* regardless of borrowing when the preemptor
would be within its nominal quota after admission; otherwise it may only be taken while the
preemptor borrows if ``borrowWithinCohort`` allows it (priority threshold), else only when the
preemptor then fits without borrowing. Candidates are ordered: already evicting first, other
queues before our own, lower priority, most recently admitted; removed one by one in a what-if
until the preemptor fits (with borrowing allowed, then without, or the other way round as Kueue
decides), then the set is pruned back to the smallest sufficient one.

The what-if edits the live quota book and undoes every edit before returning (``_WhatIf``)
instead of copying a snapshot: a cycle may evaluate many preemptors over a book of thousands of
queues, and a copy per evaluation would cost more than the decision. Nothing is chosen when
even evicting every candidate would not make the preemptor fit.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from codeflare.scheduling.assignment import AssignmentContext
from codeflare.scheduling.quota import CohortNode, CompiledQueue, FlavorResource, QuotaBook
from codeflare.scheduling.results import PreemptionReason

WITHIN_CQ, HIERARCHICAL_RECLAIM, RECLAIM_WHILE_BORROWING, RECLAIM_WITHOUT_BORROWING, FAIR_SHARING = range(5)
_REASONS: dict[int, PreemptionReason] = {
    WITHIN_CQ: "InClusterQueue",
    HIERARCHICAL_RECLAIM: "InCohortReclamation",
    RECLAIM_WHILE_BORROWING: "InCohortReclaimWhileBorrowing",
    RECLAIM_WITHOUT_BORROWING: "InCohortReclamation",
    FAIR_SHARING: "InCohortFairSharing",
}


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
    local_queue: tuple[str, str] | None = None


@dataclass
class PreemptionPlan:
    """Victims with reasons; ``waiting`` counts evictions already under way that are needed."""

    victims: list[tuple[AdmittedWorkload, PreemptionReason]] = field(default_factory=list)
    waiting: int = 0

    @property
    def possible(self) -> bool:
        return bool(self.victims) or self.waiting > 0

    @property
    def only_other_queues(self) -> bool:
        """Every victim is in another queue of the cohort (Kueue's Reclaim, not Preempt)."""
        return all(reason != "InClusterQueue" for _, reason in self.victims)


@dataclass(frozen=True)
class Preemptor:
    """The workload to make room for: its queue, priority, creation time, usage to fit."""

    compiled: CompiledQueue
    priority: int
    creation_time: float
    usage: dict[FlavorResource, int]
    needed: frozenset[FlavorResource]
    workload: str | None = None


def _satisfies(policy: str, victim: AdmittedWorkload, priority: int, created: float) -> bool:
    if policy == "Any":
        return True
    if policy == "LowerPriority":
        return victim.priority < priority
    if policy == "LowerOrNewerEqualPriority":
        return victim.priority < priority or (victim.priority == priority and victim.creation_time > created)
    return False


class _WhatIf:
    """Removes workloads from the quota book temporarily and checks whether the preemptor fits."""

    def __init__(self, ctx: AssignmentContext, preemptor: Preemptor) -> None:
        self.ctx, self.preemptor = ctx, preemptor
        self.removed: list[AdmittedWorkload] = []
        self.lca: dict[str, CohortNode] = {}  # candidate -> the cohort it was found under

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
        book, compiled = self.ctx.book, self.preemptor.compiled
        name = compiled.spec.name
        own = book.usage.get(name, {})
        for fr, value in self.preemptor.usage.items():
            if not allow_borrowing and own.get(fr, 0) + value > compiled.nominal.get(fr, 0):
                return False
            if value > book.available(name, fr):
                return False
            if self.ctx.capacity_shortfall(name, fr[0], fr[1], value, self.preemptor.workload) is not None:
                return False
        return True

    def protected_on_path(self, workload: AdmittedWorkload) -> bool:
        """Whether a cohort between the candidate's queue and where it was found is within its
        quota now (Kueue's candidateIsValid: that subtree is not borrowing, so not reclaimed)."""
        compiled = self.ctx.book.queues.get(workload.cluster_queue)
        node = compiled.parent if compiled is not None else None
        lca = self.lca.get(workload.key)
        while node is not None and node is not lca:
            if _node_within(node, self.preemptor.needed):
                return True
            node = node.parent
        return False

    def within_nominal(self, queue: str) -> bool:
        """Whether ``queue`` uses no more than its nominal quota in every resource needing preemption."""
        compiled = self.ctx.book.queues.get(queue)
        usage = self.ctx.book.usage.get(queue, {})
        nominal = compiled.nominal if compiled is not None else {}
        return all(usage.get(fr, 0) <= nominal.get(fr, 0) for fr in self.preemptor.needed)


def _levels(book: QuotaBook, preemptor: Preemptor) -> dict[str, Level]:
    """The queues reclaim may take from (none when the queue has no cohort or never reclaims)."""
    compiled = preemptor.compiled
    if compiled.parent is None or compiled.spec.preemption.reclaim_within_cohort == "Never":
        return {}
    return _tree_levels(book, preemptor)


def _candidates(
    preemptor: Preemptor, admitted: Iterable[AdmittedWorkload], levels: dict[str, Level], what_if: _WhatIf
) -> tuple[list[tuple[AdmittedWorkload, int]], bool, bool]:
    """Ordered (candidate, variant) pairs, and whether any came from other queues / by hierarchy.
    ``admitted`` may hold any workloads: only the preemptor's queue's and those of ``levels``'
    queues can be candidates, and the order does not depend on the order given."""
    compiled = preemptor.compiled
    spec, name = compiled.spec, compiled.spec.name
    policy = spec.preemption
    bwc = policy.borrow_within_cohort
    forbidden = bwc.policy == "Never"
    pairs: list[tuple[AdmittedWorkload, int]] = []
    needed = preemptor.needed
    within = policy.within_cluster_queue
    for w in admitted:
        if needed.isdisjoint(w.usage):
            continue
        if w.cluster_queue == name:
            if within != "Never" and _satisfies(within, w, preemptor.priority, preemptor.creation_time):
                pairs.append((w, WITHIN_CQ))
            continue
        level = levels.get(w.cluster_queue)
        if level is None or not _satisfies(
            policy.reclaim_within_cohort, w, preemptor.priority, preemptor.creation_time
        ):
            continue
        advantage, what_if.lca[w.key] = level
        if advantage:
            pairs.append((w, HIERARCHICAL_RECLAIM))
        elif forbidden or _above_threshold(w.priority, preemptor.priority, bwc.max_priority_threshold):
            pairs.append((w, RECLAIM_WITHOUT_BORROWING))
        else:
            pairs.append((w, RECLAIM_WHILE_BORROWING))

    def order(pair: tuple[AdmittedWorkload, int]) -> tuple[bool, int, bool, int, float, str]:
        w, variant = pair
        kind = 0 if variant == HIERARCHICAL_RECLAIM else 2 if variant == WITHIN_CQ else 1
        return (w.evicting is None, kind, w.cluster_queue == name, w.priority, -w.admitted_at, w.key)

    pairs.sort(key=order)
    if what_if.ctx.afs is not None:
        pairs = what_if.ctx.afs.reorder_victims(pairs, _victim_of_pair)
    others = any(v != WITHIN_CQ for _, v in pairs)
    hierarchy = any(v == HIERARCHICAL_RECLAIM for _, v in pairs)
    return pairs, others, hierarchy


def victim_of(w: AdmittedWorkload) -> tuple[str, bool, tuple[str, str] | None]:
    """What admission fair sharing reorders candidates by: queue, eviction state, LocalQueue."""
    return (w.cluster_queue, w.evicting is not None, w.local_queue)


def _victim_of_pair(pair: tuple[AdmittedWorkload, int]) -> tuple[str, bool, tuple[str, str] | None]:
    return victim_of(pair[0])


def _tree_levels(book: QuotaBook, preemptor: Preemptor) -> dict[str, Level]:
    """Queues that may give reclaim candidates, each with whether the preemptor has Kueue's
    hierarchical advantage over it and their lowest common cohort (classical/hierarchical_preemption.go:
    walking up from the preemptor, each level's subtree is searched, skipping subtrees and queues
    within nominal quota; the advantage holds from the first level whose subtree quota fits)."""
    compiled, needed, requests = preemptor.compiled, preemptor.needed, preemptor.usage
    name = compiled.spec.name
    own = book.usage.get(name, {})
    advantage = _own_advantage(book, preemptor)
    remaining = {fr: max(0, v - _local(compiled.guaranteed, own, fr)) for fr, v in requests.items()}
    out: dict[str, Level] = {}
    previous: CohortNode | None = None
    node = compiled.parent
    while node is not None:
        _collect(book, node, previous, name, needed, (advantage, node), out)
        if node.parent is None:
            break  # the root: no level above to carry the advantage and remainder to
        fits = all(node.usage.get(fr, 0) + v <= node.subtree.get(fr, 0) for fr, v in remaining.items())
        remaining = {fr: max(0, v - _local(node.guaranteed, node.usage, fr)) for fr, v in remaining.items()}
        advantage = advantage or fits
        previous, node = node, node.parent
    return out


def _local(kept: dict[FlavorResource, int], usage: dict[FlavorResource, int], fr: FlavorResource) -> int:
    """Kueue's LocalAvailable: what a node keeps for itself (lending limit) and does not use."""
    return max(0, kept.get(fr, 0) - usage.get(fr, 0))


Level = tuple[bool, CohortNode]  # (hierarchical advantage, the cohort a candidate was found under)


def _collect(
    book: QuotaBook, cohort: CohortNode, skip: CohortNode | None, preemptor: str,
    needed: frozenset[FlavorResource], level: Level, out: dict[str, Level],
) -> None:  # fmt: skip
    for child_name in cohort.child_cohorts:
        child = book.cohorts[child_name]
        if child is not skip and not _node_within(child, needed):
            _collect(book, child, skip, preemptor, needed, level, out)
    for queue in cohort.child_queues:
        if queue != preemptor and not _queue_within(book, queue, needed):
            out[queue] = level


def _node_within(node: CohortNode, needed: frozenset[FlavorResource]) -> bool:
    return all(node.usage.get(fr, 0) <= node.subtree.get(fr, 0) for fr in needed)


def _queue_within(book: QuotaBook, queue: str, needed: frozenset[FlavorResource]) -> bool:
    compiled = book.queues.get(queue)
    usage = book.usage.get(queue, {})
    nominal = compiled.nominal if compiled is not None else {}
    return all(usage.get(fr, 0) <= nominal.get(fr, 0) for fr in needed)


def _above_threshold(candidate: int, incoming: int, threshold: int | None) -> bool:
    """Kueue's isAboveBorrowingThreshold: a candidate not of lower priority, or over the threshold."""
    if candidate >= incoming:
        return True
    return threshold is not None and candidate > threshold


def _attempt(
    what_if: _WhatIf, pairs: list[tuple[AdmittedWorkload, int]], borrowing: bool
) -> list[tuple[AdmittedWorkload, int]] | None:
    name = what_if.preemptor.compiled.spec.name
    targets: list[tuple[AdmittedWorkload, int]] = []
    try:
        for w, variant in pairs:
            if w.cluster_queue != name:
                if borrowing and variant == RECLAIM_WITHOUT_BORROWING:
                    continue
                if what_if.within_nominal(w.cluster_queue) or what_if.protected_on_path(w):
                    continue
            what_if.remove(w)
            targets.append((w, variant))
            if what_if.fits(borrowing):
                return _fill_back(what_if, targets, borrowing)
        return None
    finally:
        what_if.restore_all()


def _fill_back(
    what_if: _WhatIf, targets: list[tuple[AdmittedWorkload, int]], borrowing: bool
) -> list[tuple[AdmittedWorkload, int]]:
    kept = list(targets)
    for index in range(len(targets) - 2, -1, -1):
        w = targets[index][0]
        what_if.restore(w)
        if what_if.fits(borrowing):
            kept.remove(targets[index])
        else:
            what_if.remove(w)
    return kept


def plan_preemption(
    ctx: AssignmentContext,
    preemptor: Preemptor,
    admitted_by_queue: Mapping[str, Mapping[str, AdmittedWorkload]],
    exclude: Collection[str] = (),
) -> PreemptionPlan:
    """Choose victims among the admitted workloads of each queue (queue -> key -> workload),
    minus ``exclude``, reading only the queues that can give candidates: the preemptor's own
    when its policy preempts within it, and the queues of its cohort tree using more than their
    nominal quota (those reclaim may take from). When there are none, or they hold nothing, no
    workload is looked at (many plans of a busy cohort find nothing; this makes them cheap).
    The victims do not depend on which other queues the mapping holds, nor on its order: the
    same as when the scope's whole admitted list was searched (test_planner_determinism.py)."""
    compiled = preemptor.compiled
    name = compiled.spec.name
    within = compiled.spec.preemption.within_cluster_queue != "Never" and bool(admitted_by_queue.get(name))
    book = ctx.book
    # in a one-level cohort the advantage is only the preemptor's own (no level above to carry it)
    one_level = compiled.parent is not None and compiled.parent.parent is None
    if not within and one_level and _reclaim_barred(preemptor, _own_advantage(book, preemptor)):
        return PreemptionPlan()
    levels = _levels(book, preemptor)
    queues = [q for q in levels if admitted_by_queue.get(q)]
    if within:
        queues.append(name)
    if not queues or (not within and _reclaim_barred(preemptor, any(levels[q][0] for q in queues))):
        return PreemptionPlan()
    admitted = [w for q in queues for w in admitted_by_queue[q].values() if w.key not in exclude]
    return _plan(ctx, preemptor, admitted, levels)


def finds_no_candidates(
    book: QuotaBook, compiled: CompiledQueue, usage: Mapping[FlavorResource, int]
) -> bool:
    """Whether every classical plan for ``usage`` in ``compiled`` is empty whatever is admitted,
    as the quota book stands (the exits of :func:`plan_preemption` that read no workload and
    hold for every priority): no preemption within the queue, and no cohort to reclaim from, no
    reclaim, or a one-level cohort the queue may not preempt in while borrowing whose nominal
    quota the request does not fit in. Not for fair sharing, which plans otherwise."""
    policy = compiled.spec.preemption
    if policy.within_cluster_queue != "Never":
        return False
    parent = compiled.parent
    if parent is None or policy.reclaim_within_cohort == "Never":
        return True
    if parent.parent is not None or policy.borrow_within_cohort.policy != "Never":
        return False
    own = book.usage.get(compiled.spec.name, {})
    return any(own.get(fr, 0) + v > compiled.nominal.get(fr, 0) for fr, v in usage.items())


def _under_nominal(book: QuotaBook, preemptor: Preemptor) -> bool:
    """Whether the preemptor's queue uses less than its nominal quota of every resource it needs."""
    compiled = preemptor.compiled
    own = book.usage.get(compiled.spec.name, {})
    return all(own.get(fr, 0) < compiled.nominal.get(fr, 0) for fr in preemptor.needed)


def _own_advantage(book: QuotaBook, preemptor: Preemptor) -> bool:
    """Kueue's hierarchical advantage at the preemptor's own level: its request fits in its
    nominal quota."""
    compiled = preemptor.compiled
    own = book.usage.get(compiled.spec.name, {})
    return all(own.get(fr, 0) + v <= compiled.nominal.get(fr, 0) for fr, v in preemptor.usage.items())


def _reclaim_barred(preemptor: Preemptor, advantage: bool) -> bool:
    """Whether no candidate of other queues could be taken: the preemptor may not preempt while
    borrowing (borrowWithinCohort Never) and has no hierarchical ``advantage`` over any of them
    (so its request does not fit in its own nominal quota), so each would be a reclaim without
    borrowing: an attempt that borrows skips them, one that does not never fits (the preemptor's
    own usage stays over nominal). Checked before collecting candidates: many plans of a full
    cohort end here (they would find the same empty plan after sorting every candidate)."""
    return preemptor.compiled.spec.preemption.borrow_within_cohort.policy == "Never" and not advantage


def _plan(
    ctx: AssignmentContext,
    preemptor: Preemptor,
    admitted: Iterable[AdmittedWorkload],
    levels: dict[str, Level],
) -> PreemptionPlan:
    what_if = _WhatIf(ctx, preemptor)
    pairs, others, hierarchy = _candidates(preemptor, admitted, levels, what_if)
    if not pairs:
        return PreemptionPlan()
    compiled = preemptor.compiled
    forbidden = compiled.spec.preemption.borrow_within_cohort.policy == "Never"
    under_nominal = _under_nominal(ctx.book, preemptor)
    if not others or (forbidden and not under_nominal):
        attempts = [True]
    elif forbidden and not hierarchy:
        attempts = [False, True]
    else:
        attempts = [True, False]
    for borrowing in attempts:
        targets = _attempt(what_if, pairs, borrowing)
        if targets is not None:
            return plan_reasons(targets)
    return PreemptionPlan()


def plan_reasons(targets: list[tuple[AdmittedWorkload, int]]) -> PreemptionPlan:
    """The plan for chosen (workload, variant) targets: victims with reasons, and how many of
    them are being evicted already."""
    victims = [(w, _REASONS[v]) for w, v in targets if w.evicting is None]
    waiting = sum(1 for w, _ in targets if w.evicting is not None)
    return PreemptionPlan(victims, waiting)
