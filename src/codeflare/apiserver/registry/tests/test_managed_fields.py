"""Field ownership and server-side apply: who owns what after updates and applies, conflicts, FieldsV1."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.apiserver.errors import ApiError
from codeflare.apiserver.registry.apply import server_side_apply
from codeflare.apiserver.registry.fieldsets import (
    changed_fields,
    fields_from_v1,
    fields_to_v1,
    flatten,
    render_path,
)
from codeflare.apiserver.registry.managed_fields import (
    APPLY,
    UPDATE,
    ManagedFieldsEntry,
    manager_from_user_agent,
    read_managed_fields,
    record_update,
)
from codeflare.k8s.schema.field import ErrorType

T0, T1, T2 = "2026-11-30T10:00:00Z", "2026-11-30T10:01:00Z", "2026-11-30T10:02:00Z"


def deployment(replicas: int = 1, image: str = "nginx:1", **extra_labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", **extra_labels}},
        "spec": {
            "replicas": replicas,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": image, "ports": [{"containerPort": 80}]},
                    ]
                }
            },
        },
    }


def entry(obj: dict[str, Any], manager: str) -> ManagedFieldsEntry:
    found = [e for e in read_managed_fields(obj) if e.manager == manager]
    assert len(found) == 1, f"{manager}: {found}"
    return found[0]


def owners(obj: dict[str, Any], *path: str) -> set[str]:
    return {e.manager for e in read_managed_fields(obj) if tuple(path) in e.fields}


# ---- FieldsV1 -----------------------------------------------------------------------------------


def test_fields_v1_uses_kubernetes_spelling() -> None:
    flat = flatten(deployment())
    v1 = fields_to_v1(flat)
    assert v1["f:metadata"] == {"f:labels": {"f:app": {}}}
    container = v1["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert container["."] == {}
    assert container["f:image"] == {}
    assert 'k:{"containerPort":80,"protocol":"TCP"}' in container["f:ports"]
    assert "f:apiVersion" not in v1 and "f:name" not in v1["f:metadata"]


def test_fields_v1_round_trips() -> None:
    paths = set(flatten(deployment()))
    assert fields_from_v1(fields_to_v1(paths)) == paths


def test_finalizers_are_owned_value_by_value() -> None:
    flat = flatten({"metadata": {"finalizers": ["a/b", "c"]}})
    v1 = fields_to_v1(flat)
    assert v1 == {"f:metadata": {"f:finalizers": {".": {}, 'v:"a/b"': {}, 'v:"c"': {}}}}


def test_lists_without_keys_are_owned_whole() -> None:
    flat = flatten({"spec": {"args": ["a", "b"], "tolerations": [{"key": "x"}]}})
    assert set(flat) == {("f:spec", "f:args"), ("f:spec", "f:tolerations")}


def test_render_path_names_items_by_key() -> None:
    path = ("f:spec", "f:containers", 'k:{"name":"nginx"}', "f:image")
    assert render_path(path) == '.spec.containers[name="nginx"].image'
    assert render_path(("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'
    assert render_path(("f:spec", "f:items", "i:0")) == ".spec.items[0]"


def test_entry_json_shape() -> None:
    e = ManagedFieldsEntry("kubectl", APPLY, "apps/v1", T0, {("f:spec", "f:replicas")}, "status")
    assert e.to_json() == {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}}},
        "subresource": "status",
    }
    assert ManagedFieldsEntry.from_json(e.to_json()) == e


@pytest.mark.parametrize(
    ("ua", "manager"),
    [
        ("kubectl/v1.30.2 (linux/amd64) kubernetes/39683505", "kubectl"),
        ("kubectl-client-side-apply/v1.30", "kubectl-client-side-apply"),
        ("OpenAPI-Generator/29.0.0/python", "OpenAPI-Generator"),
        ("kopf/1.37", "kopf"),
        ("", ""),
    ],
)
def test_manager_from_user_agent(ua: str, manager: str) -> None:
    assert manager_from_user_agent(ua) == manager


# ---- record_update ------------------------------------------------------------------------------


def test_create_gives_the_creator_every_field() -> None:
    obj = deployment()
    record_update(None, obj, manager="kubectl", now=T0)
    e = entry(obj, "kubectl")
    assert e.operation == UPDATE and e.api_version == "apps/v1" and e.time == T0
    assert e.fields == set(flatten(deployment()))


def test_update_moves_only_changed_fields_to_the_writer() -> None:
    old = deployment()
    record_update(None, old, manager="creator", now=T0)
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 3
    record_update(old, new, manager="scaler", now=T1)
    assert owners(new, "f:spec", "f:replicas") == {"scaler"}
    assert owners(new, "f:metadata", "f:labels", "f:app") == {"creator"}
    assert entry(new, "creator").time == T0


def test_update_that_changes_nothing_keeps_managed_fields() -> None:
    old = deployment()
    record_update(None, old, manager="creator", now=T0)
    new = copy.deepcopy(old)
    record_update(old, new, manager="other", now=T1)
    assert new["metadata"]["managedFields"] == old["metadata"]["managedFields"]


def test_removed_fields_are_disowned_and_empty_entries_dropped() -> None:
    old = deployment(extra="x")
    record_update(None, old, manager="creator", now=T0)
    mid = copy.deepcopy(old)
    mid["metadata"]["labels"]["extra"] = "y"
    record_update(old, mid, manager="labeler", now=T1)
    new = copy.deepcopy(mid)
    del new["metadata"]["labels"]["extra"]
    record_update(mid, new, manager="creator", now=T2)
    assert [e.manager for e in read_managed_fields(new)] == ["creator"]


def test_managed_fields_sent_by_the_client_as_empty_entry_reset_them() -> None:
    old = deployment()
    record_update(None, old, manager="creator", now=T0)
    new = copy.deepcopy(old)
    new["metadata"]["managedFields"] = [{}]
    new["spec"]["replicas"] = 2
    record_update(old, new, manager="editor", now=T1)
    assert [e.manager for e in read_managed_fields(new)] == ["editor"]
    assert entry(new, "editor").fields == {("f:spec", "f:replicas")}


def test_status_update_is_recorded_with_subresource() -> None:
    old = deployment()
    record_update(None, old, manager="creator", now=T0)
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 1}
    record_update(old, new, manager="controller", now=T1, subresource="status")
    e = entry(new, "controller")
    assert e.subresource == "status"
    assert e.fields == {("f:status", "f:replicas")}


# ---- server-side apply --------------------------------------------------------------------------


def test_apply_creates_and_owns_exactly_the_applied_fields() -> None:
    obj = server_side_apply(None, deployment(), manager="kubectl", force=False, now=T0)
    assert obj["spec"]["replicas"] == 1
    e = entry(obj, "kubectl")
    assert e.operation == APPLY
    assert e.fields == set(flatten(deployment()))


def test_apply_ignores_status_and_server_owned_metadata() -> None:
    cfg = deployment()
    cfg["status"] = {"replicas": 9}
    cfg["metadata"].update(uid="u", resourceVersion="5", generation=3, creationTimestamp=T0)
    obj = server_side_apply(None, cfg, manager="m", force=False, now=T0)
    assert "status" not in obj
    assert "uid" not in obj["metadata"] and "resourceVersion" not in obj["metadata"]
    assert obj["metadata"]["name"] == "web"


def test_apply_with_managed_fields_in_the_config_is_400() -> None:
    cfg = deployment()
    cfg["metadata"]["managedFields"] = []
    with pytest.raises(ApiError) as err:
        server_side_apply(None, cfg, manager="m", force=False, now=T0)
    assert err.value.code == 400


def test_apply_without_manager_is_400() -> None:
    with pytest.raises(ApiError) as err:
        server_side_apply(None, deployment(), manager="", force=False, now=T0)
    assert err.value.code == 400


def test_kubectl_apply_with_a_container_removed_deletes_it() -> None:
    two = deployment()
    two["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    live = server_side_apply(None, two, manager="kubectl", force=False, now=T0)
    out = server_side_apply(live, deployment(), manager="kubectl", force=False, now=T1)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["nginx"]


def test_field_dropped_from_config_is_removed_unless_another_manager_owns_it() -> None:
    live = server_side_apply(None, deployment(tier="web"), manager="a", force=False, now=T0)
    live = server_side_apply(live, deployment(tier="web"), manager="b", force=False, now=T0)
    out = server_side_apply(live, deployment(), manager="a", force=False, now=T1)
    assert out["metadata"]["labels"] == {"app": "web", "tier": "web"}
    assert owners(out, "f:metadata", "f:labels", "f:tier") == {"b"}
    out = server_side_apply(out, deployment(), manager="b", force=False, now=T2)
    assert out["metadata"]["labels"] == {"app": "web"}


def test_removing_the_last_label_removes_the_empty_map() -> None:
    cfg = deployment()
    cfg["metadata"]["annotations"] = {"note": "x"}
    live = server_side_apply(None, cfg, manager="a", force=False, now=T0)
    out = server_side_apply(live, deployment(), manager="a", force=False, now=T1)
    assert "annotations" not in out["metadata"]


def test_fields_set_by_others_survive_an_apply() -> None:
    live = server_side_apply(None, deployment(), manager="kubectl", force=False, now=T0)
    edited = copy.deepcopy(live)
    edited["metadata"]["annotations"] = {"owner": "ops"}
    record_update(live, edited, manager="ops-tool", now=T1)
    out = server_side_apply(edited, deployment(image="nginx:2"), manager="kubectl", force=False, now=T2)
    assert out["metadata"]["annotations"] == {"owner": "ops"}
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"


def test_changing_a_field_another_manager_owns_is_a_conflict() -> None:
    live = deployment()
    record_update(None, live, manager="kubectl-client-side-apply", now=T0)
    with pytest.raises(ApiError) as err:
        server_side_apply(live, deployment(replicas=3), manager="kubectl", force=False, now=T1)
    e = err.value
    assert e.code == 409 and e.reason == "Conflict"
    assert e.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: '
        ".spec.replicas"
    )
    cause = e.status()["details"]["causes"][0]
    assert cause["reason"] == ErrorType.CONFLICT
    assert cause["field"] == ".spec.replicas"


def test_several_conflicts_are_listed_per_manager() -> None:
    live = deployment()
    record_update(None, live, manager="old", now=T0)
    with pytest.raises(ApiError) as err:
        server_side_apply(live, deployment(replicas=3, image="x"), manager="new", force=False, now=T1)
    assert err.value.message.startswith(
        'Apply failed with 2 conflicts: conflicts with "old" using apps/v1:\n- '
    )
    assert '.spec.template.spec.containers[name="nginx"].image' in err.value.message
    assert len(err.value.causes) == 2


def test_applying_the_same_value_shares_ownership_without_conflict() -> None:
    live = deployment()
    record_update(None, live, manager="creator", now=T0)
    out = server_side_apply(live, deployment(), manager="kubectl", force=False, now=T1)
    assert owners(out, "f:spec", "f:replicas") == {"creator", "kubectl"}


def test_force_moves_ownership_of_conflicting_fields() -> None:
    live = deployment()
    record_update(None, live, manager="creator", now=T0)
    out = server_side_apply(live, deployment(replicas=5), manager="kubectl", force=True, now=T1)
    assert out["spec"]["replicas"] == 5
    assert owners(out, "f:spec", "f:replicas") == {"kubectl"}
    assert owners(out, "f:metadata", "f:labels", "f:app") == {"creator", "kubectl"}


def test_a_manager_does_not_conflict_with_itself() -> None:
    live = server_side_apply(None, deployment(), manager="kubectl", force=False, now=T0)
    out = server_side_apply(live, deployment(replicas=4), manager="kubectl", force=False, now=T1)
    assert out["spec"]["replicas"] == 4


def test_status_apply_touches_only_status() -> None:
    live = server_side_apply(None, deployment(), manager="kubectl", force=False, now=T0)
    cfg = deployment(replicas=99)
    cfg["status"] = {"readyReplicas": 1}
    out = server_side_apply(live, cfg, manager="controller", force=False, now=T1, subresource="status")
    assert out["status"] == {"readyReplicas": 1}
    assert out["spec"]["replicas"] == 1
    e = entry(out, "controller")
    assert e.subresource == "status" and e.fields == {("f:status", "f:readyReplicas")}


def test_caller_list_keys_merge_crd_lists_by_key() -> None:
    def queue(quota: int, flavor: str) -> dict[str, Any]:
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": "q"},
            "spec": {"groups": [{"id": flavor, "quota": quota}]},
        }

    keys = {"spec.groups": ("id",)}
    live = server_side_apply(None, queue(1, "a"), manager="a", force=False, now=T0, list_keys=keys)
    out = server_side_apply(live, queue(2, "b"), manager="b", force=False, now=T1, list_keys=keys)
    assert out["spec"]["groups"] == [{"id": "a", "quota": 1}, {"id": "b", "quota": 2}]
    atomic = server_side_apply(live, queue(2, "b"), manager="b", force=True, now=T1)
    assert atomic["spec"]["groups"] == [{"id": "b", "quota": 2}]


def test_service_ports_merge_by_port_and_protocol() -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}]},
    }
    live = server_side_apply(None, svc, manager="a", force=False, now=T0)
    other = copy.deepcopy(svc)
    other["spec"]["ports"] = [{"port": 443, "protocol": "TCP"}]
    out = server_side_apply(live, other, manager="b", force=False, now=T1)
    assert [p["port"] for p in out["spec"]["ports"]] == [80, 443]
    assert (
        'k:{"port":80,"protocol":"TCP"}'
        in out["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:ports"]
    )


def test_finalizer_added_by_a_controller_survives_kubectl_apply() -> None:
    live = server_side_apply(None, deployment(), manager="kubectl", force=False, now=T0)
    edited = copy.deepcopy(live)
    edited["metadata"]["finalizers"] = ["codeflare.dev/cleanup"]
    record_update(live, edited, manager="operator", now=T1)
    cfg = deployment()
    cfg["metadata"]["finalizers"] = ["user/own"]
    out = server_side_apply(edited, cfg, manager="kubectl", force=False, now=T2)
    assert out["metadata"]["finalizers"] == ["codeflare.dev/cleanup", "user/own"]
    out = server_side_apply(out, deployment(), manager="kubectl", force=False, now=T2)
    assert out["metadata"]["finalizers"] == ["codeflare.dev/cleanup"]


def test_apply_does_not_mutate_its_inputs() -> None:
    live = server_side_apply(None, deployment(), manager="a", force=False, now=T0)
    live_before, cfg = copy.deepcopy(live), deployment(replicas=2)
    cfg_before = copy.deepcopy(cfg)
    server_side_apply(live, cfg, manager="a", force=False, now=T1)
    assert live == live_before and cfg == cfg_before


# ---- properties ---------------------------------------------------------------------------------

names = st.sampled_from(["a", "b", "c"])
labels = st.dictionaries(names, st.sampled_from(["x", "y"]), max_size=3)
containers = st.lists(
    st.fixed_dictionaries({"name": names, "image": st.sampled_from(["i1", "i2"])}),
    max_size=3,
    unique_by=lambda c: c["name"],
)


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    cfg: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    if lab := draw(labels):
        cfg["metadata"]["labels"] = lab
    spec: dict[str, Any] = {}
    if cs := draw(containers):
        spec["containers"] = cs
    if draw(st.booleans()):
        spec["replicas"] = draw(st.integers(0, 3))
    if spec:
        cfg["spec"] = spec
    return cfg


def without_times(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for e in out.get("metadata", {}).get("managedFields", []):
        e.pop("time")
    return out


@settings(max_examples=80, deadline=None)
@given(configs(), configs())
def test_applying_the_same_config_twice_is_a_no_op_except_time(
    first: dict[str, Any], cfg: dict[str, Any]
) -> None:
    live = server_side_apply(None, first, manager="a", force=False, now=T0)
    once = server_side_apply(live, cfg, manager="b", force=True, now=T1)
    twice = server_side_apply(once, cfg, manager="b", force=False, now=T2)
    assert without_times(twice) == without_times(once)


@settings(max_examples=80, deadline=None)
@given(configs(), configs())
def test_sole_applier_converges_to_its_config(first: dict[str, Any], cfg: dict[str, Any]) -> None:
    live = server_side_apply(None, first, manager="a", force=False, now=T0)
    out = server_side_apply(live, cfg, manager="a", force=False, now=T1)
    out["metadata"].pop("managedFields", None)
    assert out == cfg
    applied = server_side_apply(live, cfg, manager="a", force=False, now=T1)
    assert {p for e in read_managed_fields(applied) for p in e.fields} == set(flatten(cfg))


@settings(max_examples=80, deadline=None)
@given(configs(), configs())
def test_record_update_ownership_covers_every_field_exactly_once_for_two_writers(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    obj = copy.deepcopy(first)
    record_update(None, obj, manager="a", now=T0)
    new = copy.deepcopy(second)
    new["metadata"]["managedFields"] = obj["metadata"].get("managedFields", [])
    record_update(obj, new, manager="b", now=T1)
    owned = [p for e in read_managed_fields(new) for p in e.fields]
    assert sorted(owned) == sorted(flatten(second))


@settings(max_examples=100, deadline=None)
@given(configs(), configs())
def test_cheap_diff_agrees_with_comparing_every_field(old: dict[str, Any], new: dict[str, Any]) -> None:
    before, after = flatten(old), flatten(new)
    expected_changed = {p for p, v in after.items() if p not in before or before[p] != v}
    assert changed_fields(old, new) == (expected_changed, before.keys() - after.keys())
