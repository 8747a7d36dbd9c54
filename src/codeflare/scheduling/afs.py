"""Admission fair sharing (Kueue's ``AdmissionFairSharing``): LocalQueues ranked by recent usage.

A ClusterQueue whose ``admissionScope.admissionMode`` is ``UsageBasedAdmissionFairSharing`` tries
its pending workloads LocalQueue by LocalQueue, the queue with the least weighted recent usage
first, before priority and age (Kueue's ``queueOrderingFunc``); preemption, among the candidates
of one such ClusterQueue from different LocalQueues, takes from the busiest LocalQueue first.

The :class:`UsageLedger` keeps, per LocalQueue, the consumed resources (an exponentially decayed
average of what its admitted workloads use, ``alpha = 1 - 0.5 ** (elapsed / halfLife)``, sampled
every ``usageSamplingInterval``) and what is admitted now. An admission decided by the engine adds
Kueue's entry penalty (``alpha(samplingInterval)`` times the workload's requests) to its queue's
consumed resources at once, so the next admission of the same cycle goes to another queue: Kueue
pushes the penalty at admission and moves it into the consumed resources when the workload is
admitted (the settlement of Kueue v0.16.6+; before, penalties were never settled). Values are
milli-units truncated toward zero, as Kueue's ``MulByFloat``. Scores are in base units (cores,
bytes) times the resource weight (missing: 1), over the LocalQueue's weight; a weight of 0 or less
ranks last (Kueue #13481). Pure: time is an argument; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.model import AdmissionFairSharing

__all__ = ["USAGE_BASED", "LocalQueueUsage", "UsageLedger", "alpha", "decayed"]

USAGE_BASED = "UsageBasedAdmissionFairSharing"

LocalQueueKey = tuple[str, str]
Resources = dict[str, int]  # resource name -> milli-units
Victim = tuple[str, bool, "LocalQueueKey | None"]  # ClusterQueue, being evicted, LocalQueue
_T = TypeVar("_T")


def alpha(elapsed: float, half_life: float) -> float:
    """The weight of the newest sample after ``elapsed`` seconds (0 when the half-life is 0)."""
    if half_life <= 0:
        return 0.0
    return 1.0 - 0.5 ** (max(0.0, elapsed) / half_life)


def _scaled(values: Mapping[str, int], factor: float) -> Resources:
    return {r: int(v * factor) for r, v in values.items()}


def _sum(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    out = dict(a)
    for r, v in b.items():
        out[r] = out.get(r, 0) + v
    return out


def decayed(
    old: Mapping[str, int], current: Mapping[str, int], elapsed: float, half_life: float
) -> Resources:
    """Consumed resources after ``elapsed`` seconds at ``current`` usage (Kueue's
    ``CalculateDecayedConsumed``); a half-life of 0 forgets everything."""
    if half_life <= 0:
        return {}
    weight = alpha(elapsed, half_life)
    return _sum(_scaled(old, 1.0 - weight), _scaled(current, weight))


@dataclass(frozen=True)
class LocalQueueUsage:
    """A LocalQueue's ``status.fairSharing.admissionFairSharingStatus``: consumed resources and
    when they were last updated (epoch seconds)."""

    consumed: dict[str, Quantity]
    last_update: float


@dataclass(eq=False)
class UsageLedger:
    """Consumed and admitted resources per LocalQueue, and which ClusterQueues rank by them."""

    config: AdmissionFairSharing
    consumed: dict[LocalQueueKey, Resources] = field(default_factory=dict)
    last_update: dict[LocalQueueKey, float] = field(default_factory=dict)
    admitted: dict[LocalQueueKey, Resources] = field(default_factory=dict)
    weights: dict[LocalQueueKey, float] = field(default_factory=dict)  # spec.fairSharing.weight, if given
    ranked_queues: set[str] = field(default_factory=set)  # ClusterQueues in usage-based mode

    # -- inputs ---------------------------------------------------------------------------------
    def set_weight(self, lq: LocalQueueKey, weight: float | None) -> None:
        if weight is None:
            self.weights.pop(lq, None)
        else:
            self.weights[lq] = weight

    def forget(self, lq: LocalQueueKey) -> None:
        """A LocalQueue was deleted: its history goes with it (Kueue drops both entries)."""
        self.consumed.pop(lq, None)
        self.last_update.pop(lq, None)
        self.weights.pop(lq, None)

    def seed(self, lq: LocalQueueKey, consumed: Mapping[str, Quantity], last_update: float) -> None:
        """Resume a LocalQueue's history from its status (Kueue v0.17.7+), unless known already."""
        if lq not in self.last_update:
            self.consumed[lq] = {r: q.milli for r, q in consumed.items()}
            self.last_update[lq] = last_update

    def charge(self, lq: LocalQueueKey, usage: Mapping[str, int], sign: int = 1) -> None:
        """An admitted workload of ``lq`` starts (1) or stops (-1) using ``usage``."""
        admitted = self.admitted.setdefault(lq, {})
        for r, v in usage.items():
            admitted[r] = admitted.get(r, 0) + sign * v
            if not admitted[r]:
                del admitted[r]
        if not admitted:
            del self.admitted[lq]

    def admit(self, lq: LocalQueueKey, requests: Mapping[str, int], now: float) -> None:
        """Settle an admission decided at ``now`` (after :meth:`charge`): the consumed resources
        decay to now and take the entry penalty."""
        cfg = self.config
        penalty = _scaled(requests, alpha(cfg.usage_sampling_interval_s, cfg.usage_half_life_s))
        old, since = self.consumed.get(lq, {}), self.last_update.get(lq, now)
        current = decayed(old, self.admitted.get(lq, {}), now - since, cfg.usage_half_life_s)
        self.consumed[lq] = _sum(current, penalty)
        self.last_update[lq] = now

    # -- sampling -------------------------------------------------------------------------------
    def sample(
        self, now: float, local_queues: Iterable[LocalQueueKey]
    ) -> dict[LocalQueueKey, LocalQueueUsage]:
        """Decay the consumed resources of every LocalQueue whose sampling interval has passed
        (or that was never sampled) to ``now``; returns them, for their status."""
        cfg = self.config
        out: dict[LocalQueueKey, LocalQueueUsage] = {}
        for lq in sorted(local_queues):
            since = self.last_update.get(lq)
            if since is None:  # first sight, no status to resume from: empty (Kueue v0.17.7+)
                self.consumed[lq] = {}
            elif now - since < cfg.usage_sampling_interval_s:
                continue
            else:
                admitted = self.admitted.get(lq, {})
                self.consumed[lq] = decayed(
                    self.consumed.get(lq, {}), admitted, now - since, cfg.usage_half_life_s
                )
            self.last_update[lq] = now
            out[lq] = self.usage(lq)
        return out

    def due(self, now: float, local_queues: Iterable[LocalQueueKey]) -> float | None:
        """When the next of these LocalQueues is to be sampled (now when one never was)."""
        interval = self.config.usage_sampling_interval_s
        times = [self.last_update.get(lq) for lq in local_queues]
        if not times:
            return None
        return min(now if t is None else t + interval for t in times)

    # -- queries --------------------------------------------------------------------------------
    def usage(self, lq: LocalQueueKey) -> LocalQueueUsage:
        consumed = self.consumed.get(lq, {})
        return LocalQueueUsage(
            {r: Quantity(v) for r, v in sorted(consumed.items())}, self.last_update.get(lq, 0.0)
        )

    def score(self, lq: LocalQueueKey | None) -> float:
        """Weighted recent usage of a LocalQueue (lower goes first); +inf for a weight <= 0."""
        if lq is None:
            return 0.0
        weights = self.config.resource_weights
        total = sum(weights.get(r, 1.0) * v / 1000 for r, v in sorted(self.consumed.get(lq, {}).items()))
        weight = self.weights.get(lq, 1.0)
        if weight <= 0:
            return math.inf
        return total / weight

    def reorder_victims(self, ordered: Sequence[_T], victim: Callable[[_T], Victim]) -> list[_T]:
        """Preemption candidates in Kueue's order without admission fair sharing, with those of
        each usage-based ClusterQueue in one eviction state re-ranked among their own places: the
        busiest LocalQueue's first, the rest as they were (Kueue's CandidatesOrdering compares
        usage only between two candidates of one such ClusterQueue and different LocalQueues;
        its comparator is then not transitive across ClusterQueues, so this keeps every other
        candidate where the classic order puts it)."""
        out = list(ordered)
        if not self.ranked_queues:
            return out
        places: dict[tuple[str, bool], list[int]] = {}
        for i, item in enumerate(ordered):
            cluster_queue, evicting, _ = victim(item)
            if cluster_queue in self.ranked_queues:
                places.setdefault((cluster_queue, evicting), []).append(i)
        for slots in places.values():
            if len(slots) > 1:
                ranked = sorted(slots, key=lambda i: (-self.score(victim(ordered[i])[2]), i))
                for slot, i in zip(slots, ranked, strict=True):
                    out[slot] = ordered[i]
        return out
