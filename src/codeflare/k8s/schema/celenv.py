"""The CEL environment of CRD validation rules: the library, its extension functions, its errors.

Rules are compiled and run by ``common-expression-language`` (imported as ``cel``; a compiled
Rust interpreter, with RE2-like linear-time regular expressions in ``matches``). It is loaded on
first use - the Rust module directly, skipping the package's command-line helpers, which pull in
hundreds of milliseconds of imports - so ``import codeflare`` and a server start without rules
stay cheap. On top of the library's standard functions this module registers the Kubernetes CEL
libraries that custom-resource rules can use and the library lacks: the strings extension
(``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``, ``split``,
``substring``, ``trim``, ``join``, ``reverse``, ``strings.quote``), ``bool()``, Kubernetes' list
library (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``), timestamp
accessors with a time zone (``getHours('01:00')``), ``string()`` of a bool, the sets
extension and the quantity library (``quantity``, ``isQuantity``, ``compareTo``...; a quantity
is carried as its decimal-form string, one per amount, so ``==`` compares amounts). Not
available (a rule using them compiles, and reports the function as unavailable when it runs):
regex ``find``/``findAll``, URLs, IPs/CIDRs, ``format``, semver, two-variable comprehensions;
the ``.?`` optional field syntax does not parse. :func:`compile_expression` also refuses
references to undeclared names, as the Kubernetes compiler does. No evaluation of rules against
objects happens here (that is :mod:`~codeflare.k8s.schema.rules`).
"""

from __future__ import annotations

import datetime
import importlib
import importlib.machinery
import importlib.util
import itertools
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from codeflare.k8s import quantity as quantities
from codeflare.k8s.schema.celscan import Shape, position, scan

_LOCK = threading.Lock()
_MODULE: ModuleType | None = None


def library() -> ModuleType:
    """The CEL extension module (``cel.cel``), loaded once."""
    global _MODULE
    if _MODULE is None:
        with _LOCK:
            if _MODULE is None:
                _MODULE = _load()
    return _MODULE


def _load() -> ModuleType:
    loaded = sys.modules.get("cel.cel")
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("cel")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"cel{suffix}"
            if path.is_file():
                ext = importlib.util.spec_from_file_location("cel.cel", path)
                if ext is not None and ext.loader is not None:
                    module = importlib.util.module_from_spec(ext)
                    ext.loader.exec_module(module)
                    sys.modules["cel.cel"] = module
                    return module
    return importlib.import_module("cel")  # a layout we do not know: the package itself


# --- extension functions ---------------------------------------------------------------------
# The library calls a registered function only where none of its own applies, so a name it
# already has (``getDate``, ``string``) adds the missing overloads without replacing its own.

_FAILURE = threading.local()


class ExtensionError(ValueError):
    """A Kubernetes-worded failure of an extension function (``min called on empty list``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        _FAILURE.message = message


def _index(items: Any, needle: Any, offset: int | None = None, last: bool = False) -> int:
    if isinstance(items, str):
        if offset is None:
            return items.rfind(needle) if last else items.find(needle)
        if not 0 <= offset <= len(items):
            raise ExtensionError(f"index out of range: {offset}")
        return items.rfind(needle, 0, offset + len(needle)) if last else items.find(needle, offset)
    if isinstance(items, list):
        positions = [i for i, item in enumerate(items) if _same(item, needle)]
        return (positions[-1] if last else positions[0]) if positions else -1
    raise ExtensionError("no such overload")


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return bool(left == right)


def _index_of(items: Any, needle: Any, offset: int | None = None) -> int:
    return _index(items, needle, offset)


def _last_index_of(items: Any, needle: Any, offset: int | None = None) -> int:
    return _index(items, needle, offset, last=True)


def _char_at(text: str, index: int) -> str:
    if not 0 <= index <= len(text):
        raise ExtensionError(f"index out of range: {index}")
    return text[index : index + 1]


def _substring(text: str, start: int, end: int | None = None) -> str:
    end = len(text) if end is None else end
    if not 0 <= start <= end <= len(text):
        raise ExtensionError(f"index out of range: {start if start < 0 or start > len(text) else end}")
    return text[start:end]


def _split(text: str, separator: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    pieces = list(text) if separator == "" else text.split(separator)
    if 0 < limit < len(pieces):
        pieces = [*pieces[: limit - 1], separator.join(pieces[limit - 1 :])]
    return pieces


def _replace(text: str, old: str, new: str, limit: int = -1) -> str:
    return text.replace(old, new, limit)


def _ascii(text: str, upper: bool) -> str:
    table = str.maketrans(
        "abcdefghijklmnopqrstuvwxyz" if upper else "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if upper else "abcdefghijklmnopqrstuvwxyz",
    )
    return text.translate(table)


def _quote(text: str) -> str:
    escapes = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return '"' + "".join(escapes.get(c, c) for c in text) + '"'


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    spelled = {"1": True, "t": True, "true": True, "TRUE": True, "True": True}
    spelled.update({"0": False, "f": False, "false": False, "FALSE": False, "False": False})
    if isinstance(value, str) and value in spelled:
        return spelled[value]
    raise ExtensionError(f"type conversion error from string to 'bool': {value!r}")


def _extreme(items: list[Any], pick: Callable[[list[Any]], Any], name: str) -> Any:
    if not items:
        raise ExtensionError(f"{name} called on empty list")
    return pick(items)


def _sum(items: list[Any]) -> Any:
    if items and all(isinstance(i, type(items[0])) for i in items) and not isinstance(items[0], str):
        total = items[0]
        for item in items[1:]:
            total = total + item
        return total
    if not items:
        return 0
    raise ExtensionError("no such overload")


def _is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(items))


def _key(value: Any) -> Any:
    return repr(value) if isinstance(value, dict | list) else (type(value) is bool, value)


def _sets_contains(container: list[Any], sub: list[Any]) -> bool:
    keys = {_key(item) for item in container}
    return all(_key(item) in keys for item in sub)


def _sets_intersects(left: list[Any], right: list[Any]) -> bool:
    keys = {_key(item) for item in left}
    return any(_key(item) in keys for item in right)


def _zoned(moment: Any, zone: str) -> datetime.datetime:
    """``moment`` in time zone ``zone``: ``UTC``, an offset (``01:00``, ``-05:30``) or an IANA name."""
    if not isinstance(moment, datetime.datetime):
        raise ExtensionError("no such overload")
    offset = re.fullmatch(r"([+-]?)(\d{2}):(\d{2})", zone)
    if offset:
        delta = datetime.timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3)))
        return moment.astimezone(datetime.timezone(-delta if offset.group(1) == "-" else delta))
    import zoneinfo  # only rules with a time zone argument need it

    try:
        return moment.astimezone(zoneinfo.ZoneInfo(zone))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ExtensionError(f"invalid time zone: {zone}") from None


# Timestamp accessors with a time zone argument (the library has only the UTC forms).
_IN_ZONE: dict[str, Callable[[datetime.datetime], int]] = {
    "getFullYear": lambda t: t.year,
    "getMonth": lambda t: t.month - 1,
    "getDate": lambda t: t.day,
    "getDayOfMonth": lambda t: t.day - 1,
    "getDayOfWeek": lambda t: (t.weekday() + 1) % 7,
    "getDayOfYear": lambda t: t.timetuple().tm_yday - 1,
    "getHours": lambda t: t.hour,
    "getMinutes": lambda t: t.minute,
    "getSeconds": lambda t: t.second,
    "getMilliseconds": lambda t: t.microsecond // 1000,
}


def _accessor(part: Callable[[datetime.datetime], int]) -> Callable[[Any, str], int]:
    return lambda moment, zone: part(_zoned(moment, zone))


def _string(value: Any) -> str:
    """``string()`` of a bool (the library converts every other type itself)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    raise ExtensionError("no such overload")


_QUANTITY_SYNTAX = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _quantity(text: Any) -> str:
    """A quantity as one string per value (decimal form), so that ``==`` compares values."""
    try:
        return quantities.format_quantity(text)
    except ValueError:
        raise ExtensionError(f"quantities must match the regular expression {_QUANTITY_SYNTAX}") from None


def _q(text: Any) -> Any:
    return quantities.parse_quantity(_quantity(text))


EXTENSIONS: dict[str, Callable[..., Any]] = {
    **{name: _accessor(part) for name, part in _IN_ZONE.items()},
    "string": _string,
    "bool": _bool,
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": lambda text: _ascii(text, upper=False),
    "upperAscii": lambda text: _ascii(text, upper=True),
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": lambda text: text.strip(),
    "join": lambda items, separator="": separator.join(items),
    "reverse": lambda text: text[::-1],
    "strings.quote": _quote,
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": lambda items: _extreme(items, min, "min"),
    "max": lambda items: _extreme(items, max, "max"),
    "sets.contains": _sets_contains,
    "sets.equivalent": lambda a, b: _sets_contains(a, b) and _sets_contains(b, a),
    "sets.intersects": _sets_intersects,
    "quantity": _quantity,
    "isQuantity": quantities.is_quantity,
    "compareTo": lambda a, b: quantities.compare(_quantity(a), _quantity(b)),
    "isGreaterThan": lambda a, b: quantities.compare(_quantity(a), _quantity(b)) > 0,
    "isLessThan": lambda a, b: quantities.compare(_quantity(a), _quantity(b)) < 0,
    "add": lambda a, b: quantities.format_quantity(_q(a) + (_q(b) if isinstance(b, str) else b)),
    "sub": lambda a, b: quantities.format_quantity(_q(a) - (_q(b) if isinstance(b, str) else b)),
    "sign": lambda a: (_q(a) > 0) - (_q(a) < 0),
    "isInteger": lambda a: _q(a) == _q(a).to_integral_value(),
    "asInteger": lambda a: int(_q(a)),
    "asApproximateFloat": lambda a: float(_q(a)),
}
# The library's own functions and macros a rule may call (methods included).
BUILTINS = frozenset(
    (
        "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string",
        "bytes", "timestamp", "duration", "type", "dyn", "getFullYear", "getMonth", "getDate",
        "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours", "getMinutes", "getSeconds",
        "getMilliseconds", "hasValue", "value", "orValue", "or", "of", "none", "ofNonZeroValue",
    )
)  # fmt: skip
# Kubernetes CEL functions this environment does not provide: accepted when a CRD is written,
# reported as unavailable when a rule calls them.
UNAVAILABLE = frozenset(
    (
        "find", "findAll", "url", "isURL", "getScheme", "getHost", "getHostname", "getPort",
        "getEscapedPath", "getQuery", "ip", "isIP", "cidr", "isCIDR", "containsIP", "containsCIDR",
        "format", "semver", "isSemver", "transformList", "transformMap", "optMap", "optFlatMap",
    )
)  # fmt: skip
_NAMES = frozenset(
    ("self", "oldSelf", "int", "uint", "double", "bool", "string", "bytes", "list", "map",
     "null_type", "type", "optional", "google")
)  # fmt: skip
_KNOWN = BUILTINS | UNAVAILABLE | {n.rpartition(".")[2] for n in EXTENSIONS}
_NAMESPACES = frozenset(n.partition(".")[0] for n in EXTENSIONS if "." in n)


# --- compiling --------------------------------------------------------------------------------


class CompileError(ValueError):
    """A rule that does not compile; the message is the compiler's, as Kubernetes prints it."""


@dataclass(frozen=True)
class Expression:
    """One compiled CEL expression and what the evaluator needs to know about it."""

    source: str
    program: Any
    uses_old_self: bool
    shape: Shape
    extensions: tuple[str, ...]  # EXTENSIONS entries it may call


def compile_expression(source: str) -> Expression:
    """Compile ``source``; :class:`CompileError` with the compiler's words when it cannot be."""
    cel = library()
    try:
        program = cel.compile(source)
    except ValueError as exc:
        text = str(exc)
        marker = text.find("': ERROR:")
        if text.startswith("Failed to parse expression") and marker >= 0:
            text = text[marker + 3 :]
        raise CompileError(text.replace("\n| ", "\n | ")) from None
    shape = scan(source)
    variables = set(program.variables())
    functions = {f for f in program.functions() if f[:1].isalpha()}
    undeclared = sorted(
        (variables - _NAMES - shape.bound - _NAMESPACES) | (functions - _KNOWN),
        key=lambda name: shape.first_use.get(name, 0),
    )
    if undeclared:
        raise CompileError(_undeclared(source, undeclared[0], shape))
    used = tuple(n for n in EXTENSIONS if n.rpartition(".")[2] in functions)
    return Expression(source, program, "oldSelf" in variables, shape, used)


def _undeclared(source: str, name: str, shape: Shape) -> str:
    offset = shape.first_use.get(name, 0)
    line, column = position(source, offset)
    text = source.splitlines()[line - 1] if source else ""
    marker = "." * (column - 1) + "^"
    return (
        f"ERROR: <input>:{line}:{column}: undeclared reference to '{name}' (in container '')\n"
        f" | {text}\n | {marker}"
    )


def context(expression_sets: list[Expression], variables: dict[str, Any]) -> Any:
    """A CEL context with ``variables`` and the extension functions these expressions use."""
    functions = {n: _guarded(n) for e in expression_sets for n in e.extensions}
    return library().Context(variables, functions=functions or None)


def _guarded(name: str) -> Callable[..., Any]:
    function = EXTENSIONS[name]

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except ExtensionError:
            raise
        except (TypeError, ValueError, ArithmeticError, IndexError) as exc:
            raise ExtensionError(f"no such overload: {name}: {exc}") from None

    return call


# --- runtime errors ---------------------------------------------------------------------------


def runtime_error(exc: BaseException) -> str:
    """A CEL runtime failure in cel-go's words (``no such key: v2``, ``division by zero``)."""
    recorded = getattr(_FAILURE, "message", None)
    _FAILURE.message = None
    text = str(exc)
    if recorded and "Python function" in text:
        return str(recorded)
    if isinstance(exc, KeyError):
        return f"no such key: {exc.args[0] if exc.args else ''}"
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    if isinstance(exc, OverflowError):
        return "integer overflow"
    if isinstance(exc, TypeError) and text.startswith("No such overload"):
        return "no such overload"
    if text.startswith("Undefined variable or function:"):
        name = text.split("'")[1] if "'" in text else ""
        if name in UNAVAILABLE:
            return f"function '{name}' is not available in this server's CEL environment"
        return f"no such attribute(s): {name}"
    return text.split(". Check ")[0].splitlines()[0] if text else type(exc).__name__
