"""Expected arrivals: the recent submissions of each queue, priority and shape, as a steady stream.

The forecast given no later arrivals is the earliest start: later work that goes first (higher
priority, small workloads backfilling under BestEffortFIFO, a queue reclaiming its nominal quota in
a cohort) makes it early. Here the submissions seen in the last ``window`` are replayed as the
expected future, each class (namespace, LocalQueue, priority, shape) at its observed rate, evenly
spaced, so the engine itself decides what goes first (no rule of its own). Evenly spaced, not the
observed times shifted: the same history gives the same stream, so an estimate moves only when the
observed mix does, not at every refresh. Measured on ``benchmarks/forecast_bench``: the median error
/ wait of independent BestEffortFIFO queues 25.9% -> 11.5%, StrictFIFO unchanged. No I/O, no
clock reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from codeflare.scheduling.assignment import Shape
from codeflare.scheduling.engine import workload_shape
from codeflare.scheduling.forecast import Arrival
from codeflare.scheduling.model import Workload

__all__ = ["ArrivalHistory"]

WINDOW_S = 3600.0  # the rate of each class is its submissions over the last hour ...
HORIZON_S = 3600.0  # ... expected to go on for an hour (on the bench, 1 h and 6 h: same accuracy)
MAX_ARRIVALS = 1000  # expected arrivals per forecast at most (the soonest; bounds the refresh cost)
EXPECTED_MARK = "~expected-"  # in the names of expected arrivals ('~' is in no Kubernetes name)

_Class = tuple[str, str, int, Shape]


@dataclass(frozen=True)
class _Seen:
    created: float
    workload: Workload
    duration: float | None


class ArrivalHistory:
    """The workloads submitted in the last ``window`` seconds (each key counted once, at its
    creation time), and the stream of arrivals they lead one to expect."""

    def __init__(self, window: float = WINDOW_S) -> None:
        self.window = window
        self._seen: dict[str, _Seen] = {}
        self._latest = float("-inf")
        self._pruned = float("-inf")

    def __len__(self) -> int:
        return len(self._seen)

    def observe(self, workload: Workload, duration: float | None) -> None:
        """Record a submission (again: ignored); ``duration``: its expected run time (None: unknown,
        counted in the rate but never replayed: it would hold its quota for ever)."""
        created = workload.creation_time
        if created <= self._latest - self.window or workload.key in self._seen:
            return
        self._seen[workload.key] = _Seen(created, _as_submitted(workload), duration)
        self._latest = max(self._latest, created)
        if self._latest - self._pruned > self.window / 8:  # now and then: each prune reads them all
            self._pruned = self._latest
            for key in [k for k, s in self._seen.items() if s.created <= self._latest - self.window]:
                del self._seen[key]

    def expected(self, now: float, horizon: float = HORIZON_S, limit: int = MAX_ARRIVALS) -> list[Arrival]:
        """The arrivals expected in ``(now, now + horizon]``, soonest first, at most ``limit``: each
        class's submissions of the last window, ``window / n`` apart (the first half a gap after now),
        their pod sets and run times taken in turn from what was submitted."""
        by_class: dict[_Class, list[_Seen]] = {}
        for seen in sorted(self._seen.values(), key=lambda s: (s.created, s.workload.key)):
            if now - self.window < seen.created <= now:
                w = seen.workload
                key = (w.namespace, w.queue_name, w.priority, workload_shape(w))
                by_class.setdefault(key, []).append(seen)
        stream: list[tuple[float, str, Arrival]] = []
        for members in by_class.values():
            known = [s for s in members if s.duration is not None]
            if not known:
                continue
            gap = self.window / len(members)
            k = 0
            while (k + 0.5) * gap <= horizon and k < limit:
                template = known[k % len(known)]
                at = now + (k + 0.5) * gap
                workload = template.workload
                name = f"{workload.name}{EXPECTED_MARK}{k}"
                copy = Workload(workload.namespace, name, workload.queue_name, workload.pod_sets,
                                workload.priority, at)  # fmt: skip
                stream.append((at, copy.key, Arrival(at, copy, template.duration)))
                k += 1
        stream.sort(key=lambda item: (item[0], item[1]))
        return [arrival for _, _, arrival in stream[:limit]]


def _as_submitted(workload: Workload) -> Workload:
    """The workload as submitted: no admission, active."""
    if workload.admission is None and workload.active:
        return workload
    return Workload(workload.namespace, workload.name, workload.queue_name, workload.pod_sets,
                    workload.priority, workload.creation_time)  # fmt: skip
