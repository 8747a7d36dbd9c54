"""``why_pending()`` and ``list_all_queued()`` show the reason code, the message and the queue position.

A real API server and operator (no Ray): ClusterQueue ``vis-cq`` holds one tiny cluster (2 CPUs of
3), so the second and third wait, in creation order, at positions 1 and 2 of the ClusterQueue and of
LocalQueue ``vis``. The position comes from the operator's visibility API through the aggregation
layer; on a server that does not serve it, the position is unknown and the reason says why.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeflare.kube import config
from codeflare.kube.client import Kube
from codeflare.sdk import (
    Client,
    Cluster,
    list_all_queued,
)
from codeflare.sdk.status import PendingReason, QueuePosition, QueuePositions
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import wait_for
from tests.support.queued_clusters import three_queued

NS, QUEUE = "vis-team", "vis"


@pytest.fixture(scope="module")
def queued(control_plane: Client) -> Iterator[list[Cluster]]:
    yield from three_queued(control_plane, "vis", NS, QUEUE)


def test_why_pending_gives_code_message_and_position(queued: list[Cluster]) -> None:
    second, third = queued[1], queued[2]
    def placed() -> PendingReason | None:
        found = third.why_pending()
        ready = isinstance(found, PendingReason) and found.position is not None and found.reason
        return found if ready else None  # type: ignore[return-value]

    reason = wait_for(placed, 60, 0.2, what="c-third's reason and position")
    assert isinstance(reason, PendingReason)
    assert reason.position == QueuePosition(1, 1)
    assert reason.reason == "WaitingForQuota" and "insufficient quota" in reason.message
    assert (
        reason.startswith("WaitingForQuota: ")
        and "(position 2 in ClusterQueue vis-cq, 2 in LocalQueue vis)" in reason
    )
    first_in_line = second.why_pending()
    assert first_in_line is not None and first_in_line.position == QueuePosition(0, 0)  # type: ignore[attr-defined]


def test_list_all_queued_carries_the_positions(control_plane: Client, queued: list[Cluster]) -> None:
    listed = {q["name"]: q for q in list_all_queued(NS, control_plane)}
    assert set(listed) == {"b-second", "c-third"}
    assert [
        (listed[n]["position_in_cluster_queue"], listed[n]["position_in_local_queue"])
        for n in ("b-second", "c-third")
    ] == [(0, 0), (1, 1)]
    assert listed["c-third"]["reason_code"] == "WaitingForQuota"
    assert listed["c-third"]["position_note"] == ""


def test_without_the_visibility_api_the_position_is_unknown_and_says_why(
    fresh_apiserver: ServerProcess,
) -> None:
    with Kube(config.from_kubeconfig(fresh_apiserver.kubeconfig)) as kube:
        workload = {"metadata": {"name": "w", "namespace": "default"}, "spec": {"queueName": "q"}}
        position, note, cluster_queue = QueuePositions(kube).of(workload)
    assert position is None and cluster_queue == ""
    assert "visibility.kueue.x-k8s.io is not served here" in note
    text = PendingReason("WaitingForQuota", "short", None, note)
    assert text == f"WaitingForQuota: short (position unknown: {note})"
