"""CRD schema defaulting and pruning: what a write of a custom object gains and loses."""

from __future__ import annotations

from typing import Any

from codeflare.k8s.schema import (
    apply_defaults,
    prune,
)
from codeflare.k8s.schema.tests.samples import RAYCLUSTER_SCHEMA, raycluster

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
