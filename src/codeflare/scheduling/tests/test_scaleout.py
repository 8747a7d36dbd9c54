"""Scale-out decisions: examples that read like the behaviour, and properties over random inputs.

Properties: the cap is never exceeded, the chosen group's labels satisfy the flavor's nodeLabels,
the chosen node count really holds the pods and covers the shortfall, the same input gives the
same plan, and every workload is either scaled for, waiting on a recorded request, or refused.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeflare.scheduling import PodSet, Quantity, Shortfall, decode_shortfalls, encode_shortfalls
from codeflare.scheduling.scaleout import (
    CapacityShortfall,
    GroupNode,
    NodeGroup,
    PendingWorkload,
    RecordedRequest,
    capacity_shortfalls,
    labels_satisfy,
    nodes_needed,
    plan_reservations,
    plan_scale_in,
    plan_scale_out,
)

GPU = "nvidia.com/gpu"
GPU_LABELS = {"node.kubernetes.io/instance-type": "gpu"}
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def group(name: str, labels: dict[str, str], cpu: int, gpu: int = 0, replicas: int = 0) -> NodeGroup:
    shape = {"cpu": cpu * 1000, "memory": 64 * 2**30 * 1000}
    if gpu:
        shape[GPU] = gpu * 1000
    return NodeGroup(name, "MachineSet", replicas, labels, shape)


def gpu_workload(key: str, pods: int, gpus_per_pod: int, available: int = 0) -> PendingWorkload:
    requested = pods * gpus_per_pod * 1000
    return PendingWorkload(
        key,
        (PodSet("workers", pods, {"cpu": Quantity.parse("1"), GPU: Quantity.parse(gpus_per_pod)}),),
        (CapacityShortfall("gpu", GPU, requested, available * 1000),),
        {"gpu": GPU_LABELS},
    )


def test_picks_the_group_matching_the_flavor_with_fewest_nodes() -> None:
    groups = [
        group("ns/cpu", {"node.kubernetes.io/instance-type": "cpu"}, 32),
        group("ns/gpu-small", GPU_LABELS | {"size": "s"}, 8, gpu=1),
        group("ns/gpu-big", GPU_LABELS | {"size": "l"}, 32, gpu=4),
    ]
    plan = plan_scale_out([gpu_workload("a/w", 4, 1)], groups, [], max_nodes=3)
    assert plan.requests["a/w"].group == "ns/gpu-big"
    assert plan.requests["a/w"].nodes == 1
    assert plan.replicas == {"ns/gpu-big": 1}


def test_cap_holds_across_workloads_and_the_second_is_told_why() -> None:
    groups = [group("ns/gpu", GPU_LABELS, 8, gpu=1, replicas=1)]
    plan = plan_scale_out([gpu_workload("a/one", 2, 1), gpu_workload("a/two", 1, 1)], groups, [], 2)
    assert plan.requests["a/one"].nodes == 2
    assert plan.replicas == {"ns/gpu": 3}
    assert "maxScaleoutAllowed (2) leaves 0" in plan.refused["a/two"]


def test_never_scales_for_a_workload_that_would_still_not_fit() -> None:
    groups = [group("ns/gpu", GPU_LABELS, 8, gpu=1)]
    plan = plan_scale_out([gpu_workload("a/w", 1, 2)], groups, [], 5)
    assert not plan.requests and not plan.replicas
    assert "does not fit on one node of MachineSet ns/gpu" in plan.refused["a/w"]


def test_recorded_request_is_not_doubled_and_counts_against_the_cap() -> None:
    groups = [group("ns/gpu", GPU_LABELS, 8, gpu=1, replicas=2)]
    recorded = [RecordedRequest("a/one", "ns/gpu", 2, requested_at=10.0)]
    plan = plan_scale_out([gpu_workload("a/one", 2, 1), gpu_workload("a/two", 1, 1)], groups, recorded, 2)
    assert plan.waiting["a/one"].nodes == 2
    assert not plan.replicas
    assert "a/two" in plan.refused


def test_free_capacity_is_used_before_new_nodes() -> None:
    groups = [group("ns/gpu", GPU_LABELS, 8, gpu=1)]
    plan = plan_scale_out([gpu_workload("a/w", 3, 1, available=1)], groups, [], 5)
    assert plan.requests["a/w"].nodes == 2


def test_capacity_shortfalls_come_from_the_structured_records() -> None:
    short = Shortfall("capacity", "cq", "gpu", GPU, 3000, 1000, nodes=1, allocatable=1000)
    decoded = decode_shortfalls(encode_shortfalls([short]))
    assert capacity_shortfalls(decoded) == (CapacityShortfall("gpu", GPU, 3000, 1000),)
    assert short.record() == {
        "kind": "capacity", "clusterQueue": "cq", "flavor": "gpu", "resource": GPU,
        "requested": "3", "available": "1", "needed": "2",
    }  # fmt: skip
    quota = Shortfall("quota", "cq", "gpu", GPU, 3000, 1000)
    assert capacity_shortfalls([short, quota]) is None  # quota is short too: nodes cannot help
    assert capacity_shortfalls([]) is None


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("nope", "not JSON"),
        ("{}", "list of objects"),
        ('[{"kind": "disk"}]', "kind"),
        ('[{"kind": "capacity", "requested": "x", "available": "1"}]', "requested"),
    ],
)
def test_malformed_shortfall_records_are_refused(text: str, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        decode_shortfalls(text)


def test_scale_in_waits_for_the_delay_and_removes_idle_nodes_only() -> None:
    recorded = [
        RecordedRequest("a/done", "ns/gpu", 2, 0.0, released_at=100.0),
        RecordedRequest("a/running", "ns/gpu", 1, 0.0),
    ]
    assert plan_scale_in(recorded, {"ns/gpu": ["n1", "n2"]}, now=101.0, delay=5.0) == []
    (decision,) = plan_scale_in(recorded, {"ns/gpu": ["n2"]}, now=106.0, delay=5.0)
    assert decision.remove == ("n2",)
    assert decision.remaining == {"a/done": 1, "a/running": 1}


# -- properties -----------------------------------------------------------------------------------
LABEL_SETS = st.sampled_from([{"t": "gpu"}, {"t": "cpu"}, {"t": "gpu", "z": "a"}, {}])


@st.composite
def node_groups(draw: st.DrawFn) -> list[NodeGroup]:
    count = draw(st.integers(1, 4))
    out = []
    for i in range(count):
        shape = {"cpu": draw(st.integers(1, 16)) * 1000}
        if draw(st.booleans()):
            shape[GPU] = draw(st.integers(1, 8)) * 1000
        out.append(
            NodeGroup(f"ns/g{i}", "MachineDeployment", draw(st.integers(0, 3)), draw(LABEL_SETS), shape)
        )
    return out


@st.composite
def workloads(draw: st.DrawFn) -> list[PendingWorkload]:
    out = []
    for i in range(draw(st.integers(0, 5))):
        pod_sets = []
        totals: dict[str, int] = {}
        for j in range(draw(st.integers(1, 2))):
            cpu, gpu, count = draw(st.integers(1, 12)), draw(st.integers(0, 4)), draw(st.integers(1, 6))
            requests = {"cpu": Quantity.parse(cpu)} | ({GPU: Quantity.parse(gpu)} if gpu else {})
            pod_sets.append(PodSet(f"ps{j}", count, requests))
            totals["cpu"] = totals.get("cpu", 0) + cpu * count * 1000
            if gpu:
                totals[GPU] = totals.get(GPU, 0) + gpu * count * 1000
        flavor = draw(st.sampled_from(["f-gpu", "f-cpu"]))
        shortfalls: list[CapacityShortfall] = []
        for resource, total in sorted(totals.items()):
            if draw(st.booleans()) or not shortfalls:
                available = draw(st.integers(0, total // 1000 - 1 if total >= 1000 else 0)) * 1000
                shortfalls.append(CapacityShortfall(flavor, resource, total, min(available, total - 1)))
        labels = {"f-gpu": {"t": "gpu"}, "f-cpu": {"t": "cpu"}}
        out.append(PendingWorkload(f"ns/w{i}", tuple(pod_sets), tuple(shortfalls), labels))
    return out


@SETTINGS
@given(workloads(), node_groups(), st.integers(0, 6))
def test_properties_of_scale_out(pending: list[PendingWorkload], groups: list[NodeGroup], cap: int) -> None:
    plan = plan_scale_out(pending, groups, [], cap)
    by_name = {g.name: g for g in groups}
    # the cap holds, and replicas grow by exactly what the requests ask
    assert sum(r.nodes for r in plan.requests.values()) <= cap
    for name, replicas in plan.replicas.items():
        added = sum(r.nodes for r in plan.requests.values() if r.group == name)
        assert replicas == by_name[name].replicas + added
    # every workload is accounted for exactly once
    for wl in pending:
        assert (wl.key in plan.requests) != (wl.key in plan.refused)
    for wl in pending:
        request = plan.requests.get(wl.key)
        if request is None:
            continue
        chosen = by_name[request.group]
        assert labels_satisfy(chosen.labels, wl.flavor_labels[request.flavor])
        # sufficiency: the shortfall is covered and every pod fits on one node of the shape
        for s in wl.shortfalls:
            if s.flavor == request.flavor:
                assert s.available + request.nodes * chosen.allocatable.get(s.resource, 0) >= s.requested
                constrained = set(chosen.allocatable) | {x.resource for x in wl.shortfalls}
                for ps in wl.pod_sets:
                    if s.resource in ps.requests:
                        for r, q in ps.requests.items():
                            assert r not in constrained or q.milli <= chosen.allocatable.get(r, 0)
    # deterministic, also when the groups come in another order
    assert plan_scale_out(pending, list(reversed(groups)), [], cap) == plan


@SETTINGS
@given(
    st.lists(st.dictionaries(st.sampled_from(["cpu", GPU]), st.integers(1, 8000), min_size=1), max_size=12),
    st.integers(1, 16),
    st.integers(1, 8),
)
def test_packing_holds_every_pod(pods: list[dict[str, int]], cpu: int, gpu: int) -> None:
    shape = {"cpu": cpu * 1000, GPU: gpu * 1000}
    deficits = {r: sum(p.get(r, 0) for p in pods) for r in shape}
    n = nodes_needed(pods, shape, deficits, {})
    if any(p.get(r, 0) > shape[r] for p in pods for r in shape):
        assert n is None
        return
    assert n is not None
    # n nodes hold the pods: replay first-fit-decreasing onto n nodes and check nothing is left
    nodes = [dict(shape) for _ in range(n)]
    for pod in sorted(pods, key=lambda p: tuple(-p.get(r, 0) for r in sorted(shape))):
        slot = next((nd for nd in nodes if all(pod.get(r, 0) <= nd[r] for r in shape)), None)
        assert slot is not None
        for r in shape:
            slot[r] -= pod.get(r, 0)
    for r in shape:
        assert n * shape[r] >= deficits[r]


def test_new_nodes_are_reserved_for_the_oldest_waiting_request_and_lifted_after() -> None:
    recorded = [
        RecordedRequest("a/first", "ns/gpu", 2, requested_at=10.0),
        RecordedRequest("a/second", "ns/gpu", 1, requested_at=20.0),
    ]
    nodes = [GroupNode("old", 5.0), GroupNode("n1", 12.0), GroupNode("n2", 21.0), GroupNode("n3", 22.0)]

    plan = plan_reservations(recorded, {"a/first", "a/second"}, nodes)

    # "old" ran before any request: never reserved; the first request takes the first two new nodes
    assert plan == {"n1": "a/first", "n2": "a/first", "n3": "a/second"}
    reserved = [GroupNode(n.name, n.created, plan.get(n.name)) for n in nodes]
    assert plan_reservations(recorded, {"a/first", "a/second"}, reserved) == {}  # stable
    # "first" was admitted: its nodes are everyone's again, "second" keeps its own
    assert plan_reservations(recorded, {"a/second"}, reserved) == {"n1": None, "n2": None}


def test_a_node_created_before_the_request_is_not_taken_for_it() -> None:
    recorded = [RecordedRequest("a/late", "ns/gpu", 1, requested_at=30.0)]
    assert plan_reservations(recorded, {"a/late"}, [GroupNode("n1", 29.0)]) == {}
    released = [RecordedRequest("a/gone", "ns/gpu", 1, 0.0, released_at=40.0)]
    assert plan_reservations(released, {"a/gone"}, [GroupNode("n1", 1.0, "a/gone")]) == {"n1": None}


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 50)), max_size=5),
    st.lists(st.tuples(st.integers(0, 60), st.one_of(st.none(), st.integers(0, 6))), max_size=8),
    st.sets(st.integers(0, 6)),
)
def test_reservations_never_exceed_a_request_nor_outlive_it(
    requests: list[tuple[int, int]], raw_nodes: list[tuple[int, int | None]], waiting_ids: set[int]
) -> None:
    recorded = [RecordedRequest(f"a/w{i}", "ns/gpu", n, float(t)) for i, (n, t) in enumerate(requests)]
    nodes = [
        GroupNode(f"n{i}", float(created), None if holder is None else f"a/w{holder}")
        for i, (created, holder) in enumerate(raw_nodes)
    ]
    waiting = {f"a/w{i}" for i in waiting_ids}
    plan = plan_reservations(recorded, waiting, nodes)
    after = {n.name: plan.get(n.name, n.reserved_for) for n in nodes}
    by_key = {r.workload: r for r in recorded}
    for key in set(after.values()) - {None}:
        assert key in waiting and key in by_key  # only waiting workloads with a request hold nodes
        assert sum(1 for v in after.values() if v == key) <= by_key[key].nodes
    created = {n.name: n.created for n in nodes}
    for name, key in plan.items():
        if key is not None:  # a new reservation is only ever a node made after its request
            assert created[name] >= int(by_key[key].requested_at)
    settled = [GroupNode(n.name, n.created, after[n.name]) for n in nodes]
    assert plan_reservations(recorded, waiting, settled) == {}  # applying the plan settles it
