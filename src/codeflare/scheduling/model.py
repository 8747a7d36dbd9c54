"""Plain, immutable input and output types of the admission engine (Kueue's shapes, in the engine's
names: the operator maps v1beta2 objects onto them, e.g. ``cohortName`` is ``cohort`` and
``MayStopSearch`` is ``Borrow``/``Preempt``, in ``operator/queueing/convert.py``).

ResourceFlavor, ClusterQueue (resource groups, flavor quotas, cohort, strategy, preemption,
fungibility, namespace selector, stop policy, fair-sharing weight), Cohort (a node of a cohort
tree: parent, quota, weight), LocalQueue, Workload with PodSets and Admission,
and Node for the optional capacity snapshot. Quantity fields accept strings ("1.5Gi") and are
normalised to ``Quantity``. No Kubernetes client objects, no clocks, no behaviour beyond small
helpers (workload keys; label selection is :mod:`codeflare.k8s.labels`); decisions live in the engine modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from codeflare.k8s.labels import LabelSelector, NodeSelectorTerm
from codeflare.k8s.quantity import Quantity

QueueingStrategy = Literal["BestEffortFIFO", "StrictFIFO"]
StopPolicy = Literal["None", "Hold", "HoldAndDrain"]
WithinClusterQueuePolicy = Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
ReclaimWithinCohortPolicy = Literal["Never", "LowerPriority", "Any"]
BorrowWithinCohortPolicy = Literal["Never", "LowerPriority"]
WhenCanBorrow = Literal["Borrow", "TryNextFlavor"]
WhenCanPreempt = Literal["Preempt", "TryNextFlavor"]


def _set(obj: object, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


def _quantities(values: Mapping[str, Any]) -> dict[str, Quantity]:
    return {str(k): Quantity.parse(v) for k, v in values.items()}


def workload_key(namespace: str, name: str) -> str:
    """The key the engine uses for a workload: ``"namespace/name"``."""
    return f"{namespace}/{name}"


@dataclass(frozen=True)
class ResourceFlavor:
    """A kind of capacity; ``node_labels`` select the nodes that provide it."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: tuple[Mapping[str, str], ...] = ()
    tolerations: tuple[Mapping[str, str], ...] = ()

    def __post_init__(self) -> None:
        _set(self, "node_labels", dict(self.node_labels))
        _set(self, "node_taints", tuple(self.node_taints))
        _set(self, "tolerations", tuple(self.tolerations))


@dataclass(frozen=True)
class ResourceQuota:
    """Quota of one resource in one flavor: nominal, and optional borrowing/lending limits."""

    name: str
    nominal_quota: Quantity
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None

    def __post_init__(self) -> None:
        _set(self, "nominal_quota", Quantity.parse(self.nominal_quota))
        if self.borrowing_limit is not None:
            _set(self, "borrowing_limit", Quantity.parse(self.borrowing_limit))
        if self.lending_limit is not None:
            _set(self, "lending_limit", Quantity.parse(self.lending_limit))


@dataclass(frozen=True)
class FlavorQuotas:
    """One flavor of a resource group with the quota of each covered resource."""

    name: str
    resources: tuple[ResourceQuota, ...]

    def __post_init__(self) -> None:
        _set(self, "resources", tuple(self.resources))


@dataclass(frozen=True)
class ResourceGroup:
    """Resources assigned together; flavors are tried in the order listed."""

    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]

    def __post_init__(self) -> None:
        _set(self, "covered_resources", tuple(self.covered_resources))
        _set(self, "flavors", tuple(self.flavors))


@dataclass(frozen=True)
class BorrowWithinCohort:
    """Whether a workload that must borrow may preempt lower-priority workloads of the cohort."""

    policy: BorrowWithinCohortPolicy = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class Preemption:
    """A ClusterQueue's preemption policy."""

    within_cluster_queue: WithinClusterQueuePolicy = "Never"
    reclaim_within_cohort: ReclaimWithinCohortPolicy = "Never"
    borrow_within_cohort: BorrowWithinCohort = field(default_factory=BorrowWithinCohort)


@dataclass(frozen=True)
class FlavorFungibility:
    """When to stop at a flavor that needs borrowing or preemption instead of trying the next."""

    when_can_borrow: WhenCanBorrow = "Borrow"
    when_can_preempt: WhenCanPreempt = "TryNextFlavor"


@dataclass(frozen=True)
class ClusterQueue:
    """A pool of quota. ``namespace_selector=None`` selects no namespace (Kueue's nil)."""

    name: str
    resource_groups: tuple[ResourceGroup, ...] = ()
    cohort: str | None = None
    queueing_strategy: QueueingStrategy = "BestEffortFIFO"
    namespace_selector: LabelSelector | None = field(default_factory=LabelSelector)
    preemption: Preemption = field(default_factory=Preemption)
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    stop_policy: StopPolicy = "None"
    fair_weight: float = 1.0  # spec.fairSharing.weight; only read when fair sharing is on
    # spec.admissionScope.admissionMode; read only when admission fair sharing is configured
    admission_mode: str | None = None

    def __post_init__(self) -> None:
        _set(self, "resource_groups", tuple(self.resource_groups))
        if self.cohort == "":
            _set(self, "cohort", None)


@dataclass(frozen=True)
class Cohort:
    """Kueue's Cohort object: a node of a cohort tree with its own quota (a shared pool on top
    of its members'), lent to and borrowed from its parent within the quotas' limits.

    A cohort named by a ClusterQueue or as a parent but never given exists with no quota and no
    parent (Kueue's implicit cohort).
    """

    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_weight: float = 1.0

    def __post_init__(self) -> None:
        _set(self, "resource_groups", tuple(self.resource_groups))
        if self.parent == "":
            _set(self, "parent", None)


@dataclass(frozen=True)
class FairSharing:
    """Kueue Configuration's ``fairSharing``: on/off and the preemption strategies, in order."""

    enable: bool = False
    preemption_strategies: tuple[str, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")


@dataclass(frozen=True)
class AdmissionFairSharing:
    """Kueue Configuration's ``admissionFairSharing`` (its presence turns it on): the half-life
    of a LocalQueue's recent usage, how often it is sampled, and the weight of each resource in
    the usage that ranks LocalQueues (missing: 1)."""

    usage_half_life_s: float = 0.0
    usage_sampling_interval_s: float = 300.0
    resource_weights: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LocalQueue:
    """A namespaced queue pointing at a ClusterQueue."""

    namespace: str
    name: str
    cluster_queue: str
    fair_sharing_weight: float | None = None  # spec.fairSharing.weight (admission fair sharing)


@dataclass(frozen=True)
class PodSet:
    """``count`` identical pods, each requesting ``requests``.

    ``tolerations``, ``node_selector`` and ``node_affinity`` (the required terms, ORed) come from
    the pod template; flavor assignment matches them against each flavor's ``nodeTaints`` and
    ``nodeLabels`` as Kueue does.
    """

    name: str
    count: int
    requests: Mapping[str, Quantity]
    tolerations: tuple[Mapping[str, str], ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None

    def __post_init__(self) -> None:
        _set(self, "requests", _quantities(self.requests))
        _set(self, "tolerations", tuple(dict(t) for t in self.tolerations))
        _set(self, "node_selector", dict(self.node_selector))
        if self.node_affinity is not None:
            _set(self, "node_affinity", tuple(tuple(term) for term in self.node_affinity))


@dataclass(frozen=True)
class PodSetAssignment:
    """For one pod set: the flavor of each resource and the total usage charged."""

    name: str
    flavors: Mapping[str, str]
    resource_usage: Mapping[str, Quantity]
    count: int

    def __post_init__(self) -> None:
        _set(self, "flavors", dict(self.flavors))
        _set(self, "resource_usage", _quantities(self.resource_usage))


@dataclass(frozen=True)
class Admission:
    """Quota reserved for a workload in ``cluster_queue``; ``admitted_at`` orders preemption."""

    cluster_queue: str
    pod_set_assignments: tuple[PodSetAssignment, ...]
    admitted_at: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "pod_set_assignments", tuple(self.pod_set_assignments))


@dataclass(frozen=True)
class Workload:
    """A unit of admission. ``admission`` set means admitted (charged to its ClusterQueue)."""

    namespace: str
    name: str
    queue_name: str
    pod_sets: tuple[PodSet, ...]
    priority: int = 0
    creation_time: float = 0.0
    active: bool = True
    admission: Admission | None = None

    def __post_init__(self) -> None:
        _set(self, "pod_sets", tuple(self.pod_sets))

    @property
    def key(self) -> str:
        """``"namespace/name"``."""
        return workload_key(self.namespace, self.name)


@dataclass(frozen=True)
class Node:
    """A node of the capacity snapshot; ``unmanaged_usage`` is what pods not queued by us use.

    ``reserved_for`` names the one workload (``namespace/name``) whose capacity the node is, while
    it was brought up for that workload and the workload is not admitted yet: no other workload
    counts it.
    """

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, Quantity] = field(default_factory=dict)
    unschedulable: bool = False
    unmanaged_usage: Mapping[str, Quantity] = field(default_factory=dict)
    reserved_for: str | None = None

    def __post_init__(self) -> None:
        _set(self, "labels", dict(self.labels))
        _set(self, "allocatable", _quantities(self.allocatable))
        _set(self, "unmanaged_usage", _quantities(self.unmanaged_usage))
