"""ObjectMeta validation: names, namespaces, labels, annotations, finalizers and owner references."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.k8s.schema.field import ErrorType, FieldError
from codeflare.k8s.schema.objectmeta import validate_name, validate_object_meta


def fields(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


def meta(**extra: Any) -> dict[str, Any]:
    return {"name": "demo", "namespace": "team-a", **extra}


def test_a_typical_namespaced_object_is_valid() -> None:
    m = meta(
        labels={"app.kubernetes.io/name": "ray", "kueue.x-k8s.io/queue-name": "lq", "empty": ""},
        annotations={"workload.codeflare.dev.appwrapper/retryLimit": "3"},
        finalizers=["workload.codeflare.dev/finalizer"],
        ownerReferences=[
            {
                "apiVersion": "workload.codeflare.dev/v1beta2",
                "kind": "AppWrapper",
                "name": "aw",
                "uid": "u1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        uid="abc",
        resourceVersion="12",
        generation=1,
        creationTimestamp="2026-11-30T10:00:00Z",
    )
    assert validate_object_meta(m, namespaced=True) == []


def test_name_must_be_a_dns_subdomain_with_the_kubernetes_message() -> None:
    errs = validate_object_meta(meta(name="My_Cluster"), namespaced=True)
    assert len(errs) == 1
    assert (
        errs[0]
        .message()
        .startswith(
            'metadata.name: Invalid value: "My_Cluster": '
            "a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com', regex used for validation is '"
        )
    )


def test_name_length_limits() -> None:
    assert validate_name("a" * 253, "subdomain") == []
    assert validate_name("a" * 254, "subdomain") == ["must be no more than 253 characters"]
    assert validate_name("a" * 64, "label") == ["must be no more than 63 characters"]


@pytest.mark.parametrize(
    ("name", "rule", "ok"),
    [
        ("example.com", "subdomain", True),
        ("example.com", "label", False),
        ("-leading", "subdomain", False),
        ("team-a", "label", True),
        ("Anything Goes:here", "path", True),
        ("..", "path", False),
        ("a/b", "path", False),
        ("50%", "path", False),
    ],
)
def test_name_rules(name: str, rule: str, ok: bool) -> None:
    assert (validate_name(name, rule) == []) is ok


def test_unknown_name_rule_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        validate_name("x", "dns")


def test_name_or_generate_name_is_required() -> None:
    errs = validate_object_meta({"namespace": "ns"}, namespaced=True)
    assert [e.message() for e in errs] == ["metadata.name: Required value: name or generateName is required"]
    assert validate_object_meta({"namespace": "ns", "generateName": "job-"}, namespaced=True) == []
    assert validate_object_meta({"namespace": "ns"}, namespaced=True, require_name=False) == []


def test_generate_name_may_end_with_a_dash_but_must_otherwise_be_valid() -> None:
    assert validate_object_meta({"generateName": "ns-"}, namespaced=False, name_rule="label") == []
    assert fields(validate_object_meta({"generateName": "Bad_"}, namespaced=False)) == [
        (ErrorType.INVALID, "metadata.generateName")
    ]


def test_namespace_required_when_namespaced_forbidden_when_cluster_scoped() -> None:
    assert fields(validate_object_meta({"name": "x"}, namespaced=True)) == [
        (ErrorType.REQUIRED, "metadata.namespace")
    ]
    assert fields(validate_object_meta({"name": "x", "namespace": "Team_A"}, namespaced=True)) == [
        (ErrorType.INVALID, "metadata.namespace")
    ]
    errs = validate_object_meta({"name": "x", "namespace": "team-a"}, namespaced=False)
    assert [e.message() for e in errs] == ["metadata.namespace: Forbidden: not allowed on this type"]


def test_label_keys_and_values() -> None:
    errs = validate_object_meta(
        meta(labels={"bad key": "v", "example.com/ok": "bad value!", "x/y/z": "v", "k": "a" * 64}),
        namespaced=True,
    )
    assert [(e.field, e.value) for e in errs] == [
        ("metadata.labels", "bad key"),
        ("metadata.labels", "bad value!"),
        ("metadata.labels", "x/y/z"),
        ("metadata.labels", "a" * 64),
    ]
    assert "name part must consist of alphanumeric characters" in errs[0].detail
    assert "a valid label must be an empty string" in errs[1].detail
    assert "with an optional DNS subdomain prefix" in errs[2].detail
    assert errs[3].detail == "must be no more than 63 characters"


def test_label_key_prefix_rules() -> None:
    errs = validate_object_meta(
        meta(labels={"/name": "v", "Example.com/name": "v", "a.b/" + "n" * 64: "v"}), namespaced=True
    )
    details = [e.detail for e in errs]
    assert details[0] == "prefix part must be non-empty"
    assert details[1].startswith("prefix part a lowercase RFC 1123 subdomain")
    assert details[2] == "name part must be no more than 63 characters"


def test_labels_and_annotations_must_map_to_strings() -> None:
    errs = validate_object_meta(meta(labels={"a": 1}, annotations=["x"]), namespaced=True)
    assert [(e.type, e.field, e.value) for e in errs] == [
        (ErrorType.TYPE_INVALID, "metadata.annotations", "array"),
        (ErrorType.TYPE_INVALID, "metadata.labels.a", "integer"),
    ]


def test_annotation_keys_are_checked_case_insensitively_and_total_size_is_capped() -> None:
    assert validate_object_meta(meta(annotations={"Example.COM/Note": "x" * 1000}), namespaced=True) == []
    big = {f"k{i}": "x" * 1024 for i in range(300)}
    errs = validate_object_meta(meta(annotations=big), namespaced=True)
    assert [e.message() for e in errs] == ["metadata.annotations: Too long: must have at most 262144 bytes"]


def test_finalizers() -> None:
    ok = meta(finalizers=["kubernetes", "example.com/cleanup", "foregroundDeletion"])
    assert validate_object_meta(ok, namespaced=True) == []
    errs = validate_object_meta(
        meta(finalizers=["bad finalizer", 3, "orphan", "foregroundDeletion"]), namespaced=True
    )
    assert fields(errs) == [
        (ErrorType.INVALID, "metadata.finalizers"),
        (ErrorType.TYPE_INVALID, "metadata.finalizers[1]"),
        (ErrorType.INVALID, "metadata.finalizers"),
    ]


def test_owner_references_require_identity_and_one_controller() -> None:
    refs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "v1", "kind": "Secret", "name": "b", "uid": "2", "controller": True},
        {"kind": "Pod", "name": "c", "controller": "yes"},
    ]
    errs = validate_object_meta(meta(ownerReferences=refs), namespaced=True)
    assert [e.message() for e in errs] == [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
        'metadata.ownerReferences[2].controller: Invalid value: "string": must be of type boolean',
        errs[3].message(),
    ]
    assert errs[3].detail == (
        'Only one reference can have Controller set to true. Found "true" in references for '
        "ConfigMap/a and Secret/b"
    )


def test_types_of_system_fields() -> None:
    errs = validate_object_meta(meta(generation="1", uid=5, deletionGracePeriodSeconds=-1), namespaced=True)
    assert fields(errs) == [
        (ErrorType.TYPE_INVALID, "metadata.uid"),
        (ErrorType.TYPE_INVALID, "metadata.generation"),
        (ErrorType.INVALID, "metadata.deletionGracePeriodSeconds"),
    ]


def test_metadata_must_be_an_object() -> None:
    assert fields(validate_object_meta("x", namespaced=True)) == [(ErrorType.TYPE_INVALID, "metadata")]


# --- invariants ------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=15,
)
meta_like = st.dictionaries(
    st.sampled_from(
        [
            "name",
            "generateName",
            "namespace",
            "labels",
            "annotations",
            "finalizers",
            "ownerReferences",
            "generation",
            "uid",
            "deletionTimestamp",
        ]
    ),
    json_values,
)


@settings(max_examples=200, deadline=None)
@given(meta_like, st.booleans(), st.sampled_from(["subdomain", "label", "path"]))
def test_never_raises_on_arbitrary_metadata(m: dict[str, Any], namespaced: bool, rule: str) -> None:
    for err in validate_object_meta(m, namespaced=namespaced, name_rule=rule):
        assert err.field.startswith("metadata")
        err.message()


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True))
def test_every_dns_label_is_also_a_subdomain_and_a_path_segment(name: str) -> None:
    assert validate_name(name, "label") == []
    assert validate_name(name, "subdomain") == []
    assert validate_name(name, "path") == []
