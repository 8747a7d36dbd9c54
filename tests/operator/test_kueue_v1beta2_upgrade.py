"""An old state directory (Kueue objects stored at v1beta1) upgrades in place, losing nothing.

The state is written as the previous release wrote it: Kueue CRDs serving and storing v1beta1
only, objects created at v1beta1. A new server starts on it, local mode's bootstrap re-applies
the bundled CRDs (v1beta2 stored, v1beta1 converted by the operator's webhook), and - with no
operator yet - the stored objects stay readable at v1beta1 while their migration is retried.
Once the operator serves ``/convert``, the server migrates every object to v1beta2 and trims
``storedVersions``; every field reads back under its v1beta2 name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.kube.config import from_kubeconfig
from codeflare.local.mode.bootstrap import bootstrap
from codeflare.operator.webhooks.conversion import CONVERTED_KINDS, crd_name
from tests.sdk.test_kueue_versions import kueue_crds
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace, wait_for

Obj = dict[str, Any]
V1 = "kueue.x-k8s.io/v1beta1"
NS = "team"
POD_SETS = [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}]


def old_objects() -> list[tuple[kinds.Kind, Obj]]:
    """What the previous release stored (v1beta1 names: cohort, flavorUsage, priorityClassName)."""
    cq_spec = {
        "cohort": "research",
        "namespaceSelector": {},
        "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "old-rf", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
            }
        ],
    }
    wl_spec = {
        "queueName": "old-lq",
        "priority": 7,
        "priorityClassName": "old-high",
        "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
        "podSets": POD_SETS,
    }
    return [
        (kinds.RESOURCE_FLAVOR, {"metadata": {"name": "old-rf"}, "spec": {"nodeLabels": {"pool": "a"}}}),
        (kinds.CLUSTER_QUEUE, {"metadata": {"name": "old-cq"}, "spec": cq_spec}),
        (
            kinds.LOCAL_QUEUE,
            {"metadata": {"name": "old-lq", "namespace": NS}, "spec": {"clusterQueue": "old-cq"}},
        ),
        (kinds.WORKLOAD_PRIORITY_CLASS, {"metadata": {"name": "old-high"}, "value": 7, "description": "d"}),
        (kinds.WORKLOAD, {"metadata": {"name": "old-wl", "namespace": NS}, "spec": wl_spec}),
    ]


def write_old_state(server: ServerProcess) -> None:
    with Kube(from_kubeconfig(server.kubeconfig)) as kube:
        for crd in kueue_crds(("v1beta1",)):
            kube.create(kinds.CRD, crd)
        for kind in CONVERTED_KINDS:
            wait_for(lambda k=kind: kube.list(k.at_version("v1beta1")) is not None, 10, what=f"{kind.plural}")
        ensure_namespace(kube, NS)
        for kind, body in old_objects():
            kube.create(kind.at_version("v1beta1"), {"apiVersion": V1, "kind": kind.kind, **body})
        usage = [{"name": "old-rf", "resources": [{"name": "cpu", "total": "1"}]}]
        old_lq = kinds.LOCAL_QUEUE.at_version("v1beta1")
        kube.patch(old_lq, "old-lq", {"status": {"flavorUsage": usage}}, NS, status=True)


def stored_versions(kube: Kube) -> dict[str, list[str]]:
    return {
        crd_name(kind): kube.get(kinds.CRD, crd_name(kind))["status"]["storedVersions"]
        for kind in CONVERTED_KINDS
    }


def test_an_old_state_dir_migrates_to_v1beta2_and_keeps_every_field(tmp_path: Path) -> None:
    state = tmp_path / "state"
    old = ServerProcess(state).start()
    try:
        write_old_state(old)
    finally:
        old.stop()

    server = ServerProcess(state).start()
    try:
        bootstrap(server.kubeconfig)
        with Kube(from_kubeconfig(server.kubeconfig)) as kube:
            # no operator yet: the webhook is down, objects stay v1beta1-stored and readable there
            assert all(v == ["v1beta1", "v1beta2"] for v in stored_versions(kube).values())
            assert (
                kube.get(kinds.CLUSTER_QUEUE.at_version("v1beta1"), "old-cq")["spec"]["cohort"] == "research"
            )
            operator = ThreadedOperator(
                server, {"appwrapper": {"enabled": False}, "queueing": {"enabled": False}}
            )
            operator.start(timeout=60)
            try:
                wait_for(
                    lambda: all(v == ["v1beta2"] for v in stored_versions(kube).values()),
                    60,
                    what="every Kueue CRD migrated to v1beta2",
                )
                cq = kube.get(kinds.CLUSTER_QUEUE, "old-cq")
                assert cq["apiVersion"] == "kueue.x-k8s.io/v1beta2"
                assert cq["spec"]["cohortName"] == "research" and "cohort" not in cq["spec"]
                assert cq["spec"]["flavorFungibility"]["whenCanBorrow"] == "MayStopSearch"
                assert cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] == "4"
                lq = kube.get(kinds.LOCAL_QUEUE, "old-lq", NS)
                assert lq["status"]["flavorsUsage"][0]["resources"] == [{"name": "cpu", "total": "1"}]
                wl = kube.get(kinds.WORKLOAD, "old-wl", NS)
                assert wl["spec"]["priorityClassRef"] == {
                    "group": "kueue.x-k8s.io",
                    "kind": "WorkloadPriorityClass",
                    "name": "old-high",
                }
                assert (wl["spec"]["priority"], wl["spec"]["queueName"]) == (7, "old-lq")
                assert kube.get(kinds.RESOURCE_FLAVOR, "old-rf")["spec"]["nodeLabels"] == {"pool": "a"}
                assert kube.get(kinds.WORKLOAD_PRIORITY_CLASS, "old-high")["value"] == 7
                # and the v1beta1 view of the migrated objects is what the old release stored
                back = kube.get(kinds.CLUSTER_QUEUE.at_version("v1beta1"), "old-cq")
                assert back["spec"]["cohort"] == "research"
            finally:
                operator.stop()
    finally:
        server.stop()
