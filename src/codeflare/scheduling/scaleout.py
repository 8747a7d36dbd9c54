"""Scale-out and scale-in decisions for node groups (InstaScale's role), as plain data in and out.

``plan_scale_out`` takes the workloads that wait only on node capacity (their capacity shortfalls,
pod sets and the nodeLabels of the flavors involved), the node groups a provider offers (template
labels, replicas, the allocatable of one node) and the requests already recorded on the groups. For
each workload, in the order given, it picks the group whose template labels satisfy a short
flavor's nodeLabels and needs the fewest new nodes (pods packed first-fit-decreasing onto the
node shape, after what free capacity the flavor still has), and caps the nodes added across all
workloads at ``max_nodes``. A workload that no group can help, or that the cap leaves out, gets a
reason instead. ``plan_scale_in`` gives back what released requests added, idle nodes only.
No I/O, no clock reads, deterministic; it does not talk to any provider or know its API.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from codeflare.scheduling.model import PodSet
from codeflare.scheduling.results import Shortfall

Requests = Mapping[str, int]  # resource -> milli-units


@dataclass(frozen=True)
class CapacityShortfall:
    """Node capacity missing in one flavor for one resource (milli-units)."""

    flavor: str
    resource: str
    requested: int
    available: int

    @property
    def missing(self) -> int:
        return max(0, self.requested - self.available)


@dataclass(frozen=True)
class PendingWorkload:
    """A workload pending on node capacity only: its pods, shortfalls and their flavors' nodeLabels."""

    key: str
    pod_sets: tuple[PodSet, ...]
    shortfalls: tuple[CapacityShortfall, ...]
    flavor_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeGroup:
    """A scalable group of identical nodes (a MachineSet or a MachineDeployment)."""

    name: str  # unique among groups, e.g. "openshift-machine-api/gpu-a100"
    kind: str  # "MachineSet" | "MachineDeployment"
    replicas: int
    labels: Mapping[str, str]  # labels the group's nodes carry
    allocatable: Requests  # what one node of the group offers

    @property
    def title(self) -> str:
        """``MachineSet ns/name``, as messages name the group."""
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class ScaleRequest:
    """``nodes`` new nodes of ``group`` asked for ``workload`` (whose flavor ``flavor`` they serve)."""

    workload: str
    group: str
    nodes: int
    flavor: str = ""


@dataclass
class ScaleOutPlan:
    """New replicas per changed group, new and still-waiting requests, and refusals with reasons."""

    replicas: dict[str, int] = field(default_factory=dict)
    requests: dict[str, ScaleRequest] = field(default_factory=dict)
    waiting: dict[str, ScaleRequest] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordedRequest:
    """A request as recorded on its group; ``released_at`` once its workload finished or was deleted."""

    workload: str
    group: str
    nodes: int
    requested_at: float
    released_at: float | None = None


@dataclass(frozen=True)
class ScaleIn:
    """For one group: nodes to mark for deletion and, per recorded workload, the nodes still held."""

    group: str
    remove: tuple[str, ...]
    remaining: dict[str, int]


def capacity_shortfalls(shortfalls: Iterable[Shortfall]) -> tuple[CapacityShortfall, ...] | None:
    """The capacity shortfalls scale-out acts on, or None unless node capacity alone is short.

    Reads the engine's structured shortfalls (:meth:`codeflare.scheduling.Shortfall.record`), never
    the words of a reason: a quota shortfall among them means scale-out cannot help.
    """
    found: list[CapacityShortfall] = []
    for s in shortfalls:
        if s.kind != "capacity":
            return None
        found.append(CapacityShortfall(s.flavor, s.resource, s.requested, s.available))
    return tuple(found) or None


def labels_satisfy(labels: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    """Whether ``labels`` carry every ``wanted`` label with its value."""
    return all(labels.get(k) == v for k, v in wanted.items())


def _pods(pod_sets: Sequence[PodSet], resources: set[str]) -> list[dict[str, int]]:
    """One requests dict per pod of the pod sets that ask for any of ``resources``."""
    out: list[dict[str, int]] = []
    for ps in pod_sets:
        per_pod = {r: q.milli for r, q in ps.requests.items() if q.milli > 0}
        if any(r in resources for r in per_pod):
            out.extend(dict(per_pod) for _ in range(ps.count))
    return out


def _fits(pod: Mapping[str, int], room: Mapping[str, int], constrained: Sequence[str]) -> bool:
    return all(pod.get(r, 0) <= room.get(r, 0) for r in constrained)


def nodes_needed(
    pods: Sequence[Mapping[str, int]],
    shape: Requests,
    deficits: Requests,
    free: Requests,
) -> int | None:
    """New nodes of ``shape`` that cover ``deficits`` and hold the pods left over by ``free``.

    Constrained resources are those of ``shape`` and of ``deficits``; ``free`` is what the flavor's
    current nodes still offer of the deficit resources (others are taken as unconstrained there).
    Pods go first-fit-decreasing: into the free capacity if they fit, else onto new nodes. None
    when some pod fits on no node of the shape or a deficit resource is missing from the shape.
    """
    constrained = sorted(set(shape) | set(deficits))
    if any(shape.get(r, 0) <= 0 for r, amount in deficits.items() if amount > 0):
        return None
    if any(not _fits(pod, shape, constrained) for pod in pods):
        return None
    aggregate = max((-(-amount // shape[r]) for r, amount in deficits.items() if amount > 0), default=0)
    room = {r: free.get(r, 0) for r in deficits}
    bins: list[dict[str, int]] = []
    for pod in sorted(pods, key=lambda p: tuple(-p.get(r, 0) for r in constrained)):
        if _fits(pod, room, list(room)):
            for r in room:
                room[r] -= pod.get(r, 0)
            continue
        for node in bins:
            if _fits(pod, node, constrained):
                break
        else:
            node = dict(shape)
            bins.append(node)
        for r in constrained:
            node[r] = node.get(r, 0) - pod.get(r, 0)
    return max(aggregate, len(bins))


@dataclass(frozen=True)
class _Option:
    nodes: int
    flavor_rank: int
    group: str
    flavor: str
    used_free: tuple[tuple[str, int], ...]


def _options(
    workload: PendingWorkload, groups: Sequence[NodeGroup], used_free: Mapping[tuple[str, str], int]
) -> tuple[list[_Option], list[str]]:
    """Every (flavor, group) that could make the workload fit, and why others could not."""
    flavors: list[str] = []
    by_flavor: dict[str, dict[str, CapacityShortfall]] = {}
    for s in workload.shortfalls:
        if s.flavor not in by_flavor:
            flavors.append(s.flavor)
        current = by_flavor.setdefault(s.flavor, {}).get(s.resource)
        if current is None or s.requested > current.requested:
            by_flavor[s.flavor][s.resource] = s
    options: list[_Option] = []
    notes: list[str] = []
    for rank, flavor in enumerate(flavors):
        wanted = workload.flavor_labels.get(flavor)
        if wanted is None:
            notes.append(f"flavor {flavor} is unknown")
            continue
        short = by_flavor[flavor]
        free = {r: max(0, s.available - used_free.get((flavor, r), 0)) for r, s in short.items()}
        deficits = {r: max(0, s.requested - free[r]) for r, s in short.items()}
        pods = _pods(workload.pod_sets, set(short))
        matching = [g for g in groups if labels_satisfy(g.labels, wanted)]
        if not matching:
            notes.append(f"no node group has the labels of flavor {flavor}")
            continue
        for group in matching:
            nodes = nodes_needed(pods, group.allocatable, deficits, free)
            if nodes is None:
                notes.append(f"a pod does not fit on one node of {group.title}")
                continue
            taken = tuple(sorted((r, min(free[r], short[r].requested)) for r in short))
            options.append(_Option(nodes, rank, group.name, flavor, taken))
    return options, notes


def plan_scale_out(
    pending: Sequence[PendingWorkload],
    groups: Sequence[NodeGroup],
    recorded: Sequence[RecordedRequest],
    max_nodes: int,
) -> ScaleOutPlan:
    """Decide new replicas for the groups so that the pending workloads fit, within ``max_nodes``.

    ``pending`` is in the order workloads should be served; ``recorded`` are the requests the
    groups already carry (released or not): their nodes count against ``max_nodes`` and their
    workloads are never scaled for again.
    """
    ordered = sorted(groups, key=lambda g: g.name)
    by_name = {g.name: g for g in ordered}
    plan = ScaleOutPlan()
    added = sum(r.nodes for r in recorded)
    already = {r.workload: r for r in recorded if r.released_at is None}
    used_free: dict[tuple[str, str], int] = {}
    for workload in pending:
        record = already.get(workload.key)
        if record is not None:
            plan.waiting[workload.key] = ScaleRequest(record.workload, record.group, record.nodes)
            continue
        options, notes = _options(workload, ordered, used_free)
        if not options:
            detail = "; ".join(dict.fromkeys(notes)) or "no capacity shortfall to act on"
            plan.refused[workload.key] = f"scale-out cannot help: {detail}"
            continue
        best = min(options, key=lambda o: (o.nodes, o.flavor_rank, o.group))
        group = by_name[best.group]
        if added + best.nodes > max_nodes:
            plan.refused[workload.key] = (
                f"needs {best.nodes} new nodes of {group.title}, but maxScaleoutAllowed "
                f"({max_nodes}) leaves {max(0, max_nodes - added)}"
            )
            continue
        added += best.nodes
        plan.replicas[group.name] = plan.replicas.get(group.name, group.replicas) + best.nodes
        plan.requests[workload.key] = ScaleRequest(workload.key, group.name, best.nodes, best.flavor)
        for resource, amount in best.used_free:
            used_free[(best.flavor, resource)] = used_free.get((best.flavor, resource), 0) + amount
    return plan


def plan_scale_in(
    recorded: Sequence[RecordedRequest],
    idle_nodes: Mapping[str, Sequence[str]],
    now: float,
    delay: float,
) -> list[ScaleIn]:
    """Per group, the idle nodes to remove for requests released at least ``delay`` ago.

    ``idle_nodes`` lists, per group and in preference order, the nodes that run no pod of any
    workload still holding them. Never removes more than released requests added, nor a node
    not listed; a request only partly given back keeps the rest for a later call.
    """
    out: list[ScaleIn] = []
    by_group: dict[str, list[RecordedRequest]] = {}
    for record in sorted(recorded, key=lambda r: (r.group, r.workload)):
        by_group.setdefault(record.group, []).append(record)
    for group, records in by_group.items():
        due = [r for r in records if r.released_at is not None and now - r.released_at >= delay]
        idle = list(idle_nodes.get(group, ()))
        budget = min(sum(r.nodes for r in due), len(idle))
        if budget == 0:
            continue
        remaining = {r.workload: r.nodes for r in records}
        left = budget
        for record in due:
            give = min(left, record.nodes)
            remaining[record.workload] -= give
            left -= give
        remaining = {k: v for k, v in remaining.items() if v > 0}
        out.append(ScaleIn(group, tuple(idle[:budget]), remaining))
    return out


@dataclass(frozen=True)
class GroupNode:
    """A node of a group as the reservation decision sees it."""

    name: str
    created: float
    reserved_for: str | None = None


def plan_reservations(
    recorded: Sequence[RecordedRequest], waiting: Collection[str], nodes: Sequence[GroupNode]
) -> dict[str, str | None]:
    """Which workload each node of one group is reserved for; only the nodes whose reservation changes.

    A node brought up for a scale-out request is its workload's capacity alone until that workload
    is admitted (no other pending workload may take it meanwhile). Requests are served oldest
    first; a node counts for a request only when it was created at or after the request (so nodes
    already running other work are never reserved). Existing reservations of still-``waiting``
    workloads are kept up to their requests' node counts; all others are lifted.
    """
    active = sorted(
        (r for r in recorded if r.released_at is None and r.workload in waiting),
        key=lambda r: (r.requested_at, r.workload),
    )
    wanted = {r.workload: r.nodes for r in active}
    desired: dict[str, str | None] = {}
    for node in sorted(nodes, key=lambda n: (n.created, n.name)):
        key = node.reserved_for
        if key is not None and wanted.get(key, 0) > 0:
            wanted[key] -= 1
            desired[node.name] = key
        else:
            desired[node.name] = None
    for request in active:
        for node in sorted(nodes, key=lambda n: (n.created, n.name)):
            if wanted[request.workload] == 0:
                break
            if desired[node.name] is None and node.created >= int(request.requested_at):
                desired[node.name] = request.workload
                wanted[request.workload] -= 1
    return {n.name: desired[n.name] for n in nodes if desired[n.name] != n.reserved_for}


def describe_request(request: ScaleRequest, group: NodeGroup | None) -> str:
    """The words a pending reason carries: ``waiting for 2 new nodes of MachineSet ns/gpu``."""
    title = group.title if group is not None else request.group
    noun = "node" if request.nodes == 1 else "nodes"
    return f"waiting for {request.nodes} new {noun} of {title}"
