"""The PendingWorkloadsSummary pages, from Kueue's pkg/visibility/storage tests and its utils.

Cases ported from pending_workloads_cq_test.go / pending_workloads_lq_test.go (positions in the
ClusterQueue and per LocalQueue, offset/limit windows) and utils.go (limit defaults to 1000,
bounded by 100000, negatives are 0); a property ties both answers to one queue order.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.k8s.constants import ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION
from codeflare.operator.visibility.pending import (
    MAX_LIMIT,
    OptionError,
    PageOptions,
    cluster_queue_items,
    local_queue_items,
    pending_workload,
)
from codeflare.operator.visibility.server import FrontProxyTrust

Obj = dict[str, object]


def workloads(queues: list[str]) -> dict[str, Obj]:
    return {f"ns/w{i}": {"metadata": {"name": f"w{i}", "namespace": "ns", "ownerReferences": [
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": f"c{i}", "uid": "u", "controller": True}]},
        "spec": {"queueName": q}} for i, q in enumerate(queues)}  # fmt: skip


def positions(items: list[Obj]) -> list[tuple[object, ...]]:
    return [(i["metadata"]["name"], i["positionInClusterQueue"], i["positionInLocalQueue"]) for i in items]  # type: ignore[index]


def test_options_default_bound_and_reject() -> None:
    assert PageOptions.from_query({}) == PageOptions(1000, 0)
    assert PageOptions.from_query({"limit": "0"}) == PageOptions(1000, 0)  # Kueue defaults an unset limit
    assert PageOptions.from_query({"limit": "-3", "offset": "-1"}) == PageOptions(0, 0)
    assert PageOptions.from_query({"limit": str(10 * MAX_LIMIT)}).limit == MAX_LIMIT
    with pytest.raises(OptionError, match="offset: must be an integer"):
        PageOptions.from_query({"offset": "x"})


def test_cluster_queue_window_keeps_local_queue_positions() -> None:
    found = workloads(["a", "b", "a", "a", "b"])
    order = list(found)
    items = cluster_queue_items(order, found.get, lambda _: 3, PageOptions(limit=2, offset=2))
    assert positions(items) == [("w2", 2, 1), ("w3", 3, 2)]
    assert items[0]["priority"] == 3 and items[0]["localQueueName"] == "a"
    assert items[0]["metadata"]["ownerReferences"] == [
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "c2", "uid": "u"}]  # fmt: skip


def test_local_queue_window() -> None:
    found = workloads(["a", "b", "a", "a", "b"])
    items = local_queue_items(
        list(found), found.get, lambda _: 0, ("ns", "a"), PageOptions(limit=1, offset=1)
    )
    assert positions(items) == [("w2", 2, 1)]


@given(st.lists(st.sampled_from("ab"), max_size=12), st.integers(0, 14), st.integers(0, 14))
def test_local_queue_page_is_the_cluster_queue_answer_filtered(
    queues: list[str], limit: int, offset: int
) -> None:
    found = workloads(queues)
    everything = cluster_queue_items(list(found), found.get, lambda _: 0, PageOptions(limit=MAX_LIMIT))
    mine = [i for i in everything if i["localQueueName"] == "a"]
    page = local_queue_items(list(found), found.get, lambda _: 0, ("ns", "a"), PageOptions(limit, offset))
    assert page == mine[offset : offset + limit]


def test_front_proxy_trust_reads_kube_apiservers_keys() -> None:
    trust = FrontProxyTrust.from_configmap({
        "requestheader-client-ca-file": "PEM", "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]'})  # fmt: skip
    assert trust.client_ca == b"PEM" and trust.allowed_names == ("front-proxy-client",)
    with pytest.raises(ValueError, match="requestheader-client-ca-file"):
        FrontProxyTrust.from_configmap({})


def test_items_carry_the_published_estimate_and_no_other_annotation() -> None:
    workload = {"metadata": {"name": "w", "namespace": "ns", "annotations": {
        ESTIMATED_START_ANNOTATION: "2026-12-02T07:00:00Z", WAITING_FOR_ANNOTATION: "a, b", "private": "x"}},
        "spec": {"queueName": "lq"}}  # fmt: skip
    item = pending_workload(workload, 5, 1, 0)
    assert item["metadata"]["annotations"] == {
        ESTIMATED_START_ANNOTATION: "2026-12-02T07:00:00Z", WAITING_FOR_ANNOTATION: "a, b"}
    bare = pending_workload({"metadata": {"name": "w", "namespace": "ns"}, "spec": {}}, 0, 0, 0)
    assert "annotations" not in bare["metadata"]
