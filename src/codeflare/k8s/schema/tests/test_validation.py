"""CRD schema validation, Kubernetes style: types, checks, lists, embedded resources, paths."""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.k8s.schema import (
    check_structural,
    validate,
)
from codeflare.k8s.schema.field import ErrorType
from codeflare.k8s.schema.tests.samples import RAYCLUSTER_SCHEMA, messages, raycluster

# --- validation ---------------------------------------------------------------------------------


def test_a_well_formed_raycluster_is_valid() -> None:
    assert validate(raycluster(), RAYCLUSTER_SCHEMA) == []


def test_wrong_type_names_the_field_and_the_expected_type() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = "three"
    errs = validate(obj, RAYCLUSTER_SCHEMA)
    assert messages(errs) == [
        'spec.workerGroupSpecs[0].replicas: Invalid value: "string": must be of type integer'
    ]
    assert errs[0].type == ErrorType.TYPE_INVALID


def test_integers_accept_whole_floats_but_never_booleans() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = 3.0
    assert validate(obj, RAYCLUSTER_SCHEMA) == []
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = 2.5
    assert messages(validate(obj, RAYCLUSTER_SCHEMA)) == [
        'spec.workerGroupSpecs[0].replicas: Invalid value: "number": must be of type integer'
    ]
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = True
    assert validate(obj, RAYCLUSTER_SCHEMA)[0].value == "boolean"


def test_number_accepts_integers() -> None:
    assert validate({"x": 3}, {"type": "object", "properties": {"x": {"type": "number"}}}) == []


def test_missing_required_field() -> None:
    obj = raycluster()
    del obj["spec"]["headGroupSpec"]
    del obj["spec"]["workerGroupSpecs"][1]["groupName"]
    errs = validate(obj, RAYCLUSTER_SCHEMA)
    assert [(e.type, e.field) for e in errs] == [
        (ErrorType.REQUIRED, "spec.headGroupSpec"),
        (ErrorType.REQUIRED, "spec.workerGroupSpecs[1].groupName"),
    ]
    assert errs[0].message() == "spec.headGroupSpec: Required value"


def test_enum_lists_supported_values() -> None:
    obj = raycluster()
    obj["spec"]["headGroupSpec"]["serviceType"] = "Ingress"
    assert messages(validate(obj, RAYCLUSTER_SCHEMA)) == [
        'spec.headGroupSpec.serviceType: Unsupported value: "Ingress": '
        'supported values: "ClusterIP", "NodePort", "LoadBalancer"'
    ]


def test_map_values_are_checked_with_dotted_keys() -> None:
    obj = raycluster()
    obj["spec"]["headGroupSpec"]["rayStartParams"]["num-gpus"] = 1
    assert [e.field for e in validate(obj, RAYCLUSTER_SCHEMA)] == [
        "spec.headGroupSpec.rayStartParams.num-gpus"
    ]


def test_numeric_bounds_and_pattern() -> None:
    obj = raycluster()
    obj["spec"]["rayVersion"] = "latest"
    obj["spec"]["workerGroupSpecs"][0]["minReplicas"] = -1
    obj["spec"]["workerGroupSpecs"][0]["maxReplicas"] = 5000
    assert messages(validate(obj, RAYCLUSTER_SCHEMA)) == [
        r"""spec.rayVersion: Invalid value: "latest": should match '^\d+\.\d+\.\d+$'""",
        "spec.workerGroupSpecs[0].minReplicas: Invalid value: -1: should be greater than or equal to 0",
        "spec.workerGroupSpecs[0].maxReplicas: Invalid value: 5000: should be less than or equal to 1000",
    ]


def test_list_map_keys_reject_duplicates() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][1]["groupName"] = "group-0"
    errs = validate(obj, RAYCLUSTER_SCHEMA)
    assert [(e.type, e.field, e.value) for e in errs] == [
        (ErrorType.DUPLICATE, "spec.workerGroupSpecs[1]", {"groupName": "group-0"})
    ]


def test_list_set_rejects_duplicates() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["scaleStrategy"] = {"workersToDelete": ["a", "b", "a"]}
    assert messages(validate(obj, RAYCLUSTER_SCHEMA)) == [
        'spec.workerGroupSpecs[0].scaleStrategy.workersToDelete[2]: Duplicate value: "a"'
    ]


def test_nullable_fields_accept_null_others_do_not() -> None:
    obj = raycluster()
    obj["status"] = {"lastUpdateTime": None, "state": None}
    assert messages(validate(obj, RAYCLUSTER_SCHEMA)) == [
        'status.state: Invalid value: "null": must be of type string'
    ]


def test_preserve_unknown_fields_accepts_anything_below() -> None:
    obj = raycluster()
    obj["spec"]["headGroupSpec"]["template"]["whatever"] = [1, {"deep": None}]
    assert validate(obj, RAYCLUSTER_SCHEMA) == []


@pytest.mark.parametrize(
    ("schema", "value", "detail"),
    [
        ({"type": "string", "minLength": 3}, "ab", "should be at least 3 chars long"),
        ({"type": "string", "maxLength": 2}, "abc", "may not be longer than 2"),
        ({"type": "integer", "multipleOf": 5}, 12, "should be a multiple of 5"),
        ({"type": "number", "multipleOf": 0.5}, 1.25, "should be a multiple of 0.5"),
        ({"type": "integer", "exclusiveMinimum": True, "minimum": 1}, 1, "should be greater than 1"),
        ({"type": "integer", "exclusiveMaximum": True, "maximum": 1}, 1, "should be less than 1"),
        ({"type": "array", "items": {"type": "string"}, "minItems": 1}, [], "should have at least 1 items"),
        (
            {"type": "array", "items": {"type": "string"}, "maxItems": 1},
            ["a", "b"],
            "must have at most 1 items",
        ),
        ({"type": "object", "minProperties": 1}, {}, "should have at least 1 properties"),
        (
            {"type": "object", "maxProperties": 0, "x-kubernetes-preserve-unknown-fields": True},
            {"a": 1},
            "must have at most 0 properties",
        ),
        ({"type": "string", "format": "date-time"}, "yesterday", "must be of type date-time"),
        ({"type": "string", "format": "byte"}, "not base64!", "must be of type byte"),
        ({"type": "string", "format": "ipv4"}, "300.1.1.1", "must be of type ipv4"),
        ({"type": "string", "format": "uuid"}, "nope", "must be of type uuid"),
        (
            {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
            True,
            "must be of type integer or string",
        ),
        ({"type": "string", "not": {"enum": ["root"]}}, "root", "must not validate the schema (not)"),
        (
            {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]},
            5,
            "must validate one and only one schema (oneOf)",
        ),
        (
            {"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 0}]},
            5,
            "must validate at least one schema (anyOf)",
        ),
    ],
)
def test_value_constraints(schema: dict[str, Any], value: Any, detail: str) -> None:
    root = {"type": "object", "properties": {"x": schema}}
    errs = validate({"x": value}, root)
    assert errs, f"{value!r} should break {schema}"
    assert errs[0].detail == detail
    assert errs[0].field == "x"


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string", "format": "date-time"}, "2026-11-30T10:00:00Z"),
        ({"type": "string", "format": "date-time"}, "2026-11-30T10:00:00.123+02:00"),
        ({"type": "string", "format": "byte"}, "aGVsbG8="),
        ({"type": "string", "format": "cidr"}, "10.0.0.0/8"),
        ({"type": "string", "format": "ipv6"}, "::1"),
        ({"type": "string", "format": "duration"}, "1h30m"),
        ({"type": "string", "format": "something-custom"}, "anything"),
        ({"type": "integer", "format": "int32"}, 2**40),
        ({"x-kubernetes-int-or-string": True}, 3),
        ({"x-kubernetes-int-or-string": True, "pattern": "^[0-9]+%$"}, "50%"),
        ({"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 10}]}, 5),
        ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, [1, 2, 3]),
        ({"type": "integer", "enum": [1, 2]}, 2.0),
    ],
)
def test_values_that_are_accepted(schema: dict[str, Any], value: Any) -> None:
    assert validate({"x": value}, {"type": "object", "properties": {"x": schema}}) == []


def test_unique_items_reports_duplicates() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "array", "items": {}, "uniqueItems": True}}}
    errs = validate({"x": [{"a": 1}, {"a": 1}]}, schema)
    assert [(e.type, e.field) for e in errs] == [(ErrorType.DUPLICATE, "x[1]")]


def test_enum_does_not_confuse_booleans_with_integers() -> None:
    schema = {"type": "object", "properties": {"x": {"enum": [1, 0]}}}
    assert validate({"x": True}, schema)[0].type == ErrorType.NOT_SUPPORTED


def test_additional_properties_false_forbids_unknown_fields() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "object", "additionalProperties": False}}}
    assert messages(validate({"x": {"y": 1}}, schema)) == ["x.y: Forbidden: is a forbidden property"]


def test_root_allows_apiversion_kind_and_metadata_without_schema() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    obj = {"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "x", "anything": 1}, "spec": {}}
    assert validate(obj, schema) == []


def test_schema_may_restrict_metadata_name() -> None:
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}}
        },
    }
    errs = validate({"metadata": {"name": "much-too-long", "labels": {"a": "b"}}}, schema)
    assert messages(errs) == ["metadata.name: Too long: may not be longer than 5"]


def test_embedded_resource_requires_apiversion_and_kind_and_valid_metadata() -> None:
    schema = {
        "type": "object",
        "properties": {
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        },
    }
    ok = {"template": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {}}}
    assert validate(ok, schema) == []
    bad = {"template": {"metadata": {"name": "a/b", "labels": {"bad key!": "x"}}}}
    fields = [e.field for e in validate(bad, schema)]
    assert fields == [
        "template.apiVersion",
        "template.kind",
        "template.metadata.name",
        "template.metadata.labels",
    ]


def test_root_must_be_an_object() -> None:
    assert messages(validate([], RAYCLUSTER_SCHEMA)) == [
        '<root>: Invalid value: "array": must be of type object'
    ]


def test_cel_validations_are_evaluated() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.minReplicas <= self.replicas"}],
                "properties": {"replicas": {"type": "integer"}, "minReplicas": {"type": "integer"}},
            }
        },
    }
    assert messages(validate({"spec": {"replicas": 1, "minReplicas": 5}}, schema)) == [
        'spec: Invalid value: "object": failed rule: self.minReplicas <= self.replicas'
    ]
    assert validate({"spec": {"replicas": 5, "minReplicas": 1}}, schema) == []
    assert check_structural(schema) == []
