"""The structural-schema checks a CRD's schema must pass before the CRD is accepted."""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.k8s.schema import (
    check_structural,
)
from codeflare.k8s.schema.field import ErrorType
from codeflare.k8s.schema.tests.samples import RAYCLUSTER_SCHEMA, messages

# --- structural checks ------------------------------------------------------------------------


def test_raycluster_schema_is_structural() -> None:
    assert check_structural(RAYCLUSTER_SCHEMA) == []


@pytest.mark.parametrize(
    ("schema", "field", "kind"),
    [
        ({"type": "string"}, "s.type", ErrorType.INVALID),
        ({"type": "object", "properties": {"a": {}}}, "s.properties[a].type", ErrorType.REQUIRED),
        (
            {"type": "object", "properties": {"a": {"type": "thing"}}},
            "s.properties[a].type",
            ErrorType.NOT_SUPPORTED,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array"}}},
            "s.properties[a].items",
            ErrorType.REQUIRED,
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "object", "properties": {}, "additionalProperties": {}}},
            },
            "s.properties[a].additionalProperties",
            ErrorType.FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}},
            "s.properties[a].pattern",
            ErrorType.INVALID,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "integer", "default": "three"}}},
            "s.properties[a].default",
            ErrorType.INVALID,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "object", "default": {"x": 1}}}},
            "s.properties[a].default",
            ErrorType.INVALID,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "allOf": [{"type": "string"}]}}},
            "s.properties[a].allOf[0].type",
            ErrorType.FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "object", "anyOf": [{"properties": {"b": {}}}]}}},
            "s.properties[a].anyOf[0].properties[b]",
            ErrorType.REQUIRED,
        ),
        (
            {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {}}}}},
            "s.properties[metadata]",
            ErrorType.FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"x-kubernetes-int-or-string": True, "type": "string"}}},
            "s.properties[a].type",
            ErrorType.INVALID,
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string", "x-kubernetes-embedded-resource": True}},
            },
            "s.properties[a].type",
            ErrorType.INVALID,
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
            },
            "s.properties[a].uniqueItems",
            ErrorType.FORBIDDEN,
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/definitions/x"}}},
            "s.properties[a].$ref",
            ErrorType.FORBIDDEN,
        ),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}
                },
            },
            "s.properties[a].x-kubernetes-list-map-keys",
            ErrorType.REQUIRED,
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
            ErrorType.INVALID,
        ),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}
                },
            },
            "s.properties[a].items.type",
            ErrorType.INVALID,
        ),
        (
            {"type": "object", "x-kubernetes-preserve-unknown-fields": False},
            "s.x-kubernetes-preserve-unknown-fields",
            ErrorType.INVALID,
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
