"""Custom-resource data as CEL values: what ``self`` and ``oldSelf`` are bound to in a rule.

Kubernetes binds a rule's variables to the JSON value at the rule's schema node, typed by the
schema (apiextensions-apiserver ``schema/cel/values.go`` and ``model/schemas.go``); this module
builds the same view as plain Python values the CEL library converts: ``integer`` as int,
``number`` as double (also when the JSON holds ``1``), strings with ``format`` ``byte``,
``duration``, ``date`` and ``date-time`` as bytes, duration and timestamp; object properties by
their escaped CEL names (``dash-dash`` -> ``dash__dash__dash``, ``namespace`` ->
``__namespace__``); a property that is null is absent, as in Kubernetes. Unknown (preserved)
fields stay in the value so equality sees them, as Kubernetes' equality does. It also measures
a value for the cost guard (:func:`measure`) and cuts it to the part a rule can read
(:func:`project`). It does not evaluate anything.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from functools import lru_cache
from typing import Any

from codeflare.k8s.schema.celscan import EACH, FULL, PRESENT, SIZE, Read
from codeflare.k8s.timestamps import parse_rfc3339

# CEL's reserved words (cel-spec langdef "Syntax"), escaped to __word__ when used as property names.
RESERVED = frozenset(
    (
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
        "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
    )
)  # fmt: skip
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPABLE = re.compile(r"[A-Za-z_./-][A-Za-z0-9_./-]*")
_EXPAND = re.compile(r"__|[./-]")
_EXPANSIONS = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


@lru_cache(maxsize=4096)
def escape(name: str) -> str | None:
    """The CEL identifier a property is selected by, or None when it cannot be one."""
    if name in RESERVED:
        return f"__{name}__"
    if _PLAIN.fullmatch(name) and "__" not in name:
        return name
    if not _ESCAPABLE.fullmatch(name):
        return None
    return _EXPAND.sub(lambda m: _EXPANSIONS[m.group()], name)


def to_cel(value: Any, schema: Any, resource_root: bool = False) -> Any:
    """``value`` (decoded JSON at ``schema``) as the value a CEL rule sees there."""
    if value is None or not isinstance(schema, dict):
        return value
    if schema.get("x-kubernetes-int-or-string"):
        return value
    typ = schema.get("type")
    if typ == "object" and isinstance(value, dict):
        return _object(value, schema, resource_root or bool(schema.get("x-kubernetes-embedded-resource")))
    if typ == "array" and isinstance(value, list):
        items = schema.get("items")
        return [to_cel(item, items, _embedded(items)) for item in value]
    if typ == "string" and isinstance(value, str):
        return _formatted(value, schema.get("format"))
    if typ == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if typ == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _embedded(schema: Any) -> bool:
    return isinstance(schema, dict) and bool(schema.get("x-kubernetes-embedded-resource"))


def _object(value: dict[str, Any], schema: dict[str, Any], resource_root: bool) -> dict[str, Any]:
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    if not isinstance(props, dict) and isinstance(additional, dict):
        return {k: to_cel(v, additional, _embedded(additional)) for k, v in value.items()}
    props = props if isinstance(props, dict) else {}
    if not props and not resource_root:
        return value  # preserved unknown fields: kept for equality, never selected
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if sub is None:
            continue  # a null property is an absent one
        name = escape(key) or key
        child = props.get(key)
        out[name] = to_cel(sub, child, _embedded(child)) if child is not None else sub
    return out


def _formatted(value: str, fmt: Any) -> Any:
    try:
        if fmt == "byte":
            return base64.b64decode(value, validate=True)
        if fmt == "duration":
            return parse_duration(value)
        if fmt == "date":
            day = datetime.date.fromisoformat(value)
            return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)
        if fmt == "date-time":
            return parse_rfc3339(value)
    except (ValueError, binascii.Error):
        return value  # the format check has already reported it
    return value


_GO_UNITS = {
    "ns": 1e-3, "us": 1.0, "µs": 1.0, "μs": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6,
}  # fmt: skip
_GO_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_LONG_UNITS = {
    "d": 86400e6, "day": 86400e6, "days": 86400e6, "w": 604800e6, "week": 604800e6,
    "weeks": 604800e6, "h": 3600e6, "hour": 3600e6, "hours": 3600e6, "m": 60e6, "minute": 60e6,
    "minutes": 60e6, "s": 1e6, "second": 1e6, "seconds": 1e6, "ms": 1e3, "us": 1.0, "ns": 1e-3,
}  # fmt: skip
_LONG = re.compile(r"(\d+)\s*([A-Za-zµμ]+)")


def parse_duration(text: str) -> datetime.timedelta:
    """A ``format: duration`` string (Go's ``1h2m3s4ms``, ``3723.004s``, or ``3 days``)."""
    body = text[1:] if text[:1] in "+-" else text
    sign = -1 if text[:1] == "-" else 1
    if body == "0":
        return datetime.timedelta(0)
    parts = _GO_PART.findall(body)
    if parts and "".join(n + u for n, u in parts) == body:
        micros = sum(float(n) * _GO_UNITS[u] for n, u in parts)
        return datetime.timedelta(microseconds=sign * micros)
    match = _LONG.fullmatch(text.strip())
    if match and match.group(2) in _LONG_UNITS:
        return datetime.timedelta(microseconds=int(match.group(1)) * _LONG_UNITS[match.group(2)])
    raise ValueError(f"invalid duration {text!r}")


def project(value: Any, read: Read) -> Any:
    """The part of ``value`` (decoded JSON) that a rule reading ``read`` of it can see.

    What is left out is never reached by the rule, so binding the rest gives the same result:
    fields no rule selects are dropped, a value only sized keeps its length (its elements or
    values become 0), a value only tested by ``has()`` becomes empty, a list whose items a
    quantifier reads keeps what it reads of each item. Field names match a key
    by its escaped CEL name or as written (map keys are selected unescaped).
    """
    if read == FULL or value is None:
        return value
    if read == PRESENT:
        return {} if isinstance(value, dict) else [] if isinstance(value, list) else value
    if read == SIZE:
        if isinstance(value, dict):
            return {k: None if v is None else 0 for k, v in value.items()}
        return [0] * len(value) if isinstance(value, list) else value
    if not isinstance(read, dict):
        return value
    if EACH in read:  # the items of a list; a map's keys and values are kept as they are
        return [project(item, read[EACH]) for item in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value  # a selection on a non-object fails the same way on the whole value
    out: dict[str, Any] = {}
    for name, wanted in read.items():
        if name in value:
            out[name] = project(value[name], wanted)
        elif "__" in name:  # an escaped name (``a__dash__b``): find the key it stands for
            for key, sub in value.items():
                if escape(key) == name:
                    out[key] = project(sub, wanted)
    return out


def measure(value: Any) -> tuple[int, int, int]:
    """(size, widest, deepest) of ``value``: JSON nodes plus string bytes/16, the longest list or
    map, and the nesting depth (the library converts recursively, so depth is bounded before)."""
    size, widest, deepest = 0, 0, 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        size += 1
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            widest = max(widest, len(item))
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            widest = max(widest, len(item))
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, str | bytes):
            size += len(item) // 16
    return size, widest, deepest
