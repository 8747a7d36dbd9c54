"""The structural-schema engine: OpenAPI v3 validation, defaulting and pruning as Kubernetes does it.

Custom resources are validated, defaulted and pruned against their CRD version's
``openAPIV3Schema``; the API server does it on every write and the SDK does it before sending
anything, with the same code. The package is cut by concern:

- :mod:`~codeflare.k8s.schema.field`: :class:`FieldError`, the cause types and JSON type names;
- :mod:`~codeflare.k8s.schema.objectmeta`: ObjectMeta rules (names, labels, owners, ...);
- :mod:`~codeflare.k8s.schema.checks` and :mod:`~codeflare.k8s.schema.node`: compiling a schema;
- :mod:`~codeflare.k8s.schema.validation`, :mod:`~codeflare.k8s.schema.defaulting`: the walks;
- :mod:`~codeflare.k8s.schema.compiled`: :class:`CompiledSchema`, the entry point;
- :mod:`~codeflare.k8s.schema.structural`: the checks a CRD's schema must pass;
- :mod:`~codeflare.k8s.schema.rules`: ``x-kubernetes-validations`` (CEL) evaluated on objects,
  with :mod:`~codeflare.k8s.schema.rulecheck` (a CRD's rules checked when it is written),
  :mod:`~codeflare.k8s.schema.celenv` (the CEL library, loaded on first use, and its functions),
  :mod:`~codeflare.k8s.schema.celvalues` (objects as CEL values) and
  :mod:`~codeflare.k8s.schema.celscan` (an expression's size and nesting, for the cost bound).

Pure functions over decoded JSON: no I/O, no HTTP, nothing of ours outside ``codeflare.k8s``.
"""

from __future__ import annotations

from codeflare.k8s.schema.checks import ROOT_PATH, compile_pattern
from codeflare.k8s.schema.compiled import CompiledSchema, apply_defaults, compile_schema, prune, validate
from codeflare.k8s.schema.field import FieldError, json_type
from codeflare.k8s.schema.structural import check_structural

__all__ = [
    "ROOT_PATH",
    "CompiledSchema",
    "FieldError",
    "apply_defaults",
    "check_structural",
    "compile_pattern",
    "compile_schema",
    "json_type",
    "prune",
    "validate",
]
