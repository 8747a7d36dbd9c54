"""Three tiny clusters in one queue, the first admitted and two waiting behind it (no Ray needed).

The ClusterQueue ``<prefix>-cq`` holds 3 CPUs and one tiny cluster takes 2, so ``a-first`` is
admitted and ``b-second`` and ``c-third`` wait, in creation order, at positions 1 and 2 of the
ClusterQueue and of the LocalQueue. Shared by the SDK's and the CLI's visibility tests.
"""

from __future__ import annotations

from collections.abc import Iterator

from codeflare.sdk import (
    Client,
    Cluster,
    FlavorQuota,
    create_cluster_queue,
    create_local_queue,
    create_resource_flavor,
)
from tests.sdk.conftest import tiny
from tests.support.control_plane import ensure_namespace, wait_for


def three_queued(client: Client, prefix: str, namespace: str, queue: str) -> Iterator[list[Cluster]]:
    """Create the queue and the three clusters, yield them, then take the clusters down."""
    ensure_namespace(client.kube, namespace)
    create_resource_flavor(f"{prefix}-flavor", client=client)
    create_cluster_queue(f"{prefix}-cq", [FlavorQuota(f"{prefix}-flavor", {"cpu": "3", "memory": "4Gi"})],
                         namespace_selector={}, client=client)  # fmt: skip
    create_local_queue(queue, f"{prefix}-cq", namespace, client=client)
    clusters: list[Cluster] = []
    for name in ("a-first", "b-second", "c-third"):
        cfg = tiny(name, workers=1, queue=queue)
        cfg.namespace = namespace
        clusters.append(Cluster(cfg, client))
        clusters[-1].apply()
        if name == "a-first":
            wait_for(lambda: clusters[0].why_pending() is None, 60, 0.2, what="a-first admitted")
    yield clusters
    for cluster in clusters:
        cluster.down()
