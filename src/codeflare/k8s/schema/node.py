"""Compiling an ``openAPIV3Schema`` into a tree of nodes, once, so each write only walks the object.

:func:`compile_node` reads one schema dict into a :class:`SchemaNode`: its allowed JSON types,
nullability, enum, default, the closures of its value checks (regexes compiled once), its
children (properties, additionalProperties, items, allOf/anyOf/oneOf/not) and the Kubernetes
extensions the engine honours (preserve-unknown-fields, embedded-resource, int-or-string,
list-type and list-map-keys). It never judges the schema: malformed keywords are ignored here
and reported by :mod:`codeflare.k8s.schema.structural` when a CRD is created.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from codeflare.k8s.schema import checks


class SchemaNode:
    """One compiled schema node: its types, checks, children and Kubernetes extensions."""

    __slots__ = (
        "additional",
        "all_of",
        "any_of",
        "array_checks",
        "default",
        "embedded",
        "enum",
        "has_default",
        "items",
        "list_keys",
        "list_type",
        "not_",
        "nullable",
        "number_checks",
        "object_checks",
        "one_of",
        "preserve",
        "properties",
        "required",
        "string_checks",
        "types",
    )

    def __init__(self) -> None:
        self.types: frozenset[str] | None = None  # None: any JSON type
        self.nullable = False
        self.enum: list[Any] | None = None
        self.string_checks: list[checks.Check] = []
        self.number_checks: list[checks.Check] = []
        self.array_checks: list[checks.Check] = []
        self.object_checks: list[checks.Check] = []
        self.properties: dict[str, SchemaNode] = {}
        self.required: tuple[str, ...] = ()
        self.additional: SchemaNode | bool | None = None
        self.items: SchemaNode | None = None
        self.all_of: list[SchemaNode] = []
        self.any_of: list[SchemaNode] = []
        self.one_of: list[SchemaNode] = []
        self.not_: SchemaNode | None = None
        self.preserve = False
        self.embedded = False
        self.list_type = "atomic"
        self.list_keys: tuple[str, ...] = ()
        self.has_default = False
        self.default: Any = None


def compile_node(s: Any) -> SchemaNode:
    """Compile one schema node (and its subtree); anything that is not a dict accepts everything."""
    node = SchemaNode()
    if not isinstance(s, dict):
        return node
    typ = s.get("type")
    if s.get("x-kubernetes-int-or-string"):
        node.types = frozenset(("integer", "string"))
    elif isinstance(typ, str) and typ:
        node.types = frozenset((typ,))
    elif isinstance(typ, list) and typ:
        node.types = frozenset(t for t in typ if isinstance(t, str))
    if node.types is not None and "number" in node.types:
        node.types = node.types | {"integer"}
    node.nullable = bool(s.get("nullable"))
    node.preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    node.embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if isinstance(s.get("enum"), list):
        node.enum = list(s["enum"])
    if "default" in s:
        node.has_default, node.default = True, s["default"]
    _compile_checks(node, s)
    props = s.get("properties")
    if isinstance(props, dict):
        node.properties = {k: compile_node(v) for k, v in props.items()}
    req = s.get("required")
    if isinstance(req, list):
        node.required = tuple(r for r in req if isinstance(r, str))
    add = s.get("additionalProperties")
    if isinstance(add, bool):
        node.additional = add
    elif isinstance(add, dict):
        node.additional = compile_node(add)
    if isinstance(s.get("items"), dict):
        node.items = compile_node(s["items"])
    for key, attr in (("allOf", "all_of"), ("anyOf", "any_of"), ("oneOf", "one_of")):
        if isinstance(s.get(key), list):
            setattr(node, attr, [compile_node(sub) for sub in s[key]])
    if isinstance(s.get("not"), dict):
        node.not_ = compile_node(s["not"])
    list_type = s.get("x-kubernetes-list-type")
    if list_type in ("set", "map"):
        node.list_type = list_type
        keys = s.get("x-kubernetes-list-map-keys") or ()
        node.list_keys = tuple(k for k in keys if isinstance(k, str))
    return node


def _compile_checks(node: SchemaNode, s: dict[str, Any]) -> None:
    strs, nums, arrs, objs = node.string_checks, node.number_checks, node.array_checks, node.object_checks
    if isinstance(s.get("maxLength"), int):
        strs.append(checks.max_length(s["maxLength"]))
    if isinstance(s.get("minLength"), int):
        strs.append(checks.min_length(s["minLength"]))
    if isinstance(s.get("pattern"), str):
        # An invalid pattern is rejected by check_structural when the CRD is created.
        with contextlib.suppress(re.error):
            strs.append(checks.pattern_check(s["pattern"], checks.compile_pattern(s["pattern"])))
    if isinstance(s.get("format"), str):
        strs.append(checks.format_check(s["format"]))
    for key, excl_key, op in (
        ("minimum", "exclusiveMinimum", "min"),
        ("maximum", "exclusiveMaximum", "max"),
    ):
        bound = s.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            nums.append(checks.bound_check(bound, op, bool(s.get(excl_key))))
    mult = s.get("multipleOf")
    if isinstance(mult, int | float) and not isinstance(mult, bool) and mult > 0:
        nums.append(checks.multiple_of(mult))
    for key, word, fn in (
        ("minItems", "items", checks.min_count),
        ("minProperties", "properties", checks.min_count),
    ):
        if isinstance(s.get(key), int):
            (arrs if word == "items" else objs).append(fn(s[key], word))
    for key, word in (("maxItems", "items"), ("maxProperties", "properties")):
        if isinstance(s.get(key), int):
            (arrs if word == "items" else objs).append(checks.max_count(s[key], word))
    if s.get("uniqueItems") is True:
        arrs.append(checks.unique_items)
