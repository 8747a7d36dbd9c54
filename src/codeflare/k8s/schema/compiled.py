"""A CRD version's schema compiled once: validate, default and prune whole custom objects.

Every write of a custom resource goes through the same three steps a real API server applies
with the CRD version's ``openAPIV3Schema``: drop fields the schema does not know (prune), fill
in ``default`` values, then validate. :class:`CompiledSchema` compiles the schema into a node
tree once (:mod:`~codeflare.k8s.schema.node`) and offers the three steps as methods;
:func:`compile_schema` caches compiled schemas by content. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from codeflare.k8s.schema.defaulting import default_object, prune_object
from codeflare.k8s.schema.field import FieldError
from codeflare.k8s.schema.node import compile_node
from codeflare.k8s.schema.validation import validate_object_root


class CompiledSchema:
    """A CRD version's ``openAPIV3Schema``, compiled once and applied to many objects.

    Field paths are dotted from the object root: ``spec.workerGroupSpecs[0].replicas``;
    map keys (``additionalProperties``) are appended with a dot as Kubernetes' CRD validation
    does (``spec.rayStartParams.num-cpus``). Integers: a JSON number without fractional part
    (``3`` or ``3.0``) is an integer, as in Kubernetes; booleans never are.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.root = compile_node(schema)

    # --- validation --------------------------------------------------------------------

    def validate(self, obj: Any) -> list[FieldError]:
        """Every way ``obj`` (a whole custom object) breaks the schema; empty when valid."""
        return validate_object_root(self.root, obj)

    # --- defaulting --------------------------------------------------------------------

    def default(self, obj: Any) -> None:
        """Apply ``default`` values in place, as Kubernetes does on every read and write.

        A property that is absent - or null while not nullable - gets a copy of its default;
        nested defaults apply under parents that exist or were just defaulted; ``items``
        defaults apply to each element. A null non-nullable property without a default is
        dropped (Kubernetes prunes those before validation). Root metadata is left alone.
        """
        if isinstance(obj, dict):
            default_object(self.root, obj, root=True)

    # --- pruning -----------------------------------------------------------------------

    def prune(self, obj: Any) -> list[str]:
        """Remove, in place, fields the schema does not specify; return their dotted paths.

        Kept: everything under ``x-kubernetes-preserve-unknown-fields``, apiVersion, kind and
        metadata at the root and in embedded resources. Root metadata is not pruned here.
        """
        removed: list[str] = []
        if isinstance(obj, dict):
            prune_object(self.root, obj, "", removed, root=True)
        return removed


_CACHE: dict[str, CompiledSchema] = {}
_CACHE_MAX = 64


def compile_schema(schema: dict[str, Any]) -> CompiledSchema:
    """A :class:`CompiledSchema` for ``schema``, cached by content (keep your own for speed)."""
    key = json.dumps(schema, sort_keys=True, default=str)
    compiled = _CACHE.get(key)
    if compiled is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        compiled = _CACHE[key] = CompiledSchema(schema)
    return compiled


def validate(obj: Any, schema: dict[str, Any]) -> list[FieldError]:
    """Validate a whole custom object against its version's ``openAPIV3Schema``."""
    return compile_schema(schema).validate(obj)


def apply_defaults(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    """Apply the schema's defaults to ``obj`` in place (see :meth:`CompiledSchema.default`)."""
    compile_schema(schema).default(obj)


def prune(obj: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Drop unknown fields from ``obj`` in place; return their paths (``spec.foo``)."""
    return compile_schema(schema).prune(obj)
