"""JSON patch, merge patch and strategic merge patch applied to stored objects, with Kubernetes' errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.apiserver.errors import ApiError
from codeflare.apiserver.registry.patch import (
    APPLY_PATCH_CBOR,
    PATCH_CONTENT_TYPES,
    SUPPORTED_PATCH_CONTENT_TYPES,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
    create_merge_patch,
)


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "a", "tier": "web"}, "finalizers": ["x/one"]},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "nginx:1",
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "args": ["--a", "--b"],
                },
                {"name": "sidecar", "image": "busybox"},
            ],
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
        },
    }


# ---- content types ----------------------------------------------------------------------------


def test_every_kubernetes_patch_content_type_is_known() -> None:
    assert PATCH_CONTENT_TYPES["application/json-patch+json"] == "json"
    assert PATCH_CONTENT_TYPES["application/merge-patch+json"] == "merge"
    assert PATCH_CONTENT_TYPES["application/strategic-merge-patch+json"] == "strategic"
    assert PATCH_CONTENT_TYPES["application/apply-patch+yaml"] == "apply"
    assert PATCH_CONTENT_TYPES["application/apply-patch+cbor"] == APPLY_PATCH_CBOR
    assert "application/apply-patch+cbor" not in SUPPORTED_PATCH_CONTENT_TYPES
    assert "application/json" not in PATCH_CONTENT_TYPES


# ---- JSON patch -------------------------------------------------------------------------------


def test_json_patch_replaces_adds_and_removes_without_touching_the_input() -> None:
    doc = pod()
    before = copy.deepcopy(doc)
    out = apply_json_patch(
        doc,
        [
            {"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"},
            {"op": "add", "path": "/metadata/labels/new", "value": "yes"},
            {"op": "remove", "path": "/metadata/labels/tier"},
            {"op": "add", "path": "/metadata/finalizers/-", "value": "x/two"},
        ],
    )
    assert out["spec"]["containers"][0]["image"] == "nginx:2"
    assert out["metadata"]["labels"] == {"app": "a", "new": "yes"}
    assert out["metadata"]["finalizers"] == ["x/one", "x/two"]
    assert doc == before


def test_json_patch_failing_test_op_is_422() -> None:
    with pytest.raises(ApiError) as err:
        apply_json_patch(pod(), [{"op": "test", "path": "/metadata/name", "value": "other"}])
    assert err.value.code == 422
    assert err.value.reason == "Invalid"


def test_json_patch_passing_test_op_guards_the_change() -> None:
    out = apply_json_patch(
        pod(),
        [
            {"op": "test", "path": "/metadata/name", "value": "p"},
            {"op": "replace", "path": "/metadata/name", "value": "q"},
        ],
    )
    assert out["metadata"]["name"] == "q"


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "remove", "path": "/metadata/annotations"}],
        [{"op": "replace", "path": "/spec/nothing/here", "value": 1}],
        [{"op": "add", "path": "/spec/containers/9", "value": {}}],
    ],
)
def test_json_patch_on_a_missing_path_is_422(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(ApiError) as err:
        apply_json_patch(pod(), ops)
    assert err.value.code == 422


@pytest.mark.parametrize(
    "ops",
    [
        {"op": "add"},
        [{"op": "add"}],
        [{"path": "/a"}],
        [{"op": "frobnicate", "path": "/a"}],
        ["not an op"],
    ],
)
def test_malformed_json_patch_is_400(ops: Any) -> None:
    with pytest.raises(ApiError) as err:
        apply_json_patch(pod(), ops)
    assert err.value.code == 400
    assert err.value.reason == "BadRequest"


# ---- merge patch ------------------------------------------------------------------------------


def test_merge_patch_null_deletes_and_lists_replace() -> None:
    out = apply_merge_patch(
        pod(), {"metadata": {"labels": {"tier": None, "new": "x"}}, "spec": {"tolerations": []}}
    )
    assert out["metadata"]["labels"] == {"app": "a", "new": "x"}
    assert out["spec"]["tolerations"] == []
    assert len(out["spec"]["containers"]) == 2


def test_merge_patch_that_is_not_an_object_is_400() -> None:
    for bad in ([], "x", 3, None):
        with pytest.raises(ApiError) as err:
            apply_merge_patch(pod(), bad)
        assert err.value.code == 400


def test_merge_patch_does_not_mutate_input() -> None:
    doc = pod()
    before = copy.deepcopy(doc)
    apply_merge_patch(doc, {"metadata": {"labels": {"app": None}}, "spec": {"containers": None}})
    assert doc == before


# Merge patch cannot express null values inside objects, so targets hold none.
non_null = st.recursive(
    st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=2),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("abc", max_size=2), inner, max_size=3)
    ),
    max_leaves=10,
)
objects = st.dictionaries(st.text("abc", max_size=2), non_null, max_size=4)


@settings(max_examples=150, deadline=None)
@given(objects, objects)
def test_merge_patch_of_the_diff_reproduces_the_target(
    source: dict[str, Any], target: dict[str, Any]
) -> None:
    assert apply_merge_patch(source, create_merge_patch(source, target)) == target


@settings(max_examples=100, deadline=None)
@given(objects, objects)
def test_merge_patch_is_idempotent(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    once = apply_merge_patch(doc, patch)
    assert apply_merge_patch(once, patch) == once


# ---- strategic merge patch --------------------------------------------------------------------


def test_kubectl_set_image_merges_the_container_by_name() -> None:
    out = apply_strategic_merge_patch(pod(), {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}})
    main, sidecar = out["spec"]["containers"]
    assert main["image"] == "nginx:2"
    assert main["env"] == pod()["spec"]["containers"][0]["env"]
    assert sidecar == {"name": "sidecar", "image": "busybox"}


def test_new_container_is_appended_and_env_merges_by_name() -> None:
    out = apply_strategic_merge_patch(
        pod(),
        {
            "spec": {
                "containers": [
                    {"name": "main", "env": [{"name": "B", "value": "changed"}, {"name": "C", "value": "3"}]},
                    {"name": "extra", "image": "redis"},
                ]
            }
        },
    )
    names = [c["name"] for c in out["spec"]["containers"]]
    assert names == ["main", "sidecar", "extra"]
    assert out["spec"]["containers"][0]["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "changed"},
        {"name": "C", "value": "3"},
    ]


def test_delete_directive_removes_one_container() -> None:
    out = apply_strategic_merge_patch(
        pod(), {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["main"]


def test_replace_directive_in_a_list_replaces_the_list() -> None:
    out = apply_strategic_merge_patch(
        pod(), {"spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}}
    )
    assert out["spec"]["containers"] == [{"name": "only", "image": "x"}]


def test_replace_directive_in_a_map_replaces_the_map() -> None:
    out = apply_strategic_merge_patch(pod(), {"metadata": {"labels": {"z": "1", "$patch": "replace"}}})
    assert out["metadata"]["labels"] == {"z": "1"}


def test_delete_directive_in_a_map_removes_the_map() -> None:
    out = apply_strategic_merge_patch(pod(), {"metadata": {"labels": {"$patch": "delete"}}})
    assert "labels" not in out["metadata"]


def test_unknown_directive_is_400() -> None:
    with pytest.raises(ApiError) as err:
        apply_strategic_merge_patch(pod(), {"metadata": {"labels": {"$patch": "explode"}}})
    assert err.value.code == 400


def test_lists_without_merge_key_are_replaced() -> None:
    out = apply_strategic_merge_patch(pod(), {"spec": {"containers": [{"name": "main", "args": ["--c"]}]}})
    assert out["spec"]["containers"][0]["args"] == ["--c"]


def test_null_deletes_a_field() -> None:
    out = apply_strategic_merge_patch(
        pod(), {"metadata": {"labels": {"tier": None}}, "spec": {"tolerations": None}}
    )
    assert out["metadata"]["labels"] == {"app": "a"}
    assert "tolerations" not in out["spec"]


def test_finalizers_are_merged_not_replaced() -> None:
    out = apply_strategic_merge_patch(pod(), {"metadata": {"finalizers": ["x/two", "x/one"]}})
    assert out["metadata"]["finalizers"] == ["x/one", "x/two"]


def test_delete_from_primitive_list_removes_a_finalizer() -> None:
    out = apply_strategic_merge_patch(pod(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x/one"]}})
    assert out["metadata"]["finalizers"] == []


def test_set_element_order_reorders_merged_items() -> None:
    out = apply_strategic_merge_patch(
        pod(),
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "main"}],
                "containers": [{"name": "main", "image": "nginx:3"}],
            }
        },
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["sidecar", "main"]
    assert out["spec"]["containers"][1]["image"] == "nginx:3"


def test_retain_keys_drops_fields_not_listed() -> None:
    doc = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    out = apply_strategic_merge_patch(
        doc, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    )
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_container_ports_merge_by_container_port() -> None:
    out = apply_strategic_merge_patch(
        pod(), {"spec": {"containers": [{"name": "main", "ports": [{"containerPort": 8080}]}]}}
    )
    assert [p["containerPort"] for p in out["spec"]["containers"][0]["ports"]] == [80, 8080]


def test_service_ports_merge_by_port() -> None:
    svc = {
        "kind": "Service",
        "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]},
    }
    out = apply_strategic_merge_patch(svc, {"spec": {"ports": [{"port": 443, "targetPort": 8443}]}})
    assert out["spec"]["ports"] == [
        {"port": 80, "name": "http"},
        {"port": 443, "name": "https", "targetPort": 8443},
    ]


def test_caller_supplied_merge_key_wins() -> None:
    doc = {"spec": {"flavors": [{"name": "a", "quota": 1}, {"name": "b", "quota": 2}]}}
    out = apply_strategic_merge_patch(
        doc, {"spec": {"flavors": [{"name": "b", "quota": 5}]}}, {"flavors": "name"}
    )
    assert out["spec"]["flavors"] == [{"name": "a", "quota": 1}, {"name": "b", "quota": 5}]
    replaced = apply_strategic_merge_patch(doc, {"spec": {"flavors": [{"name": "b", "quota": 5}]}})
    assert replaced["spec"]["flavors"] == [{"name": "b", "quota": 5}]


def test_item_without_merge_key_is_422() -> None:
    with pytest.raises(ApiError) as err:
        apply_strategic_merge_patch(pod(), {"spec": {"containers": [{"image": "x"}]}})
    assert err.value.code == 422


def test_strategic_patch_that_is_not_an_object_is_400() -> None:
    with pytest.raises(ApiError) as err:
        apply_strategic_merge_patch(pod(), [1])
    assert err.value.code == 400


def test_strategic_patch_does_not_mutate_input() -> None:
    doc = pod()
    before = copy.deepcopy(doc)
    apply_strategic_merge_patch(doc, {"spec": {"containers": [{"name": "main", "image": "z"}]}})
    assert doc == before


@settings(max_examples=100, deadline=None)
@given(objects, objects)
def test_strategic_patch_without_lists_or_directives_behaves_like_merge_patch(
    doc: dict[str, Any], patch: dict[str, Any]
) -> None:
    def no_lists(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: no_lists(x) for k, x in v.items()}
        return "l" if isinstance(v, list) else v

    doc, patch = no_lists(doc), no_lists(patch)
    assert apply_strategic_merge_patch(doc, patch) == apply_merge_patch(doc, patch)
