"""Expected arrivals: the recent submissions of each queue, priority and shape, as a steady stream.

The forecast given no later arrivals is the earliest start: later work that goes first (higher
priority, small workloads backfilling under BestEffortFIFO, a queue reclaiming its nominal quota in
a cohort) makes it early. Here the submissions seen in the last ``window`` are replayed as the
expected future, each class (namespace, LocalQueue, priority, shape) at its observed rate, evenly
spaced, so the engine itself decides what goes first (no rule of its own). Evenly spaced, not the
observed times shifted: the same history gives the same stream, so an estimate moves only when the
observed mix does, not at every refresh. Measured on ``benchmarks/forecast_bench``: the median error
/ wait of independent BestEffortFIFO queues 25.9% -> 11.9%, StrictFIFO unchanged. No I/O, no
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
MAX_ARRIVALS = 300  # expected arrivals per forecast at most (the soonest; bounds the refresh cost)
EXPECTED_MARK = "~expected-"  # in the names of expected arrivals ('~' is in no Kubernetes name)

_Class = tuple[str, str, int, Shape]


@dataclass(frozen=True)
class _Seen:
    created: float
    workload: Workload
    duration: float | None
    kind: _Class  # computed once, when seen


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
        kind = (workload.namespace, workload.queue_name, workload.priority, workload_shape(workload))
        self._seen[workload.key] = _Seen(created, _as_submitted(workload), duration, kind)
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
        for seen in self._seen.values():
            if now - self.window < seen.created <= now:
                by_class.setdefault(seen.kind, []).append(seen)
        stream: list[tuple[float, str, int, _Seen]] = []  # when, key of the copy, its number, template
        for members in by_class.values():
            known = sorted(
                (s for s in members if s.duration is not None), key=lambda s: (s.created, s.workload.key)
            )
            gap = self.window / len(members)
            k = 0
            while known and (k + 0.5) * gap <= horizon and k < limit:
                template = known[k % len(known)]
                key = f"{template.workload.key}{EXPECTED_MARK}{k}"
                stream.append((now + (k + 0.5) * gap, key, k, template))
                k += 1
        stream.sort(key=lambda item: (item[0], item[1]))
        arrivals = []
        for at, _, k, template in stream[:limit]:
            w = template.workload
            copy = Workload(
                w.namespace, f"{w.name}{EXPECTED_MARK}{k}", w.queue_name, w.pod_sets, w.priority, at
            )
            arrivals.append(Arrival(at, copy, template.duration))
        return arrivals


def _as_submitted(workload: Workload) -> Workload:
    """The workload as submitted: no admission, active."""
    if workload.admission is None and workload.active:
        return workload
    return Workload(workload.namespace, workload.name, workload.queue_name, workload.pod_sets,
                    workload.priority, workload.creation_time)  # fmt: skip
