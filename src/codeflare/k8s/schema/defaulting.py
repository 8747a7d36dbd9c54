"""Defaulting and pruning: the two in-place rewrites a write of a custom object goes through.

:func:`default_object` fills absent (or null, non-nullable) properties with copies of their
``default`` - nested defaults apply under parents that exist or were just defaulted, ``items``
defaults apply to each element - and :func:`prune_object` removes fields the schema does not
specify, returning their dotted paths. Both keep apiVersion, kind and metadata at the root and
in embedded resources, and honour ``x-kubernetes-preserve-unknown-fields``. Neither validates.
"""

from __future__ import annotations

import copy
from typing import Any

from codeflare.k8s.schema.checks import join_path
from codeflare.k8s.schema.node import SchemaNode
from codeflare.k8s.schema.validation import TYPE_META


def _copy_default(value: Any) -> Any:
    return copy.deepcopy(value) if isinstance(value, dict | list) else value


def default_object(node: SchemaNode, obj: dict[str, Any], root: bool = False) -> None:
    props = node.properties
    if props:
        for key, child in props.items():
            if root and key in TYPE_META:
                continue
            if key not in obj:
                if child.has_default:
                    obj[key] = _copy_default(child.default)
            elif obj[key] is None and not child.nullable:
                if child.has_default:
                    obj[key] = _copy_default(child.default)
                elif child.types is not None:
                    del obj[key]
        for key, child in props.items():
            if root and key in TYPE_META:
                continue
            value = obj.get(key)
            if isinstance(value, dict | list):
                default_value(child, value)
    additional = node.additional
    if isinstance(additional, SchemaNode):
        for key, value in list(obj.items()):
            if key in props:
                continue
            if value is None and not additional.nullable and additional.has_default:
                obj[key] = _copy_default(additional.default)
            elif isinstance(value, dict | list):
                default_value(additional, value)


def default_value(node: SchemaNode, value: Any) -> None:
    if isinstance(value, dict):
        default_object(node, value)
    elif isinstance(value, list) and node.items is not None:
        items = node.items
        for i, item in enumerate(value):
            if item is None and items.has_default and not items.nullable:
                value[i] = _copy_default(items.default)
            elif isinstance(item, dict | list):
                default_value(items, item)


def prune_object(
    node: SchemaNode, obj: dict[str, Any], path: str, removed: list[str], root: bool = False
) -> None:
    props, additional = node.properties, node.additional
    keep_type_meta = root or node.embedded
    for key in list(obj):
        value = obj[key]
        child = props.get(key)
        if child is None:
            if keep_type_meta and key in TYPE_META:
                continue
            if isinstance(additional, SchemaNode):
                child = additional
            elif additional is True or node.preserve:
                continue
            else:
                del obj[key]
                removed.append(join_path(path, key))
                continue
        if root and key == "metadata":
            continue
        prune_value(child, value, join_path(path, key), removed)


def prune_value(node: SchemaNode, value: Any, path: str, removed: list[str]) -> None:
    if isinstance(value, dict):
        if node.types is None and node.preserve and not node.properties and node.additional is None:
            return
        if node.types is not None and "object" not in node.types:
            return
        prune_object(node, value, path, removed)
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            prune_value(node.items, item, f"{path}[{i}]", removed)
