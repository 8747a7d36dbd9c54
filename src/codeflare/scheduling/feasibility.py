"""Feasibility before submitting: what the engine would do with a job that does not exist yet.

A described job (pod sets, queue, priority, expected run time) is added to a copy of the engine
as a probe workload and the start-time forecast is run: admitted now (and where), admitted now by
preempting others, or waiting (position, estimated start, what it waits behind). When it would
not be admitted now, a second copy with every other workload removed says whether it could ever
be: if not, the answer is "never" with the engine's own shortfall figures (the most the queue can
give, nominal plus borrowable), so the check follows cohorts and borrowing as admission does.
No I/O, no clock reads; it creates nothing and leaves the given engine untouched. Who may ask
about which queue, and what of others' workloads may be shown, is the caller's policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from codeflare.k8s.quantity import format_milli
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.scheduling.engine import AdmissionEngine
from codeflare.scheduling.forecast import Arrival, Estimate, forecast, fork
from codeflare.scheduling.model import Workload
from codeflare.scheduling.results import PendingInfo, Shortfall

__all__ = ["Feasibility", "Limit", "Verdict", "check_feasibility", "probe_of"]

Verdict = Literal["AdmitNow", "AdmitByPreempting", "Wait", "Never"]
PROBE_SUFFIX = "#check"  # not a valid object name, so a probe never meets a real workload
NEVER_KINDS = frozenset(
    {
        "QuotaShortfall",
        "NotCovered",
        "NoMatchingFlavor",
        "NoLocalQueue",
        "NoClusterQueue",
        "NamespaceNotSelected",
    }
)


@dataclass(frozen=True)
class Limit:
    """The most one ClusterQueue's flavor can ever give of one resource, against the need (milli)."""

    cluster_queue: str
    flavor: str
    resource: str
    needs: int
    most: int
    nominal: int
    borrowing: int

    @property
    def words(self) -> str:
        if self.borrowing >= 0:
            extra = f"+ borrowing {format_milli(self.borrowing)}"
        else:
            extra = f"- lent {format_milli(-self.borrowing)}"
        return (
            f"needs {self.resource} {format_milli(self.needs)}, the most ClusterQueue {self.cluster_queue} "
            f"can ever give is {format_milli(self.most)} in flavor {self.flavor} "
            f"(nominal {format_milli(self.nominal)} {extra})"
        )

    @classmethod
    def of(cls, shortfall: Shortfall) -> Limit:
        return cls(
            shortfall.cluster_queue,
            shortfall.flavor,
            shortfall.resource,
            shortfall.requested,
            shortfall.available,
            shortfall.nominal,
            shortfall.borrowable,
        )


@dataclass(frozen=True)
class Feasibility:
    """The answer for one described job; ``message`` says it in words with the numbers."""

    verdict: Verdict
    message: str
    cluster_queue: str | None = None
    flavors: tuple[tuple[str, str], ...] = ()
    position: int | None = None
    estimated_start: float | None = None
    behind: tuple[str, ...] = ()
    preempts: tuple[str, ...] = ()
    limits: tuple[Limit, ...] = ()
    reason: str = ""  # the engine's pending kind when it is not admitted now

    @property
    def ever(self) -> bool:
        return self.verdict != "Never"


def probe_of(job: Workload, now: float) -> Workload:
    """The probe workload standing for ``job``: created now, never admitted, a key of its own."""
    return replace(job, name=job.name + PROBE_SUFFIX, creation_time=now, admission=None, active=True)


def _flavor_words(flavors: tuple[tuple[str, str], ...]) -> str:
    names = sorted({f for _, f in flavors})
    return (
        f"flavor {names[0]}" if len(names) == 1 else "flavors " + ", ".join(f"{r}: {f}" for r, f in flavors)
    )


def _never(info: PendingInfo) -> Feasibility:
    limits = tuple(Limit.of(s) for s in info.shortfalls if s.kind == "quota")
    detail = "; ".join(limit.words for limit in limits) or info.message
    return Feasibility(
        "Never", f"can never be admitted: {detail}", info.cluster_queue, limits=limits, reason=info.kind
    )


def _ever_admissible(
    engine: AdmissionEngine, now: float, durations: Mapping[str, float | None], probe: Workload
) -> PendingInfo | None:
    """None when the probe is admitted with nothing else in the system; else why not."""
    empty = fork(engine)
    for key in sorted(durations):
        empty.remove_workload(key)
    empty.add_workload(probe)
    empty.schedule(now)
    if empty.admission(probe.key) is not None:
        return None
    return empty.pending_reason(probe.key)


def _waiting(estimate: Estimate, now: float, info: PendingInfo | None) -> Feasibility:
    where = f" in ClusterQueue {estimate.cluster_queue}" if estimate.cluster_queue else ""
    # words count from 1, as why_pending() does; the field is 0-based, as Kueue's positions are
    place = f"position {estimate.position + 1}{where}" if estimate.position is not None else f"queued{where}"
    if estimate.start is None:
        start = "estimated start: no bound (what it waits for has no known end)"
    else:
        start = f"estimated start {format_rfc3339(estimate.start)} (in {estimate.start - now:.0f} s)"
    behind = f", behind {', '.join(estimate.waiting_for)}" if estimate.waiting_for else ""
    why = f" ({info.message})" if info is not None and estimate.start is None else ""
    return Feasibility(
        "Wait",
        f"would wait: {place}, {start}{behind}{why}",
        estimate.cluster_queue,
        position=estimate.position,
        estimated_start=estimate.start,
        behind=estimate.waiting_for,
        reason=info.kind if info is not None else "",
    )


def check_feasibility(
    engine: AdmissionEngine,
    now: float,
    durations: Mapping[str, float | None],
    job: Workload,
    duration: float | None = None,
    arrivals: Sequence[Arrival] = (),
) -> Feasibility:
    """What the engine would do with ``job`` submitted at ``now``.

    ``durations``: every known workload's expected run time (as for :func:`forecast`);
    ``duration``: the job's own; ``arrivals``: the later submissions expected (as the operator
    publishes its estimates with them, so a check and a Workload's estimate agree). The engine is
    not changed.
    """
    probe = probe_of(job, now)
    world = fork(engine)
    world.add_workload(probe)
    result = forecast(world, now, {**durations, probe.key: duration}, arrivals=arrivals)
    estimate = result.estimates.get(probe.key) or Estimate(probe.key, None)
    if estimate.start == now:
        where = f"ClusterQueue {estimate.cluster_queue}" if estimate.cluster_queue else "its ClusterQueue"
        flavors = _flavor_words(estimate.flavors)
        if estimate.preempts:
            message = f"would be admitted in {where} ({flavors}) by preempting {', '.join(estimate.preempts)}"
            return Feasibility(
                "AdmitByPreempting",
                message,
                estimate.cluster_queue,
                estimate.flavors,
                preempts=estimate.preempts,
            )
        message = f"would be admitted now in {where} ({flavors})"
        return Feasibility("AdmitNow", message, estimate.cluster_queue, estimate.flavors)
    reason = _ever_admissible(engine, now, durations, probe)
    if reason is not None and reason.kind in NEVER_KINDS:
        return _never(reason)
    return _waiting(estimate, now, reason)
