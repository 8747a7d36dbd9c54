"""One list-merge table for both merging patches: strategic merge patch reads the patch-merge-key
extensions, server-side apply the list-map-keys, and they differ where Kubernetes' OpenAPI does
(tolerations, topologySpreadConstraints), for both patch kinds."""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.apiserver.errors import ApiError
from codeflare.apiserver.registry import list_semantics
from codeflare.apiserver.registry.apply import server_side_apply
from codeflare.apiserver.registry.patch import apply_strategic_merge_patch

T0, T1 = "2026-11-30T10:00:00Z", "2026-11-30T10:01:00Z"
ZONE = "topology.kubernetes.io/zone"


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
    }


def spread(when: str, skew: int = 1) -> dict[str, Any]:
    return {"topologyKey": ZONE, "whenUnsatisfiable": when, "maxSkew": skew}


def test_the_table_holds_the_upstream_extensions_of_the_fields_the_two_tables_disagreed_on() -> None:
    assert list_semantics.LIST_EXTENSIONS["tolerations"] == ({"x-kubernetes-list-type": "atomic"},)
    (tsc,) = list_semantics.LIST_EXTENSIONS["topologySpreadConstraints"]
    assert tsc == {
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["topologyKey", "whenUnsatisfiable"],
        "x-kubernetes-patch-merge-key": "topologyKey",
        "x-kubernetes-patch-strategy": "merge",
    }


def test_both_patch_kinds_read_their_keys_from_the_same_entries() -> None:
    assert list_semantics.strategic_merge_key("tolerations", [{"key": "a"}]) is None
    assert list_semantics.apply_list_keys("tolerations", [{"key": "a"}]) is None
    assert (
        list_semantics.strategic_merge_key("topologySpreadConstraints", [spread("DoNotSchedule")])
        == "topologyKey"
    )
    assert list_semantics.apply_list_keys("topologySpreadConstraints", [spread("DoNotSchedule")]) == (
        "topologyKey",
        "whenUnsatisfiable",
    )
    container, service = [{"containerPort": 80}], [{"port": 80}]
    assert list_semantics.strategic_merge_key("ports", container) == "containerPort"
    assert list_semantics.strategic_merge_key("ports", service) == "port"
    assert list_semantics.apply_list_keys("ports", container) == ("containerPort", "protocol")
    assert list_semantics.apply_list_keys("ports", service) == ("port", "protocol")
    assert list_semantics.strategic_merges_scalars("finalizers") and list_semantics.apply_is_set("finalizers")
    # our CRDs' lists are keyed under apply only: custom resources have no strategic merge patch
    assert list_semantics.strategic_merge_key("workerGroupSpecs", [{"groupName": "g"}]) is None
    assert list_semantics.apply_list_keys("workerGroupSpecs", [{"groupName": "g"}]) == ("groupName",)


def test_strategic_merge_patch_replaces_tolerations_whole() -> None:
    live = pod({"tolerations": [{"key": "gpu", "operator": "Exists"}]})
    out = apply_strategic_merge_patch(live, {"spec": {"tolerations": [{"key": "tpu", "operator": "Exists"}]}})
    assert out["spec"]["tolerations"] == [{"key": "tpu", "operator": "Exists"}]


def test_server_side_apply_owns_tolerations_whole() -> None:
    live = server_side_apply(
        None, pod({"tolerations": [{"key": "gpu", "operator": "Exists"}]}), manager="a", force=False, now=T0
    )
    other = pod({"tolerations": [{"key": "tpu", "operator": "Exists"}]})
    with pytest.raises(ApiError) as conflict:
        server_side_apply(live, other, manager="b", force=False, now=T1)
    assert conflict.value.code == 409 and ".spec.tolerations" in conflict.value.message
    forced = server_side_apply(live, other, manager="b", force=True, now=T1)
    assert forced["spec"]["tolerations"] == [{"key": "tpu", "operator": "Exists"}]


def test_strategic_merge_patch_merges_spread_constraints_by_topology_key_alone() -> None:
    live = pod({"topologySpreadConstraints": [spread("DoNotSchedule")]})
    out = apply_strategic_merge_patch(
        live, {"spec": {"topologySpreadConstraints": [{"topologyKey": ZONE, "maxSkew": 2}]}}
    )
    assert out["spec"]["topologySpreadConstraints"] == [spread("DoNotSchedule", skew=2)]


def test_server_side_apply_keys_spread_constraints_by_topology_key_and_when_unsatisfiable() -> None:
    live = server_side_apply(
        None, pod({"topologySpreadConstraints": [spread("DoNotSchedule")]}), manager="a", force=False, now=T0
    )
    out = server_side_apply(
        live,
        pod({"topologySpreadConstraints": [spread("ScheduleAnyway", 3)]}),
        manager="b",
        force=False,
        now=T1,
    )
    assert out["spec"]["topologySpreadConstraints"] == [spread("DoNotSchedule"), spread("ScheduleAnyway", 3)]
