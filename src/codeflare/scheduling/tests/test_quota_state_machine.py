"""Quota is never exceeded by an admission, whatever interleaving of events and quota edits.

A hypothesis state machine drives one engine through arrivals, scheduling cycles, finishes,
evictions (preemption victims and others, reported back as requeued), priority changes and quota
edits: nominal quota shrunk or grown, a resource or a flavor removed or restored, a cohort
changed, borrowing/lending limits changed, a ClusterQueue deleted and re-created. The test keeps
its own ledger of admitted workloads and recomputes usage from it, independently of the engine.

The invariant, checked after every step:

* Usage U(q, fr) of ClusterQueue q in flavor-resource fr is the sum of what its admitted
  workloads were charged, for every fr, also those no longer in q's quota (limit 0 there).
* The limits: a queue without cohort may hold ``nominal``; a cohort member ``nominal +
  borrowingLimit`` (no limit without one); a cohort may hold the sum over its members of
  ``max(0, U - guaranteed)`` up to the sum of ``nominal - guaranteed`` (guaranteed = nominal -
  lendingLimit, 0 without a lending limit). A deleted queue that still has usage keeps its last
  quota and cohort until the usage is gone (Kueue holds such a queue with a finalizer).
* A step may lower usage below a limit that was edited under it (usage above a shrunk quota is
  allowed to remain, as in Kueue), but no step may raise any U(q, fr) or cohort usage that ends
  above its limit: nothing new is admitted into a queue or cohort that is, or would then be, over.
* The engine's own books agree with the ledger (``usage``), and ``quota_violations()`` is empty
  exactly when the ledger is within every limit.

Profiles: ``ci`` (the default, 500 sequences) and ``quick`` (50) through ``QUOTA_SM_PROFILE``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from codeflare.scheduling import (
    AdmissionEngine,
    ClusterQueue,
    FlavorQuotas,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
    admission_usage,
)

settings.register_profile(
    "ci", max_examples=500, stateful_step_count=20, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "quick", max_examples=50, stateful_step_count=20, deadline=None, suppress_health_check=list(HealthCheck)
)

QUEUES = ("a", "b", "c")
FLAVORS = ("f1", "f2")
RESOURCES = ("cpu", "memory")
COHORTS = (None, "x", "y")
FR = tuple[str, str]


@dataclass
class QueueSpec:
    """The test's own description of a ClusterQueue; ``quota[(flavor, resource)] = (n, b, l)``."""

    cohort: str | None
    flavors: list[str]
    resources: list[str]
    quota: dict[FR, tuple[int, int | None, int | None]] = field(default_factory=dict)

    def build(self, name: str) -> ClusterQueue:
        flavors = tuple(
            FlavorQuotas(
                f,
                tuple(
                    ResourceQuota(r, *map(_q, self.quota.get((f, r), (0, None, None))))
                    for r in self.resources
                ),
            )
            for f in self.flavors
        )
        policy = Preemption("LowerPriority", "Any" if self.cohort else "Never")
        groups = (ResourceGroup(tuple(self.resources), flavors),) if self.flavors and self.resources else ()
        return ClusterQueue(name, groups, cohort=self.cohort, preemption=policy)

    def limits(self, fr: FR) -> tuple[int, int | None, int]:
        """(nominal, borrowing limit or None, guaranteed) of ``fr``; all 0 when not in quota."""
        if fr[0] not in self.flavors or fr[1] not in self.resources:
            return 0, None, 0
        nominal, borrow, lend = self.quota.get(fr, (0, None, None))
        return nominal, borrow, (0 if lend is None else max(0, nominal - lend))


def _q(value: int | None) -> str | None:
    return None if value is None else f"{value}m"


amounts = st.sampled_from([0, 1000, 2000, 3000, 5000, 8000])
limits = st.one_of(st.none(), st.sampled_from([0, 1000, 3000]))


class QuotaMachine(RuleBasedStateMachine):
    """Random events against one engine, with an independent ledger of what is admitted."""

    def __init__(self) -> None:
        super().__init__()
        self.engine = AdmissionEngine(backoff_time=1.0)
        for flavor in FLAVORS:
            self.engine.add_resource_flavor(ResourceFlavor(flavor))
        self.specs: dict[str, QueueSpec] = {}
        self.draining: dict[str, QueueSpec] = {}  # deleted queues that still have usage
        self.admitted: dict[str, tuple[str, dict[FR, int]]] = {}  # key -> (queue, usage)
        self.workloads: dict[str, Workload] = {}
        self.victims: set[str] = set()
        self.now = 0.0
        self.serial = 0
        for name, cohort in zip(QUEUES, ("x", "x", None), strict=True):
            spec = QueueSpec(cohort, list(FLAVORS), list(RESOURCES))
            for flavor in FLAVORS:
                for resource in RESOURCES:
                    spec.quota[(flavor, resource)] = (4000, None, None)
            self._install(name, spec)
            self.engine.add_local_queue(LocalQueue("ns", f"lq-{name}", name))
        self.engine.add_namespace("ns", {})

    # -- helpers -------------------------------------------------------------------------------
    def _install(self, name: str, spec: QueueSpec) -> None:
        self.draining.pop(name, None)
        self.specs[name] = spec
        self.engine.update_cluster_queue(spec.build(name))

    def _usage(self) -> dict[str, dict[FR, int]]:
        out: dict[str, dict[FR, int]] = {}
        for queue, usage in self.admitted.values():
            per = out.setdefault(queue, {})
            for fr, amount in usage.items():
                per[fr] = per.get(fr, 0) + amount
        return out

    def _spec_of(self, queue: str) -> QueueSpec | None:
        return self.specs.get(queue) or self.draining.get(queue)

    def _totals(self) -> dict[tuple[str, str, FR], int]:
        """Usage per scope ("cq"/"cohort", name, fr) as the invariant counts it."""
        totals: dict[tuple[str, str, FR], int] = {}
        for queue, per in self._usage().items():
            spec = self._spec_of(queue)
            for fr, amount in per.items():
                totals[("cq", queue, fr)] = amount
                if spec is not None and spec.cohort is not None:
                    scope = ("cohort", spec.cohort, fr)
                    totals[scope] = totals.get(scope, 0) + max(0, amount - spec.limits(fr)[2])
        return totals

    def _limit(self, scope: tuple[str, str, FR]) -> int | None:
        kind, name, fr = scope
        if kind == "cq":
            spec = self._spec_of(name)
            if spec is None:
                return 0
            nominal, borrow, _ = spec.limits(fr)
            if spec.cohort is None:
                return nominal
            return None if borrow is None else nominal + borrow
        members = [s for s in (*self.specs.values(), *self.draining.values()) if s.cohort == name]
        return sum(s.limits(fr)[0] - s.limits(fr)[2] for s in members)

    def _over(self) -> list[tuple[str, str, FR]]:
        out = []
        for scope, used in self._totals().items():
            limit = self._limit(scope)
            if limit is not None and used > limit:
                out.append(scope)
        return out

    def _forget_drained(self) -> None:
        used = self._usage()
        for name in [n for n in self.draining if not any(used.get(n, {}).values())]:
            del self.draining[name]

    # -- events --------------------------------------------------------------------------------
    @rule(queue=st.sampled_from(QUEUES), cpu=amounts, memory=amounts, count=st.integers(1, 3),
          priority=st.integers(0, 3))  # fmt: skip
    def arrive(self, queue: str, cpu: int, memory: int, count: int, priority: int) -> None:
        self.serial += 1
        requests = {"cpu": f"{cpu}m", **({"memory": f"{memory}m"} if memory else {})}
        workload = Workload(
            "ns", f"w{self.serial}", f"lq-{queue}", (PodSet("main", count, requests),), priority, self.now
        )
        self.workloads[workload.key] = workload
        self.engine.add_workload(workload)

    @rule(advance=st.sampled_from([0.0, 0.5, 2.0]))
    def schedule(self, advance: float) -> None:
        self.now += advance
        before = self._totals()
        result = self.engine.schedule(self.now)
        for key, admission in result.admissions.items():
            assert key not in self.admitted, f"{key} admitted twice"
            self.admitted[key] = (admission.cluster_queue, admission_usage(admission))
            self.workloads[key] = replace(self.workloads[key], admission=admission)
        self.victims.update(p.victim for p in result.preemptions)
        self.victims.update(e.workload for e in result.evictions)
        for scope, used in self._totals().items():
            limit = self._limit(scope)
            if used > before.get(scope, 0) and limit is not None:
                assert used <= limit, f"admission raised {scope} to {used} > {limit}"

    @precondition(lambda self: self.admitted)
    @rule(data=st.data())
    def finish(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.admitted)))
        del self.admitted[key]
        self.workloads.pop(key)
        self.victims.discard(key)
        self.engine.remove_workload(key)
        self._forget_drained()

    @precondition(lambda self: self.admitted)
    @rule(data=st.data(), all_victims=st.booleans())
    def evict(self, data: st.DataObject, all_victims: bool) -> None:
        """Report victims (or any admitted workload) back without admission: requeued."""
        chosen = sorted(self.victims & set(self.admitted)) if all_victims else []
        if not chosen:
            chosen = [data.draw(st.sampled_from(sorted(self.admitted)))]
        for key in chosen:
            del self.admitted[key]
            self.victims.discard(key)
            self.workloads[key] = replace(self.workloads[key], admission=None)
            self.engine.update_workload(self.workloads[key])
        self._forget_drained()

    @precondition(lambda self: self.workloads)
    @rule(data=st.data(), priority=st.integers(0, 3))
    def change_priority(self, data: st.DataObject, priority: int) -> None:
        key = data.draw(st.sampled_from(sorted(self.workloads)))
        self.workloads[key] = replace(self.workloads[key], priority=priority)
        self.engine.update_workload(self.workloads[key])

    # -- quota edits ---------------------------------------------------------------------------
    @precondition(lambda self: self.specs)
    @rule(data=st.data(), nominal=amounts, borrow=limits, lend=limits)
    def set_quota(self, data: st.DataObject, nominal: int, borrow: int | None, lend: int | None) -> None:
        name = data.draw(st.sampled_from(sorted(self.specs)))
        fr = (data.draw(st.sampled_from(FLAVORS)), data.draw(st.sampled_from(RESOURCES)))
        spec = self.specs[name]
        lend = None if lend is None else min(lend, nominal)  # Kueue: lendingLimit <= nominalQuota
        spec = replace(spec, quota={**spec.quota, fr: (nominal, borrow, lend)})
        self._install(name, spec)

    @precondition(lambda self: self.specs)
    @rule(data=st.data(), what=st.sampled_from(["flavor", "resource"]), restore=st.booleans())
    def toggle_part(self, data: st.DataObject, what: str, restore: bool) -> None:
        """Remove (or restore) a flavor or a covered resource of a queue."""
        name = data.draw(st.sampled_from(sorted(self.specs)))
        spec = self.specs[name]
        if what == "flavor":
            part = data.draw(st.sampled_from(FLAVORS))
            keep = [f for f in FLAVORS if f in spec.flavors or f == part] if restore else None
            spec = replace(spec, flavors=keep if keep is not None else [f for f in spec.flavors if f != part])
        else:
            part = data.draw(st.sampled_from(RESOURCES))
            kept = [r for r in RESOURCES if r in spec.resources or r == part] if restore else None
            spec = replace(
                spec, resources=kept if kept is not None else [r for r in spec.resources if r != part]
            )
        self._install(name, spec)

    @precondition(lambda self: self.specs)
    @rule(data=st.data(), cohort=st.sampled_from(COHORTS))
    def change_cohort(self, data: st.DataObject, cohort: str | None) -> None:
        name = data.draw(st.sampled_from(sorted(self.specs)))
        self._install(name, replace(self.specs[name], cohort=cohort))

    @precondition(lambda self: self.specs)
    @rule(data=st.data())
    def delete_queue(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.specs)))
        spec = self.specs.pop(name)
        if any(self._usage().get(name, {}).values()):
            self.draining[name] = spec
        self.engine.remove_cluster_queue(name)

    @precondition(lambda self: len(self.specs) < len(QUEUES))
    @rule(data=st.data(), cohort=st.sampled_from(COHORTS))
    def recreate_queue(self, data: st.DataObject, cohort: str | None) -> None:
        name = data.draw(st.sampled_from([q for q in QUEUES if q not in self.specs]))
        spec = QueueSpec(cohort, list(FLAVORS), ["cpu"], {(f, "cpu"): (2000, None, None) for f in FLAVORS})
        self._install(name, spec)

    # -- invariants ----------------------------------------------------------------------------
    @invariant()
    def books_agree_with_the_ledger(self) -> None:
        usage = self._usage()
        for queue in QUEUES:
            expected = {fr: v for fr, v in usage.get(queue, {}).items() if v}
            assert {fr: q.milli for fr, q in self.engine.usage(queue).items()} == expected

    @invariant()
    def violations_are_reported_exactly_when_over(self) -> None:
        assert bool(self.engine.quota_violations()) == bool(self._over())


profile = os.environ.get("QUOTA_SM_PROFILE", "ci")
TestQuotaStateMachine = QuotaMachine.TestCase
TestQuotaStateMachine.settings = settings.get_profile(profile)
