"""CRD schema handling: validation, defaulting, pruning and structural checks, Kubernetes style."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeflare.apiserver import errors
from codeflare.apiserver.schema import (
    CompiledSchema,
    apply_defaults,
    check_structural,
    prune,
    validate,
)

RAYCLUSTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["headGroupSpec"],
            "properties": {
                "rayVersion": {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
                "suspend": {"type": "boolean"},
                "enableInTreeAutoscaling": {"type": "boolean", "default": False},
                "headGroupSpec": {
                    "type": "object",
                    "properties": {
                        "serviceType": {"type": "string", "enum": ["ClusterIP", "NodePort", "LoadBalancer"]},
                        "rayStartParams": {"type": "object", "additionalProperties": {"type": "string"}},
                        "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                },
                "workerGroupSpecs": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["groupName"],
                    "items": {
                        "type": "object",
                        "required": ["groupName"],
                        "properties": {
                            "groupName": {"type": "string", "maxLength": 63},
                            "replicas": {"type": "integer", "format": "int32", "minimum": 0, "default": 0},
                            "minReplicas": {"type": "integer", "minimum": 0},
                            "maxReplicas": {"type": "integer", "maximum": 1000},
                            "numOfHosts": {"type": "integer", "default": 1},
                            "rayStartParams": {"type": "object", "additionalProperties": {"type": "string"}},
                            "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            "scaleStrategy": {
                                "type": "object",
                                "properties": {
                                    "workersToDelete": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "set",
                                        "items": {"type": "string"},
                                    }
                                },
                            },
                        },
                    },
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "state": {"type": "string"},
                "endpoints": {"type": "object", "additionalProperties": {"type": "string"}},
                "lastUpdateTime": {"type": "string", "format": "date-time", "nullable": True},
            },
        },
    },
}


def raycluster() -> dict[str, Any]:
    container = {
        "name": "ray-worker",
        "image": "quay.io/rhoai/ray:2.35.0-py311-cu121",
        "resources": {"limits": {"cpu": "2", "memory": "8G"}, "requests": {"cpu": "2", "memory": "8G"}},
        "env": [{"name": "RAY_USAGE_STATS_ENABLED", "value": "0"}],
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "demo", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "rayVersion": "2.35.0",
            "suspend": False,
            "headGroupSpec": {
                "serviceType": "ClusterIP",
                "rayStartParams": {"dashboard-host": "0.0.0.0", "block": "true"},
                "template": {"spec": {"containers": [dict(container, name="ray-head")]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": f"group-{i}",
                    "replicas": 2,
                    "minReplicas": 1,
                    "maxReplicas": 4,
                    "numOfHosts": 1,
                    "rayStartParams": {"num-cpus": "2"},
                    "template": {"spec": {"containers": [container]}},
                }
                for i in range(2)
            ],
        },
    }


def messages(errs: list[errors.FieldError]) -> list[str]:
    return [e.message() for e in errs]


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
    assert errs[0].type == errors.FIELD_TYPE_INVALID


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
        (errors.FIELD_REQUIRED, "spec.headGroupSpec"),
        (errors.FIELD_REQUIRED, "spec.workerGroupSpecs[1].groupName"),
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
        (errors.FIELD_DUPLICATE, "spec.workerGroupSpecs[1]", {"groupName": "group-0"})
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
    assert [(e.type, e.field) for e in errs] == [(errors.FIELD_DUPLICATE, "x[1]")]


def test_enum_does_not_confuse_booleans_with_integers() -> None:
    schema = {"type": "object", "properties": {"x": {"enum": [1, 0]}}}
    assert validate({"x": True}, schema)[0].type == errors.FIELD_NOT_SUPPORTED


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


def test_cel_validations_are_ignored() -> None:
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
    assert validate({"spec": {"replicas": 1, "minReplicas": 5}}, schema) == []
    assert check_structural(schema) == []


# --- defaulting ---------------------------------------------------------------------------------


def test_defaults_fill_absent_fields_in_every_list_item() -> None:
    obj = raycluster()
    for group in obj["spec"]["workerGroupSpecs"]:
        del group["replicas"], group["numOfHosts"]
    apply_defaults(obj, RAYCLUSTER_SCHEMA)
    assert obj["spec"]["enableInTreeAutoscaling"] is False
    assert [(g["replicas"], g["numOfHosts"]) for g in obj["spec"]["workerGroupSpecs"]] == [(0, 1), (0, 1)]


def test_defaults_do_not_override_given_values_and_do_not_create_absent_parents() -> None:
    obj = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "x"}}
    apply_defaults(obj, RAYCLUSTER_SCHEMA)
    assert "spec" not in obj
    obj["spec"] = {"enableInTreeAutoscaling": True}
    apply_defaults(obj, RAYCLUSTER_SCHEMA)
    assert obj["spec"] == {"enableInTreeAutoscaling": True}


def test_nested_defaults_apply_under_a_defaulted_parent() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "default": {},
                "properties": {
                    "policy": {
                        "type": "object",
                        "default": {"mode": "Fair"},
                        "properties": {
                            "mode": {"type": "string"},
                            "limit": {"type": "integer", "default": 3},
                        },
                    }
                },
            }
        },
    }
    obj: dict[str, Any] = {}
    apply_defaults(obj, schema)
    assert obj == {"spec": {"policy": {"mode": "Fair", "limit": 3}}}
    # The default is copied: changing the object never changes the schema.
    obj["spec"]["policy"]["mode"] = "Strict"
    assert schema["properties"]["spec"]["properties"]["policy"]["default"] == {"mode": "Fair"}


def test_null_gets_the_default_unless_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "default": 1},
            "b": {"type": "integer", "default": 2, "nullable": True},
            "c": {"type": "integer"},
            "m": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}},
            "l": {"type": "array", "items": {"type": "string", "default": "y"}},
        },
    }
    obj = {"a": None, "b": None, "c": None, "m": {"k": None}, "l": [None, "z"]}
    apply_defaults(obj, schema)
    assert obj == {"a": 1, "b": None, "m": {"k": "x"}, "l": ["y", "z"]}


def test_defaulting_leaves_root_metadata_alone() -> None:
    schema = {"type": "object", "properties": {"metadata": {"type": "object"}}}
    obj = {"metadata": {"name": "x", "annotations": None}}
    apply_defaults(obj, schema)
    assert obj == {"metadata": {"name": "x", "annotations": None}}


# --- pruning ------------------------------------------------------------------------------------


def test_prune_removes_unknown_fields_and_reports_their_paths() -> None:
    obj = raycluster()
    obj["spec"]["enableIngress"] = True
    obj["spec"]["workerGroupSpecs"][1]["idleTimeout"] = 30
    obj["status"] = {"state": "ready", "bogus": 1}
    obj["extra"] = {}
    removed = prune(obj, RAYCLUSTER_SCHEMA)
    # In the object's own key order (enableIngress was added after workerGroupSpecs).
    assert removed == ["spec.workerGroupSpecs[1].idleTimeout", "spec.enableIngress", "status.bogus", "extra"]
    assert "enableIngress" not in obj["spec"]
    assert obj["status"] == {"state": "ready"}


def test_prune_keeps_preserved_embedded_and_root_type_meta() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "obj": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    },
                },
            }
        },
    }
    obj = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {"name": "n", "unknownMeta": 1},
        "spec": {
            "free": {"anything": {"goes": [1]}},
            "obj": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"a": "1", "b": 2},
                "c": 3,
            },
        },
    }
    removed = prune(obj, schema)
    assert removed == ["spec.obj.spec.b", "spec.obj.c"]
    assert obj["spec"]["free"] == {"anything": {"goes": [1]}}
    assert obj["metadata"] == {"name": "n", "unknownMeta": 1}
    assert obj["spec"]["obj"]["kind"] == "Pod"


def test_object_without_properties_is_pruned_empty() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    obj = {"spec": {"a": 1}}
    assert prune(obj, schema) == ["spec.a"]
    assert obj == {"spec": {}}


# --- structural checks ------------------------------------------------------------------------


def test_raycluster_schema_is_structural() -> None:
    assert check_structural(RAYCLUSTER_SCHEMA) == []


@pytest.mark.parametrize(
    ("schema", "field", "kind"),
    [
        ({"type": "string"}, "s.type", errors.FIELD_INVALID),
        ({"type": "object", "properties": {"a": {}}}, "s.properties[a].type", errors.FIELD_REQUIRED),
        (
            {"type": "object", "properties": {"a": {"type": "thing"}}},
            "s.properties[a].type",
            errors.FIELD_NOT_SUPPORTED,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array"}}},
            "s.properties[a].items",
            errors.FIELD_REQUIRED,
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "object", "properties": {}, "additionalProperties": {}}},
            },
            "s.properties[a].additionalProperties",
            errors.FIELD_FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}},
            "s.properties[a].pattern",
            errors.FIELD_INVALID,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "integer", "default": "three"}}},
            "s.properties[a].default",
            errors.FIELD_INVALID,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "object", "default": {"x": 1}}}},
            "s.properties[a].default",
            errors.FIELD_INVALID,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "allOf": [{"type": "string"}]}}},
            "s.properties[a].allOf[0].type",
            errors.FIELD_FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "object", "anyOf": [{"properties": {"b": {}}}]}}},
            "s.properties[a].anyOf[0].properties[b]",
            errors.FIELD_REQUIRED,
        ),
        (
            {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {}}}}},
            "s.properties[metadata]",
            errors.FIELD_FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"x-kubernetes-int-or-string": True, "type": "string"}}},
            "s.properties[a].type",
            errors.FIELD_INVALID,
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string", "x-kubernetes-embedded-resource": True}},
            },
            "s.properties[a].type",
            errors.FIELD_INVALID,
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
            },
            "s.properties[a].uniqueItems",
            errors.FIELD_FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/definitions/x"}}},
            "s.properties[a].$ref",
            errors.FIELD_FORBIDDEN,
        ),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}
                },
            },
            "s.properties[a].x-kubernetes-list-map-keys",
            errors.FIELD_REQUIRED,
        ),
        (
            {
                "type": "object",
                "properties": {
                    "a": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                    }
                },
            },
            "s.properties[a].x-kubernetes-list-map-keys",
            errors.FIELD_INVALID,
        ),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}
                },
            },
            "s.properties[a].items.type",
            errors.FIELD_INVALID,
        ),
        (
            {"type": "object", "x-kubernetes-preserve-unknown-fields": False},
            "s.x-kubernetes-preserve-unknown-fields",
            errors.FIELD_INVALID,
        ),
    ],
)
def test_structural_violations(schema: dict[str, Any], field: str, kind: str) -> None:
    errs = check_structural(schema, "s")
    assert (kind, field) in [(e.type, e.field) for e in errs], messages(errs)


def test_default_error_explains_the_problem() -> None:
    schema = {"type": "object", "properties": {"replicas": {"type": "integer", "default": "three"}}}
    path = "spec.versions[0].schema.openAPIV3Schema"
    assert messages(check_structural(schema, path)) == [
        f'{path}.properties[replicas].default: Invalid value: "three": '
        'Invalid value: "string": must be of type integer'
    ]


def test_structural_accepts_int_or_string_anyof_and_metadata_name_restrictions() -> None:
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}},
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "free": {"x-kubernetes-preserve-unknown-fields": True},
            "obj": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            "nested": {
                "type": "object",
                "default": {},
                "properties": {"a": {"type": "integer", "default": 1}},
            },
        },
    }
    assert check_structural(schema) == []


# --- invariants -----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


keywords = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "additionalProperties",
        "required",
        "default",
        "nullable",
        "enum",
        "pattern",
        "allOf",
        "anyOf",
        "not",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string",
        "x-kubernetes-embedded-resource",
        "minimum",
        "maxLength",
        "metadata",
    ]
)
schema_like = st.recursive(
    st.dictionaries(keywords, json_values, max_size=4),
    lambda children: st.dictionaries(
        keywords, children | st.lists(children, max_size=2) | json_values, max_size=4
    ),
    max_leaves=12,
)


@FAST
@given(schema_like, json_values)
def test_garbage_schemas_never_crash_any_entry_point(schema: dict[str, Any], value: Any) -> None:
    check_structural(schema)
    compiled = CompiledSchema(schema)
    obj = {"spec": value}
    compiled.default(obj)
    compiled.prune(obj)
    compiled.validate(obj)


@FAST
@given(json_values)
def test_validate_never_raises_on_arbitrary_json(value: Any) -> None:
    validate(value, RAYCLUSTER_SCHEMA)
    validate({"spec": value, "status": value}, RAYCLUSTER_SCHEMA)


def raycluster_like() -> st.SearchStrategy[dict[str, Any]]:
    group = st.fixed_dictionaries(
        {"groupName": st.text(min_size=1, max_size=5)},
        optional={
            "replicas": st.integers(0, 5) | st.none(),
            "junk": json_values,
            "template": json_values,
            "scaleStrategy": st.fixed_dictionaries(
                {}, optional={"workersToDelete": st.lists(st.text(max_size=3)), "x": json_values}
            ),
        },
    )
    spec = st.fixed_dictionaries(
        {
            "headGroupSpec": st.fixed_dictionaries(
                {}, optional={"serviceType": st.just("ClusterIP"), "y": json_values}
            )
        },
        optional={
            "workerGroupSpecs": st.lists(group, max_size=3),
            "enableInTreeAutoscaling": st.none(),
            "unknown": json_values,
        },
    )
    return st.fixed_dictionaries(
        {"apiVersion": st.just("ray.io/v1"), "kind": st.just("RayCluster"), "spec": spec},
        optional={
            "status": st.dictionaries(st.sampled_from(["state", "junk"]), st.text(max_size=3)),
            "other": json_values,
        },
    )


@FAST
@given(raycluster_like())
def test_prune_then_validate_reports_no_unknown_fields_and_prune_is_idempotent(obj: dict[str, Any]) -> None:
    compiled = CompiledSchema(RAYCLUSTER_SCHEMA)
    compiled.prune(obj)
    assert compiled.prune(copy.deepcopy(obj)) == []
    errs = compiled.validate(obj)
    assert all(e.type != errors.FIELD_FORBIDDEN for e in errs)
    assert set(obj) <= {"apiVersion", "kind", "metadata", "spec", "status"}


@FAST
@given(raycluster_like())
def test_defaulting_is_idempotent_and_never_removes_set_values(obj: dict[str, Any]) -> None:
    compiled = CompiledSchema(RAYCLUSTER_SCHEMA)
    compiled.default(obj)
    once = copy.deepcopy(obj)
    compiled.default(obj)
    assert obj == once
    assert once["spec"].get("enableInTreeAutoscaling") is False


# --- speed (measured, not asserted hard: benchmarks own timing) ----------------------------------------


def test_compiled_schema_validates_a_raycluster_quickly() -> None:
    compiled = CompiledSchema(RAYCLUSTER_SCHEMA)
    obj = raycluster()
    assert len(json.dumps(obj)) > 1000
    start = time.perf_counter()
    for _ in range(200):
        compiled.default(obj)
        compiled.prune(obj)
        assert compiled.validate(obj) == []
    per_object = (time.perf_counter() - start) / 200
    assert per_object < 0.01  # generous: a shared CI core; typically ~0.1 ms
