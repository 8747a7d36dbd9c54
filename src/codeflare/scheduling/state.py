"""What the admission engine keeps between calls: the books the engine edits and the cycle reads.

Kueue splits this state by role (a cache of quota and admitted workloads, a queue manager of
pending ones); here it is one plain record, owned by :class:`~codeflare.scheduling.engine.
AdmissionEngine`, which keeps it up to date as inputs arrive, and handed to
:mod:`~codeflare.scheduling.cycle`, which decides over it. Neither imports the other: both
import this module. No behaviour beyond building the assignment context; no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codeflare.scheduling.assignment import AssignmentContext, Shape
from codeflare.scheduling.capacity import NodeCapacity
from codeflare.scheduling.model import ClusterQueue, LocalQueue, ResourceFlavor, Workload
from codeflare.scheduling.preemption import AdmittedWorkload
from codeflare.scheduling.queues import OrderKey, PendingQueue
from codeflare.scheduling.quota import FlavorResource, QuotaBook
from codeflare.scheduling.results import Eviction, PendingInfo

__all__ = ["EngineState"]


@dataclass(eq=False)
class EngineState:
    """The engine's books; fields are edited by the engine and read (and charged) by the cycle."""

    backoff_time: float
    head_of_line_holding_time: float
    capacity_check: bool
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    book: QuotaBook = field(default_factory=QuotaBook)
    nodes: NodeCapacity = field(default_factory=NodeCapacity)
    ctx: AssignmentContext = field(init=False)
    cqs: dict[str, ClusterQueue] = field(default_factory=dict)
    queues: dict[str, PendingQueue] = field(default_factory=dict)  # per ClusterQueue
    lqs: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> labels
    workloads: dict[str, Workload] = field(default_factory=dict)
    shapes: dict[str, Shape] = field(default_factory=dict)
    admitted: dict[str, AdmittedWorkload] = field(default_factory=dict)
    admitted_by_cq: dict[str, dict[str, AdmittedWorkload]] = field(default_factory=dict)
    blocked: dict[str, PendingInfo] = field(default_factory=dict)  # pending outside any queue
    queued_in: dict[str, str] = field(default_factory=dict)  # workload -> ClusterQueue
    by_lq: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)  # blocked since the last cycle (reasons to report)
    dirty: set[str] = field(default_factory=set)  # ClusterQueues to look at in the next cycle
    timers: list[tuple[float, str]] = field(default_factory=list)  # heap of (retry at, ClusterQueue)
    to_evict: dict[str, Eviction] = field(default_factory=dict)
    # preemptors waiting for their victims: key -> (scope, order, flavor-resources it needs)
    nominated: dict[str, tuple[str, OrderKey, set[FlavorResource]]] = field(default_factory=dict)
    now: float = 0.0

    def __post_init__(self) -> None:
        self.ctx = AssignmentContext(self.book, self.flavors, self.nodes if self.capacity_check else None)
