"""Kueue's queue gauges: how unfinished Workloads are counted, and their names and labels as served.

Names and labels are Kueue's (pkg/metrics/metrics.go: kueue_pending_workloads{cluster_queue,
status,replica_role}, kueue_admitted_active_workloads, kueue_unadmitted_workloads{cluster_queue,
reason,underlying_cause,replica_role}, kueue_local_queue_unadmitted_workloads{name,namespace,
cluster_queue,reason,underlying_cause,replica_role}); which workloads count where follows KEP-10852
(a workload whose LocalQueue is missing is unadmitted but in no ClusterQueue's pending count).
"""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from codeflare.operator.metrics import OperatorMetrics
from codeflare.operator.queueing.reporter import kueue_counts

Obj = dict[str, object]


def wl(name: str, queue: str, admitted_in: str | None = None, finished: bool = False) -> Obj:
    status: dict[str, object] = {}
    if admitted_in:
        status["admission"] = {"clusterQueue": admitted_in, "podSetAssignments": []}
    if finished:
        status["conditions"] = [{"type": "Finished", "status": "True"}]
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"queueName": queue}, "status": status}


CODES = {"ns/a": "WaitingForQuota", "ns/b": "PendingEvaluation", "ns/c": "Misconfigured", "ns/h": "Suspended"}


def test_counts_by_queue_state_and_reason() -> None:
    workloads = [
        wl("a", "lq"),
        wl("b", "lq"),
        wl("c", "missing"),
        wl("h", "held"),
        wl("d", "lq", "cq"),
        wl("e", "lq", "cq", finished=True),
    ]
    counts = kueue_counts(
        workloads,
        {("ns", "lq"): "cq", ("ns", "held"): "cq"},
        lambda key, _: CODES[key],
        held=[("ns", "held")],
    )
    assert counts.pending == {("cq", "inadmissible"): 1, ("cq", "active"): 1}
    assert counts.admitted == {"cq": 1} and counts.lq_admitted == {("ns", "lq"): 1}
    assert counts.unadmitted == {
        ("cq", "NoReservation", "WaitingForQuota"): 1,
        ("cq", "NoReservation", "PendingEvaluation"): 1,
        ("", "NoReservation", "Misconfigured"): 1,
        ("cq", "NoReservation", "Suspended"): 1,
    }
    assert counts.lq_unadmitted[(("ns", "missing"), "", "NoReservation", "Misconfigured")] == 1


def test_served_under_kueues_names_and_labels() -> None:
    metrics = OperatorMetrics()
    workloads = [wl("a", "lq"), wl("d", "lq", "cq")]
    counts = kueue_counts(workloads, {("ns", "lq"): "cq"}, lambda *_: "WaitingForQuota")
    metrics.count_kueue_workloads(lambda: counts, "leader")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
    }
    role = ("replica_role", "leader")
    pending = (("cluster_queue", "cq"), role, ("status", "inadmissible"))
    assert samples[("kueue_pending_workloads", pending)] == 1
    assert samples[("kueue_admitted_active_workloads", (("cluster_queue", "cq"), role))] == 1
    cause = ("underlying_cause", "WaitingForQuota")
    unadmitted = (("cluster_queue", "cq"), ("reason", "NoReservation"), role, cause)
    assert samples[("kueue_unadmitted_workloads", unadmitted)] == 1
    lq = (
        ("cluster_queue", "cq"),
        ("name", "lq"),
        ("namespace", "ns"),
        ("reason", "NoReservation"),
        role,
        cause,
    )
    assert samples[("kueue_local_queue_unadmitted_workloads", lq)] == 1
    metrics.count_kueue_workloads(lambda: kueue_counts([], {}, lambda *_: ""), "leader")
    assert "kueue_pending_workloads{" not in metrics.render().decode()  # a queue's series go with it
