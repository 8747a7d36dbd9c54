"""The schemas of the built-in kinds: one source for the OpenAPI documents and for validation.

``definitions.json`` (written by :mod:`.generate` from the clients' generated models) holds
every type reachable from the served built-in kinds, with ``$ref`` between them. Here they are
inlined per kind: :func:`published_schema` is what ``/openapi/v2`` and ``/openapi/v3`` publish
(required fields included, as Kubernetes publishes them); :func:`compiled` is the same schema
for the structural-schema engine, without ``required`` - kube-apiserver's decoder does not
enforce the published ``required`` lists, its hand-written rules do (:mod:`..builtin_validation`).
Two more steps mirror what decoding into Go types and encoding back does to an object: a field
the schema lists as required (a Go field without ``omitempty``) that a client left out is
written with its zero value (``""``, ``0``, ``false``, ``[]``, ``{}``), so typed clients, which
expect those fields, can decode every stored object (:meth:`BuiltinSchema.fill_required`); and
quantities (numbers or strings) are written back as canonical strings and integers written as
``3.0`` are refused (:meth:`BuiltinSchema.canonical_scalars`). Loaded on first use; no I/O
after that.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any

from codeflare.k8s.quantity import QuantityError, canonical
from codeflare.k8s.schema import CompiledSchema
from codeflare.k8s.schema.field import ErrorType, FieldError, type_invalid
from codeflare.k8s.schema.node import SchemaNode

QUANTITY_MARK = "x-codeflare-quantity"
_QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_ITEM, _VALUE = "[]", "{}"
_PLAIN_QUANTITY = re.compile(r"[0-9]{1,15}(m|k|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?")


@functools.cache
def _data() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(Path(__file__).with_name("definitions.json").read_text())
    return loaded


def kinds() -> list[tuple[str, str, str]]:
    """The (group, version, kind) triples that have a schema."""
    triples = (key.split("/") for key in _data()["kinds"])
    return [(group, version, kind) for group, version, kind in triples]


def _inline(name: str, definitions: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    if name in seen:  # a recursive type: free-form below its first occurrence
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return _expand(definitions[name], definitions, (*seen, name))


def _expand(node: Any, definitions: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(node["$ref"], definitions, seen)
        return {k: _expand(v, definitions, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_expand(v, definitions, seen) for v in node]
    return node


@functools.cache
def _published(group: str, version: str, kind: str) -> dict[str, Any] | None:
    data = _data()
    root = data["kinds"].get(f"{group}/{version}/{kind}")
    if root is None:
        return None
    return _inline(root, data["definitions"], ())


def published_schema(group: str, version: str, kind: str) -> dict[str, Any] | None:
    """The kind's OpenAPI v3 schema (a fresh copy), or None for kinds without one."""
    schema = _published(group, version, kind)
    return None if schema is None else _without(schema, (QUANTITY_MARK,))


def _without(node: Any, keys: tuple[str, ...]) -> Any:
    """A copy of a schema without the keywords ``keys`` (a property of that name stays)."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "properties" and isinstance(v, dict):
                out[k] = {name: _without(sub, keys) for name, sub in v.items()}
            elif k not in keys:
                out[k] = _without(v, keys)
        return out
    if isinstance(node, list):
        return [_without(v, keys) for v in node]
    return node


class BuiltinSchema:
    """A built-in kind's schema compiled for validation, with its trees of required fields and
    of quantity and integer positions (only the branches that lead to some)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.compiled = CompiledSchema(_without(schema, ("required", QUANTITY_MARK)))
        self.scalars = _scalar_tree(schema)
        self.required = _required_tree(schema, root=True)

    def fill_required(self, obj: dict[str, Any]) -> None:
        """Drop nulls under typed fields and give every absent required field under an existing
        parent its zero value, in place (what decoding into Go types and encoding does). The
        walk follows the object, not the schema: it costs what the object's size costs."""
        _drop_nulls(self.compiled.root, obj, root=True)
        if self.required is not None:
            _fill(self.required, obj)

    def canonical_scalars(self, obj: dict[str, Any]) -> list[FieldError]:
        """Quantities as Kubernetes' canonical strings, in place; integers written as floats
        (``3.0``) refused, as Go's decoder refuses them. Returns the errors."""
        errs: list[FieldError] = []
        _walk_scalars(self.scalars, obj, "", errs)
        return errs


@functools.cache
def compiled(group: str, version: str, kind: str) -> BuiltinSchema | None:
    """The kind's :class:`BuiltinSchema`, compiled on first use; None for kinds without one."""
    schema = _published(group, version, kind)
    return None if schema is None else BuiltinSchema(schema)


_ZERO: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


class _Required:
    """Where required fields may be missing: zero values here, subtrees below."""

    __slots__ = ("children", "items", "values", "zeros")

    def __init__(self) -> None:
        self.zeros: list[tuple[str, Any, _Required | None]] = []  # (name, zero, its own tree)
        self.children: dict[str, _Required] = {}
        self.items: _Required | None = None
        self.values: _Required | None = None


def _required_tree(node: Any, root: bool = False) -> _Required | None:
    if not isinstance(node, dict):
        return None
    tree = _Required()
    props = node.get("properties") or {}
    for name in node.get("required") or ():
        child = props.get(name)
        if not isinstance(child, dict) or (root and name in ("apiVersion", "kind", "metadata")):
            continue
        kind = str(child.get("type"))
        # times have no zero value a client accepts; free-form and int-or-string have no type
        if kind in _ZERO and not (kind == "string" and child.get("format") == "date-time"):
            tree.zeros.append((name, _ZERO[kind], _required_tree(child)))
    for name, child in props.items():
        if (sub := _required_tree(child)) is not None:
            tree.children[name] = sub
    tree.items = _required_tree(node.get("items"))
    add = node.get("additionalProperties")
    tree.values = _required_tree(add) if isinstance(add, dict) else None
    if tree.zeros or tree.children or tree.items or tree.values:
        return tree
    return None


def _drop_nulls(node: SchemaNode, obj: dict[str, Any], root: bool = False) -> None:
    """Remove null values of typed fields (free-form values are kept as sent)."""
    props, additional = node.properties, node.additional
    for key in [k for k, v in obj.items() if v is None]:
        child = props.get(key) or (additional if isinstance(additional, SchemaNode) else None)
        if child is not None and child.types is not None and not child.nullable:
            del obj[key]
    for key, value in obj.items():
        if root and key == "metadata":
            continue
        child = props.get(key) or (additional if isinstance(additional, SchemaNode) else None)
        if child is None or child.types is None:
            continue
        if isinstance(value, dict):
            _drop_nulls(child, value)
        elif isinstance(value, list) and child.items is not None and child.items.types is not None:
            for item in value:
                if isinstance(item, dict):
                    _drop_nulls(child.items, item)


def _fill(tree: _Required, value: Any) -> None:
    if isinstance(value, dict):
        for name, zero, own in tree.zeros:
            if name not in value:
                value[name] = copy.copy(zero)
                if own is not None:
                    _fill(own, value[name])
        for name, sub in tree.children.items():
            if name in value:
                _fill(sub, value[name])
        if tree.values is not None:
            for item in value.values():
                _fill(tree.values, item)
    elif isinstance(value, list) and tree.items is not None:
        for item in value:
            _fill(tree.items, item)


_QUANTITY, _INTEGER = "quantity", "integer"


def _leaf(node: Any) -> str | None:
    if not isinstance(node, dict):
        return None
    if node.get(QUANTITY_MARK):
        return _QUANTITY
    return _INTEGER if node.get("type") == "integer" else None


def _scalar_tree(node: Any) -> dict[str, Any]:
    """Only the branches of ``node`` that lead to quantities or integers: name -> subtree, the
    leaf's kind at a leaf (``[]`` stands for array items, ``{}`` for map values)."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {}
    children = list((node.get("properties") or {}).items())
    children += [(_ITEM, node.get("items")), (_VALUE, node.get("additionalProperties"))]
    for name, child in children:
        if (leaf := _leaf(child)) is not None:
            out[name] = leaf
        elif sub := _scalar_tree(child):
            out[name] = sub
    return out


def _walk_scalars(tree: dict[str, Any], value: Any, path: str, errs: list[FieldError]) -> None:
    if isinstance(value, dict):
        pairs = (
            [(k, tree[_VALUE]) for k in value]
            if _VALUE in tree
            else [(k, tree[k]) for k in value if k in tree]
        )
        for key, sub in pairs:
            _step(sub, value, key, f"{path}.{key}" if path else key, errs)
    elif isinstance(value, list) and _ITEM in tree:
        for i in range(len(value)):
            _step(tree[_ITEM], value, i, f"{path}[{i}]", errs)


def _step(sub: Any, container: Any, key: Any, path: str, errs: list[FieldError]) -> None:
    item = container[key]
    if sub == _INTEGER:
        if isinstance(item, float):  # 3.0: an integer to the schema engine, not to Go or typed clients
            errs.append(type_invalid(path, "integer", item, whole_floats_are_integers=False))
    elif sub == _QUANTITY:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            return  # a type error, reported by the schema
        if isinstance(item, str) and _PLAIN_QUANTITY.fullmatch(item):
            return  # the common spellings ("2", "500m", "1Gi"): valid, and kept as written
        try:
            text = canonical(item)
        except (QuantityError, ValueError, ArithmeticError):
            message = f"quantities must match the regular expression '{_QUANTITY_PATTERN}'"
            errs.append(FieldError(ErrorType.INVALID, path, message, item))
            return
        if not isinstance(item, str):
            container[key] = text
    elif isinstance(sub, dict):
        _walk_scalars(sub, item, path, errs)
