"""A reader of the Go expressions that Kueue's table-driven tests are written in (extraction only).

Kueue's scheduler tests build their objects with wrapper chains (``MakeClusterQueue("cq").
Cohort("c").ResourceGroup(...).Obj()``) and composite literals. :func:`parse` turns such Go source
into a small tree (calls, selectors, composite literals, strings, numbers, identifiers) that
:mod:`extract` interprets into plain case data. It is not a Go parser: func literals and
statements are not understood, only the expression subset those tables use. Used once, to port
the cases as data; the tests themselves run on the YAML it produced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|(?P<str>"(?:\\.|[^"\\])*"|`[^`]*`)|(?P<num>-?\d[\d_]*(?:\.\d+)?(?:e\d+)?)'
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\.\.\.|[()\[\]{},:.*&=+\-])",
    re.S,
)


@dataclass
class Call:
    func: Any
    args: list[Any]


@dataclass
class Sel:
    base: Any
    name: str


@dataclass
class Ident:
    name: str


@dataclass
class Comp:
    """A composite literal ``Type{...}``; ``items`` are (key or None, value)."""

    type: str
    items: list[tuple[Any, Any]] = field(default_factory=list)


@dataclass
class FuncLit:
    """A func literal; only its body's text is kept (``x := expr`` lines and a ``return``)."""

    body: str


@dataclass
class BinOp:
    left: Any
    op: str
    right: Any


def tokens(text: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind is not None:
            out.append((kind, m.group(kind)))
    return out


class Parser:
    def __init__(self, text: str) -> None:
        self.toks = tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else ("eof", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise SyntaxError(f"expected {value!r}, found {tok[1]!r} at token {self.i}")
        self.i += 1
        return tok

    def type_text(self) -> str:
        """A type such as ``[]kueue.PodSet``, ``map[a.B]c.D``, ``*x.Y``; returned as text."""
        out = ""
        while True:
            kind, value = self.peek()
            if value == "[":
                self.take()
                inner = "" if self.peek()[1] == "]" else self.type_text()
                self.take("]")
                out += f"[{inner}]"
            elif value in ("*", ".") or value == "map":
                out += self.take()[1]
            elif kind == "id":
                out += self.take()[1]
                if self.peek()[1] != ".":
                    return out
            else:
                return out

    def expr(self) -> Any:
        left = self.unary()
        while self.peek()[1] in ("+", "-", "*") and self.peek(1)[1] not in (",", "}", ")"):
            op = self.take()[1]
            left = BinOp(left, op, self.unary())
        return left

    def unary(self) -> Any:
        _, value = self.peek()
        if value in ("&", "*"):
            self.take()
            return self.unary()
        if value == "-":
            self.take()
            if self.peek()[0] == "num":
                return -_number(self.take()[1])
            return BinOp(0, "-", self.unary())
        return self.postfix(self.primary())

    def primary(self) -> Any:
        kind, value = self.peek()
        if kind == "str":
            self.take()
            return value[1:-1].encode().decode("unicode_escape") if value[0] == '"' else value[1:-1]
        if kind == "num":
            self.take()
            return _number(value)
        if value == "(":
            self.take()
            inner = self.expr()
            self.take(")")
            return inner
        if value in ("[", "map") or (value == "{"):
            if value == "{":
                return self.composite("")
            return self.composite(self.type_text())
        if value == "func":
            return self.skip_func()
        if kind == "id":
            self.take()
            return Ident(value)
        raise SyntaxError(f"unexpected {value!r} at token {self.i}")

    def skip_func(self) -> Any:
        depth, start = 0, None
        while True:
            _, value = self.take()
            if value == "{":
                depth += 1
                if start is None:
                    start = self.i
            elif value == "}":
                depth -= 1
                if depth == 0:
                    body = self.toks[start : self.i - 1]
                    return FuncLit(" ".join(v for _, v in body))

    def composite(self, type_name: str) -> Comp:
        self.take("{")
        comp = Comp(type_name)
        while self.peek()[1] != "}":
            first = self.expr() if self.peek()[1] != "{" else self.composite("")
            if self.peek()[1] == ":":
                self.take()
                value = self.expr() if self.peek()[1] != "{" else self.composite("")
                comp.items.append((first, value))
            else:
                comp.items.append((None, first))
            if self.peek()[1] == ",":
                self.take()
        self.take("}")
        return comp

    def postfix(self, node: Any) -> Any:
        while True:
            value = self.peek()[1]
            if value == ".":
                self.take()
                if self.peek()[1] == "(":  # type assertion, not used
                    raise SyntaxError("type assertion")
                node = Sel(node, self.take()[1])
            elif value == "(":
                self.take()
                args = []
                while self.peek()[1] != ")":
                    args.append(self.expr())
                    if self.peek()[1] == "...":
                        self.take()
                    if self.peek()[1] == ",":
                        self.take()
                self.take(")")
                node = Call(node, args)
            elif value == "[" and isinstance(node, (Ident, Sel)):  # a generic's type argument
                self.take()
                self.type_text()
                self.take("]")
            elif value == "{" and isinstance(node, (Ident, Sel)) and _is_type(node):
                node = self.composite(_dotted(node))
            else:
                return node


def _number(text: str) -> int | float:
    text = text.replace("_", "")
    return float(text) if "." in text or "e" in text else int(text)


def _dotted(node: Any) -> str:
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Sel):
        return _dotted(node.base) + "." + node.name
    return "?"


def _is_type(node: Any) -> bool:
    name = _dotted(node).rsplit(".", 1)[-1]
    return bool(name) and (name[0].isupper() or name in ("rfMap",))


def dotted(node: Any) -> str:
    return _dotted(node)


def parse(text: str) -> Any:
    return Parser(text).expr()


def chain(node: Any) -> list[tuple[str, list[Any]]]:
    """A wrapper chain ``f(a).m(b).n()`` as [("f", [a]), ("m", [b]), ("n", [])], outermost last."""
    out: list[tuple[str, list[Any]]] = []
    while isinstance(node, Call):
        func = node.func
        if isinstance(func, Sel) and isinstance(func.base, (Call, Ident, Sel)) and not _is_package(func.base):
            out.append((func.name, node.args))
            node = func.base
        else:
            out.append((_dotted(func).rsplit(".", 1)[-1], node.args))
            node = None
            break
    if node is not None:
        out.append(("<base>", [node]))
    out.reverse()
    return out


def _is_package(node: Any) -> bool:
    return isinstance(node, Ident) and node.name[0].islower() and node.name not in _LOCALS


_LOCALS: set[str] = set()


def declare_locals(names: set[str]) -> None:
    """Identifiers that are variables (their method calls are chains), not packages."""
    _LOCALS.clear()
    _LOCALS.update(names)
