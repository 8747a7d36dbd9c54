"""The schemas of the built-in kinds: one source for the OpenAPI documents and for validation.

``definitions.json`` (written by :mod:`.generate` from the clients' generated models) holds
every type reachable from the served built-in kinds, with ``$ref`` between them. Here they are
inlined per kind: :func:`published_schema` is what ``/openapi/v2`` and ``/openapi/v3`` publish
(required fields included, as Kubernetes publishes them); :func:`compiled` is the same schema
for the structural-schema engine, without ``required`` - kube-apiserver's decoder does not
enforce the published ``required`` lists, its hand-written rules do (:mod:`..builtin_validation`).
Quantities (numbers or strings) are written back as canonical strings, as Kubernetes serialises
them (:func:`canonical_quantities`). Loaded on first use; no I/O after that.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from codeflare.k8s.quantity import QuantityError, canonical
from codeflare.k8s.schema import CompiledSchema
from codeflare.k8s.schema.field import ErrorType, FieldError

QUANTITY_MARK = "x-codeflare-quantity"
_QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_ITEM, _VALUE = "[]", "{}"


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
    """A built-in kind's schema compiled for validation and its tree of quantity positions."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.compiled = CompiledSchema(_without(schema, ("required", QUANTITY_MARK)))
        self.quantities = _quantity_tree(schema)

    def canonical_quantities(self, obj: dict[str, Any]) -> list[FieldError]:
        """Write every quantity of ``obj`` as Kubernetes' canonical string, in place."""
        errs: list[FieldError] = []
        if self.quantities:
            _walk_quantities(self.quantities, obj, "", errs)
        return errs


@functools.cache
def compiled(group: str, version: str, kind: str) -> BuiltinSchema | None:
    """The kind's :class:`BuiltinSchema`, compiled on first use; None for kinds without one."""
    schema = _published(group, version, kind)
    return None if schema is None else BuiltinSchema(schema)


def _quantity_tree(node: Any) -> dict[str, Any]:
    """Only the branches of ``node`` that lead to quantities: name -> subtree, True at a leaf."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {}
    for name, child in (node.get("properties") or {}).items():
        if isinstance(child, dict) and child.get(QUANTITY_MARK):
            out[name] = True
        elif sub := _quantity_tree(child):
            out[name] = sub
    if isinstance(node.get("items"), dict):
        if node["items"].get(QUANTITY_MARK):
            out[_ITEM] = True
        elif sub := _quantity_tree(node["items"]):
            out[_ITEM] = sub
    add = node.get("additionalProperties")
    if isinstance(add, dict):
        if add.get(QUANTITY_MARK):
            out[_VALUE] = True
        elif sub := _quantity_tree(add):
            out[_VALUE] = sub
    return out


def _walk_quantities(tree: dict[str, Any], value: Any, path: str, errs: list[FieldError]) -> None:
    if isinstance(value, dict):
        pairs = (
            [(k, tree.get(k)) for k in value if k in tree]
            if _VALUE not in tree
            else [(k, tree[_VALUE]) for k in value]
        )
        for key, sub in pairs:
            _step(sub, value, key, f"{path}.{key}" if path else key, errs)
    elif isinstance(value, list) and _ITEM in tree:
        for i in range(len(value)):
            _step(tree[_ITEM], value, i, f"{path}[{i}]", errs)


def _step(sub: Any, container: Any, key: Any, path: str, errs: list[FieldError]) -> None:
    if sub is True:
        item = container[key]
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            return  # a type error, reported by the schema
        try:
            text = canonical(item)
        except (QuantityError, ValueError, ArithmeticError):
            message = f"quantities must match the regular expression '{_QUANTITY_PATTERN}'"
            errs.append(FieldError(ErrorType.INVALID, path, message, item))
            return
        if not isinstance(item, str):
            container[key] = text
    elif isinstance(sub, dict):
        _walk_quantities(sub, container[key], path, errs)
