"""What the admission engine keeps between calls, split by role as Kueue splits it.

:class:`EngineState` is the configuration (backoff, head-of-line holding, capacity check, fair
sharing), the
:class:`~codeflare.scheduling.cache.SchedulingCache` (quota book, admitted workloads, flavors,
nodes) and the :class:`~codeflare.scheduling.manager.QueueManager` (routing, pending heaps,
backoff timers). :class:`~codeflare.scheduling.engine.AdmissionEngine` feeds inputs into them;
:mod:`~codeflare.scheduling.cycle` decides over them through their public methods. No behaviour
here; no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codeflare.scheduling.cache import SchedulingCache
from codeflare.scheduling.manager import QueueManager
from codeflare.scheduling.model import FairSharing

__all__ = ["EngineState"]


@dataclass(eq=False)
class EngineState:
    """Configuration, cache and queue manager of one engine; ``now`` is the last cycle's time."""

    backoff_time: float
    head_of_line_holding_time: float
    capacity_check: bool
    cache: SchedulingCache = field(init=False)
    manager: QueueManager = field(default_factory=QueueManager)
    now: float = 0.0
    fair_sharing: FairSharing = field(default_factory=FairSharing)
    # the cycle words its quota, preemption and hold reasons (off: empty messages, the same
    # decisions, kinds, shortfalls and times; a forecast's simulation reads no words)
    explain: bool = True

    def __post_init__(self) -> None:
        self.cache = SchedulingCache(self.capacity_check)
