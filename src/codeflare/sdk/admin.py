"""Admin helpers: ResourceFlavors, ClusterQueues (cohorts, borrowing), LocalQueues, priorities.

Each helper builds its object with the validating builders of :mod:`codeflare.api.builders`
(so bad names or quantities fail before any call) and applies it (idempotent), at v1beta2, or
converted to v1beta1 on a Kueue that serves only that (:meth:`Client.kueue_apply`); the object
returned is v1beta2 either way.
"""

from __future__ import annotations

from typing import Any

from codeflare.api.kueue import FlavorQuota
from codeflare.k8s.quantity import QuantityInput
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind
from codeflare.sdk.client import Client

__all__ = [
    "FlavorQuota",
    "create_cluster_queue",
    "create_local_queue",
    "create_priority_class",
    "create_resource_flavor",
]


def _apply(client: Client | None, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    return (client or Client.default()).kueue_apply(kind, obj)


def create_resource_flavor(
    name: str,
    node_labels: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    *,
    client: Client | None = None,
) -> dict[str, Any]:
    from codeflare.api.builders import build_resource_flavor

    return _apply(client, kinds.RESOURCE_FLAVOR, build_resource_flavor(name, node_labels, tolerations))


def create_cluster_queue(
    name: str,
    flavors: list[FlavorQuota],
    *,
    cohort: str | None = None,
    queueing_strategy: str = "BestEffortFIFO",
    preemption: dict[str, Any] | None = None,
    namespace_selector: dict[str, Any] | None = None,
    admission_mode: str | None = None,
    client: Client | None = None,
) -> dict[str, Any]:
    from codeflare.api.builders import build_cluster_queue

    obj = build_cluster_queue(
        name,
        flavors=flavors,
        cohort=cohort,
        queueing_strategy=queueing_strategy,
        preemption=preemption,
        namespace_selector=namespace_selector,
        admission_mode=admission_mode,
    )
    return _apply(client, kinds.CLUSTER_QUEUE, obj)


def create_local_queue(
    name: str,
    cluster_queue: str,
    namespace: str | None = None,
    *,
    default: bool = False,
    weight: QuantityInput | None = None,
    client: Client | None = None,
) -> dict[str, Any]:
    from codeflare.api.builders import build_local_queue

    client = client or Client.default()
    queue = build_local_queue(name, namespace or client.namespace, cluster_queue, default, weight)
    return _apply(client, kinds.LOCAL_QUEUE, queue)


def create_priority_class(
    name: str, value: int, description: str = "", *, client: Client | None = None
) -> dict[str, Any]:
    from codeflare.api.builders import build_workload_priority_class

    priority_class = build_workload_priority_class(name, value, description)
    return _apply(client, kinds.WORKLOAD_PRIORITY_CLASS, priority_class)
