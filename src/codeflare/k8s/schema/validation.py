"""Validating an object against a compiled schema: types, checks, junctors, lists, embedded objects.

:func:`validate_object_root` validates a whole custom object (root ``apiVersion``/``kind``/
``metadata`` are allowed without a schema; root ``metadata.name``/``generateName`` follow the
schema's restrictions when it declares some) and :func:`validate_value` any value against any
node. Errors carry Kubernetes' dotted paths and messages. Embedded resources
(``x-kubernetes-embedded-resource``) must carry apiVersion and kind, and their metadata follows
:mod:`codeflare.k8s.schema.objectmeta`. Nothing here mutates the object.
"""

from __future__ import annotations

from typing import Any

from codeflare.k8s.schema.checks import ROOT_PATH, hashable, join_path, render, shown_path, unique_items
from codeflare.k8s.schema.field import ErrorType, FieldError, json_type, type_invalid
from codeflare.k8s.schema.node import SchemaNode
from codeflare.k8s.schema.objectmeta import validate_object_meta

TYPE_META = ("apiVersion", "kind", "metadata")


def validate_object_root(root: SchemaNode, obj: Any) -> list[FieldError]:
    """Every way ``obj`` (a whole custom object) breaks the schema compiled into ``root``."""
    errs: list[FieldError] = []
    if not isinstance(obj, dict):
        errs.append(type_invalid(ROOT_PATH, "object", obj))
        return errs
    for key in root.required:
        if key not in obj:
            errs.append(FieldError(ErrorType.REQUIRED, key))
    for check in root.object_checks:
        check(obj, "", errs)
    for key, value in obj.items():
        if key == "metadata":
            _validate_root_metadata(root, value, errs)
            continue
        child = root.properties.get(key)
        if child is None:
            if key in TYPE_META:
                continue
            if isinstance(root.additional, SchemaNode):
                child = root.additional
            elif root.additional is False:
                errs.append(FieldError(ErrorType.FORBIDDEN, key, "is a forbidden property"))
                continue
            else:
                continue
        validate_value(child, value, key, errs)
    for sub in root.all_of:
        validate_value(sub, obj, "", errs)
    _validate_junctors(root, obj, "", errs)
    return errs


def _validate_root_metadata(root: SchemaNode, meta: Any, errs: list[FieldError]) -> None:
    node = root.properties.get("metadata")
    if node is None or not isinstance(meta, dict):
        return
    for key in ("name", "generateName"):
        child = node.properties.get(key)
        if child is not None and key in meta:
            validate_value(child, meta[key], f"metadata.{key}", errs)


def _type_error(node: SchemaNode, value: Any, path: str) -> FieldError:
    wanted = " or ".join(sorted(node.types or ()))
    return type_invalid(shown_path(path), wanted, value)


# The JSON type of a decoded value by its exact class (the fast path); the rest take _json_kind.
_KIND_OF_CLASS = {str: "string", bool: "boolean", int: "integer", list: "array", dict: "object"}


def _json_kind(value: Any) -> str | None:
    """The JSON type ``value`` is validated as (a whole float is an integer); None: not JSON."""
    return json_type(value) if isinstance(value, str | int | float | list | dict) else None


def validate_value(node: SchemaNode, value: Any, path: str, errs: list[FieldError]) -> None:
    types = node.types
    if value is None:
        if types is not None and not node.nullable:
            errs.append(_type_error(node, value, path))
        return
    kind = _KIND_OF_CLASS.get(type(value)) or _json_kind(value)
    if kind is None:
        errs.append(
            FieldError(ErrorType.TYPE_INVALID, shown_path(path), "must be a JSON value", type(value).__name__)
        )
        return
    if types is not None and kind not in types:
        errs.append(_type_error(node, value, path))
        return
    if kind == "string":
        for check in node.string_checks:
            check(value, path, errs)
    elif kind in ("integer", "number"):
        for check in node.number_checks:
            check(value, path, errs)
    elif isinstance(value, list):
        _validate_array(node, value, path, errs)
    elif isinstance(value, dict):
        _validate_object_node(node, value, path, errs)
    if node.enum is not None:
        _check_enum(node.enum, value, path, errs)
    if node.all_of:
        for sub in node.all_of:
            validate_value(sub, value, path, errs)
    if node.any_of or node.one_of or node.not_ is not None:
        _validate_junctors(node, value, path, errs)


def _check_enum(enum: list[Any], value: Any, path: str, errs: list[FieldError]) -> None:
    key = hashable(value)
    if any(hashable(e) == key for e in enum):
        return
    supported = ", ".join(render(e) for e in enum)
    errs.append(
        FieldError(ErrorType.NOT_SUPPORTED, shown_path(path), f"supported values: {supported}", value)
    )


def _validate_junctors(node: SchemaNode, value: Any, path: str, errs: list[FieldError]) -> None:
    if node.any_of:
        failures: list[list[FieldError]] = []
        for sub in node.any_of:
            sub_errs: list[FieldError] = []
            validate_value(sub, value, path, sub_errs)
            if not sub_errs:
                break
            failures.append(sub_errs)
        else:
            errs.append(
                FieldError(
                    ErrorType.INVALID, shown_path(path), "must validate at least one schema (anyOf)", value
                )
            )
            fewest: list[FieldError] = min(failures, key=len)
            errs.extend(fewest)
    if node.one_of:
        passing = 0
        for sub in node.one_of:
            sub_errs = []
            validate_value(sub, value, path, sub_errs)
            passing += not sub_errs
        if passing != 1:
            errs.append(
                FieldError(
                    ErrorType.INVALID,
                    shown_path(path),
                    "must validate one and only one schema (oneOf)",
                    value,
                )
            )
    if node.not_ is not None:
        sub_errs = []
        validate_value(node.not_, value, path, sub_errs)
        if not sub_errs:
            errs.append(
                FieldError(ErrorType.INVALID, shown_path(path), "must not validate the schema (not)", value)
            )


def _validate_object_node(node: SchemaNode, value: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    for key in node.required:
        if key not in value:
            errs.append(FieldError(ErrorType.REQUIRED, join_path(path, key)))
    for check in node.object_checks:
        check(value, path, errs)
    if node.embedded:
        _validate_embedded(value, path, errs)
    props, additional = node.properties, node.additional
    if not props and additional is None:
        return
    for key, child_value in value.items():
        child = props.get(key)
        if child is None:
            if isinstance(additional, SchemaNode):
                child = additional
            elif additional is False and not (node.embedded and key in TYPE_META):
                errs.append(FieldError(ErrorType.FORBIDDEN, join_path(path, key), "is a forbidden property"))
                continue
            else:
                continue
        validate_value(child, child_value, join_path(path, key), errs)


def _validate_embedded(value: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    for key in ("apiVersion", "kind"):
        field_value = value.get(key)
        if key not in value:
            errs.append(FieldError(ErrorType.REQUIRED, join_path(path, key), "must not be empty"))
        elif not isinstance(field_value, str):
            errs.append(FieldError(ErrorType.INVALID, join_path(path, key), "must be a string", field_value))
        elif not field_value:
            errs.append(FieldError(ErrorType.INVALID, join_path(path, key), "must not be empty", field_value))
    meta = value.get("metadata")
    if meta is None:
        return
    namespaced = isinstance(meta, dict) and bool(meta.get("namespace"))
    prefix = join_path(path, "metadata")
    for err in validate_object_meta(meta, namespaced=namespaced, name_rule="path", require_name=False):
        errs.append(FieldError(err.type, prefix + err.field.removeprefix("metadata"), err.detail, err.value))


def _validate_array(node: SchemaNode, value: list[Any], path: str, errs: list[FieldError]) -> None:
    for check in node.array_checks:
        check(value, path, errs)
    items = node.items
    if items is not None:
        for i, item in enumerate(value):
            validate_value(items, item, f"{path}[{i}]", errs)
    if node.list_type == "set":
        unique_items(value, path, errs)
    elif node.list_type == "map" and node.list_keys:
        seen_keys: set[tuple[Any, ...]] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key_tuple = tuple(hashable(item.get(k)) for k in node.list_keys)
            if key_tuple in seen_keys:
                shown = {k: item.get(k) for k in node.list_keys if k in item}
                errs.append(FieldError(ErrorType.DUPLICATE, f"{path}[{i}]", "", shown))
            seen_keys.add(key_tuple)
