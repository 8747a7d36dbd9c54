"""The Kueue-kind webhook rule: refusals worded as Kueue's, updates checked against the old object."""

from __future__ import annotations

from typing import Any

from codeflare.operator.webhooks.admission import AdmissionRequest, AdmissionSettings
from codeflare.operator.webhooks.kueue import validate_kueue_object
from codeflare.operator.webhooks.server import ENDPOINTS, webhook_configurations

SETTINGS = AdmissionSettings()
Q0 = "spec.resourceGroups[0].flavors[0].resources[0]"


def cluster_queue(*resources: dict[str, Any], cohort: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceGroups": [
            {
                "coveredResources": [r["name"] for r in resources],
                "flavors": [{"name": "f", "resources": list(resources)}],
            }
        ]
    }
    if cohort:
        spec["cohort"] = cohort
    return {"kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": spec}


def request(
    obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None
) -> AdmissionRequest:
    return AdmissionRequest("uid", operation, "", "cq", obj, old)


def test_one_error_is_the_message_and_several_are_bracketed() -> None:
    one = validate_kueue_object(request(cluster_queue({"name": "cpu", "nominalQuota": "-1"})), SETTINGS)
    assert not one.allowed
    assert one.message == f'{Q0}.nominalQuota: Invalid value: "-1": must be greater than or equal to 0'
    two = validate_kueue_object(
        request(cluster_queue({"name": "cpu", "nominalQuota": "-1", "lendingLimit": "-2"})), SETTINGS
    )
    assert two.message == (
        f'[{Q0}.nominalQuota: Invalid value: "-1": must be greater than or equal to 0, '
        f'{Q0}.lendingLimit: Invalid value: "-2": must be nil when cohort is empty, '
        f'{Q0}.lendingLimit: Invalid value: "-2": must be greater than or equal to 0]'
    )


def test_valid_objects_other_kinds_and_deletes_are_allowed() -> None:
    assert validate_kueue_object(request(cluster_queue({"name": "cpu", "nominalQuota": 4})), SETTINGS).allowed
    assert validate_kueue_object(request({"kind": "LocalQueue", "spec": {}}), SETTINGS).allowed
    bad = cluster_queue({"name": "cpu", "nominalQuota": "-1"})
    assert validate_kueue_object(request(bad, "DELETE"), SETTINGS).allowed


def test_updates_are_checked_against_the_stored_object() -> None:
    pod_set = {"name": "main", "count": 1, "template": {"spec": {"containers": []}}}
    reserved = {
        "conditions": [{"type": "QuotaReserved", "status": "True"}],
        "admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "main", "count": 1}]},
    }
    old = {"kind": "Workload", "spec": {"podSets": [pod_set]}, "status": reserved}
    new = {"kind": "Workload", "spec": {"podSets": [{**pod_set, "count": 2}]}, "status": reserved}
    verdict = validate_kueue_object(request(new, "UPDATE", old), SETTINGS)
    assert not verdict.allowed and verdict.message.startswith("spec.podSets[0]: Invalid value:")
    assert verdict.message.endswith(": field is immutable")
    assert validate_kueue_object(request(new, "CREATE"), SETTINGS).allowed


def test_kueue_webhooks_are_registered_as_kueue_registers_them() -> None:
    _, validating = webhook_configurations("https://127.0.0.1:1", "Y2E=")
    hooks = {hook["name"]: hook for hook in validating["webhooks"]}
    assert [(r["resources"], r["scope"]) for r in hooks["vclusterqueue.kb.io"]["rules"]] == [
        (["clusterqueues"], "Cluster")
    ]
    assert [(r["resources"], r["scope"]) for r in hooks["vresourceflavor.kb.io"]["rules"]] == [
        (["resourceflavors"], "Cluster")
    ]
    assert [(r["resources"], r["scope"]) for r in hooks["vworkload.kb.io"]["rules"]] == [
        (["workloads", "workloads/status"], "Namespaced")
    ]
    assert hooks["vworkload.kb.io"]["clientConfig"]["url"].endswith(
        "/validate-kueue-x-k8s-io-v1beta2-workload"
    )
    assert len({e.path for e in ENDPOINTS}) == len(ENDPOINTS)
