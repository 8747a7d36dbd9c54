"""The operator and the SDK agree on a namespace's default LocalQueue.

A RayCluster created without a queue label (as kubectl users do) gets the namespace's default
queue from the operator, as Kueue's jobframework.ApplyDefaultLocalQueue gives it: a LocalQueue
named ``default`` (Kueue >= 0.17); where one is also annotated ``kueue.x-k8s.io/default-queue``
(codeflare-sdk's convention) the annotated one wins, in the operator and in
``Client.default_local_queue`` alike (our choice; see README "Default LocalQueue").
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeflare.k8s.constants import DEFAULT_QUEUE_ANNOTATION, QUEUE_NAME_LABEL
from codeflare.kube import kinds
from codeflare.sdk import Client
from tests.sdk.conftest import control_plane
from tests.support.control_plane import ensure_namespace, wait_for
from tests.support.queue_objects import cluster_queue, local_queue, raycluster

__all__ = ["control_plane"]


@pytest.fixture(scope="module")
def client(control_plane: Client) -> Iterator[Client]:
    kube = control_plane.kube
    kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
    kube.create(kinds.CLUSTER_QUEUE, cluster_queue("dq-cq", "4"))
    yield control_plane


def queue_label(client: Client, name: str, namespace: str) -> str | None:
    labels = client.kube.get(kinds.RAYCLUSTER, name, namespace)["metadata"].get("labels") or {}
    return labels.get(QUEUE_NAME_LABEL)


def seen_by_operator(client: Client, name: str, namespace: str) -> None:
    """Wait until the operator wrote the LocalQueue's status (so its caches hold the queue)."""
    def written() -> object:
        return (client.kube.get(kinds.LOCAL_QUEUE, name, namespace).get("status") or {}).get("conditions")

    wait_for(written, 30, 0.1, what=f"LocalQueue {name}'s status")


def test_a_queue_named_default_is_the_default(client: Client) -> None:
    ensure_namespace(client.kube, "dq-named")
    client.kube.create(kinds.LOCAL_QUEUE, local_queue("default", "dq-named", "dq-cq"))
    client.kube.create(kinds.LOCAL_QUEUE, local_queue("other", "dq-named", "dq-cq"))
    assert client.default_local_queue("dq-named") == "default"
    seen_by_operator(client, "default", "dq-named")
    client.kube.create(kinds.RAYCLUSTER, raycluster("plain", "dq-named", queue=None))
    assert (
        wait_for(lambda: queue_label(client, "plain", "dq-named"), 30, 0.1, what="a queue label") == "default"
    )


def test_the_annotated_queue_wins_over_the_name(client: Client) -> None:
    ensure_namespace(client.kube, "dq-both")
    client.kube.create(kinds.LOCAL_QUEUE, local_queue("default", "dq-both", "dq-cq"))
    marked = local_queue("team", "dq-both", "dq-cq")
    marked["metadata"]["annotations"] = {DEFAULT_QUEUE_ANNOTATION: "true"}
    client.kube.create(kinds.LOCAL_QUEUE, marked)
    assert client.default_local_queue("dq-both") == "team"
    seen_by_operator(client, "team", "dq-both")
    client.kube.create(kinds.RAYCLUSTER, raycluster("plain", "dq-both", queue=None))
    assert wait_for(lambda: queue_label(client, "plain", "dq-both"), 30, 0.1, what="a queue label") == "team"
