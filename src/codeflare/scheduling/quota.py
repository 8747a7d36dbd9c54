"""Quota accounting: nominal, borrowing and lending limits per (flavor, resource), and usage.

``QuotaBook`` compiles ClusterQueue specs into integer tables, keeps each queue's usage and each
cohort's lendable capacity and borrowed usage up to date incrementally, and answers "how much of
this flavor-resource may this queue still take". It also counts changes, so that waiting work
can be woken when quota is freed or raised. It knows nothing of workloads or ordering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codeflare.scheduling.model import ClusterQueue

FlavorResource = tuple[str, str]


@dataclass
class CompiledQueue:
    """Integer quota tables of one ClusterQueue (milli-units)."""

    spec: ClusterQueue
    nominal: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing_limit: dict[FlavorResource, int | None] = field(default_factory=dict)
    guaranteed: dict[FlavorResource, int] = field(default_factory=dict)
    groups: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    group_of: dict[str, int] = field(default_factory=dict)
    draining: bool = False  # removed, kept while it still has usage

    @classmethod
    def compile(cls, spec: ClusterQueue) -> CompiledQueue:
        """Flatten resource groups into per flavor-resource tables."""
        out = cls(spec)
        for index, group in enumerate(spec.resource_groups):
            out.groups.append((group.covered_resources, tuple(f.name for f in group.flavors)))
            for resource in group.covered_resources:
                out.group_of.setdefault(resource, index)
            for flavor in group.flavors:
                for quota in flavor.resources:
                    fr = (flavor.name, quota.name)
                    nominal = quota.nominal_quota.milli
                    out.nominal[fr] = nominal
                    limit = quota.borrowing_limit
                    out.borrowing_limit[fr] = None if limit is None else limit.milli
                    lend = quota.lending_limit
                    out.guaranteed[fr] = 0 if lend is None else max(0, nominal - lend.milli)
        return out

    @property
    def flavors(self) -> list[str]:
        """Every flavor named by the queue, in group order."""
        return [f for _, flavors in self.groups for f in flavors]


@dataclass(frozen=True)
class QuotaView:
    """How ``available`` was obtained, for reasons: nominal + borrowable - in use."""

    nominal: int
    borrowable: int
    in_use: int
    available: int


class QuotaBook:
    """Usage and quota of every ClusterQueue and cohort; the single source of "does it fit"."""

    def __init__(self) -> None:
        self.queues: dict[str, CompiledQueue] = {}
        self.usage: dict[str, dict[FlavorResource, int]] = {}
        self.flavor_usage: dict[FlavorResource, int] = {}
        self.cohort_members: dict[str, set[str]] = {}
        self._cohort_capacity: dict[str, dict[FlavorResource, int]] = {}
        self._cohort_used: dict[str, dict[FlavorResource, int]] = {}
        self._freed: dict[str, int] = {}
        self._changed: dict[str, int] = {}

    # -- specs -------------------------------------------------------------------------------
    def set_queue(self, spec: ClusterQueue | None, name: str) -> set[str]:
        """Install, replace (spec) or drop (None) a queue; returns the scopes whose quota changed.

        A dropped queue that still has usage stays in the book, quota and cohort included, as
        ``draining`` (Kueue holds a ClusterQueue with admitted workloads until they finish): its
        usage keeps counting against its cohort until it is released, then the queue goes.
        """
        old = self.queues.pop(name, None)
        touched = {self.scope_of_spec(old.spec) if old else name}
        if old and old.spec.cohort:
            self.cohort_members[old.spec.cohort].discard(name)
        if spec is None and old is not None and any(self.usage.get(name, {}).values()):
            old.draining = True
            spec = old.spec
            self.queues[name] = old
        elif spec is not None:
            self.queues[name] = CompiledQueue.compile(spec)
            self.usage.setdefault(name, {})
        if spec is not None:
            if spec.cohort:
                self.cohort_members.setdefault(spec.cohort, set()).add(name)
            touched.add(self.scope_of_spec(spec))
        for scope in touched:
            if scope.startswith("cohort:"):
                self._recompute_cohort(scope[7:])
            self.bump(scope, freed=True)
        return touched

    def _recompute_cohort(self, cohort: str) -> None:
        capacity: dict[FlavorResource, int] = {}
        used: dict[FlavorResource, int] = {}
        for member in self.cohort_members.get(cohort, ()):
            compiled = self.queues[member]
            for fr, nominal in compiled.nominal.items():
                capacity[fr] = capacity.get(fr, 0) + nominal - compiled.guaranteed[fr]
            # all usage counts, also of resources no longer in the queue's quota (nothing guaranteed)
            for fr, amount in self.usage.get(member, {}).items():
                excess = max(0, amount - compiled.guaranteed.get(fr, 0))
                if excess:
                    used[fr] = used.get(fr, 0) + excess
        self._cohort_capacity[cohort] = capacity
        self._cohort_used[cohort] = used

    # -- scopes and change counters ----------------------------------------------------------
    @staticmethod
    def scope_of_spec(spec: ClusterQueue) -> str:
        return f"cohort:{spec.cohort}" if spec.cohort else f"cq:{spec.name}"

    def scope(self, name: str) -> str:
        """The sharing scope of a queue: its cohort, or itself when it has none."""
        compiled = self.queues.get(name)
        if compiled is None:
            return f"cq:{name}"
        return self.scope_of_spec(compiled.spec)

    def members(self, scope: str) -> list[str]:
        """Queues in a scope, sorted."""
        if scope.startswith("cohort:"):
            return sorted(self.cohort_members.get(scope[7:], ()))
        name = scope[3:]
        return [name] if name in self.queues else []

    def bump(self, scope: str, freed: bool) -> None:
        self._changed[scope] = self._changed.get(scope, 0) + 1
        if freed:
            self._freed[scope] = self._freed.get(scope, 0) + 1

    def freed_generation(self, scope: str) -> int:
        """Counts events that may let waiting work fit (usage released, quota changed)."""
        return self._freed.get(scope, 0)

    def change_generation(self, scope: str) -> int:
        """Counts every usage or quota change in the scope."""
        return self._changed.get(scope, 0)

    # -- usage -------------------------------------------------------------------------------
    def charge(self, name: str, usage: dict[FlavorResource, int], sign: int = 1, record: bool = True) -> None:
        """Add (sign=1) or release (sign=-1) ``usage`` on queue ``name`` and its cohort.

        ``record=False`` is for what-if simulation: the change counters are left alone.
        """
        own = self.usage.setdefault(name, {})
        compiled = self.queues.get(name)
        cohort = compiled.spec.cohort if compiled else None
        used = self._cohort_used.get(cohort) if cohort else None
        for fr, amount in usage.items():
            before = own.get(fr, 0)
            after = before + sign * amount
            own[fr] = after
            self.flavor_usage[fr] = self.flavor_usage.get(fr, 0) + sign * amount
            if used is not None and compiled is not None:
                guaranteed = compiled.guaranteed.get(fr, 0)
                delta = max(0, after - guaranteed) - max(0, before - guaranteed)
                if delta:
                    used[fr] = used.get(fr, 0) + delta
        if record:
            self.bump(self.scope(name), freed=sign < 0)
            if compiled is not None and compiled.draining and not any(own.values()):
                self.set_queue(None, name)

    def available(self, name: str, fr: FlavorResource) -> int:
        """How much more of ``fr`` queue ``name`` may take now, borrowing included."""
        compiled = self.queues.get(name)
        if compiled is None:
            return 0
        nominal = compiled.nominal.get(fr)
        if nominal is None:
            return 0
        used = self.usage[name].get(fr, 0)
        cohort = compiled.spec.cohort
        if cohort is None:
            return max(0, nominal - used)
        guaranteed = compiled.guaranteed[fr]
        free = self._cohort_capacity[cohort].get(fr, 0) - self._cohort_used[cohort].get(fr, 0)
        free += max(0, guaranteed - used)
        limit = compiled.borrowing_limit[fr]
        if limit is not None:
            free = min(free, nominal + limit - used)
        return max(0, free)

    def potential_available(self, name: str, fr: FlavorResource) -> int:
        """The most of ``fr`` the queue could hold were nothing used (Kueue's PotentialAvailable)."""
        compiled = self.queues.get(name)
        if compiled is None or fr not in compiled.nominal:
            return 0
        nominal = compiled.nominal[fr]
        cohort = compiled.spec.cohort
        if cohort is None:
            return nominal
        most = compiled.guaranteed[fr] + self._cohort_capacity[cohort].get(fr, 0)
        limit = compiled.borrowing_limit[fr]
        return most if limit is None else min(most, nominal + limit)

    def view(self, name: str, fr: FlavorResource) -> QuotaView:
        """``available`` broken down for a human-readable reason."""
        compiled = self.queues.get(name)
        nominal = compiled.nominal.get(fr, 0) if compiled else 0
        used = self.usage.get(name, {}).get(fr, 0)
        available = self.available(name, fr)
        return QuotaView(nominal, available + used - nominal, used, available)

    def borrowing(self, name: str, fr: FlavorResource) -> bool:
        """Whether queue ``name`` uses more than its nominal quota of ``fr``."""
        compiled = self.queues.get(name)
        if compiled is None:
            return False
        return self.usage[name].get(fr, 0) > compiled.nominal.get(fr, 0)

    def violations(self) -> list[str]:
        """Every queue or cohort charged beyond its limits (empty when all is well).

        Usage of a flavor-resource no longer in a queue's quota counts as over a limit of 0 for
        a queue without cohort, and in full against its cohort.
        """
        out: list[str] = []
        for name in sorted(self.queues):
            compiled = self.queues[name]
            usage = self.usage[name]
            for fr in sorted(set(compiled.nominal) | {fr for fr, v in usage.items() if v}):
                used = usage.get(fr, 0)
                cap: int | None = compiled.nominal.get(fr, 0)
                if compiled.spec.cohort is not None:
                    limit = compiled.borrowing_limit.get(fr)
                    cap = None if limit is None else compiled.nominal[fr] + limit
                if cap is not None and used > cap:
                    out.append(f"ClusterQueue {name} {fr}: {used} > {cap}")
        for cohort in sorted(self.cohort_members):
            capacity, used_map = self._cohort_capacity[cohort], self._cohort_used[cohort]
            for fr in sorted(used_map):
                if used_map[fr] > capacity.get(fr, 0):
                    out.append(f"cohort {cohort} {fr}: {used_map[fr]} > {capacity.get(fr, 0)}")
        return out
