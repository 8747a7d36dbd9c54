"""Quota accounting through cohort trees: nominal, borrowing and lending limits, and usage.

``QuotaBook`` compiles ClusterQueue and Cohort specs into integer tables per (flavor, resource)
and keeps every node's usage up to date incrementally, as Kueue's resource nodes do
(``pkg/cache/scheduler/resource_node.go``): a node lends its subtree quota minus what its lending
limit keeps back, the part of a node's usage above what it keeps is stored in its parent, and
what a queue may take is bounded at every level of its path to the root by the borrowing limits
there. A cohort tree with a cycle holds no usage and its queues report the cycle (Kueue leaves
them out of its snapshot). It answers "how much of this flavor-resource may this queue still
take" and counts changes per scope (a tree's root, or a queue without cohort) so that waiting
work can be woken when quota is freed or raised. It knows nothing of workloads or ordering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codeflare.scheduling.model import ClusterQueue, Cohort, ResourceGroup
from codeflare.scheduling.records import made

FlavorResource = tuple[str, str]
Usage = dict[FlavorResource, int]  # milli-units per (flavor, resource)


def _tables(
    groups: tuple[ResourceGroup, ...],
) -> tuple[dict[FlavorResource, int], dict[FlavorResource, int | None], dict[FlavorResource, int]]:
    """Nominal quota, borrowing limits and lending limits (only those set) per flavor-resource."""
    nominal: dict[FlavorResource, int] = {}
    borrowing: dict[FlavorResource, int | None] = {}
    lending: dict[FlavorResource, int] = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                fr = (flavor.name, quota.name)
                nominal[fr] = quota.nominal_quota.milli
                limit = quota.borrowing_limit
                borrowing[fr] = None if limit is None else limit.milli
                if quota.lending_limit is not None:
                    lending[fr] = quota.lending_limit.milli
    return nominal, borrowing, lending


def _through(
    parent: CohortNode, subtree: int, guaranteed: int, limit: int | None, used: int, fr: FlavorResource
) -> int:
    """Kueue's available() for a node with a parent: what it keeps, plus what the parent has,
    bounded by the node's borrowing limit."""
    above = parent.available(fr)
    if limit is not None:
        above = min(above, subtree - guaranteed - max(0, used - guaranteed) + limit)
    return max(0, guaranteed - used) + above


@dataclass(eq=False)
class CohortNode:
    """One cohort of a tree: its own quota and, compiled from its subtree, what it holds."""

    name: str
    spec: Cohort | None = None  # None: implicit (named by a queue or as a parent only)
    own: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing_limit: dict[FlavorResource, int | None] = field(default_factory=dict)
    lending_limit: dict[FlavorResource, int] = field(default_factory=dict)
    subtree: dict[FlavorResource, int] = field(default_factory=dict)
    guaranteed: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    parent: CohortNode | None = None
    root: CohortNode | None = None
    child_cohorts: list[str] = field(default_factory=list)
    child_queues: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # every queue of the tree (on the root)
    cycle: str | None = None  # why the tree is unusable: it has a cycle (this node is in or under it)
    height: int = 0  # Kueue's getNodeHeight: 1 over queues only, 1 + the highest child cohort

    @property
    def fair_weight(self) -> float:
        return self.spec.fair_weight if self.spec is not None else 1.0

    def available(self, fr: FlavorResource) -> int:
        if self.parent is None:
            return self.subtree.get(fr, 0) - self.usage.get(fr, 0)
        return _through(
            self.parent, self.subtree.get(fr, 0), self.guaranteed.get(fr, 0),
            self.borrowing_limit.get(fr), self.usage.get(fr, 0), fr,
        )  # fmt: skip

    def potential(self, fr: FlavorResource) -> int:
        """Kueue's potentialAvailable: the most the node could hold were nothing used."""
        if self.parent is None:
            return self.subtree.get(fr, 0)
        most = self.guaranteed.get(fr, 0) + self.parent.potential(fr)
        limit = self.borrowing_limit.get(fr)
        return most if limit is None else min(most, self.subtree.get(fr, 0) + limit)

    def path(self) -> list[CohortNode]:
        """This cohort and its ancestors, up to the root."""
        out: list[CohortNode] = []
        node: CohortNode | None = self
        while node is not None:
            out.append(node)
            node = node.parent
        return out


@dataclass
class CompiledQueue:
    """Integer quota tables of one ClusterQueue (milli-units) and its place in its tree."""

    spec: ClusterQueue
    nominal: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing_limit: dict[FlavorResource, int | None] = field(default_factory=dict)
    guaranteed: dict[FlavorResource, int] = field(default_factory=dict)
    groups: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    group_of: dict[str, int] = field(default_factory=dict)
    draining: bool = False  # removed, kept while it still has usage
    parent: CohortNode | None = None  # None without cohort, or while the tree has a cycle
    scope: str = ""  # "cohort:<root>" in a tree, else "cq:<name>" (see QuotaBook.scope)
    cycle: str | None = None  # why the queue is inactive: its cohort tree has a cycle
    one_flavor: bool = False  # every resource group lists a single flavor: no choice to assign

    @classmethod
    def compile(cls, spec: ClusterQueue) -> CompiledQueue:
        """Flatten resource groups into per flavor-resource tables."""
        out = cls(spec, scope=f"cq:{spec.name}")
        out.nominal, out.borrowing_limit, lending = _tables(spec.resource_groups)
        for index, group in enumerate(spec.resource_groups):
            out.groups.append((group.covered_resources, tuple(f.name for f in group.flavors)))
            for resource in group.covered_resources:
                out.group_of.setdefault(resource, index)
        out.one_flavor = all(len(flavors) == 1 for _, flavors in out.groups)
        for fr, nominal in out.nominal.items():
            lend = lending.get(fr)
            out.guaranteed[fr] = 0 if lend is None else max(0, nominal - lend)
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
        self.cohorts: dict[str, CohortNode] = {}
        self._queue_children: dict[str, set[str]] = {}
        self._cohort_children: dict[str, set[str]] = {}
        self._freed: dict[str, int] = {}
        self._changed: dict[str, int] = {}

    # -- specs -------------------------------------------------------------------------------
    def set_queue(self, spec: ClusterQueue | None, name: str) -> set[str]:
        """Install, replace (spec) or drop (None) a queue; returns the scopes whose quota changed.

        A dropped queue that still has usage stays in the book, quota and cohort included, as
        ``draining`` (Kueue holds a ClusterQueue with admitted workloads until they finish): its
        usage keeps counting against its cohort until it is released, then the queue goes.
        """
        touched = {self.scope(name)}
        old = self.queues.pop(name, None)
        cohorts: set[str] = set()
        if old and old.spec.cohort:
            self._queue_children[old.spec.cohort].discard(name)
            cohorts.add(old.spec.cohort)
        if spec is None and old is not None and any(self.usage.get(name, {}).values()):
            old.draining = True
            spec = old.spec
            self.queues[name] = old
        elif spec is not None:
            self.queues[name] = CompiledQueue.compile(spec)
            self.usage.setdefault(name, {})
        if spec is not None and spec.cohort:
            self._node(spec.cohort)
            self._queue_children.setdefault(spec.cohort, set()).add(name)
            cohorts.add(spec.cohort)
        for cohort in sorted(cohorts):
            self._rebuild_tree_of(cohort)
        if spec is not None:
            touched.add(self.scope(name))
        for scope in touched:
            self.bump(scope, freed=True)
        return touched

    def set_cohort(self, spec: Cohort | None, name: str) -> set[str]:
        """Install, replace or drop a Cohort object; returns every scope that may have changed.

        Cohort edits are rare, so every tree is compiled again (cycles may appear or go).
        """
        before = {self.scope(q) for q in self.queues}
        node = self._node(name)
        old_parent = node.spec.parent if node.spec is not None else None
        if old_parent is not None:
            self._cohort_children.get(old_parent, set()).discard(name)
        node.spec = spec
        node.own, node.borrowing_limit, node.lending_limit = _tables(spec.resource_groups if spec else ())
        if spec is not None and spec.parent is not None:
            self._node(spec.parent)
            self._cohort_children.setdefault(spec.parent, set()).add(name)
        for cohort in sorted(self.cohorts):
            node = self.cohorts[cohort]
            node.parent = node.root = None
        done: set[str] = set()
        for cohort in sorted(self.cohorts):
            if cohort not in done:
                done.update(self._rebuild_tree_of(cohort))
        touched = before | {self.scope(q) for q in self.queues}
        for scope in touched:
            self.bump(scope, freed=True)
        return touched

    def _node(self, name: str) -> CohortNode:
        node = self.cohorts.get(name)
        if node is None:
            node = self.cohorts[name] = CohortNode(name)
        return node

    def _parent_name(self, name: str) -> str | None:
        node = self.cohorts.get(name)
        return node.spec.parent if node is not None and node.spec is not None else None

    def _top(self, name: str) -> tuple[str, list[str] | None]:
        """The root of ``name``'s tree, or a cohort of the cycle its path runs into (and the cycle)."""
        path: list[str] = []
        seen: set[str] = set()
        current: str | None = name
        while current is not None:
            if current in seen:
                return current, path[path.index(current) :]
            seen.add(current)
            path.append(current)
            parent = self._parent_name(current)
            if parent is None:
                return current, None
            current = parent
        return name, None  # unreachable

    def _subtree(self, top: str) -> list[str]:
        """Cohorts below ``top`` (itself included), children after parents; cycles visited once."""
        order: list[str] = []
        seen: set[str] = set()
        stack = [top]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            order.append(name)
            stack.extend(sorted(self._cohort_children.get(name, ()), reverse=True))
        return order

    def _rebuild_tree_of(self, cohort: str) -> list[str]:
        """Compile the tree holding ``cohort`` again from its queues' usage; returns its cohorts."""
        top, cycle = self._top(cohort)
        order = self._subtree(top)
        if cycle is not None:
            message = "cohort tree has a cycle: " + " -> ".join([*cycle, cycle[0]])
            for name in order:
                node = self._node(name)
                node.parent = node.root = None
                node.cycle, node.members, node.subtree, node.usage = message, [], {}, {}
                for queue in self._queue_children.get(name, ()):
                    if queue in self.queues:
                        compiled = self.queues[queue]
                        compiled.parent, compiled.cycle, compiled.scope = None, message, f"cq:{queue}"
            return order
        root = self._node(top)
        root.parent = None
        for name in reversed(order):  # children before parents
            self._compile_node(self._node(name), root)
        root.members = sorted(
            q for name in order for q in self._queue_children.get(name, ()) if q in self.queues
        )
        return order

    def _compile_node(self, node: CohortNode, root: CohortNode) -> None:
        node.cycle, node.root = None, root
        subtree, usage = dict(node.own), dict[FlavorResource, int]()
        node.child_cohorts = sorted(self._cohort_children.get(node.name, ()))
        node.child_queues = sorted(q for q in self._queue_children.get(node.name, ()) if q in self.queues)
        children: list[
            tuple[dict[FlavorResource, int], dict[FlavorResource, int], dict[FlavorResource, int]]
        ] = []
        for child_name in node.child_cohorts:
            child = self.cohorts[child_name]
            child.parent = node
            children.append((child.subtree, child.guaranteed, child.usage))
        for queue in node.child_queues:
            compiled = self.queues[queue]
            compiled.parent, compiled.cycle, compiled.scope = node, None, f"cohort:{root.name}"
            children.append((compiled.nominal, compiled.guaranteed, self.usage.get(queue, {})))
        for quota, guaranteed, used in children:
            for fr, amount in quota.items():
                subtree[fr] = subtree.get(fr, 0) + amount - guaranteed.get(fr, 0)
            # all usage counts, also of resources no longer in the child's quota (nothing kept)
            for fr, amount in used.items():
                excess = max(0, amount - guaranteed.get(fr, 0))
                if excess:
                    usage[fr] = usage.get(fr, 0) + excess
        node.subtree, node.usage = subtree, usage
        node.height = min(len(node.child_cohorts) + len(node.child_queues), 1)
        for child_name in node.child_cohorts:
            node.height = max(node.height, self.cohorts[child_name].height + 1)
        node.guaranteed = {fr: max(0, subtree.get(fr, 0) - lend) for fr, lend in node.lending_limit.items()}

    # -- scopes and change counters ----------------------------------------------------------
    def scope(self, name: str) -> str:
        """The sharing scope of a queue: the root of its cohort tree, or itself."""
        compiled = self.queues.get(name)
        return compiled.scope if compiled is not None else f"cq:{name}"

    def members(self, scope: str) -> list[str]:
        """Queues in a scope, sorted."""
        if scope.startswith("cohort:"):
            node = self.cohorts.get(scope[7:])
            return list(node.members) if node is not None else []
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
        """Add (sign=1) or release (sign=-1) ``usage`` on queue ``name`` and up its tree.

        ``record=False`` is for what-if simulation: the change counters are left alone.
        """
        own = self.usage.setdefault(name, {})
        compiled = self.queues.get(name)
        parent = compiled.parent if compiled is not None else None
        flavor_usage = self.flavor_usage
        for fr, amount in usage.items():
            before = own.get(fr, 0)
            after = before + sign * amount
            own[fr] = after
            flavor_usage[fr] = flavor_usage.get(fr, 0) + sign * amount
            if parent is None or compiled is None:
                continue
            # the part above what the node keeps is stored in its parent, and so on up (the excess
            # over what is kept, max(0, amount - kept), written out: this runs per admission and end)
            kept = compiled.guaranteed.get(fr, 0)
            delta = (after - kept if after > kept else 0) - (before - kept if before > kept else 0)
            node: CohortNode | None = parent
            while delta and node is not None:
                below = node.usage.get(fr, 0)
                above = below + delta
                node.usage[fr] = above
                kept = node.guaranteed.get(fr, 0) if node.guaranteed else 0
                delta = (above - kept if above > kept else 0) - (below - kept if below > kept else 0)
                node = node.parent
        if record:
            self.bump(compiled.scope if compiled is not None else f"cq:{name}", freed=sign < 0)
            if compiled is not None and compiled.draining and not any(own.values()):
                self.set_queue(None, name)

    def available(self, name: str, fr: FlavorResource) -> int:
        """How much more of ``fr`` queue ``name`` may take now, borrowing included."""
        compiled = self.queues.get(name)
        if compiled is None:
            return 0
        nominal = compiled.nominal.get(fr)
        parent = compiled.parent
        used = self.usage[name].get(fr, 0)
        if nominal is None:
            if parent is None:
                return 0
            nominal, kept, limit = 0, 0, None  # as Kueue's resource nodes: no quota, may still borrow
        elif parent is None:
            return nominal - used if nominal > used else 0
        else:
            kept, limit = compiled.guaranteed[fr], compiled.borrowing_limit[fr]
        # _through inlined (this is the hottest call of a cycle): what the queue keeps and does not
        # use, plus what its parent has, bounded by its borrowing limit
        if parent.parent is None:
            free = parent.subtree.get(fr, 0) - parent.usage.get(fr, 0)
        else:
            free = parent.available(fr)
        if kept > used:
            free += kept - used
        if limit is not None and nominal + limit - used < free:
            free = nominal + limit - used
        return free if free > 0 else 0

    def potential_available(self, name: str, fr: FlavorResource) -> int:
        """The most of ``fr`` the queue could hold were nothing used (Kueue's PotentialAvailable)."""
        compiled = self.queues.get(name)
        if compiled is None or fr not in compiled.nominal:
            return 0
        nominal = compiled.nominal[fr]
        if compiled.parent is None:
            return nominal
        most = compiled.guaranteed[fr] + compiled.parent.potential(fr)
        limit = compiled.borrowing_limit[fr]
        return most if limit is None else min(most, nominal + limit)

    def borrowing_level(self, name: str, fr: FlavorResource, value: int) -> int:
        """How far up the tree ``value`` of ``fr`` must come from: 0 within the queue's nominal
        quota, else the height of the lowest cohort whose subtree holds it (Kueue's
        FindHeightOfLowestSubtreeThatFits; flavors borrowing less far are preferred)."""
        compiled = self.queues[name]
        used = self.usage[name].get(fr, 0)
        if compiled.parent is None or used + value <= compiled.nominal.get(fr, 0):
            return 0
        if compiled.parent.parent is None:
            return compiled.parent.height  # a flat cohort: the root, fitting or not
        remaining = value - max(0, compiled.guaranteed.get(fr, 0) - used)
        node: CohortNode | None = compiled.parent
        while node is not None:
            held = node.usage.get(fr, 0)
            if held + remaining <= node.subtree.get(fr, 0):
                return node.height
            remaining -= max(0, node.guaranteed.get(fr, 0) - held)
            node = node.parent
        root = compiled.parent.root
        return root.height if root is not None else 1

    def reclaims_in_hierarchy(self, name: str, fr: FlavorResource, value: int) -> bool:
        """Kueue's mayReclaimInHierarchy (FindHeightOfLowestSubtreeThatFits' second result): the
        lowest subtree that holds ``value`` of ``fr`` without borrowing has a parent, so the queue
        may reclaim there even while it borrows (False without a cohort, or in a flat one)."""
        compiled = self.queues[name]
        if compiled.parent is None:
            return False
        used = self.usage[name].get(fr, 0)
        if used + value <= compiled.nominal.get(fr, 0):
            return True
        if compiled.parent.parent is None:
            return False  # a flat cohort: the only subtree above the queue is the whole tree
        remaining = value - max(0, compiled.guaranteed.get(fr, 0) - used)
        node: CohortNode | None = compiled.parent
        while node is not None:
            held = node.usage.get(fr, 0)
            if held + remaining <= node.subtree.get(fr, 0):
                return node.parent is not None
            remaining -= max(0, node.guaranteed.get(fr, 0) - held)
            node = node.parent
        return False

    def view(self, name: str, fr: FlavorResource, available: int | None = None) -> QuotaView:
        """``available`` broken down for a human-readable reason (``available``: when the caller
        has just read it; every full queue's head is graded with one)."""
        compiled = self.queues.get(name)
        nominal = compiled.nominal.get(fr, 0) if compiled else 0
        used = self.usage.get(name, {}).get(fr, 0)
        if available is None:
            available = self.available(name, fr)
        return made(
            QuotaView,
            nominal=nominal,
            borrowable=available + used - nominal,
            in_use=used,
            available=available,
        )

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
                if compiled.parent is not None:
                    limit = compiled.borrowing_limit.get(fr)
                    cap = None if limit is None else compiled.nominal[fr] + limit
                if cap is not None and used > cap:
                    out.append(f"ClusterQueue {name} {fr}: {used} > {cap}")
        for cohort in sorted(self.cohorts):
            node = self.cohorts[cohort]
            for fr in sorted(fr for fr, v in node.usage.items() if v):
                limit = node.borrowing_limit.get(fr) if node.parent is not None else 0
                if limit is not None and node.usage[fr] > node.subtree.get(fr, 0) + limit:
                    out.append(f"cohort {cohort} {fr}: {node.usage[fr]} > {node.subtree.get(fr, 0) + limit}")
        return out
