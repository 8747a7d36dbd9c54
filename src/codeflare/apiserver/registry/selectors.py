"""Label and field selectors, parsed and matched the way the Kubernetes API server does.

``LabelSelector`` reads the ``labelSelector`` query syntax (``a=b,c!=d,e in (f,g),!h``) and the
``metav1.LabelSelector`` object form (``matchLabels``/``matchExpressions``); ``FieldSelector``
reads ``fieldSelector`` (``metadata.name=x,status.phase!=Running``) against the fields a
resource allows. Bad input is an :class:`ApiError` (400 for query strings) or a list of
:class:`FieldError` (object form, for 422). Pure: no I/O, no knowledge of which fields each
resource supports (the caller passes them).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeflare.apiserver.errors import ApiError, bad_request
from codeflare.k8s import labels as k8s_labels
from codeflare.k8s.names import is_label_value, is_qualified_name
from codeflare.k8s.schema.field import ErrorType, FieldError


def label_key_errors(key: str, path: str) -> list[FieldError]:
    """Why ``key`` is not a valid label key (qualified name: optional DNS prefix, "/", name)."""
    return [FieldError(ErrorType.INVALID, path, msg, key) for msg in is_qualified_name(key)]


def label_value_errors(value: str, path: str) -> list[FieldError]:
    """Why ``value`` is not a valid label value (empty, or a name of at most 63 characters)."""
    return [FieldError(ErrorType.INVALID, path, msg, value) for msg in is_label_value(value)]


# ---- label selectors ----------------------------------------------------------------------------

EQUALS, NOT_EQUALS, IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GREATER, LESS = (
    "=",
    "!=",
    "in",
    "notin",
    "exists",
    "!",
    ">",
    "<",
)
_OBJECT_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


_AS_OBJECT = {
    EQUALS: k8s_labels.IN,
    IN: k8s_labels.IN,
    NOT_EQUALS: k8s_labels.NOT_IN,
    NOT_IN: k8s_labels.NOT_IN,
    EXISTS: k8s_labels.EXISTS,
    DOES_NOT_EXIST: k8s_labels.DOES_NOT_EXIST,
    GREATER: k8s_labels.GT,
    LESS: k8s_labels.LT,
}


@dataclass(frozen=True)
class Requirement:
    """One clause: ``key`` compared by ``operator`` with ``values`` (sorted, may be empty).

    ``operator`` is the query-syntax spelling (kept for ``str``); matching is
    :class:`codeflare.k8s.labels.Requirement`'s, the project's one matcher.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()
    matcher: k8s_labels.Requirement = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        matcher = k8s_labels.Requirement(self.key, _AS_OBJECT[self.operator], self.values)
        object.__setattr__(self, "matcher", matcher)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.matcher.matches(labels)

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == DOES_NOT_EXIST:
            return "!" + self.key
        if self.operator in (IN, NOT_IN):
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        return f"{self.key}{self.operator}{self.values[0]}"


def _requirement(key: str, operator: str, values: list[str]) -> Requirement:
    """A validated requirement; invalid key or values raise 400 "unable to parse requirement"."""
    causes = label_key_errors(key, "key")
    if operator in (IN, NOT_IN) and not values:
        causes.append(
            FieldError(ErrorType.REQUIRED, "values", "for 'in', 'notin' operators, values set can't be empty")
        )
    for n, value in enumerate(values):
        if operator in (GREATER, LESS):
            if not re.fullmatch(r"-?[0-9]+", value):
                causes.append(FieldError(ErrorType.INVALID, f"values[{n}]", "must be an integer", value))
        else:
            causes.extend(label_value_errors(value, f"values[{n}]"))
    if causes:
        raise bad_request("unable to parse requirement: " + ", ".join(c.message() for c in causes))
    return Requirement(key, operator, tuple(sorted(set(values))))


_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|>|<|[^\s!=,()<>]+)")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if not match:  # pragma: no cover - the pattern matches any non-space character
            raise bad_request(f"unable to parse requirement: unexpected character at {pos}")
        out.append(match.group(1))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self) -> str:
        token = self.peek()
        self.pos += 1
        return token

    def fail(self, expected: str) -> ApiError:
        return bad_request(f"unable to parse requirement: found '{self.peek()}', expected: {expected}")

    def identifier(self, expected: str) -> str:
        token = self.peek()
        if not token or token in "!=,()<>" or token == "==" or token == "!=":
            raise self.fail(expected)
        return self.take()

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            return _requirement(self.identifier("identifier after '!'"), DOES_NOT_EXIST, [])
        key = self.identifier("identifier")
        op = self.peek()
        if op in ("", ","):
            return _requirement(key, EXISTS, [])
        self.take()
        if op in ("=", "==", "!="):
            value = "" if self.peek() in ("", ",") else self.identifier("identifier after '" + op + "'")
            return _requirement(key, NOT_EQUALS if op == "!=" else EQUALS, [value])
        if op in (">", "<"):
            return _requirement(key, op, [self.identifier("integer after '" + op + "'")])
        if op in (IN, NOT_IN):
            if self.take() != "(":
                self.pos -= 1
                raise self.fail("'('")
            values: list[str] = []
            while self.peek() != ")":
                values.append("" if self.peek() in (",", ")") else self.identifier("value or ')'"))
                if self.peek() == ",":
                    self.take()
                elif self.peek() != ")":
                    raise self.fail("',' or ')'")
            self.take()
            return _requirement(key, op, values)
        self.pos -= 1
        raise self.fail("=, !=, ==, in, notin, >, <")

    def selector(self) -> list[Requirement]:
        out: list[Requirement] = []
        if not self.tokens:
            return out
        while True:
            out.append(self.requirement())
            if self.peek() == "":
                return out
            if self.take() != ",":
                self.pos -= 1
                raise self.fail("','")


@dataclass(frozen=True)
class LabelSelector:
    """A conjunction of requirements. Empty matches everything; ``nothing()`` matches nothing."""

    requirements: tuple[Requirement, ...] = ()
    matches_nothing: bool = False

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse the ``labelSelector`` query syntax; any error is 400 BadRequest."""
        reqs = _Parser(text).selector()
        return cls(tuple(sorted(reqs, key=lambda r: r.key)))

    @classmethod
    def nothing(cls) -> LabelSelector:
        return cls((), True)

    @classmethod
    def from_dict(cls, sel: Mapping[str, Any] | None) -> LabelSelector:
        """The object form. ``None`` matches nothing and ``{}`` everything (Kubernetes' rule for
        e.g. a Service or PodDisruptionBudget selector); invalid input raises 422 Invalid."""
        if sel is None:
            return cls.nothing()
        causes = validate_label_selector_dict(sel, "selector")
        if causes:
            rendered = ", ".join(c.message() for c in causes)
            raise ApiError(422, "Invalid", f"invalid label selector: {rendered}", {}, causes)
        reqs = [Requirement(k, EQUALS, (v,)) for k, v in (sel.get("matchLabels") or {}).items()]
        for expr in sel.get("matchExpressions") or []:
            values = tuple(sorted(set(expr.get("values") or [])))
            reqs.append(Requirement(expr["key"], _OBJECT_OPERATORS[expr["operator"]], values))
        return cls(tuple(sorted(reqs, key=lambda r: r.key)))

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.requirements and not self.matches_nothing

    def matches(self, labels: Mapping[str, str]) -> bool:
        return not self.matches_nothing and all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def validate_label_selector_dict(sel: Any, path: str) -> list[FieldError]:
    """Every problem of a ``metav1.LabelSelector`` object, with field paths under ``path``."""
    if not isinstance(sel, Mapping):
        return [FieldError(ErrorType.INVALID, path, "must be an object", sel)]
    out: list[FieldError] = []
    labels = sel.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        out.append(FieldError(ErrorType.INVALID, f"{path}.matchLabels", "must be an object", labels))
        labels = {}
    for key, value in labels.items():
        out += label_key_errors(str(key), f"{path}.matchLabels")
        if not isinstance(value, str):
            out.append(FieldError(ErrorType.INVALID, f"{path}.matchLabels", "must be a string", value))
        else:
            out += label_value_errors(value, f"{path}.matchLabels")
    exprs = sel.get("matchExpressions") or []
    if not isinstance(exprs, list):
        return [*out, FieldError(ErrorType.INVALID, f"{path}.matchExpressions", "must be a list", exprs)]
    for n, expr in enumerate(exprs):
        out += k8s_labels.requirement_errors(expr, f"{path}.matchExpressions[{n}]")
    return out


# ---- field selectors ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldTerm:
    field: str
    operator: str  # "=" or "!="
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{_escape(self.value)}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace("!", "\\!")


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, escaped = [], "", False
    for ch in text:
        if escaped:
            current += "\\" + ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append(current)
            current = ""
        else:
            current += ch
    if escaped:
        current += "\\"
    parts.append(current)
    return parts


def _unescape(value: str) -> str:
    out, escaped = "", False
    for ch in value:
        if escaped:
            if ch not in "\\,=!":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out += ch
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            out += ch
    if escaped:
        raise bad_request("invalid field selector: unterminated escape sequence")
    return out


def _split_term(term: str) -> tuple[str, str, str] | None:
    escaped = False
    for i, ch in enumerate(term):
        if escaped:
            escaped = False
            continue
        if ch == "\\":
            escaped = True
            continue
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return ""
        node = node[part]
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


@dataclass(frozen=True)
class FieldSelector:
    """A conjunction of ``field=value`` / ``field!=value`` terms over dotted object paths."""

    terms: tuple[FieldTerm, ...] = ()

    @classmethod
    def parse(cls, text: str, allowed: Collection[str]) -> FieldSelector:
        """Parse ``fieldSelector``; unknown syntax or a field outside ``allowed`` is 400."""
        terms: list[FieldTerm] = []
        if not text.strip():
            return cls(())
        for raw in _split_unescaped(text, ","):
            split = _split_term(raw)
            if split is None:
                raise bad_request(f"invalid selector: '{text}'; can't understand '{raw}'")
            field, op, value = split
            field = field.strip()
            if field not in allowed:
                raise bad_request(f"field label not supported: {field}")
            terms.append(FieldTerm(field, "!=" if op == "!=" else "=", _unescape(value)))
        return cls(tuple(terms))

    @property
    def empty(self) -> bool:
        return not self.terms

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """True when every term holds; a missing field reads as ""."""
        for term in self.terms:
            equal = _field_value(obj, term.field) == term.value
            if equal != (term.operator == "="):
                return False
        return True

    def exact_value(self, field: str) -> str | None:
        """The value ``field`` must equal, when a term pins it (lets the caller use an index)."""
        for term in self.terms:
            if term.field == field and term.operator == "=":
                return term.value
        return None

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.terms)
