"""codeflare.scheduling: Kueue-compatible admission decisions as plain data in, decisions out.

``AdmissionEngine`` keeps ClusterQueues, LocalQueues, ResourceFlavors, namespaces, workloads and
an optional node snapshot (and Cohort objects: hierarchical cohorts, fair sharing when enabled)
up to date incrementally; ``schedule(now)`` returns admissions,
preemptions, evictions and pending reasons. Amounts are :class:`codeflare.k8s.quantity.Quantity`
(integer milli-units); label selectors are :mod:`codeflare.k8s.labels`'s. Standard library and
``codeflare.k8s`` only; no I/O, no clock reads.
"""

from codeflare.k8s.labels import LabelSelector
from codeflare.k8s.labels import Requirement as LabelSelectorRequirement
from codeflare.k8s.quantity import Quantity, QuantityError
from codeflare.scheduling.afs import LocalQueueUsage
from codeflare.scheduling.cache import admission_usage
from codeflare.scheduling.engine import AdmissionEngine, workload_shape
from codeflare.scheduling.model import (
    Admission,
    AdmissionFairSharing,
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FairSharing,
    FlavorFungibility,
    FlavorQuotas,
    LocalQueue,
    Node,
    PodSet,
    PodSetAssignment,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
    workload_key,
)
from codeflare.scheduling.results import (
    Eviction,
    PendingInfo,
    Preempted,
    SchedulingResult,
    Shortfall,
    decode_shortfalls,
    encode_shortfalls,
)

__all__ = [
    "Admission",
    "AdmissionEngine",
    "AdmissionFairSharing",
    "BorrowWithinCohort",
    "ClusterQueue",
    "Cohort",
    "Eviction",
    "FairSharing",
    "FlavorFungibility",
    "FlavorQuotas",
    "LabelSelector",
    "LabelSelectorRequirement",
    "LocalQueue",
    "LocalQueueUsage",
    "Node",
    "PendingInfo",
    "PodSet",
    "PodSetAssignment",
    "Preempted",
    "Preemption",
    "Quantity",
    "QuantityError",
    "ResourceFlavor",
    "ResourceGroup",
    "ResourceQuota",
    "SchedulingResult",
    "Shortfall",
    "Workload",
    "admission_usage",
    "decode_shortfalls",
    "encode_shortfalls",
    "workload_key",
    "workload_shape",
]
