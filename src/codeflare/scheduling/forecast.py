"""Estimated start times: the admission engine run forward in virtual time from a copy of its state.

Admitted workloads end at their expected end; pending ones are admitted, preempt and finish as
the same engine decides at each simulated moment (``schedule(t)``), so an estimate follows every
rule the engine follows (cohorts, borrowing, preemption, fair sharing), with no rule of its own.
The simulation is event driven: it jumps to the next expected end, releasing the ends that fall
within a step that grows with the distance from now (``resolution``), which bounds both its cost
and its error (ends are released at the step's end: in one queue an estimate is never early
because of it; in a cohort the changed order of decisions can move it either way). After now, a
round of preemptions is carried out at the next moment, at most one such step later (with the
next ends when they come by then), not at once: each round re-evaluates every waiting shape class
of the cohort, which was 40% of the cost of a refresh with reclaim. On 10,000 pending in a cohort
with reclaim this moved estimates by a median 3.6% of the wait (later); without preemption it
changes nothing. Preemptions that keep preempting are carried out at once after a few such moments.
A workload whose admission depends on one whose end is unknown has no bound (``start=None``).
With admission fair sharing the LocalQueues' recent usage is sampled at each simulated moment, as
the operator samples it (at most once per sampling interval). Without ``arrivals`` the estimate
is the earliest start (nothing submitted later goes first); with the arrivals one expects
(:mod:`codeflare.scheduling.arrivals`) it is the expected start, exact given them as the earliest
one is given none.
It uses only the engine's public methods, and mutates the engine it is given: pass ``fork(...)``.
No I/O, no clock reads: ``now`` is an argument. It does not decide where durations come from.
"""

from __future__ import annotations

import heapq
import io
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.engine import AdmissionEngine
from codeflare.scheduling.model import (
    Admission,
    ClusterQueue,
    LocalQueue,
    PodSet,
    PodSetAssignment,
    ResourceFlavor,
    Workload,
)
from codeflare.scheduling.records import evolved, made
from codeflare.scheduling.results import SchedulingResult

__all__ = ["Arrival", "Estimate", "Forecast", "forecast", "fork", "positions"]

RESOLUTION = 0.02  # ends within 2% of their distance from now are released together
MIN_STEP_S = 1.0  # ... and within at least one second
HORIZON_S = 30 * 24 * 3600.0  # nothing is estimated further ahead than this (no bound beyond)
MAX_STEPS = 20_000  # simulated moments at most (then: no bound for what is left)
MAX_BLOCKERS = 5  # workloads named in ``waiting_for``
SETTLE_ROUNDS = 8  # schedule() calls at one moment while preemptions free quota

Check = Callable[[AdmissionEngine, float], None]


# Frozen values the engine only ever replaces, never changes: a fork shares them with the original
# (half the bytes of a pickled engine at 10,000 workloads are these; sharing halves the copy time).
_SHARED = frozenset(
    {Workload, PodSet, Admission, PodSetAssignment, Quantity, ClusterQueue, LocalQueue, ResourceFlavor}
)


def _shared(index: int) -> object:
    """The name a fork's pickle gives to a shared value: resolved by ``_SharingUnpickler`` to its
    table entry, never called."""
    raise RuntimeError(f"shared value {index} read outside a fork")


class _SharingPickler(pickle.Pickler):
    """Pickles the values of ``_SHARED`` types as references to a table (``reducer_override``,
    which pickle skips for its own types: a ``persistent_id`` hook was called for each of the
    ~230,000 strings, numbers and tuples of an engine at 10,000 workloads, most of a copy's time)."""

    def __init__(self, out: io.BytesIO, table: list[object]) -> None:
        super().__init__(out, protocol=pickle.HIGHEST_PROTOCOL)
        self.table = table

    def reducer_override(self, obj: object) -> tuple[Callable[[int], object], tuple[int]]:
        if type(obj) in _SHARED:
            self.table.append(obj)
            return _shared, (len(self.table) - 1,)
        return NotImplemented


class _SharingUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, table: list[object]) -> None:
        super().__init__(io.BytesIO(data))
        self.table = table

    def find_class(self, module: str, name: str) -> object:
        if module == __name__ and name == _shared.__name__:
            return self.table.__getitem__
        return super().find_class(module, name)


def fork(engine: AdmissionEngine) -> AdmissionEngine:
    """An independent copy of an engine (all of its mutable state; frozen model values shared),
    to simulate on."""
    table: list[object] = []
    out = io.BytesIO()
    _SharingPickler(out, table).dump(engine)
    copy: AdmissionEngine = _SharingUnpickler(out.getvalue(), table).load()
    return copy


@dataclass(frozen=True)
class Estimate:
    """When one pending workload is expected to be admitted.

    ``start``: the simulated admission time (never before ``now``), None when it has no bound.
    ``position``: its place in its ClusterQueue's pending order (0 is next), None outside one.
    ``waiting_for``: the workloads whose end lets it in (when bounded), or the admitted workloads
    of unknown duration it waits behind (when not). ``preempts``: what it evicts to get in.
    """

    key: str
    start: float | None
    position: int | None = None
    cluster_queue: str | None = None
    waiting_for: tuple[str, ...] = ()
    preempts: tuple[str, ...] = ()
    flavors: tuple[tuple[str, str], ...] = ()  # (resource, flavor) of its simulated admission


@dataclass(frozen=True)
class Arrival:
    """A workload expected to be submitted at ``at`` (after now), running ``duration`` seconds once
    admitted (None: unknown). It competes in the simulation like any other and gets no estimate."""

    at: float
    workload: Workload
    duration: float | None


@dataclass
class Forecast:
    """Estimates of every pending workload at ``now``; ``steps``: simulated moments."""

    now: float
    estimates: dict[str, Estimate] = field(default_factory=dict)
    steps: int = 0


def positions(engine: AdmissionEngine, keys: list[str]) -> dict[str, tuple[str, int]]:
    """Pending workload -> (ClusterQueue, place in the order that queue tries them), as the
    visibility API numbers them (one pending reason per LocalQueue finds its ClusterQueue)."""
    cq_of: dict[tuple[str, str], str | None] = {}
    orders: dict[str, dict[str, int]] = {}
    placed: dict[str, tuple[str, int]] = {}
    for key in keys:
        workload = engine.workload(key)
        if workload is None:
            continue
        local_queue = (workload.namespace, workload.queue_name)
        if local_queue not in cq_of:
            info = engine.pending_reason(key)
            cq_of[local_queue] = info.cluster_queue if info is not None else None
        cq = cq_of[local_queue]
        if cq is None:
            continue
        if cq not in orders:
            orders[cq] = {k: i for i, k in enumerate(engine.pending_order(cq) or ())}
        position = orders[cq].get(key)
        if position is not None:
            placed[key] = (cq, position)
    return placed


class _Simulation:
    """One forward run: the end-time heap, who ended when, and the first admission of each."""

    def __init__(self, engine: AdmissionEngine, now: float, durations: Mapping[str, float | None]) -> None:
        self.engine = engine
        self.now = now
        self.durations = durations
        self.ends: list[tuple[float, str]] = []
        self.end_of: dict[str, float] = {}  # admitted in the simulation, known end
        self.running: dict[str, str] = {}  # admitted in the simulation -> its ClusterQueue
        self.started: dict[str, float] = {}
        self.preempts: dict[str, list[str]] = {}
        self.released: list[tuple[str, str]] = []  # (workload, ClusterQueue) ended at the latest step
        self.blockers: dict[str, tuple[str, ...]] = {}
        self.blockers_of: dict[str, tuple[str, ...]] = {}  # ClusterQueue -> its blockers at the latest step
        self.flavors: dict[str, tuple[tuple[str, str], ...]] = {}

    def admit_running(self, key: str, admitted_at: float, cluster_queue: str) -> None:
        self.running[key] = cluster_queue
        duration = self.durations.get(key)
        if duration is not None:
            end = max(self.now, admitted_at + duration)
            self.end_of[key] = end
            heapq.heappush(self.ends, (end, key))

    def evict(self, key: str) -> None:
        workload = self.engine.workload(key)
        self.running.pop(key, None)
        self.end_of.pop(key, None)  # its heap entry is skipped when it comes up
        if workload is not None and workload.admission is not None:
            self.engine.update_workload(evolved(workload, admission=None))

    def settle(self, t: float, pending: set[str], defer: bool) -> bool:
        """Schedule at ``t`` until no preemption or eviction is left to carry out; with ``defer``,
        stop after the first round that evicts and return True: the caller schedules again at its
        next moment, at most one resolution step later (the victims' quota is released then, as
        ends are released within a step)."""
        for _ in range(SETTLE_ROUNDS):
            result = self.engine.schedule(t)
            self._record(result, t, pending)
            victims = [p.victim for p in result.preemptions] + [e.workload for e in result.evictions]
            for preempted in result.preemptions:
                self.preempts.setdefault(preempted.preemptor, []).append(preempted.victim)
            for victim in victims:
                self.evict(victim)
            if not victims:
                return False
            if defer:
                return True
        return False

    def next_end(self) -> float:
        """The next expected end (infinity when none)."""
        while self.ends and self.end_of.get(self.ends[0][1]) != self.ends[0][0]:
            heapq.heappop(self.ends)  # evicted or re-admitted since
        return self.ends[0][0] if self.ends else float("inf")

    def _record(self, result: SchedulingResult, t: float, pending: set[str]) -> None:
        for key, admission in result.admissions.items():
            if key in pending and key not in self.started:
                self.started[key] = t
                self.blockers[key] = self._blockers(admission.cluster_queue)
                chosen = {(r, f) for psa in admission.pod_set_assignments for r, f in psa.flavors.items()}
                self.flavors[key] = tuple(sorted(chosen))
            self.admit_running(key, t, admission.cluster_queue)

    def _blockers(self, cluster_queue: str) -> tuple[str, ...]:
        """The ends of the latest step in this ClusterQueue (else in any), once per queue and step."""
        found = self.blockers_of.get(cluster_queue)
        if found is None:
            same = [k for k, cq in self.released if cq == cluster_queue]
            found = self.blockers_of[cluster_queue] = tuple(
                (same or [k for k, _ in self.released])[:MAX_BLOCKERS]
            )
        return found

    def release_next(self, resolution: float, min_step: float, owed: float | None) -> float | None:
        """Release the next ends (those within one step); returns the moment, None when none.
        ``owed``: a moment to schedule at (preemption victims evicted) even when no end comes first."""
        self.released = []
        self.blockers_of = {}
        end = self.next_end()
        if end == float("inf") or (owed is not None and end > owed):
            return owed
        first = self.ends[0][0]
        until = first + max(min_step, resolution * (first - self.now))
        moment = first
        while self.ends and self.ends[0][0] <= until:
            end, key = heapq.heappop(self.ends)
            if self.end_of.get(key) != end:
                continue
            moment = end
            del self.end_of[key]
            self.released.append((key, self.running.pop(key, "")))
            self.engine.remove_workload(key)
        return moment


def forecast(
    engine: AdmissionEngine,
    now: float,
    durations: Mapping[str, float | None],
    *,
    resolution: float = RESOLUTION,
    min_step: float = MIN_STEP_S,
    horizon: float = HORIZON_S,
    max_steps: int = MAX_STEPS,
    check: Check | None = None,
    arrivals: Sequence[Arrival] = (),
) -> Forecast:
    """Estimate the admission of every pending workload among ``durations``' keys.

    ``durations``: workload key -> expected run time in seconds (None: unknown), for the
    admitted ones (counted from their admission) and the pending ones (from their simulated
    admission). ``engine`` is consumed (pass ``fork(engine)``; it is left with ``explain`` off);
    ``check`` is called after every simulated moment (tests assert the quota there).
    ``arrivals``: workloads expected to be submitted later, in order of ``at`` (keys distinct from
    the existing ones): each is added to the engine at its moment, so what it takes goes before
    what it overtakes; they get no estimate.
    """
    engine.explain = False  # the simulation reads decisions only: no reason is worded
    keys = sorted(durations)
    pending: set[str] = set()
    if arrivals:
        durations = {**durations, **{a.workload.key: a.duration for a in arrivals}}
    sim = _Simulation(engine, now, durations)
    evicting = engine.evicting()
    for key in sorted(evicting):
        sim.evict(key)  # being evicted: requeued as soon as the eviction is written
    for key in keys:
        workload = engine.workload(key)
        if workload is None:
            continue
        if workload.admission is None:
            pending.add(key)
        elif key not in evicting:
            sim.admit_running(key, workload.admission.admitted_at, workload.admission.cluster_queue)
    placed = positions(engine, sorted(pending))
    result = Forecast(now)
    t = now
    # after now, a round of preemptions is carried out at the next moment, at most one resolution
    # step later; after SETTLE_ROUNDS such moments in a row (preemptions that keep preempting), at once
    owed = sim.settle(t, pending, False)
    in_a_row = 0
    coming = 0  # arrivals[coming:] are still to be submitted
    while result.steps < max_steps and len(sim.started) < len(pending):
        if check is not None:
            check(engine, t)
        due = t + resolution * (t - now) if owed else None
        if coming < len(arrivals):
            due = arrivals[coming].at if due is None else min(due, arrivals[coming].at)
        moment = sim.release_next(resolution, min_step, due)
        if moment is None or moment - now > horizon:
            break
        t = max(t, moment)
        result.steps += 1
        submitted = coming
        while coming < len(arrivals) and arrivals[coming].at <= t:
            engine.add_workload(arrivals[coming].workload)
            coming += 1
        in_a_row = 0 if sim.released or coming > submitted else in_a_row + 1
        engine.sample_local_queue_usage(t)  # admission fair sharing: usage decays as the operator samples it
        owed = sim.settle(t, pending, resolution * (t - now) > 0 and in_a_row < SETTLE_ROUNDS)
    if check is not None:
        check(engine, t)
    unknown_by_cq: dict[str, list[str]] = {}
    for key in sorted(sim.running):
        if key not in sim.end_of:
            unknown_by_cq.setdefault(sim.running[key], []).append(key)
    for key in sorted(pending):
        cq, position = placed.get(key, (None, None))
        start = sim.started.get(key)
        if start is not None:
            blockers = sim.blockers.get(key, ())
        else:
            blockers = tuple(unknown_by_cq.get(cq or "", [])[:MAX_BLOCKERS])
        victims = tuple(sim.preempts.get(key, ())[:MAX_BLOCKERS])
        flavors = sim.flavors.get(key, ())
        result.estimates[key] = made(
            Estimate, key=key, start=start, position=position, cluster_queue=cq,
            waiting_for=blockers, preempts=victims, flavors=flavors,
        )  # fmt: skip
    return result
