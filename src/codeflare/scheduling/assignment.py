"""Flavor assignment: which flavor of each resource group a workload's pod sets would use.

For each pod set and resource group, flavors are tried in the order the ClusterQueue lists
them, honouring ``flavorFungibility`` (stop at a flavor that fits by borrowing, or that needs
preemption, or try the next). The result says whether the workload fits now, could fit by
preempting, or cannot fit, with the shortfalls that explain it. It changes no state and does
not choose preemption victims.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.capacity import NodeCapacity
from codeflare.scheduling.model import Admission, ClusterQueue, PodSetAssignment, ResourceFlavor
from codeflare.scheduling.quota import CompiledQueue, FlavorResource, QuotaBook
from codeflare.scheduling.results import Shortfall

NO_FIT, PREEMPT, FIT = 0, 1, 2

PodSetShape = tuple[str, int, tuple[tuple[str, int], ...]]
Shape = tuple[PodSetShape, ...]


@dataclass
class Assignment:
    """A workload's flavors and usage in one ClusterQueue, and how well it fits."""

    cluster_queue: str
    mode: int = FIT
    borrows: bool = False
    pod_sets: list[tuple[str, dict[str, str], dict[str, int], int]] = field(default_factory=list)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    shortfalls: tuple[Shortfall, ...] = ()
    not_covered: str | None = None
    workload: str | None = None  # whose view of node capacity (reserved nodes) was used

    def admission(self, now: float) -> Admission:
        """The Admission to record when this assignment is admitted at ``now``."""
        return Admission(
            self.cluster_queue,
            tuple(
                PodSetAssignment(name, flavors, {r: Quantity(v) for r, v in usage.items()}, count)
                for name, flavors, usage, count in self.pod_sets
            ),
            admitted_at=now,
        )


@dataclass
class AssignmentContext:
    """The state flavor assignment reads: quota, flavors, and the optional node capacity."""

    book: QuotaBook
    flavors: dict[str, ResourceFlavor]
    capacity: NodeCapacity | None = None

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


def _may_preempt(spec: ClusterQueue, compiled: CompiledQueue, fr: FlavorResource, value: int) -> bool:
    policy = spec.preemption
    in_cohort = spec.cohort is not None
    reclaim = in_cohort and policy.reclaim_within_cohort != "Never"
    borrow = in_cohort and policy.borrow_within_cohort.policy != "Never"
    if policy.within_cluster_queue == "Never" and not reclaim and not borrow:
        return False
    if value <= compiled.nominal[fr]:
        return True
    limit = compiled.borrowing_limit[fr]
    return borrow and (limit is None or value <= compiled.nominal[fr] + limit)


def _try_flavor(
    ctx: AssignmentContext,
    compiled: CompiledQueue,
    flavor: str,
    requests: list[tuple[str, int]],
    pending_usage: dict[FlavorResource, int],
    workload: str | None,
) -> tuple[int, bool, list[Shortfall]]:
    name = compiled.spec.name
    mode, borrows, shortfalls = FIT, False, []
    own = ctx.book.usage.get(name, {})
    for resource, amount in requests:
        fr = (flavor, resource)
        if fr not in compiled.nominal:
            shortfalls.append(Shortfall("quota", name, flavor, resource, amount, 0))
            return NO_FIT, False, shortfalls
        value = pending_usage.get(fr, 0) + amount
        available = ctx.book.available(name, fr)
        nominal = compiled.nominal[fr]
        if own.get(fr, 0) + value > nominal:
            borrows = True
        if value <= available:
            lack = ctx.capacity_shortfall(name, flavor, resource, value, workload)
            if lack is not None:
                shortfalls.append(lack)
                mode = NO_FIT
            continue
        view = ctx.book.view(name, fr)
        shortfalls.append(
            Shortfall("quota", name, flavor, resource, value, view.available,
                      nominal=view.nominal, borrowable=view.borrowable, in_use=view.in_use)
        )  # fmt: skip
        mode = min(mode, PREEMPT if _may_preempt(compiled.spec, compiled, fr, value) else NO_FIT)
    return mode, borrows, shortfalls


def assign_flavors(
    ctx: AssignmentContext, compiled: CompiledQueue, shape: Shape, workload: str | None = None
) -> Assignment:
    """Choose flavors for every pod set of ``workload`` (of ``shape``) in the queue ``compiled``."""
    spec = compiled.spec
    out = Assignment(spec.name, workload=workload)
    all_shortfalls: list[Shortfall] = []
    fungibility = spec.flavor_fungibility
    for pod_set_name, count, per_pod in shape:
        by_group: dict[int, list[tuple[str, int]]] = {}
        for resource, amount in per_pod:
            group = compiled.group_of.get(resource)
            if group is None:
                out.mode = NO_FIT
                out.not_covered = f"resource {resource} is not covered by ClusterQueue {spec.name}"
                return out
            by_group.setdefault(group, []).append((resource, amount * count))
        chosen: dict[str, str] = {}
        for group in sorted(by_group):
            requests = by_group[group]
            best: tuple[tuple[int, bool], str] | None = None
            for flavor in compiled.groups[group][1]:
                mode, borrows, shortfalls = _try_flavor(ctx, compiled, flavor, requests, out.usage, workload)
                all_shortfalls.extend(shortfalls)
                rank = (mode, not borrows)
                if best is None or rank > best[0]:
                    best = (rank, flavor)
                if mode == FIT and (not borrows or fungibility.when_can_borrow == "Borrow"):
                    break
                if mode == PREEMPT and fungibility.when_can_preempt == "Preempt":
                    break
            if best is None or best[0][0] == NO_FIT:
                out.mode = NO_FIT
                out.shortfalls = tuple(all_shortfalls)
                return out
            (mode, not_borrowing), flavor = best
            out.mode = min(out.mode, mode)
            out.borrows = out.borrows or not not_borrowing
            for resource, amount in requests:
                chosen[resource] = flavor
                fr = (flavor, resource)
                out.usage[fr] = out.usage.get(fr, 0) + amount
        usage = {resource: amount * count for resource, amount in per_pod}
        out.pod_sets.append((pod_set_name, chosen, usage, count))
    if out.mode != FIT:
        out.shortfalls = tuple(all_shortfalls)
    return out
