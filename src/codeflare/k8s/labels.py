"""The one label-selector matcher of the project: requirements, selectors, their value rules.

Kubernetes writes selectors in two object forms that share operators: ``metav1.LabelSelector``
(``matchLabels`` + ``matchExpressions`` with In, NotIn, Exists, DoesNotExist) and the node
selector terms of required node affinity (the same four plus Gt and Lt). A
:class:`Requirement` is one expression of either form; building one checks its operator and
values (In/NotIn need values, Exists/DoesNotExist take none, Gt/Lt one integer), so an unknown
operator is an error, never silently some other operator. :func:`requirement_errors` reports
the same rules as field errors for an object still in dict form. The API server's query syntax
(``a=b,c in (d)``) is parsed in ``apiserver.registry.selectors`` and matched here.
No I/O; it does not know which objects carry selectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codeflare.k8s.names import is_label_value, is_qualified_name

if TYPE_CHECKING:
    from codeflare.k8s.schema.field import FieldError

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
LABEL_OPERATORS = (DOES_NOT_EXIST, EXISTS, IN, NOT_IN)
"""Operators of ``metav1.LabelSelectorRequirement``."""
NODE_OPERATORS = (DOES_NOT_EXIST, EXISTS, GT, IN, LT, NOT_IN)
"""Operators of ``corev1.NodeSelectorRequirement`` (node affinity)."""


class SelectorError(ValueError):
    """A requirement that breaks an operator or value rule; the message names the rule."""


def _integer(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _rule_violation(operator: str, values: tuple[str, ...], operators: Iterable[str]) -> str | None:
    allowed = tuple(operators)
    if operator not in allowed:
        return (
            "operator: unsupported value "
            + repr(operator)
            + ": supported values: "
            + ", ".join(f'"{op}"' for op in allowed)
        )
    if operator in (IN, NOT_IN) and not values:
        return "values: must be specified when `operator` is 'In' or 'NotIn'"
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        return "values: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
    if operator in (GT, LT) and (len(values) != 1 or _integer(values[0]) is None):
        return f"values: must be one integer when `operator` is '{operator}'"
    return None


@dataclass(frozen=True)
class Requirement:
    """One expression ``key operator values``; invalid operators or values raise SelectorError.

    ``values`` keep their given order; matching does not depend on it.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(str(v) for v in self.values))
        problem = _rule_violation(self.operator, self.values, NODE_OPERATORS)
        if problem is not None:
            raise SelectorError(f"label selector requirement on key {self.key!r}: {problem}")

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy the requirement (Kubernetes' rules; NotIn holds when absent)."""
        op = self.operator
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if op == IN:
            return value is not None and value in self.values
        if op == NOT_IN:
            return value is None or value not in self.values
        have, limit = _integer(value) if value is not None else None, int(self.values[0])
        if have is None:
            return False
        return have > limit if op == GT else have < limit


@dataclass(frozen=True)
class LabelSelector:
    """``matchLabels`` and ``matchExpressions`` ANDed; the empty selector matches everything."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[Requirement, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "match_labels", dict(self.match_labels))
        object.__setattr__(self, "match_expressions", tuple(self.match_expressions))
        for req in self.match_expressions:
            if req.operator not in LABEL_OPERATORS:
                raise SelectorError(
                    f"label selector requirement on key {req.key!r}: operator {req.operator!r} is "
                    "only valid in node selectors"
                )

    @classmethod
    def from_dict(cls, sel: Mapping[str, Any]) -> LabelSelector:
        """The object form (already validated or not: a bad requirement raises SelectorError)."""
        exprs = tuple(
            Requirement(str(e.get("key", "")), str(e.get("operator", "")), tuple(e.get("values") or ()))
            for e in sel.get("matchExpressions") or ()
        )
        return cls({str(k): str(v) for k, v in (sel.get("matchLabels") or {}).items()}, exprs)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` are selected."""
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        return all(req.matches(labels) for req in self.match_expressions)


NodeSelectorTerm = tuple[Requirement, ...]
"""One ``nodeSelectorTerms`` entry: its ``matchExpressions``, ANDed."""


def node_selector_matches(terms: Iterable[NodeSelectorTerm], labels: Mapping[str, str]) -> bool:
    """Required node affinity: the terms are ORed; an empty term matches nothing (Kubernetes)."""
    return any(term and all(req.matches(labels) for req in term) for term in terms)


def requirement_errors(expr: Any, path: str, operators: Iterable[str] = LABEL_OPERATORS) -> list[FieldError]:
    """Every problem of one requirement in dict form, as field errors under ``path``."""
    from codeflare.k8s.schema.field import ErrorType, FieldError  # the schema package on use only

    if not isinstance(expr, Mapping):
        return [FieldError(ErrorType.INVALID, path, "must be an object", expr)]
    allowed = tuple(operators)
    out: list[FieldError] = []
    key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values")
    if not isinstance(key, str) or not key:
        out.append(FieldError(ErrorType.REQUIRED, f"{path}.key"))
    else:
        out += [FieldError(ErrorType.INVALID, f"{path}.key", msg, key) for msg in is_qualified_name(key)]
    if values is not None and not isinstance(values, list):
        return [*out, FieldError(ErrorType.INVALID, f"{path}.values", "must be a list", values)]
    values = values or []
    if operator not in allowed:
        supported = ", ".join(f'"{op}"' for op in allowed)
        out.append(
            FieldError(
                ErrorType.NOT_SUPPORTED, f"{path}.operator", f"supported values: {supported}", operator
            )
        )
    elif operator in (IN, NOT_IN) and not values:
        out.append(
            FieldError(
                ErrorType.REQUIRED, f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"
            )
        )
    elif operator in (EXISTS, DOES_NOT_EXIST) and values:
        out.append(
            FieldError(
                ErrorType.FORBIDDEN,
                f"{path}.values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        )
    elif operator in (GT, LT) and (len(values) != 1 or _integer(str(values[0])) is None):
        out.append(
            FieldError(
                ErrorType.INVALID,
                f"{path}.values",
                f"must be one integer when `operator` is '{operator}'",
                values,
            )
        )
    if operator in (GT, LT):
        return out
    for n, value in enumerate(values):
        if not isinstance(value, str):
            out.append(FieldError(ErrorType.INVALID, f"{path}.values[{n}]", "must be a string", value))
        else:
            out += [
                FieldError(ErrorType.INVALID, f"{path}.values[{n}]", m, value) for m in is_label_value(value)
            ]
    return out
