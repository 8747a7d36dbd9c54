"""Hierarchical cohorts and fair sharing end to end: a real API server process and the operator.

A two-level tree (org > research, prod) where a ClusterQueue of research borrows from prod's
subtree; a cycle written through the deprecated v1beta1 Cohort makes the tree's queues wait with
the cycle named, and breaking it admits again. With ``queueing.fairSharing`` on, the team with
the lower dominant resource share is admitted before a higher-priority workload of the team that
already borrows most, and both ClusterQueues and the Cohort carry ``status.fairSharing``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.api.kueue import FlavorQuota
from codeflare.api.kueue_validation import cohort_errors
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.operator.config import ConfigError, OperatorConfig
from codeflare.sdk import Client, create_cohort
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OperatorProcess,
    ensure_namespace,
    operator_plane,
    wait_for,
)

QUEUE = "kueue.x-k8s.io/queue-name"
COHORT_V1BETA1 = kinds.COHORT.at_version("v1beta1")


def quota(cpu: str) -> list[dict[str, Any]]:
    return [
        {
            "coveredResources": ["cpu"],
            "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
        }
    ]


def cohort(name: str, parent: str | None = None, cpu: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if parent:
        spec["parentName"] = parent
    if cpu is not None:
        spec["resourceGroups"] = quota(cpu)
    return {"metadata": {"name": name}, "spec": spec}


def cluster_queue(name: str, cohort_name: str, cpu: str) -> dict[str, Any]:
    spec = {"cohortName": cohort_name, "namespaceSelector": {}, "resourceGroups": quota(cpu)}
    return {"metadata": {"name": name}, "spec": spec}


def raycluster(name: str, namespace: str, cpu_each: str, priority_class: str | None = None) -> dict[str, Any]:
    """A suspended RayCluster of a head and one worker requesting ``cpu_each`` each."""

    def template() -> dict[str, Any]:
        resources = {"requests": {"cpu": cpu_each}}
        return {"spec": {"containers": [{"name": "ray", "image": "ray", "resources": resources}]}}

    labels = {QUEUE: "queue"}
    if priority_class:
        labels["kueue.x-k8s.io/priority-class"] = priority_class
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "suspend": True,
            "headGroupSpec": {"rayStartParams": {}, "template": template()},
            "workerGroupSpecs": [
                {"groupName": "workers", "replicas": 1, "rayStartParams": {}, "template": template()}
            ],
        },
    }


@pytest.fixture
def control_plane(fresh_apiserver: ServerProcess, tmp_path: Any) -> Iterator[tuple[Kube, OperatorProcess]]:
    with operator_plane(fresh_apiserver, tmp_path / "operator.log") as plane:
        yield plane


@pytest.fixture
def fair_control_plane(
    fresh_apiserver: ServerProcess, tmp_path: Any
) -> Iterator[tuple[Kube, OperatorProcess]]:
    with operator_plane(
        fresh_apiserver, tmp_path / "operator.log", queueing={"fairSharing": {"enable": True}}
    ) as plane:
        yield plane


def _workload(kube: Kube, namespace: str, job: str) -> dict[str, Any] | None:
    for wl in kube.list(kinds.WORKLOAD, namespace):
        if any(o.get("name") == job for o in wl["metadata"].get("ownerReferences") or []):
            return wl
    return None


def _admitted_in(kube: Kube, namespace: str, job: str) -> str | None:
    wl = _workload(kube, namespace, job)
    return ((wl or {}).get("status") or {}).get("admission", {}).get("clusterQueue") if wl else None


def _pending_message(kube: Kube, namespace: str, job: str) -> str:
    wl = _workload(kube, namespace, job) or {}
    if (wl.get("status") or {}).get("admission"):
        return ""
    for cond in (wl.get("status") or {}).get("conditions") or []:
        if cond["type"] == "QuotaReserved" and cond["status"] == "False":
            return str(cond.get("message", ""))
    return ""


def _queues(kube: Kube, *names: str) -> None:
    for name in names:
        ensure_namespace(kube, name)
        lq = {"metadata": {"name": "queue", "namespace": name}, "spec": {"clusterQueue": name}}
        kube.create(kinds.LOCAL_QUEUE, lq)


def test_a_queue_borrows_from_a_sibling_subtree_and_a_cycle_stops_the_tree(
    control_plane: tuple[Kube, OperatorProcess], fresh_apiserver: ServerProcess
) -> None:
    kube, operator = control_plane
    kube.create(kinds.COHORT, cohort("org"))
    kube.create(kinds.COHORT, cohort("research", "org"))
    # prod's own pool on top of serving's, through the SDK's admin helper
    client = Client.default(fresh_apiserver.kubeconfig)
    create_cohort("prod", parent="org", flavors=[FlavorQuota("default", {"cpu": 4})], client=client)
    kube.create(kinds.CLUSTER_QUEUE, cluster_queue("vision", "research", "2"))
    kube.create(kinds.CLUSTER_QUEUE, cluster_queue("serving", "prod", "2"))
    _queues(kube, "vision", "serving")

    # 5 CPUs: vision's 2, and 3 of the 6 prod's subtree lends through org
    kube.create(kinds.RAYCLUSTER, raycluster("train", "vision", "2500m"))
    wait_for(lambda: _admitted_in(kube, "vision", "train") == "vision", what="train admitted borrowing")
    kube.create(kinds.RAYCLUSTER, raycluster("web", "serving", "1"))
    wait_for(lambda: _admitted_in(kube, "serving", "web") == "serving", what="web admitted")
    kube.create(kinds.RAYCLUSTER, raycluster("web2", "serving", "1"))  # 2 more: only 1 is left
    wait_for(lambda: "cpu" in _pending_message(kube, "serving", "web2"), what="web2 waits for quota")

    # a cycle (org under research, written at the deprecated v1beta1) stops every queue of the tree
    org = kube.get(COHORT_V1BETA1, "org")
    org["spec"]["parentName"] = "research"
    kube.replace(COHORT_V1BETA1, org)
    assert kube.get(kinds.COHORT, "org")["spec"]["parentName"] == "research"
    kube.create(kinds.RAYCLUSTER, raycluster("eval", "vision", "500m"))
    wait_for(lambda: "inactive" in _pending_message(kube, "vision", "eval"), what="eval waits")

    def active(name: str) -> tuple[str, ...]:
        for cond in (kube.get(kinds.COHORT, name).get("status") or {}).get("conditions") or []:
            if cond["type"] == "Active":
                return cond["status"], cond["reason"], cond["message"]
        return ()

    # Kueue writes nothing for a cycle; we say it on the Cohorts (Active=False, the cycle named)
    wait_for(lambda: active("org")[:2] == ("False", "HasCycle"), what=f"org inactive ({active('org')})")
    assert "org -> research -> org" in active("org")[2] or "research -> org -> research" in active("org")[2]
    # under the cycle: its queues stop too (each Cohort's status is its own write, so wait for it)
    wait_for(lambda: active("prod")[:2] == ("False", "HasCycle"), what=f"prod inactive ({active('prod')})")

    org = kube.get(kinds.COHORT, "org")
    del org["spec"]["parentName"]
    kube.replace(kinds.COHORT, org)
    wait_for(lambda: _admitted_in(kube, "vision", "eval") == "vision", what="eval admitted after the fix")
    wait_for(lambda: active("org")[:1] == ("True",), what="org active again")
    assert _admitted_in(kube, "serving", "web2") is None  # the last CPU went to eval
    assert operator.running, operator.log()[-3000:]


def test_fair_sharing_admits_the_team_with_the_lower_share_first(
    fair_control_plane: tuple[Kube, OperatorProcess],
) -> None:
    kube, operator = fair_control_plane
    kube.create(kinds.WORKLOAD_PRIORITY_CLASS, {"metadata": {"name": "urgent"}, "value": 1000})
    kube.create(kinds.COHORT, cohort("org", cpu="4"))
    for team in ("team-a", "team-b", "gate"):
        kube.create(kinds.CLUSTER_QUEUE, cluster_queue(team, "org", "0"))
    _queues(kube, "team-a", "team-b", "gate")

    # team-a holds 3 of org's 4 CPUs; a gate holds the last one while both teams queue
    for i in range(3):
        kube.create(kinds.RAYCLUSTER, raycluster(f"a{i}", "team-a", "500m"))
        wait_for(lambda i=i: _admitted_in(kube, "team-a", f"a{i}"), what=f"a{i} admitted")
    kube.create(kinds.RAYCLUSTER, raycluster("gate", "gate", "500m"))
    wait_for(lambda: _admitted_in(kube, "gate", "gate"), what="gate admitted")
    kube.create(kinds.RAYCLUSTER, raycluster("urgent", "team-a", "500m", priority_class="urgent"))
    kube.create(kinds.RAYCLUSTER, raycluster("b0", "team-b", "500m"))
    wait_for(lambda: _pending_message(kube, "team-a", "urgent"), what="urgent waits")
    wait_for(lambda: _pending_message(kube, "team-b", "b0"), what="b0 waits")

    # the freed CPU goes to team-b: its share after admission (1 of 4) is below team-a's (4 of 4),
    # although team-a's workload has the higher priority (what decides without fair sharing)
    kube.delete(kinds.RAYCLUSTER, "gate", "gate")
    wait_for(lambda: _admitted_in(kube, "team-b", "b0") == "team-b", what="b0 admitted")
    assert _admitted_in(kube, "team-a", "urgent") is None  # org is full again

    def shares() -> tuple[Any, ...]:
        def share(kind: Any, name: str) -> Any:
            return ((kube.get(kind, name).get("status") or {}).get("fairSharing") or {}).get("weightedShare")

        return (
            share(kinds.CLUSTER_QUEUE, "team-a"),
            share(kinds.CLUSTER_QUEUE, "team-b"),
            share(kinds.COHORT, "org"),
        )

    # Kueue's weightedShare: borrowed per mille of what org can lend (4 CPUs); a root borrows nothing
    wait_for(lambda: shares() == (750, 250, 0), what=f"weighted shares (now {shares()})")
    assert operator.running, operator.log()[-3000:]


def test_cohort_webhook_rules_follow_kueues() -> None:
    # Kueue 0.19 pkg/webhooks/cohort_webhook.go: limits only under a parent; cycles are not refused
    root = cohort("org", cpu="4")
    root["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = "1"
    (error,) = cohort_errors(root)
    assert error.field.endswith("borrowingLimit") and error.detail == "must be nil when parent is empty"
    child = cohort("team", "org", cpu="4")
    child["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["lendingLimit"] = "1"
    assert cohort_errors(child) == []
    assert cohort_errors(cohort("a", "a")) == []  # a cycle: the engine reports it, the webhook lets it in
    negative = cohort("w")
    negative["spec"]["fairSharing"] = {"weight": "-1"}
    assert [e.field for e in cohort_errors(negative)] == ["spec.fairSharing"]  # Kueue's path


def test_fair_sharing_configuration_mirrors_kueues() -> None:
    # Kueue's Configuration fairSharing: off by default, its two strategies in this order
    default = OperatorConfig.default().queueing.fair_sharing
    assert not default.enable
    assert default.preemption_strategies == ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    one = OperatorConfig.from_yaml(
        "queueing:\n  fairSharing:\n    preemptionStrategies: [LessThanInitialShare]\n"
    )
    assert one.queueing.fair_sharing.preemption_strategies == ("LessThanInitialShare",)
    # pkg/config/validation.go accepts only these lists
    with pytest.raises(
        ConfigError, match=r"queueing\.fairSharing\.preemptionStrategies: must be one of the lists"
    ):
        OperatorConfig.from_yaml(
            "queueing:\n  fairSharing:\n"
            "    preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n"
        )
    with pytest.raises(ConfigError, match=r"preemptionStrategies\[0\]"):
        OperatorConfig.from_yaml("queueing:\n  fairSharing:\n    preemptionStrategies: [Bogus]\n")
