"""Pending workloads of one ClusterQueue, ordered by priority then creation time.

Workloads of identical shape (same pod sets and requests) share a ``ShapeClass`` with its own
heap: they fit or fail together, so only each class's head is evaluated and a failing class is
parked (backoff) until its scope frees quota or the backoff ends. This keeps the cost of a
decision proportional to queues and shapes, not to pending workloads. In a ClusterQueue ranked by
admission fair sharing a class holds one shape of one LocalQueue, and classes are tried by their
LocalQueue's recent usage first (:mod:`afs`). No quota logic here.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from dataclasses import dataclass, field

from codeflare.scheduling.afs import LocalQueueKey, UsageLedger
from codeflare.scheduling.assignment import Assignment, Regrade, Shape
from codeflare.scheduling.results import PendingInfo

OrderKey = tuple[int, float, str]
ClassKey = Hashable  # a shape, or (shape, LocalQueue) in a ranked queue


def order_key(priority: int, creation_time: float, key: str) -> OrderKey:
    """Queue order: higher priority first, then older, then by key (determinism)."""
    return (-priority, creation_time, key)


@dataclass
class ShapeClass:
    """Pending workloads of one shape in one queue; parked while known not to fit (evaluated
    again when never failed, woken by a freed-quota generation other than the parked one, or
    its backoff is over: the cycle tests this inline)."""

    shape: Shape
    heap: list[OrderKey] = field(default_factory=list)
    members: dict[str, OrderKey] = field(default_factory=dict)
    parked_generation: int | None = None
    retry_at: float = 0.0
    info: PendingInfo | None = None
    local_queue: LocalQueueKey | None = None  # in a queue ranked by admission fair sharing
    # the cycle's last evaluation: the assignment that fitted, under a configuration generation,
    # or what decided that the head could neither be admitted nor preempt for
    fitted: tuple[int, Assignment] | None = None
    regrade: Regrade | None = None

    def push(self, key: str, order: OrderKey) -> None:
        self.members[key] = order
        heapq.heappush(self.heap, order)
        self.parked_generation = None

    def discard(self, key: str) -> None:
        self.members.pop(key, None)

    def head(self) -> OrderKey | None:
        heap = self.heap
        while heap and self.members.get(heap[0][2]) != heap[0]:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def park(self, generation: int, retry_at: float, info: PendingInfo) -> None:
        self.parked_generation, self.retry_at, self.info = generation, retry_at, info


@dataclass
class PendingQueue:
    """All pending workloads of one ClusterQueue, grouped in shape classes."""

    name: str
    ranking: UsageLedger | None = None  # admission fair sharing: LocalQueues by recent usage first
    classes: dict[ClassKey, ShapeClass] = field(default_factory=dict)
    shape_of: dict[str, ClassKey] = field(default_factory=dict)  # workload -> its class's key
    held_head: str | None = None
    held_since: float = 0.0
    # heads() as last computed, until a workload is added or removed: a queue that parks a class
    # goes on to its next class in the next round of the cycle, with the same heads
    _heads: list[tuple[OrderKey, ShapeClass]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def add(self, key: str, shape: Shape, order: OrderKey, local_queue: LocalQueueKey | None = None) -> None:
        self.discard(key)
        self._heads = None
        class_key: ClassKey = shape
        if self.ranking is None:
            local_queue = None
        else:
            class_key = (shape, local_queue)
        cls = self.classes.get(class_key)
        if cls is None:
            cls = self.classes[class_key] = ShapeClass(shape, local_queue=local_queue)
        cls.push(key, order)
        self.shape_of[key] = class_key

    def discard(self, key: str) -> None:
        shape = self.shape_of.pop(key, None)
        if shape is None:
            return
        self._heads = None
        cls = self.classes[shape]
        cls.discard(key)
        if not cls.members:
            del self.classes[shape]
        if self.held_head == key:
            self.held_head = None

    def __len__(self) -> int:
        return len(self.shape_of)

    def ordered(self) -> list[str]:
        """Every pending workload in queue order (what the visibility API's positions count)."""
        if self.ranking is not None:
            rank = self.ranking.score
            ranked = sorted(
                (rank(c.local_queue), c.members[k]) for c in self.classes.values() for k in c.members
            )
            return [order[2] for _, order in ranked]
        return [order[2] for order in sorted(c.members[k] for c in self.classes.values() for k in c.members)]

    def heads(self) -> list[tuple[OrderKey, ShapeClass]]:
        """Each class's head, best first (a shared list: not to be changed by the caller); in a
        ranked queue by its LocalQueue's recent usage first, computed afresh (usage moves)."""
        if self.ranking is not None:
            rank = self.ranking.score
            ranked = [(head, cls) for cls in self.classes.values() if (head := cls.head()) is not None]
            ranked.sort(key=lambda item: (rank(item[1].local_queue), item[0]))
            return ranked
        out = self._heads
        if out is None:
            out = []
            for cls in self.classes.values():
                head = cls.head()
                if head is not None:
                    out.append((head, cls))
            out.sort(key=lambda item: item[0])
            self._heads = out
        return out

    def strict_head(self, now: float, holding_time: float) -> tuple[OrderKey, ShapeClass] | None:
        """The head of a StrictFIFO queue; a held head keeps its place for ``holding_time``."""
        heads = self.heads()
        if not heads:
            return None
        if self.held_head is not None and now < self.held_since + holding_time:
            cls = self.classes[self.shape_of[self.held_head]]
            return cls.members[self.held_head], cls
        return heads[0]

    def hold(self, key: str, now: float) -> None:
        """Remember ``key`` as the blocked head (for headOfLineHoldingTime)."""
        if self.held_head != key:
            self.held_head, self.held_since = key, now
