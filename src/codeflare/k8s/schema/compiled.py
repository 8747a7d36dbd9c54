"""A CRD version's schema compiled once: validate, default and prune whole custom objects.

Every write of a custom resource goes through the same three steps a real API server applies
with the CRD version's ``openAPIV3Schema``: drop fields the schema does not know (prune), fill
in ``default`` values, then validate - the OpenAPI checks, then the ``x-kubernetes-validations``
rules (:mod:`~codeflare.k8s.schema.rules`; given the old object on updates, for transition
rules). :class:`CompiledSchema` compiles the schema into a node tree once
(:mod:`~codeflare.k8s.schema.node`), its rules on first use (so serving a CRD costs no CEL
compilation until an object is written), and offers the three steps as methods;
:func:`compile_schema` caches compiled schemas by content. Pure functions, no I/O.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from codeflare.k8s.schema.defaulting import default_object, prune_object
from codeflare.k8s.schema.field import ErrorType, FieldError
from codeflare.k8s.schema.node import compile_node
from codeflare.k8s.schema.rulecheck import has_rules
from codeflare.k8s.schema.validation import validate_object_root

if TYPE_CHECKING:
    from codeflare.k8s.schema.rules import RuleNode

# Errors after which Kubernetes does not run the rules (apiextensions' hasBlockingErr).
_BLOCKING = frozenset(
    (ErrorType.NOT_SUPPORTED, ErrorType.REQUIRED, ErrorType.TOO_LONG, ErrorType.TYPE_INVALID)
)
_NOT_CHECKED = FieldError(
    ErrorType.INVALID,
    "<nil>",
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation",
    None,
)


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
        self._has_rules = has_rules(schema)
        self._rules: RuleNode | None = None
        self._rules_compiled = False
        self._lock = threading.Lock()

    # --- validation --------------------------------------------------------------------

    def validate(self, obj: Any, old: Any = None) -> list[FieldError]:
        """Every way ``obj`` (a whole custom object) breaks the schema; empty when valid.

        ``old`` is the object being updated (None on create): transition rules compare with it.
        The rules run only when the OpenAPI checks found no missing, mistyped, unsupported or
        too long value, as in Kubernetes (which then says so in one more error).
        """
        errs = validate_object_root(self.root, obj)
        tree = self.rules()
        if tree is None or not isinstance(obj, dict):
            return errs
        if any(e.type in _BLOCKING for e in errs):
            return [*errs, _NOT_CHECKED]
        from codeflare.k8s.schema.rules import evaluate

        return errs + evaluate(tree, obj, old if isinstance(old, dict) else None)

    def rules(self) -> RuleNode | None:
        """The schema's compiled ``x-kubernetes-validations`` (compiled once, on first use)."""
        if self._has_rules and not self._rules_compiled:
            from codeflare.k8s.schema.rules import compile_tree  # CEL only for schemas with rules

            with self._lock:
                if not self._rules_compiled:
                    self._rules = compile_tree(self.schema)
                    self._rules_compiled = True
        return self._rules

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


def validate(obj: Any, schema: dict[str, Any], old: Any = None) -> list[FieldError]:
    """Validate a whole custom object (updating ``old``, if given) against its version's schema."""
    return compile_schema(schema).validate(obj, old)


def apply_defaults(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    """Apply the schema's defaults to ``obj`` in place (see :meth:`CompiledSchema.default`)."""
    compile_schema(schema).default(obj)


def prune(obj: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Drop unknown fields from ``obj`` in place; return their paths (``spec.foo``)."""
    return compile_schema(schema).prune(obj)
