"""Flavor assignment: which flavor of each resource group a workload's pod sets would use.

For each pod set and resource group, flavors are tried in the order the ClusterQueue lists them,
as Kueue's flavor assigner does: a flavor whose taints the pod set does not tolerate, or whose
node labels do not satisfy its node selector/affinity, is skipped (:mod:`placement`); the pods
resource is charged (one per pod) when the queue covers ``pods``; each resource is graded fit,
reclaim, preempt, preempt-without-candidates (asked of a preemption oracle) or no-fit, and
``flavorFungibility`` says whether to stop at a flavor that needs borrowing or preemption or
to try the next, the best graded flavor winning. The result says whether the workload fits
now, could fit by preempting, or cannot fit, with structured shortfalls that explain it. It
changes no state and does not choose preemption victims.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.afs import UsageLedger
from codeflare.scheduling.capacity import NodeCapacity
from codeflare.scheduling.model import Admission, PodSetAssignment, ResourceFlavor
from codeflare.scheduling.placement import Placement, flavor_mismatch, label_keys
from codeflare.scheduling.quota import CompiledQueue, FlavorResource, QuotaBook
from codeflare.scheduling.records import made
from codeflare.scheduling.results import Shortfall

# grades, worst first (Kueue's preemptionMode): the representative mode of several is the worst
NO_FIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = 0, 1, 2, 3, 4

PodSetShape = tuple[str, int, tuple[tuple[str, int], ...], Placement | None]
Shape = tuple[PodSetShape, ...]

PreemptionOracle = Callable[[FlavorResource, int], tuple[int, bool]]
"""(flavor-resource, quantity) -> (NO_CANDIDATES | PREEMPT | RECLAIM, borrows after preempting)."""

PODS = "pods"


@dataclass
class Assignment:
    """A workload's flavors and usage in one ClusterQueue, and how well it fits."""

    cluster_queue: str
    mode: int = FIT
    borrows: bool = False
    level: int = 0  # Kueue's Assignment.Borrowing: the highest borrowing level of any flavor
    pod_sets: list[tuple[str, dict[str, str], dict[str, int], int]] = field(default_factory=list)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    shortfalls: tuple[Shortfall, ...] = ()
    not_covered: str | None = None
    mismatches: tuple[str, ...] = ()  # flavors skipped for taints or node affinity (Kueue's words)
    workload: str | None = None  # whose view of node capacity (reserved nodes) was used

    def admission(self, now: float) -> Admission:
        """The Admission to record when this assignment is admitted at ``now``."""
        return Admission(
            self.cluster_queue,
            tuple(
                _pod_set_assignment(name, flavors, usage, count)
                for name, flavors, usage, count in self.pod_sets
            ),
            admitted_at=now,
        )


def _pod_set_assignment(
    name: str, flavors: dict[str, str], usage: dict[str, int], count: int
) -> PodSetAssignment:
    """A PodSetAssignment built as its ``__post_init__`` would leave it (fresh dicts, Quantity
    values) without running it: its inputs are already normal, and an admission is made per
    admitted workload of a forecast (about half of building one)."""
    made = object.__new__(PodSetAssignment)
    made.__dict__.update(
        name=name,
        flavors=dict(flavors),
        resource_usage={r: Quantity(v) for r, v in usage.items()},
        count=count,
    )
    return made


@dataclass
class AssignmentContext:
    """The state flavor assignment reads: quota, flavors, and the optional node capacity."""

    book: QuotaBook
    flavors: dict[str, ResourceFlavor]
    capacity: NodeCapacity | None = None
    fair_sharing: bool = False  # fair sharing may preempt while borrowing (reclaimWithinCohort)
    afs: UsageLedger | None = None  # admission fair sharing: preemption takes from busy LocalQueues first
    # (queue, shape) -> (the compiled queue it was made for, its layout): see _layout
    layouts: dict[tuple[str, Shape], tuple[CompiledQueue, Layout]] = field(default_factory=dict, repr=False)

    def capacity_shortfall(
        self, cq: str, flavor: str, resource: str, value: int, workload: str | None = None
    ) -> Shortfall | None:
        """A capacity shortfall when ``value`` more of ``resource`` does not fit on the nodes
        ``workload`` may use."""
        if self.capacity is None:
            return None
        view = self.capacity.view(
            self.flavors[flavor], resource, self.flavors, self.book.flavor_usage, workload
        )
        if value <= view.available:
            return None
        return Shortfall(
            "capacity", cq, flavor, resource, value, view.available,
            nodes=view.nodes, allocatable=view.allocatable, unmanaged=view.unmanaged, in_use=view.managed,
        )  # fmt: skip


Grade = tuple[int, int]  # (mode, minus Kueue's borrowing level: 0 = not borrowing): larger is better


def _may_try_preemption(
    ctx: AssignmentContext, compiled: CompiledQueue, fr: FlavorResource, value: int
) -> bool:
    """Kueue's gate before simulating preemption: the request fits in nominal quota alone, or a
    cohort below the root holds it without borrowing (mayReclaimInHierarchy), or the queue may
    preempt while borrowing (borrowWithinCohort, or fair sharing with reclaim)."""
    policy = compiled.spec.preemption
    bwc = compiled.parent is not None and policy.borrow_within_cohort.policy != "Never"
    fair = ctx.fair_sharing and policy.reclaim_within_cohort != "Never"
    if value <= compiled.nominal[fr] or bwc or fair:
        return True
    return ctx.book.reclaims_in_hierarchy(compiled.spec.name, fr, value)


def quota_shortfall(
    book: QuotaBook, name: str, fr: FlavorResource, value: int, available: int, maximum: int
) -> Shortfall:
    """The quota shortfall of ``value`` of ``fr`` in queue ``name``, which has ``available`` now
    and ``maximum`` were nothing used."""
    view = book.view(name, fr, available)
    return made(
        Shortfall, kind="quota", cluster_queue=name, flavor=fr[0], resource=fr[1], requested=value,
        available=view.available, nominal=view.nominal, borrowable=view.borrowable,
        in_use=view.in_use, nodes=0, allocatable=0, unmanaged=0, maximum=maximum,
    )  # fmt: skip


def _grade_resource(
    ctx: AssignmentContext, compiled: CompiledQueue, fr: FlavorResource, value: int,
    workload: str | None, oracle: PreemptionOracle | None,
) -> tuple[Grade, Shortfall | None]:  # fmt: skip
    name = compiled.spec.name
    book = ctx.book
    if fr not in compiled.nominal:
        return (NO_FIT, -1), Shortfall("quota", name, fr[0], fr[1], value, 0, maximum=0)
    available = book.available(name, fr)
    if value <= available:
        lack = ctx.capacity_shortfall(name, fr[0], fr[1], value, workload)
        if lack is not None:
            return (NO_FIT, -1), lack
        return (FIT, -book.borrowing_level(name, fr, value)), None
    maximum = book.potential_available(name, fr)
    shortfall = quota_shortfall(book, name, fr, value, available, maximum)
    if value > maximum or not _may_try_preemption(ctx, compiled, fr, value):
        return (NO_FIT, -1), shortfall
    if oracle is None:
        return (PREEMPT, 0 if value <= compiled.nominal[fr] else -1), shortfall
    mode, borrows = oracle(fr, value)
    return (mode, -1 if borrows else 0), shortfall


def _should_try_next(grade: Grade, compiled: CompiledQueue) -> bool:
    mode, level = grade
    fungibility = compiled.spec.flavor_fungibility
    if mode in (NO_FIT, NO_CANDIDATES):
        return True
    if mode in (PREEMPT, RECLAIM) and fungibility.when_can_preempt == "TryNextFlavor":
        return True
    return level != 0 and fungibility.when_can_borrow == "TryNextFlavor"


def _per_pod(compiled: CompiledQueue, per_pod: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    if PODS in compiled.group_of and all(r != PODS for r, _ in per_pod):
        return (*per_pod, (PODS, 1000))  # Kueue charges one pod per pod when the queue covers pods
    return per_pod


PodSetLayout = tuple[
    str, int, Placement | None, list[tuple[int, list[tuple[str, int]]]], dict[str, int], str | None
]
"""A pod set as flavor assignment reads it: name, count, placement, its requests (times count) by
resource group in group order, its usage per resource, and the first resource the queue does not
cover (then nothing after it)."""
Layout = tuple[PodSetLayout, ...]


def _layout(ctx: AssignmentContext, compiled: CompiledQueue, shape: Shape) -> Layout:
    """The pod sets of ``shape`` laid out over ``compiled``'s resource groups: the same for every
    evaluation of a shape class until the queue changes, so made once (a forecast evaluates the
    few shape classes of a queue tens of thousands of times)."""
    key = (compiled.spec.name, shape)
    known = ctx.layouts.get(key)
    if known is not None and known[0] is compiled:
        return known[1]
    pod_sets: list[PodSetLayout] = []
    for pod_set_name, count, per_pod, placement in shape:
        requests = _per_pod(compiled, per_pod)
        by_group: dict[int, list[tuple[str, int]]] = {}
        not_covered = None
        for resource, amount in requests:
            group = compiled.group_of.get(resource)
            if group is None:
                not_covered = f"resource {resource} is not covered by ClusterQueue {compiled.spec.name}"
                break
            by_group.setdefault(group, []).append((resource, amount * count))
        usage = {resource: amount * count for resource, amount in requests}
        groups = [(group, by_group[group]) for group in sorted(by_group)]
        pod_sets.append((pod_set_name, count, placement, groups, usage, not_covered))
        if not_covered is not None:
            break
    layout = tuple(pod_sets)
    ctx.layouts[key] = (compiled, layout)
    return layout


def assign_flavors(
    ctx: AssignmentContext,
    compiled: CompiledQueue,
    shape: Shape,
    workload: str | None = None,
    oracle: PreemptionOracle | None = None,
) -> Assignment:
    """Choose flavors for every pod set of ``workload`` (of ``shape``) in the queue ``compiled``.

    ``oracle`` tells whether preemption would find candidates in a flavor (Kueue tries the next
    flavor when it would not); without one, preemption is taken as possible.
    """
    spec = compiled.spec
    out = Assignment(spec.name, workload=workload)
    all_shortfalls: list[Shortfall] = []
    mismatches: list[str] = []
    for pod_set_name, count, placement, groups, usage, not_covered in _layout(ctx, compiled, shape):
        if not_covered is not None:
            out.mode = NO_FIT
            out.not_covered = not_covered
            return out
        chosen: dict[str, str] = {}
        for group, requests in groups:
            best = _best_flavor(
                ctx, compiled, group, requests, placement, out, oracle, all_shortfalls, mismatches
            )
            if best is None:
                out.mode = NO_FIT
                out.shortfalls, out.mismatches = tuple(all_shortfalls), tuple(mismatches)
                return out
            (mode, level), flavor, borrows = best
            out.mode = min(out.mode, mode)
            out.borrows = out.borrows or borrows
            out.level = max(out.level, -level)
            for resource, amount in requests:
                chosen[resource] = flavor
                fr = (flavor, resource)
                out.usage[fr] = out.usage.get(fr, 0) + amount
        out.pod_sets.append((pod_set_name, chosen, usage, count))  # usage: shared, only read
    if out.mode != FIT:
        out.shortfalls, out.mismatches = tuple(all_shortfalls), tuple(mismatches)
    return out


def refit(ctx: AssignmentContext, compiled: CompiledQueue, assignment: Assignment) -> Assignment | None:
    """What :func:`assign_flavors` would give again for the fitting ``assignment`` it made in
    ``compiled``, when since then no quota, flavor or node changed (usage may have been charged
    and released) and each resource group has one flavor and nodes are not checked: the flavors
    are the same, so only whether the usage still fits and how far it borrows are read again.
    None when that is not enough to say (the full assignment is needed): a cohort's candidates
    are otherwise assigned again after every admission of the round before theirs, and a shape
    class's next head after its previous one was admitted.

    Exact because a fitting assignment grades every resource by the fast path of
    :func:`_best_flavor`, and both that test and ``borrowing_level`` grow with the value: the
    totals over pod sets decide what each pod set's running value decided."""
    if assignment.mode != FIT or ctx.capacity is not None or not compiled.one_flavor:
        return None
    book, name = ctx.book, compiled.spec.name
    own = book.usage.get(name, {})
    borrows, level = False, 0
    for fr, value in assignment.usage.items():
        if value > book.available(name, fr):
            return None
        if own.get(fr, 0) + value > compiled.nominal[fr]:
            borrows = True
            level = max(level, book.borrowing_level(name, fr, value))
    out = Assignment(name, FIT, borrows, level, assignment.pod_sets, assignment.usage)
    out.workload = assignment.workload
    return out


def _best_flavor(
    ctx: AssignmentContext, compiled: CompiledQueue, group: int, requests: list[tuple[str, int]],
    placement: Placement | None, out: Assignment, oracle: PreemptionOracle | None,
    shortfalls: list[Shortfall], mismatches: list[str],
) -> tuple[Grade, str, bool] | None:  # fmt: skip
    """The flavor of one resource group for one pod set, its grade and whether any of its
    resources borrows; None when none fits."""
    flavor_names = compiled.groups[group][1]
    keys: frozenset[str] | None = None
    best: tuple[Grade, str, bool] | None = None
    book, name, usage = ctx.book, compiled.spec.name, out.usage
    own = book.usage.get(name, {})
    fast = ctx.capacity is None  # the common case, graded inline: fits in quota, no node check
    for flavor in flavor_names:
        spec = ctx.flavors.get(flavor)
        if spec is None:
            mismatches.append(f"flavor {flavor} not found")
            continue
        if placement is not None or spec.node_taints:
            if keys is None:
                keys = label_keys(ctx.flavors.get(f) for f in flavor_names)
            why = flavor_mismatch(spec, placement, keys)
            if why is not None:
                mismatches.append(why)
                continue
        grade: Grade = (FIT, 0)
        borrows = False  # Kueue's Assignment.Borrowing: any resource borrows, not only the worst
        for resource, amount in requests:
            fr = (flavor, resource)
            value = usage.get(fr, 0) + amount
            nominal = compiled.nominal.get(fr)
            if fast and nominal is not None and value <= book.available(name, fr):
                if own.get(fr, 0) + value > nominal:  # fits by borrowing
                    grade, borrows = min(grade, (FIT, -book.borrowing_level(name, fr, value))), True
                continue
            this, shortfall = _grade_resource(ctx, compiled, fr, value, out.workload, oracle)
            if shortfall is not None:
                shortfalls.append(shortfall)
            grade, borrows = min(grade, this), borrows or this[1] != 0
            if grade[0] == NO_FIT:
                break
        if grade[0] != NO_FIT and (best is None or grade > best[0]):
            best = (grade, flavor, borrows)
        if not _should_try_next(grade, compiled):
            best = (grade, flavor, borrows)
            break
    return best


@dataclass(frozen=True, eq=False)
class Regrade:
    """What decided a one-flavor queue's assignment that neither fits nor is ruled out (it could
    preempt): each resource's running value in assignment order, and whether it fitted. Every
    other input of its grades is the queue's and the flavors' configuration (``generation``), so
    while each value fits or not as it did, :func:`assign_flavors` would grade it the same and
    only its shortfalls, read afresh (:func:`regraded`), differ. No node capacity is involved."""

    generation: int
    steps: tuple[tuple[FlavorResource, int, bool], ...]
    usage: dict[FlavorResource, int]  # the assignment's, only read


def regrade_of(
    ctx: AssignmentContext, compiled: CompiledQueue, shape: Shape, assignment: Assignment, generation: int
) -> Regrade | None:
    """The :class:`Regrade` of ``assignment`` (just made by :func:`assign_flavors` for ``shape``,
    configuration ``generation``), or None where flavors are chosen or nodes checked. (A one-flavor
    assignment that is not ruled out skipped no flavor: it has no mismatches.)"""
    if ctx.capacity is not None or not compiled.one_flavor or assignment.mode in (FIT, NO_FIT):
        return None
    book, name = ctx.book, compiled.spec.name
    running: dict[FlavorResource, int] = {}
    steps: list[tuple[FlavorResource, int, bool]] = []
    for _, _, _, groups, _, _ in _layout(ctx, compiled, shape):
        for group, requests in groups:
            flavor = compiled.groups[group][1][0]
            for resource, amount in requests:
                fr = (flavor, resource)
                value = running[fr] = running.get(fr, 0) + amount
                steps.append((fr, value, value <= book.available(name, fr)))
    return Regrade(generation, tuple(steps), assignment.usage)


def regraded(
    ctx: AssignmentContext, compiled: CompiledQueue, regrade: Regrade, generation: int
) -> tuple[Shortfall, ...] | None:
    """The shortfalls :func:`assign_flavors` would give now for the assignment ``regrade``
    describes, when it would grade it the same (the same configuration, which fixes the most the
    queue can ever hold, and each value fitting or not as it did); else None: assign it again."""
    if regrade.generation != generation:
        return None
    book, name = ctx.book, compiled.spec.name
    out: list[Shortfall] = []
    for fr, value, fitted in regrade.steps:
        available = book.available(name, fr)
        if (value <= available) != fitted:
            return None
        if not fitted:
            out.append(quota_shortfall(book, name, fr, value, available, book.potential_available(name, fr)))
    return tuple(out)
