"""Evaluating ``x-kubernetes-validations`` (CEL rules) on a custom object, as kube-apiserver does.

:func:`compile_tree` reads a CRD version's schema once into a tree of the nodes that carry rules
(or lead to some), with every rule compiled; :func:`evaluate` walks an object (and, on update,
its old version) along it. As in apiextensions-apiserver ``schema/cel/validation.go``: each rule
runs with ``self`` bound to the value at its node (absent and null values are not validated);
transition rules (those using ``oldSelf``) run only on update where the old object has a value
at that node - list items correlate only in map lists, by their keys - unless
``optionalOldSelf`` makes ``oldSelf`` an optional and runs them on create too. A false rule
reports ``<path>: Invalid value: "<type>": <message>`` with ``messageExpression``, ``message`` or
``failed rule: <rule>``; ``reason`` picks Forbidden, Required or Duplicate instead, and
``fieldPath`` moves the error. A rule that fails at runtime is reported naming the rule.

Binding is the expensive part (the library converts a context's values when it is built), so
each node binds once per write, for all its rules, and only what they can read of its value
(:func:`~codeflare.k8s.schema.celscan.reads`): a Workload's root rules see a few fields and
the pod-set count, not the pod templates. Like Kubernetes (``validateExpressions``), every rule
still runs on every write: ratcheting (KEP-4008, GA in 1.33) only turns a false result of a
rule that does not use ``oldSelf`` on an unchanged value into a warning, and that is not done
here (see below).

No rule can stall the server. The library has no cost tracking and cannot be interrupted, so each
evaluation is priced before it runs, from the actual data it is handed: ``tokens x (widest list or map + 1) ^
comprehension depth + 25 x the value's size`` (JSON nodes, plus string bytes / 16), and binding
a value costs 150 a node. A rule priced over 1,000,000 units, or an object whose rules together
exceed 10,000,000 (Kubernetes' per-call and per-object limits; a unit is about one interpreter
step, some 20 ns with this library, so an object's rules run for at most a few hundred
milliseconds), is refused with Kubernetes' messages, and no further rule runs; a value nested
deeper than 1,000 levels is not evaluated at all (the library converts recursively). The price
bounds comprehension nesting and whole-value scans; it does not see a comprehension body that
builds a large value per element (say, a list concatenation), which a static estimate would.
Unlike Kubernetes, errors of unchanged values are not ratcheted (the schema engine does not
ratchet either), list equality follows list order even for set and map lists, and ``size()`` of
a string counts bytes (the library's), not code points.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

from codeflare.k8s.schema.celenv import (
    CompileError,
    Expression,
    compile_expression,
    context,
    library,
    runtime_error,
)
from codeflare.k8s.schema.celscan import FULL, Read, merge, reads
from codeflare.k8s.schema.celvalues import measure, project, to_cel
from codeflare.k8s.schema.checks import hashable
from codeflare.k8s.schema.field import ErrorType, FieldError
from codeflare.k8s.schema.rulecheck import RULES_KEY, parse_field_path

log = logging.getLogger(__name__)

PER_CALL_LIMIT = 1_000_000
PER_OBJECT_BUDGET = 10_000_000
BIND_COST_PER_NODE = 150  # converting a value into the library (about 3 us a node)
RUN_COST_PER_NODE = 25  # each run hands the bound values over again (about 0.5 us a node)
MAX_MESSAGE_BYTES = 5 * 1024
MAX_DEPTH = 1000  # deeper values are not handed to the library (its conversion recurses natively)
ROOT = "<nil>"  # how Kubernetes prints the path of an error at the object's root
_REASONS = {"FieldValueForbidden": ErrorType.FORBIDDEN, "FieldValueRequired": ErrorType.REQUIRED}


@dataclass
class Rule:
    """One entry of ``x-kubernetes-validations``, compiled."""

    source: str
    expression: Expression | None
    compile_error: str
    message: str
    message_expression: Expression | None
    reason: str
    field_path: str
    optional_old_self: bool

    @property
    def uses_old_self(self) -> bool:
        return self.expression is not None and self.expression.uses_old_self

    @property
    def error_string(self) -> str:
        return self.message or self.source.strip()


@dataclass
class RuleNode:
    """A schema node with rules, or on the way to one."""

    schema: dict[str, Any]
    resource_root: bool
    rules: list[Rule] = field(default_factory=list)
    properties: dict[str, RuleNode] = field(default_factory=dict)
    additional: RuleNode | None = None
    items: RuleNode | None = None
    all_of: list[RuleNode] = field(default_factory=list)
    reads: dict[str, Read] = field(default_factory=dict)  # what its rules read of self, oldSelf

    @property
    def type_name(self) -> str:
        typ = self.schema.get("type")
        return typ if isinstance(typ, str) else ""

    @property
    def map_keys(self) -> tuple[str, ...]:
        keys = self.schema.get("x-kubernetes-list-map-keys")
        if self.schema.get("x-kubernetes-list-type") != "map" or not isinstance(keys, list):
            return ()
        return tuple(k for k in keys if isinstance(k, str))


# --- compiling ---------------------------------------------------------------------------------


def compile_tree(schema: Any, resource_root: bool = True, types: Any = None) -> RuleNode | None:
    """The rule tree of ``schema``; None when no node below it carries rules.

    Rules are read from ``schema``, the node's type and extensions from ``types`` (the same
    node, except for an ``allOf`` branch, whose rules apply to the node it sits on).
    """
    if not isinstance(schema, dict):
        return None
    typed = types if isinstance(types, dict) else schema
    node = RuleNode(typed, resource_root)
    raw = schema.get(RULES_KEY)
    if isinstance(raw, list):
        node.rules = [_compile_rule(r, typed) for r in raw if isinstance(r, dict)]
        node.reads = _reads(node.rules)
    props, typed_props = _dict(schema, "properties"), _dict(typed, "properties")
    for name, sub in props.items():
        sub_types = typed_props.get(name, sub)
        child = compile_tree(sub, _embedded(sub_types), sub_types)
        if child is not None:
            node.properties[name] = child
    additional = typed.get("additionalProperties")
    node.additional = compile_tree(schema.get("additionalProperties"), _embedded(additional), additional)
    items = typed.get("items")
    node.items = compile_tree(schema.get("items"), _embedded(items), items)
    all_of = schema.get("allOf")
    for sub in all_of if isinstance(all_of, list) else ():
        branch = compile_tree(sub, resource_root, typed)
        if branch is not None:
            node.all_of.append(branch)
    if node.rules or node.properties or node.additional or node.items or node.all_of:
        return node
    return None


def _reads(rules: list[Rule]) -> dict[str, Read]:
    """What the node's rules and message expressions read of ``self`` and ``oldSelf``, together."""
    out: dict[str, Read] = {}
    for rule in rules:
        for expression in (rule.expression, rule.message_expression):
            for name, read in reads(expression.source).items() if expression is not None else ():
                out[name] = merge(out[name], read) if name in out else read
    return out


def _dict(schema: dict[str, Any], key: str) -> dict[str, Any]:
    value = schema.get(key)
    return value if isinstance(value, dict) else {}


def _text(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


def _embedded(schema: Any) -> bool:
    return isinstance(schema, dict) and bool(schema.get("x-kubernetes-embedded-resource"))


def _compile_rule(raw: dict[str, Any], schema: dict[str, Any]) -> Rule:
    source = _text(raw, "rule")
    expression, error = None, ""
    try:
        expression = compile_expression(source) if source.strip() else None
    except CompileError as exc:
        error = str(exc)
    message_expression = None
    text = raw.get("messageExpression")
    if isinstance(text, str) and text.strip():
        try:
            message_expression = compile_expression(text)
        except CompileError:
            message_expression = None  # reported when the CRD was written; fall back to message
    field_path = ""
    if isinstance(raw.get("fieldPath"), str) and raw["fieldPath"].strip():
        try:
            field_path = parse_field_path(raw["fieldPath"].strip(), schema)
        except ValueError:
            field_path = ""
    message = raw.get("message")
    reason = raw.get("reason")
    return Rule(
        source=source,
        expression=expression,
        compile_error=error,
        message=message.strip() if isinstance(message, str) else "",
        message_expression=message_expression,
        reason=reason if isinstance(reason, str) else "",
        field_path=field_path,
        optional_old_self=raw.get("optionalOldSelf") is True,
    )


# --- evaluating --------------------------------------------------------------------------------


class _OutOfBudget(Exception):
    """No further rule may run: the object's budget is spent, or one rule would cost too much."""


@dataclass
class _Budget:
    remaining: int = PER_OBJECT_BUDGET
    whole: bool = False  # bind whole values, not the parts the rules read

    def charge(self, cost: int, path: str, node: RuleNode, errs: list[FieldError], what: str) -> None:
        if cost > self.remaining:
            errs.append(_invalid(path, node, f"{what} failed due to running out of cost budget, no further "
                                             "validation rules will be run"))  # fmt: skip
            raise _OutOfBudget
        self.remaining -= cost


def evaluate(tree: RuleNode, obj: Any, old: Any = None, whole: bool = False) -> list[FieldError]:
    """Every rule of ``tree`` that ``obj`` (updating ``old``, if given) breaks.

    Each node binds only what its rules can read of its value (:func:`~codeflare.k8s.schema.
    celvalues.project`); ``whole`` binds the whole values instead (the reference the tests
    compare the cut with).
    """
    errs: list[FieldError] = []
    with contextlib.suppress(_OutOfBudget):
        _walk(tree, "", obj, old, _Budget(whole=whole), errs)
    return errs


def _walk(node: RuleNode, path: str, value: Any, old: Any, budget: _Budget, errs: list[FieldError]) -> None:
    if value is None:
        return
    if node.rules:
        _run_rules(node, path, value, old, budget, errs)
    for branch in node.all_of:
        _walk(branch, path, value, old, budget, errs)
    if isinstance(value, list) and node.items is not None:
        olds = _correlate(node, old)
        for i, item in enumerate(value):
            _walk(node.items, f"{path}[{i}]", item, olds(item), budget, errs)
    elif isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        if node.additional is not None:
            for key, sub in value.items():
                _walk(node.additional, f"{path}[{key}]", sub, old_map.get(key), budget, errs)
        for key, sub in value.items():
            child = node.properties.get(key)
            if child is not None:
                _walk(child, f"{path}.{key}" if path else key, sub, old_map.get(key), budget, errs)


def _correlate(node: RuleNode, old: Any) -> Any:
    """item -> its old version, for map lists (matched by keys); nothing for other lists."""
    keys = node.map_keys
    if not keys or not isinstance(old, list):
        return lambda item: None
    by_key = {
        tuple(hashable(o.get(k)) for k in keys): o for o in old if isinstance(o, dict)
    }  # fmt: skip
    return lambda item: (
        by_key.get(tuple(hashable(item.get(k)) for k in keys)) if isinstance(item, dict) else None
    )


def _run_rules(
    node: RuleNode, path: str, value: Any, old: Any, budget: _Budget, errs: list[FieldError]
) -> None:
    has_old = old is not None and any(r.uses_old_self for r in node.rules)
    runnable: list[Rule] = []
    for rule in node.rules:
        if rule.compile_error:
            errs.append(_invalid(path, node, f"rule compile error: {rule.compile_error}"))
        elif rule.expression is not None and (has_old or rule.optional_old_self or not rule.uses_old_self):
            runnable.append(rule)
    if not runnable:
        return  # e.g. only transition rules, on create: nothing is bound, nothing is charged
    if not budget.whole:
        value = project(value, node.reads.get("self", FULL))
        old = project(old, node.reads.get("oldSelf", FULL)) if has_old else old
    size, widest, deepest = measure(value)
    if has_old:
        old_size, old_widest, old_deepest = measure(old)
        size, widest, deepest = size + old_size, max(widest, old_widest), max(deepest, old_deepest)
    if deepest > MAX_DEPTH:
        errs.append(_invalid(path, node, f"value nested deeper than {MAX_DEPTH} levels: rules not evaluated"))
        return
    budget.charge(BIND_COST_PER_NODE * size, path, node, errs, "validation")
    view = to_cel(value, node.schema, node.resource_root)
    old_view = to_cel(old, node.schema, node.resource_root) if has_old else None
    expressions = [e for r in runnable for e in (r.expression, r.message_expression) if e is not None]
    plain = context(expressions, {"self": view, **({"oldSelf": old_view} if has_old else {})})
    optional: Any = None
    for rule in runnable:
        activation = plain
        if rule.optional_old_self:
            if optional is None:
                wrapped = library().OptionalValue
                chosen = wrapped.of(old_view) if has_old else wrapped.none()
                optional = context(expressions, {"self": view, "oldSelf": chosen})
            activation = optional
        _run_one(node, rule, path, activation, plain, (size, widest), budget, errs)


def _price(expression: Expression, measured: tuple[int, int]) -> int:
    size, widest = measured
    shape = expression.shape
    return int(min(shape.tokens * (widest + 1) ** shape.depth, 10**18)) + RUN_COST_PER_NODE * size


def _run_one(
    node: RuleNode,
    rule: Rule,
    path: str,
    activation: Any,
    plain: Any,
    measured: tuple[int, int],
    budget: _Budget,
    errs: list[FieldError],
) -> None:
    assert rule.expression is not None
    cost = _price(rule.expression, measured)
    if cost > PER_CALL_LIMIT:
        errs.append(
            _invalid(
                path,
                node,
                "'operation cancelled: estimated cost limit exceeded': no further validation rules will "
                f"be run due to call cost exceeds limit for rule: {rule.error_string}",
            )
        )
        raise _OutOfBudget
    budget.charge(cost, path, node, errs, "validation")
    try:
        result = rule.expression.program.execute(activation)
    except BaseException as exc:  # any runtime failure of a rule is the object's error, never a 500
        if not _rule_failure(exc):
            raise
        errs.append(_invalid(path, node, _runtime_detail(runtime_error(exc), rule)))
        return
    if result is True:
        return
    if result is not False:
        errs.append(
            _invalid(
                path, node, f"cel expression must evaluate to a bool evaluating rule: {rule.error_string}"
            )
        )
        return
    detail = _message(node, rule, path, plain, measured, budget, errs)
    target = (f"{path}.{rule.field_path}" if path else rule.field_path) if rule.field_path else path
    errs.append(_for_reason(target, node, detail, rule.reason))


def _rule_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the rule's failure: any error, or a panic inside the library (which
    PyO3 raises as a BaseException), but not an interrupt or an exit."""
    return isinstance(exc, Exception) or type(exc).__name__ == "PanicException"


def _runtime_detail(message: str, rule: Rule) -> str:
    if message == "no such overload":
        return (
            f"'{message}': call arguments did not match a supported operator, function or macro "
            f"signature for rule: {rule.error_string}"
        )
    return f"{message} evaluating rule: {rule.error_string}"


def _message(
    node: RuleNode,
    rule: Rule,
    path: str,
    plain: Any,
    measured: tuple[int, int],
    budget: _Budget,
    errs: list[FieldError],
) -> str:
    """The error's detail: messageExpression's result when it yields one, else message."""
    fallback = rule.message or f"failed rule: {rule.source.strip()}"
    expression = rule.message_expression
    if expression is None:
        return fallback
    budget.charge(_price(expression, measured), path, node, errs, "messageExpression evaluation")
    try:
        result = expression.program.execute(plain)
    except BaseException as exc:  # a failing messageExpression falls back to message
        if not _rule_failure(exc):
            raise
        log.debug("messageExpression %r failed: %s", expression.source, runtime_error(exc))
        return fallback
    text = result.strip() if isinstance(result, str) else ""
    if not text or "\n" in text or len(text.encode()) > MAX_MESSAGE_BYTES:
        log.debug("messageExpression %r gave no usable message: %r", expression.source, result)
        return fallback
    return text


def _invalid(path: str, node: RuleNode, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, path or ROOT, detail, node.type_name)


def _for_reason(path: str, node: RuleNode, detail: str, reason: str) -> FieldError:
    shown = path or ROOT
    if reason in _REASONS:
        return FieldError(_REASONS[reason], shown, detail)
    if reason == "FieldValueDuplicate":
        return FieldError(ErrorType.DUPLICATE, shown, "", node.type_name)
    return FieldError(ErrorType.INVALID, shown, detail, node.type_name)
