"""A token-level reading of a CEL expression: its size, its comprehension nesting, its names.

The CEL library parses and runs expressions but exposes no syntax tree, and it has no cost
tracking. Two things need a little of the expression's structure anyway: the cost guard of
:mod:`~codeflare.k8s.schema.rules` (how many tokens; how deeply comprehensions - ``all``,
``exists``, ``exists_one``, ``map``, ``filter`` - and ``in`` scans nest, where a comprehension
over the result of another one is chained, not nested: it iterates a list no longer than the
first) and the "undeclared reference" check (which names a comprehension binds, where a name
first occurs). :func:`scan` tokenizes (string
and bytes literals, raw strings, comments, numbers, identifiers, operators) and computes that
:class:`Shape`. :func:`reads` says which parts of ``self`` and ``oldSelf`` an expression can
read, so the evaluator binds only those (conservatively: anything but a field selection, a
``has()`` test, a ``size()`` call or a quantifier - ``all``, ``exists``, ``exists_one``, whose
body is followed - reads the whole value it reaches). It never evaluates, and it
does not validate syntax: the library does that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MACROS = frozenset(("all", "exists", "exists_one", "map", "filter"))

_TOKEN_SYNTAX = r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
        |'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
  | (?P<other>.)
    """
_OPEN = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Token:
    kind: str  # "string", "number", "ident", "op" or "other"
    text: str
    offset: int


@dataclass(frozen=True)
class Shape:
    """What the cost guard and the reference check need to know about one expression."""

    tokens: int
    depth: int  # nesting of comprehensions and ``in`` scans (0: straight-line)
    bound: frozenset[str]  # names bound by comprehensions
    first_use: dict[str, int]  # identifier (not after '.') -> offset of its first occurrence


# What an expression reads of a value: all of it, only its size (``size(self.x)``), only whether
# it is there (``has(self.x)``), or some of its fields (a dict: field name -> what is read of it),
# or of each of its items (a dict with the one key EACH, which no field name can be).
FULL = "full"
EACH = "[*]"
SIZE = "size"
PRESENT = "present"
Read = str | dict[str, "Read"]
VARIABLES = ("self", "oldSelf")


@lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    return re.compile(_TOKEN_SYNTAX, re.VERBOSE | re.DOTALL)


def tokenize(source: str) -> list[Token]:
    out: list[Token] = []
    for match in _token_pattern().finditer(source):
        kind = match.lastgroup or "other"
        if kind != "space":
            out.append(Token(kind, match.group(), match.start()))
    return out


@lru_cache(maxsize=4096)
def scan(source: str) -> Shape:
    """Tokenize ``source`` and measure it (cached: rules are scanned once per distinct text)."""
    tokens = tokenize(source)
    pairs = _matching(tokens)
    calls = _comprehensions(tokens, pairs)
    bound = frozenset(name for _, _, _, name in calls if name)
    first_use: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        if tok.kind == "ident" and (i == 0 or tokens[i - 1].text != ".") and tok.text not in first_use:
            first_use[tok.text] = tok.offset
    scans = [i for i, tok in enumerate(tokens) if tok.kind == "ident" and tok.text == "in"]
    return Shape(len(tokens), _depth(0, len(tokens), calls, scans, {}), bound, first_use)


def position(source: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``source``, as CEL compilers report them."""
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _matching(tokens: list[Token]) -> dict[int, int]:
    """Index of each bracket -> index of its partner (both ways); unbalanced ones are left out."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.text in _OPEN:
            stack.append(i)
        elif tok.text in (")", "]", "}") and stack and _OPEN[tokens[stack[-1]].text] == tok.text:
            j = stack.pop()
            pairs[i], pairs[j] = j, i
    return pairs


# One comprehension call: (receiver start, '.' index, closing ')' index, bound variable name).
_Call = tuple[int, int, int, str]


def _comprehensions(tokens: list[Token], pairs: dict[int, int]) -> list[_Call]:
    calls: list[_Call] = []
    for i in range(len(tokens) - 2):
        if not (
            tokens[i].text == "."
            and tokens[i + 1].kind == "ident"
            and tokens[i + 1].text in MACROS
            and tokens[i + 2].text == "("
            and (i + 2) in pairs
        ):
            continue
        name = ""
        if i + 4 < len(tokens) and tokens[i + 3].kind == "ident" and tokens[i + 4].text == ",":
            name = tokens[i + 3].text
        calls.append((_receiver_start(tokens, pairs, i - 1), i, pairs[i + 2], name))
    return calls


def _receiver_start(tokens: list[Token], pairs: dict[int, int], end: int) -> int:
    """Where the member chain ending at token ``end`` (``a.b(x)[0]``, ``[1, 2]``...) starts."""
    i = end
    while i >= 0:
        tok = tokens[i]
        if tok.text in (")", "]", "}") and i in pairs:
            i = pairs[i]
            if i > 0 and (tokens[i - 1].kind == "ident" or tokens[i - 1].text in (")", "]")):
                i -= 1
                continue
        if i > 0 and tokens[i - 1].text == "." and tokens[i].kind in ("ident", "string", "number"):
            i -= 2
            continue
        if tokens[i].text == "." and i > 0:  # a leading-dot chain element: step over it
            i -= 1
            continue
        return max(i, 0)
    return 0


def _depth(
    start: int,
    end: int,
    calls: list[_Call],
    scans: list[int],
    memo: dict[tuple[int, int], int],
) -> int:
    """Deepest nesting of comprehensions (and ``in`` scans) within tokens [start, end)."""
    key = (start, end)
    if key in memo:
        return memo[key]
    deepest = 1 if any(start <= i < end for i in scans) else 0
    for recv, dot, close, _ in calls:
        if start <= dot < end and close < end and recv >= start:
            body = 1 + _depth(dot + 3, close, calls, scans, memo)
            deepest = max(deepest, body, _depth(recv, dot, calls, scans, memo))
    memo[key] = deepest
    return deepest


@lru_cache(maxsize=4096)
def reads(source: str) -> dict[str, Read]:
    """Variable (``self``, ``oldSelf``) -> what ``source`` can read of it; absent: not read."""
    tokens = tokenize(source)
    pairs = _matching(tokens)
    out: dict[str, Read] = {}
    for name in VARIABLES:
        read = _reads_of(tokens, pairs, name, 0, len(tokens))
        if read is not None:
            out[name] = read
    return out


_QUANTIFIERS = frozenset(("all", "exists", "exists_one"))  # macros whose result is a bool


def _reads_of(tokens: list[Token], pairs: dict[int, int], name: str, start: int, end: int) -> Read | None:
    """What tokens [start, end) read of variable ``name``; None when they do not use it.

    A comprehension variable of a quantifier (``self.l.all(x, x.a > 0)``) is followed into the
    body: the list is read as ``{EACH: what the body reads of x}``. Occurrences of a rebound name
    inside a nested comprehension count as reads too (more than needed, never less).
    """
    out: Read | None = None
    for i in range(start, end):
        tok = tokens[i]
        if tok.kind != "ident" or tok.text != name or (i > 0 and tokens[i - 1].text == "."):
            continue
        chain, j = [], i + 1
        while (
            j + 1 < end
            and tokens[j].text == "."
            and tokens[j + 1].kind == "ident"
            and not (j + 2 < end and tokens[j + 2].text == "(")
        ):
            chain.append(tokens[j + 1].text)
            j += 2
        read = _each(tokens, pairs, j, end)
        if read is None:
            read = _use(tokens, i, j) if chain else FULL
        for field in reversed(chain):
            read = {field: read}
        out = read if out is None else merge(out, read)
    return out


def _each(tokens: list[Token], pairs: dict[int, int], j: int, end: int) -> Read | None:
    """``.all(x, body)`` (or exists, exists_one) at token ``j``: ``{EACH: body's reads of x}``."""
    if not (
        j + 4 < end
        and tokens[j].text == "."
        and tokens[j + 1].text in _QUANTIFIERS
        and tokens[j + 2].text == "("
        and tokens[j + 3].kind == "ident"
        and tokens[j + 4].text == ","
        and pairs.get(j + 2, end) < end
    ):
        return None
    body = _reads_of(tokens, pairs, tokens[j + 3].text, j + 5, pairs[j + 2])
    return {EACH: PRESENT if body is None else body}


def _use(tokens: list[Token], start: int, end: int) -> Read:
    """How the selection chain in tokens [start, end) is used: tested, sized, or read whole."""
    closed = end < len(tokens) and tokens[end].text == ")"
    called = start >= 2 and tokens[start - 1].text == "(" and tokens[start - 2].kind == "ident"
    if not (closed and called and (start < 3 or tokens[start - 3].text != ".")):
        return FULL
    return {"has": PRESENT, "size": SIZE}.get(tokens[start - 2].text, FULL)


def merge(a: Read, b: Read) -> Read:
    """What two reads of one value read together."""
    if a == FULL or b == FULL:
        return FULL
    if a == PRESENT:
        return b
    if b == PRESENT:
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        if (EACH in a) != (EACH in b):
            return FULL  # its items and some of its fields
        return {k: merge(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k, FULL)) for k in a | b}
    if SIZE in (a, b) and EACH in (a if isinstance(a, dict) else b):
        return a if isinstance(a, dict) else b  # cutting items keeps the list's length
    return a if a == b else FULL  # its size and some of its fields: a map's size needs every key
