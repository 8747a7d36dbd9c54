"""Fair sharing: dominant resource shares, the admission tournament, and fair preemption.

Kueue's fair sharing (KEP 1714, ``pkg/cache/scheduler/fair_sharing.go``,
``pkg/scheduler/fair_sharing_iterator.go``, ``pkg/scheduler/preemption/fairsharing``, v0.19):
a node's share is its usage above its subtree quota per resource, over what its parent could
lend of that resource, the largest ratio (per mille) divided by the node's weight. When fair
sharing is on, the queues of a cohort tree take turns by a tournament: at every cohort the child
whose share after admitting its candidate is lowest wins (a child not borrowing for the flavors
it asks goes first, then priority, then age). Preemption across the tree takes from the queue
whose share is highest, a workload at a time, while the preemptor's share after admission stays
below the target's (``LessThanOrEqualToFinalShare``, then ``LessThanInitialShare``). Everything
here reads the quota book and edits it only for what-ifs that it undoes; no state of its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from codeflare.scheduling.assignment import AssignmentContext
from codeflare.scheduling.preemption import (
    FAIR_SHARING,
    RECLAIM_WITHOUT_BORROWING,
    WITHIN_CQ,
    AdmittedWorkload,
    PreemptionPlan,
    Preemptor,
    _fill_back,
    _satisfies,
    _WhatIf,
    plan_reasons,
    victim_of,
)
from codeflare.scheduling.quota import CohortNode, FlavorResource, QuotaBook

__all__ = ["Share", "cohort_share", "fair_preemption", "fair_winner", "queue_share", "weighted_shares"]

MAX_SHARE = 2**63 - 1  # what Kueue reports for a zero weight that borrows
STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")


@dataclass(frozen=True)
class Share:
    """A node's dominant resource share (Kueue's DRS)."""

    weight: float = 1.0
    ratio: float = 0.0  # borrowed per mille of what the parent could lend, unweighted
    resource: str = ""
    borrowed: frozenset[FlavorResource] = field(default_factory=frozenset)

    @property
    def borrowing(self) -> bool:
        return bool(self.borrowed)

    def key(self) -> tuple[int, float]:
        """Comparable: lower is preferred for admission, higher for preemption (CompareDRS)."""
        if self.weight == 0 and self.ratio != 0:
            return (1, self.ratio)
        return (0, 0.0 if self.ratio == 0 else self.ratio / self.weight)

    def weighted_share(self) -> int:
        """``status.fairSharing.weightedShare``: rounded up; the largest int64 for weight 0."""
        zero_weight, value = self.key()
        return MAX_SHARE if zero_weight else math.ceil(value)


NEGATIVE = Share(ratio=-1.0)


def _share(
    subtree: dict[FlavorResource, int], usage: dict[FlavorResource, int], parent: CohortNode | None,
    weight: float,
) -> Share:  # fmt: skip
    if parent is None:
        return Share(weight)
    borrowing: dict[str, int] = {}
    borrowed: list[FlavorResource] = []
    for fr, quota in subtree.items():
        amount = usage.get(fr, 0) - quota
        if amount > 0:
            borrowing[fr[1]] = borrowing.get(fr[1], 0) + amount
            borrowed.append(fr)
    if not borrowing:
        return Share(weight)
    root = parent.root or parent
    lendable: dict[str, int] = {}
    for fr in root.subtree:
        lendable[fr[1]] = lendable.get(fr[1], 0) + parent.potential(fr)
    ratio, dominant = 0.0, ""
    for resource in sorted(borrowing):
        if lendable.get(resource, 0) > 0:
            this = borrowing[resource] * 1000.0 / lendable[resource]
            if this > ratio:
                ratio, dominant = this, resource
    return Share(weight, ratio, dominant, frozenset(borrowed))


def queue_share(book: QuotaBook, name: str) -> Share:
    """The share of a ClusterQueue as its usage stands in the book."""
    compiled = book.queues[name]
    return _share(compiled.nominal, book.usage.get(name, {}), compiled.parent, compiled.spec.fair_weight)


def cohort_share(node: CohortNode) -> Share:
    """The share of a cohort as its usage stands."""
    return _share(node.subtree, node.usage, node.parent, node.fair_weight)


def weighted_shares(book: QuotaBook) -> tuple[dict[str, int], dict[str, int]]:
    """``weightedShare`` of every ClusterQueue and of every Cohort object outside a cycle."""
    queues = {name: queue_share(book, name).weighted_share() for name in sorted(book.queues)}
    cohorts = {
        name: cohort_share(node).weighted_share()
        for name, node in sorted(book.cohorts.items())
        if node.spec is not None and node.cycle is None
    }
    return queues, cohorts


# -- admission order -------------------------------------------------------------------------
@dataclass(frozen=True)
class Contender:
    """A queue's candidate of this round: what it would use, and its queue order key."""

    cluster_queue: str
    usage: dict[FlavorResource, int]
    order: tuple[int, float, str]


def fair_winner(book: QuotaBook, contenders: dict[str, Contender]) -> str:
    """The queue whose candidate goes next: the first in queue order when its queue has no
    cohort, else the winner of its tree's tournament."""
    first = min(contenders.values(), key=lambda c: c.order)
    parent = book.queues[first.cluster_queue].parent
    if parent is None:
        return first.cluster_queue
    root = parent.root or parent
    shares: dict[tuple[str, str], Share] = {}
    for name in root.members:
        contender = contenders.get(name)
        if contender is None:
            continue
        book.charge(name, contender.usage, 1, record=False)
        share = queue_share(book, name)
        node: CohortNode | None = book.queues[name].parent
        while node is not None:
            shares[(node.name, name)] = share
            share = cohort_share(node)
            node = node.parent
        book.charge(name, contender.usage, -1, record=False)
    winner = _tournament(book, root, contenders, shares)
    assert winner is not None
    return winner.cluster_queue


def _tournament(
    book: QuotaBook,
    cohort: CohortNode,
    contenders: dict[str, Contender],
    shares: dict[tuple[str, str], Share],
) -> Contender | None:
    candidates = [
        c for c in (_tournament(book, book.cohorts[n], contenders, shares) for n in cohort.child_cohorts) if c
    ]
    candidates.extend(contenders[q] for q in cohort.child_queues if q in contenders)
    if not candidates:
        return None

    def rank(c: Contender) -> tuple[bool, tuple[int, float], tuple[int, float, str]]:
        share = shares[(cohort.name, c.cluster_queue)]
        asked = {fr for fr, v in c.usage.items() if v > 0}
        return (not share.borrowed.isdisjoint(asked), share.key(), c.order)

    return min(candidates, key=rank)


# -- preemption ------------------------------------------------------------------------------
def _ordering(name: str) -> object:
    def key(w: AdmittedWorkload) -> tuple[bool, bool, int, float, str]:
        return (w.evicting is None, w.cluster_queue == name, w.priority, -w.admitted_at, w.key)

    return key


class _Targets:
    """Kueue's TargetClusterQueueOrdering: the queue to take from next, by highest share."""

    def __init__(self, book: QuotaBook, preemptor: str, candidates: Iterable[AdmittedWorkload]) -> None:
        self.book, self.preemptor = book, preemptor
        parent = book.queues[preemptor].parent
        self.ancestors = {n.name for n in parent.path()} if parent is not None else set()
        self.by_queue: dict[str, list[AdmittedWorkload]] = {}
        for w in candidates:
            self.by_queue.setdefault(w.cluster_queue, []).append(w)
        self.pruned_queues: set[str] = set()
        self.pruned_cohorts: set[str] = set()

    def has(self, queue: str) -> bool:
        return bool(self.by_queue.get(queue))

    def pop(self, queue: str) -> AdmittedWorkload:
        return self.by_queue[queue].pop(0)

    def drop(self, queue: str) -> None:
        self.pruned_queues.add(queue)

    def __iter__(self) -> Iterator[str]:
        parent = self.book.queues[self.preemptor].parent
        if parent is None:
            while self.preemptor not in self.pruned_queues and self.has(self.preemptor):
                yield self.preemptor
            return
        root = parent.root or parent
        while root.name not in self.pruned_cohorts:
            target = self._next(root)
            if target is not None:
                yield target

    def _next(self, cohort: CohortNode) -> str | None:
        best_queue, best_queue_share = None, NEGATIVE
        for queue in cohort.child_queues:
            if queue in self.pruned_queues:
                continue
            share = queue_share(self.book, queue)
            if (not share.borrowing and queue != self.preemptor) or not self.has(queue):
                self.pruned_queues.add(queue)
            elif share.key() > best_queue_share.key() or (
                best_queue is not None
                and share.key() == best_queue_share.key()
                and _ordering(self.preemptor)(self.by_queue[queue][0])  # type: ignore[operator]
                < _ordering(self.preemptor)(self.by_queue[best_queue][0])  # type: ignore[operator]
            ):
                best_queue, best_queue_share = queue, share
        best_cohort, best_cohort_share = None, NEGATIVE
        for name in cohort.child_cohorts:
            if name in self.pruned_cohorts:
                continue
            share = cohort_share(self.book.cohorts[name])
            if not share.borrowing and name not in self.ancestors:
                self.pruned_cohorts.add(name)
            elif share.key() >= best_cohort_share.key():
                best_cohort, best_cohort_share = name, share
        if best_queue is None and best_cohort is None:
            self.pruned_cohorts.add(cohort.name)
            return None
        if best_cohort is not None and best_cohort_share.key() >= best_queue_share.key():
            return self._next(self.book.cohorts[best_cohort])
        return best_queue

    def almost_lca_share(self, queue: str) -> tuple[Share, Share]:
        """Shares of the preemptor's and the target's nodes just below their common ancestor."""
        target_node = self.book.queues[queue].parent
        lca = next(n for n in target_node.path() if n.name in self.ancestors) if target_node else None
        return self._below(self.preemptor, lca), self._below(queue, lca)

    def _below(self, queue: str, lca: CohortNode | None) -> Share:
        share = queue_share(self.book, queue)
        node = self.book.queues[queue].parent
        while node is not None and node is not lca:
            share = cohort_share(node)
            node = node.parent
        return share


def _candidates(
    book: QuotaBook, preemptor: Preemptor, admitted: Iterable[AdmittedWorkload]
) -> list[AdmittedWorkload]:
    compiled = preemptor.compiled
    name, policy = compiled.spec.name, compiled.spec.preemption
    borrowing: dict[str, bool] = {}
    out = []
    for w in admitted:
        if preemptor.needed.isdisjoint(w.usage):
            continue
        rule: str
        if w.cluster_queue == name:
            rule = policy.within_cluster_queue
        else:
            rule = policy.reclaim_within_cohort
            if compiled.parent is None:
                continue
            over = borrowing.get(w.cluster_queue)
            if over is None:
                over = borrowing[w.cluster_queue] = any(
                    book.borrowing(w.cluster_queue, fr) for fr in preemptor.needed
                )
            if not over:
                continue
        if rule != "Never" and _satisfies(rule, w, preemptor.priority, preemptor.creation_time):
            out.append(w)
    out.sort(key=_ordering(name))  # type: ignore[arg-type]
    return out


class _FairWhatIf(_WhatIf):
    """The what-if with the preemptor's own usage added, as Kueue's shares include it."""

    def fits_fair(self) -> bool:
        compiled = self.preemptor.compiled
        self.ctx.book.charge(compiled.spec.name, self.preemptor.usage, -1, record=False)
        try:
            return self.fits(True)
        finally:
            self.ctx.book.charge(compiled.spec.name, self.preemptor.usage, 1, record=False)


def _passes(strategy: str, preemptor_new: Share, target_old: Share, target_new: Share) -> bool:
    if strategy == "LessThanOrEqualToFinalShare":
        return preemptor_new.key() <= target_new.key()
    return preemptor_new.key() < target_old.key()


def _first_strategy(
    what_if: _FairWhatIf, targets_order: _Targets, strategy: str, within_nominal: bool,
    targets: list[tuple[AdmittedWorkload, int]],
) -> tuple[bool, list[AdmittedWorkload]]:  # fmt: skip
    retry: list[AdmittedWorkload] = []
    book = what_if.ctx.book
    for queue in targets_order:
        if queue == targets_order.preemptor or within_nominal:
            w = targets_order.pop(queue)
            what_if.remove(w)
            targets.append((w, WITHIN_CQ if queue == targets_order.preemptor else RECLAIM_WITHOUT_BORROWING))
            if what_if.fits_fair():
                return True, retry
            continue
        preemptor_new, target_old = targets_order.almost_lca_share(queue)
        if preemptor_new.key()[0] == 1 and target_old.key()[0] == 0:
            while targets_order.has(queue):
                retry.append(targets_order.pop(queue))
            continue
        while targets_order.has(queue):
            w = targets_order.pop(queue)
            book.charge(w.cluster_queue, w.usage, -1, record=False)
            target_new = targets_order.almost_lca_share(queue)[1]
            book.charge(w.cluster_queue, w.usage, 1, record=False)
            if _passes(strategy, preemptor_new, target_old, target_new):
                what_if.remove(w)
                targets.append((w, FAIR_SHARING))
                if what_if.fits_fair():
                    return True, retry
                break
            retry.append(w)
    return False, retry


def _second_strategy(
    what_if: _FairWhatIf, retry: list[AdmittedWorkload], targets: list[tuple[AdmittedWorkload, int]]
) -> bool:
    order = _Targets(what_if.ctx.book, what_if.preemptor.compiled.spec.name, retry)
    for queue in order:
        preemptor_new, target_old = order.almost_lca_share(queue)
        w = order.pop(queue)
        if _passes("LessThanInitialShare", preemptor_new, target_old, target_old):
            what_if.remove(w)
            targets.append((w, FAIR_SHARING))
            if what_if.fits_fair():
                return True
        order.drop(queue)
    return False


def fair_preemption(
    ctx: AssignmentContext, preemptor: Preemptor, admitted: Iterable[AdmittedWorkload],
    strategies: tuple[str, ...] = STRATEGIES,
) -> PreemptionPlan:  # fmt: skip
    """Kueue's fairPreemptions: victims chosen by share across the preemptor's cohort tree."""
    book = ctx.book
    candidates = _candidates(book, preemptor, admitted)
    if ctx.afs is not None:
        candidates = ctx.afs.reorder_victims(candidates, victim_of)
    if not candidates:
        return PreemptionPlan()
    name = preemptor.compiled.spec.name
    what_if = _FairWhatIf(ctx, preemptor)
    targets: list[tuple[AdmittedWorkload, int]] = []
    book.charge(name, preemptor.usage, 1, record=False)
    try:
        own = book.usage.get(name, {})
        nominal = preemptor.compiled.nominal
        within_nominal = all(own.get(fr, 0) <= nominal.get(fr, 0) for fr in preemptor.needed)
        order = _Targets(book, name, candidates)
        fits, retry = _first_strategy(what_if, order, (strategies or STRATEGIES)[0], within_nominal, targets)
        if not fits and len(strategies or STRATEGIES) > 1:
            fits = _second_strategy(what_if, retry, targets)
    finally:
        book.charge(name, preemptor.usage, -1, record=False)
    try:
        if not fits:
            return PreemptionPlan()
        return plan_reasons(_fill_back(what_if, targets, True))
    finally:
        what_if.restore_all()
