"""The checks a CRD's ``x-kubernetes-validations`` must pass before the CRD is accepted.

Kubernetes refuses a CRD whose rules cannot work (apiextensions ``validation.go``,
``ValidateCustomResourceDefinitionOpenAPISchema``): an empty rule, a blank or multi-line
message, a multi-line rule without a message, a blank messageExpression, an unknown reason, a
``fieldPath`` that names no field of the schema, a rule or messageExpression that does not
compile, ``oldSelf`` below a list that is not a map list (its items cannot be matched to their
old values), and ``optionalOldSelf`` on a rule that does not use ``oldSelf``. :func:`check_rules`
reports each with the CRD field path (``...x-kubernetes-validations[0].rule``) and Kubernetes'
words; :func:`parse_field_path` is the ``fieldPath`` grammar both the check and the evaluator
use. Nothing here evaluates a rule against an object.
"""

from __future__ import annotations

import re
from typing import Any

from codeflare.k8s.schema.field import ErrorType, FieldError, type_invalid

REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
RULES_KEY = "x-kubernetes-validations"
_NEWLINE = re.compile(r"[\n\r]")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "'": "'", "\\": "\\"}
_FIELD_TOKEN = re.compile(r"'(?:\\.|[^'\\])*'|[.\[\]]|[^.\[\]']+")


def has_rules(schema: Any) -> bool:
    """Whether any node of ``schema`` carries ``x-kubernetes-validations``."""
    if isinstance(schema, dict):
        return RULES_KEY in schema or any(has_rules(v) for v in schema.values() if isinstance(v, dict | list))
    if isinstance(schema, list):
        return any(has_rules(v) for v in schema)
    return False


def parse_field_path(text: str, schema: Any) -> str:
    """``.spec.x['y.z']`` as the field path it names below ``schema`` (``spec.x.y.z``, map keys
    as ``[k]``); ``ValueError`` saying why when it names nothing."""
    tokens = _FIELD_TOKEN.findall(text)
    if "".join(tokens) != text:
        raise ValueError("invalid JSON path")
    out, node, i = "", schema if isinstance(schema, dict) else {}, 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == ".":
            if i + 1 >= len(tokens) or tokens[i + 1] in (".", "[", "]"):
                raise ValueError("unexpected end of JSON path")
            name, i = tokens[i + 1], i + 2
        elif tok == "[":
            if i + 2 >= len(tokens) or tokens[i + 2] != "]":
                raise ValueError("unexpected end of JSON path")
            quoted = tokens[i + 1]
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                raise ValueError(f"expected single quoted string but got {quoted}")
            name, i = _unquote(quoted[1:-1]), i + 3
        else:
            raise ValueError(f"expected [ or . but got: {tok}")
        props, additional = node.get("properties"), node.get("additionalProperties")
        if isinstance(props, dict):
            if name not in props or not isinstance(props[name], dict):
                raise ValueError("does not refer to a valid field")
            out, node = (f"{out}.{name}" if out else name), props[name]
        elif isinstance(additional, dict):
            out, node = f"{out}[{name}]", additional
        else:
            raise ValueError("does not refer to a valid field")
    return out


def _unquote(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        char = match.group()[1]
        if char not in _ESCAPES:
            raise ValueError(f"invalid string literal: invalid escape char \\{char}")
        return _ESCAPES[char]

    return re.sub(r"\\.", one, text)


def check_rules(schema: Any, path: str, compile_rules: bool = True) -> list[FieldError]:
    """Every way the rules of ``schema`` (at CRD field path ``path``) would not work."""
    errs: list[FieldError] = []
    _walk(schema, path, None, errs, compile_rules)
    return errs


def _walk(s: Any, path: str, uncorrelatable: str | None, errs: list[FieldError], compiling: bool) -> None:
    if not isinstance(s, dict):
        return
    if RULES_KEY in s:
        _check_node_rules(s, path, uncorrelatable, errs, compiling)
    props = s.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            _walk(sub, f"{path}.properties[{name}]", uncorrelatable, errs, compiling)
    if isinstance(s.get("additionalProperties"), dict):
        _walk(s["additionalProperties"], f"{path}.additionalProperties", uncorrelatable, errs, compiling)
    if isinstance(s.get("items"), dict):
        if s.get("x-kubernetes-list-type") != "map" and uncorrelatable is None:
            uncorrelatable = path
        _walk(s["items"], f"{path}.items", uncorrelatable, errs, compiling)
    all_of = s.get("allOf")
    for i, sub in enumerate(all_of if isinstance(all_of, list) else []):
        _walk(sub, f"{path}.allOf[{i}]", uncorrelatable, errs, compiling)


def _check_node_rules(
    s: dict[str, Any], path: str, uncorrelatable: str | None, errs: list[FieldError], compiling: bool
) -> None:
    rules = s[RULES_KEY]
    base = f"{path}.{RULES_KEY}"
    if not isinstance(rules, list):
        errs.append(type_invalid(base, "array", rules))
        return
    for i, rule in enumerate(rules):
        here = f"{base}[{i}]"
        if not isinstance(rule, dict):
            errs.append(type_invalid(here, "object", rule))
            continue
        shape_errs = _check_shape(rule, s, here)
        errs += shape_errs
        if compiling and not shape_errs:
            errs += _check_compiles(rule, here, uncorrelatable)


def _text(rule: dict[str, Any], key: str) -> str:
    value = rule.get(key)
    return value if isinstance(value, str) else ""


def _check_shape(rule: dict[str, Any], schema: dict[str, Any], here: str) -> list[FieldError]:
    errs: list[FieldError] = []
    text, message, message_expr = (
        _text(rule, "rule"),
        _text(rule, "message"),
        _text(rule, "messageExpression"),
    )
    if not text.strip():
        errs.append(FieldError(ErrorType.REQUIRED, f"{here}.rule", "rule is not specified"))
    elif message and not message.strip():
        errs.append(
            FieldError(
                ErrorType.INVALID, f"{here}.message", "message must be non-empty if specified", message
            )
        )
    elif _NEWLINE.search(message.strip()):
        errs.append(
            FieldError(ErrorType.INVALID, f"{here}.message", "message must not contain line breaks", message)
        )
    elif _NEWLINE.search(text.strip()) and not message.strip():
        errs.append(
            FieldError(
                ErrorType.REQUIRED,
                f"{here}.message",
                "message must be specified if rule contains line breaks",
            )
        )
    if message_expr and not message_expr.strip():
        errs.append(
            FieldError(
                ErrorType.REQUIRED,
                f"{here}.messageExpression",
                "messageExpression must be non-empty if specified",
            )
        )
    reason = rule.get("reason")
    if reason is not None and reason not in REASONS:
        supported = "supported values: " + ", ".join(f'"{r}"' for r in REASONS)
        errs.append(FieldError(ErrorType.NOT_SUPPORTED, f"{here}.reason", supported, reason))
    errs += _check_field_path(rule, schema, here)
    return errs


def _check_field_path(rule: dict[str, Any], schema: dict[str, Any], here: str) -> list[FieldError]:
    field_path = _text(rule, "fieldPath")
    where = f"{here}.fieldPath"
    if field_path and not field_path.strip():
        return [FieldError(ErrorType.INVALID, where, "fieldPath must be non-empty if specified", field_path)]
    if _NEWLINE.search(field_path):
        return [FieldError(ErrorType.INVALID, where, "fieldPath must not contain line breaks", field_path)]
    if field_path:
        try:
            parse_field_path(field_path, schema)
        except ValueError:
            return [FieldError(ErrorType.INVALID, where, "fieldPath must be a valid path", field_path)]
    return []


def _check_compiles(rule: dict[str, Any], here: str, uncorrelatable: str | None) -> list[FieldError]:
    from codeflare.k8s.schema.celenv import CompileError, compile_expression  # CEL only where rules are

    errs: list[FieldError] = []
    try:
        expression = compile_expression(_text(rule, "rule"))
    except CompileError as exc:
        return [FieldError(ErrorType.INVALID, f"{here}.rule", f"compilation failed: {exc}", rule)]
    message_expr = _text(rule, "messageExpression")
    if message_expr.strip():
        try:
            compile_expression(message_expr)
        except CompileError as exc:
            errs.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{here}.messageExpression",
                    f"messageExpression compilation failed: {exc}",
                    rule,
                )
            )
    if expression.uses_old_self:
        if uncorrelatable is not None:
            detail = (
                f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}"
            )
            errs.append(FieldError(ErrorType.INVALID, f"{here}.rule", detail, _text(rule, "rule")))
    elif rule.get("optionalOldSelf") is not None:
        errs.append(
            FieldError(
                ErrorType.INVALID,
                f"{here}.optionalOldSelf",
                "may not be set if oldSelf is not used in rule",
                rule.get("optionalOldSelf"),
            )
        )
    return errs
