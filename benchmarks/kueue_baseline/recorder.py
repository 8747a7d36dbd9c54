"""Kueue's recorder and checker arithmetic over the events a replay observes, plus exact quota checks.

:class:`Recorder` keeps what Kueue's ``runner/recorder/recorder.go`` keeps: per Workload the time
to admission (Admitted condition's lastTransitionTime minus creationTimestamp when both are set
and ordered, else the time between the first event and the admitted one) and evictions; per
ClusterQueue the ``status.flavorsUsage`` integrated over the time between its status events, so
a class's usage is that integral over (nominal quota x the time from the class's first to its last
event), as ``checker/checker_test.go`` computes it. Beyond Kueue: usage from the Workloads' own
admissions, and every per-queue and per-cohort limit checked at each change of what is held.
:func:`conditions` is the checker's comparison with a rangespec. Time is passed in; no I/O.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from benchmarks.kueue_baseline.scenario import CLASS_LABEL, Scenario
from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true
from codeflare.k8s.quantity import milli_value
from codeflare.k8s.timestamps import epoch_seconds

Obj = dict[str, Any]


@dataclass
class WorkloadRecord:
    class_name: str
    first_seen: float
    admitted: bool = False
    evicted: bool = False
    finished: bool = False
    to_admit_s: float = 0.0  # Kueue's method: condition time - creationTimestamp
    observed_to_admit_s: float = 0.0  # this client: creation call -> admission seen
    evictions: int = 0
    ever_admitted: bool = False  # a run cut short averages over these only


@dataclass
class QueueRecord:
    class_name: str
    quota_milli: int
    first: float
    last: float
    usage_milli: int = 0
    used_milli_s: float = 0.0
    max_usage_milli: int = 0
    pending: int = 0
    reserving: int = 0
    active: bool = False


@dataclass
class Recorder:
    """Per Workload and per ClusterQueue what Kueue's recorder keeps, plus exact usage and quota checks."""

    scenario: Scenario
    created_at: dict[str, float] = field(default_factory=dict)  # key -> creation call start
    workloads: dict[str, WorkloadRecord] = field(default_factory=dict)
    queues: dict[str, QueueRecord] = field(default_factory=dict)
    held: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (ClusterQueue, milli CPU)
    queue_usage: dict[str, int] = field(default_factory=dict)
    cohort_usage: dict[str, int] = field(default_factory=dict)
    usage_integral: float = 0.0  # milli CPU x s held, from the Workloads' own admissions
    last_change: float = 0.0
    violations: list[str] = field(default_factory=list)
    checks: int = 0
    admissions: list[float] = field(default_factory=list)
    finished: int = 0

    def __post_init__(self) -> None:
        self.limits = {
            q.name: milli_value(q.nominal) + milli_value(q.borrowing_limit) for q in self.scenario.queues
        }
        self.cohort_of = {q.name: q.cohort for q in self.scenario.queues}
        self.cohort_capacity: dict[str, int] = {}
        for q in self.scenario.queues:
            self.cohort_capacity[q.cohort] = self.cohort_capacity.get(q.cohort, 0) + milli_value(q.nominal)

    def workload_event(self, obj: Obj, now: float) -> bool:
        """Record one Workload event; returns whether it is admitted and not finished."""
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        conds = conditions_of(obj)
        admitted = is_condition_true(conds, "Admitted")
        finished = is_condition_true(conds, "Finished")
        record = self.workloads.get(key)
        if record is None:
            record = self.workloads[key] = WorkloadRecord(
                str((meta.get("labels") or {}).get(CLASS_LABEL)), now
            )
        if admitted and not record.admitted:
            created = epoch_seconds(meta.get("creationTimestamp"))
            at = epoch_seconds((find_condition(conds, "Admitted") or {}).get("lastTransitionTime"))
            ok = created is not None and at is not None and at >= created
            record.to_admit_s = (at - created) if ok else now - record.first_seen  # type: ignore[operator]
            record.observed_to_admit_s = now - self.created_at.get(key, record.first_seen)
            self.admissions.append(now)
            record.ever_admitted = True
        evicted = is_condition_true(conds, "Evicted")
        if evicted and not record.evicted:
            record.evictions += 1
        if finished and not record.finished:
            self.finished += 1
        record.admitted, record.evicted, record.finished = admitted, evicted, finished
        self._account(key, obj, admitted and not finished, now)
        return admitted and not finished

    def _account(self, key: str, obj: Obj, holds: bool, now: float) -> None:
        """Exact usage per ClusterQueue and cohort from admissions; every limit checked on each change."""
        adm = (obj.get("status") or {}).get("admission") or {}
        cq = str(adm.get("clusterQueue", ""))
        milli = sum(
            milli_value((psa.get("resourceUsage") or {}).get("cpu", 0))
            for psa in adm.get("podSetAssignments") or []
        )
        before = self.held.get(key)
        after = (cq, milli) if holds and cq else None
        if before == after:
            return
        self.usage_integral += (
            sum(self.queue_usage.values()) * (now - self.last_change) if self.last_change else 0.0
        )
        self.last_change = now
        for entry, sign in ((before, -1), (after, 1)):
            if entry is not None:
                name, amount = entry
                self.queue_usage[name] = self.queue_usage.get(name, 0) + sign * amount
                cohort = self.cohort_of.get(name, "")
                self.cohort_usage[cohort] = self.cohort_usage.get(cohort, 0) + sign * amount
        if after is None:
            self.held.pop(key, None)
        else:
            self.held[key] = after
            self._check(after[0])

    def _check(self, name: str) -> None:
        self.checks += 1
        used, limit = self.queue_usage.get(name, 0), self.limits.get(name, 0)
        cohort = self.cohort_of.get(name, "")
        if used > limit:
            self.violations.append(f"{name} holds {used}m of {limit}m")
        if self.cohort_usage.get(cohort, 0) > self.cohort_capacity.get(cohort, 0):
            self.violations.append(
                f"cohort {cohort} holds {self.cohort_usage[cohort]}m of {self.cohort_capacity[cohort]}m"
            )

    def cluster_queue_event(self, obj: Obj, now: float) -> None:
        """Kueue's RecordCQState/recordCQEvent: usage integrated between successive status events."""
        status = obj.get("status") or {}
        usage = 0
        with contextlib.suppress(LookupError, TypeError):
            usage = milli_value(status["flavorsUsage"][0]["resources"][0]["total"])
        quota = 0
        with contextlib.suppress(LookupError, TypeError):
            quota = milli_value(
                obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]
            )
        name = obj["metadata"]["name"]
        record = self.queues.get(name)
        if record is None:
            class_name = str((obj["metadata"].get("labels") or {}).get(CLASS_LABEL))
            record = self.queues[name] = QueueRecord(class_name, quota, now, now)
        else:
            record.used_milli_s += record.usage_milli * (now - record.last)
        record.last, record.usage_milli, record.quota_milli = now, usage, quota
        record.max_usage_milli = max(record.max_usage_milli, usage)
        record.pending = int(status.get("pendingWorkloads") or 0)
        record.reserving = int(status.get("reservingWorkloads") or 0)
        record.active = is_condition_true(conditions_of(obj), "Active")
        if usage > self.limits.get(name, usage):
            self.violations.append(f"{name} status reports {usage}m of {self.limits[name]}m")

    def class_usage(self) -> dict[str, float]:
        """Per ClusterQueue class, % of nominal quota used over the class's monitoring time
        (recorder.go's CQGroupSummary, checker_test.go's comparison)."""
        groups: dict[str, list[QueueRecord]] = {}
        for q in self.queues.values():
            groups.setdefault(q.class_name, []).append(q)
        usage = {}
        for name, queues in groups.items():
            elapsed = max(q.last for q in queues) - min(q.first for q in queues)
            quota = sum(q.quota_milli for q in queues)
            used = sum(q.used_milli_s for q in queues)
            usage[name] = 100 * used / (quota * elapsed) if quota and elapsed else 0.0
        return usage

    def drained(self) -> bool:
        """Kueue's exit test (expectMoreEvents false): no active queue reports pending or reserving work."""
        return bool(self.queues) and not any(
            (q.pending or q.reserving) and q.active for q in self.queues.values()
        )


def conditions(scenario: Scenario, result: Obj, spec_key: str = "rangespec") -> list[tuple[str, str, bool]]:
    """Kueue's checker (checker_test.go) over one run: (condition, figure, passed)."""
    spec = scenario.document.get(spec_key) or {}
    out = []
    max_wall = spec.get("cmd", {}).get("maxWallMs")
    if max_wall is not None:
        out.append(
            (
                f"wall <= {max_wall / 1000:g} s",
                f"{result['wall_s']:.1f} s",
                result["wall_s"] * 1000 <= max_wall,
            )
        )
    for name, minimum in (spec.get("clusterQueueClassesMinUsage") or {}).items():
        usage = result["kueue_usage_pct"].get(name, 0.0)
        out.append((f"{name} usage >= {minimum:g}%", f"{usage:.1f}%", usage >= minimum))
    for name, maximum in (spec.get("wlClassesMaxAvgTimeToAdmissionMs") or {}).items():
        value = result["to_admit_s"].get(name, float("inf"))
        out.append(
            (
                f"{name} avg time to admission <= {maximum / 1000:g} s",
                f"{value:.1f} s",
                value * 1000 <= maximum,
            )
        )
    return out
